"""Wave 36's red team against decisions from a shell inside an agent, with real processes.

A host process is started as an agent host starts (``omp`` in its command line, the agent mark set and
the kernel's mark taken, as the Hermes plugin and the OMP extension do when they load), with
``COMMONKEEP_ROLE=librarian`` exported by the person; each attack is a command its shell tool runs:
the CLI or the decision functions called from ``python -c``, with the mark kept, cleared, emptied or
faked, detached with ``setsid -f``, ``nohup``, a double fork, ``script``, a ``tmux`` server the agent
starts, reparented to init, after trying to raise the limit back. Every decision must be refused
(nothing changes in the root) and the writer's ``--trust`` / an adapter's stamp must bind nothing.

What the agent asks another of the person's daemons to run (``ssh localhost``, ``at``, ``cron``,
``systemd-run --user``, a ``tmux`` server the person started) runs outside the agent's process tree:
the documented limit (``docs/security.md``), not tested here."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.governance.conftest import WRITER, write_candidate

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the process tree is read from /proc")

AGENT = {"agent": "planner", "role": "planner"}
HOST = """
import os, subprocess, sys
from commonkeep.gate import agent_shell
agent_shell.set_mark(sys.argv[1])
getattr(agent_shell, "set_kernel_mark", lambda: None)()
sys.exit(subprocess.run(["bash", "-c", sys.argv[2]]).returncode)
"""
DETACH = """
import os, sys
if os.fork(): os._exit(0)
os.setsid()
if os.fork(): os._exit(0)
"""


def _py(code: str) -> str:
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


def _ck(*args: str) -> str:
    return " ".join([shlex.quote(sys.executable), "-m", "commonkeep.cli", *map(shlex.quote, args)])


@pytest.fixture
def world(root: Path, tmp_path: Path) -> dict[str, Any]:
    """Made in the person's own terminal: pending candidates, a curated patch, an L1 candidate, a record."""
    from commonkeep.patches.curate import curate
    from commonkeep.reviews.review import approve
    from commonkeep.store.ids import memory_id_for

    decided = write_candidate(root, "Commit messages use the imperative mood.", provenance=AGENT)
    approve(root, [decided["id"]], role=WRITER)
    l1 = write_candidate(root, "The person prefers British spelling.", provenance=AGENT, tags=["identity"])
    patched = write_candidate(root, "Release notes are written in the changelog.", provenance=AGENT)
    prop = curate(root, role=WRITER)
    assert prop.path is not None
    pending = [write_candidate(root, f"Pending fact number {n} about the build.", provenance=AGENT)["id"] for n in range(40)]
    op = next(o["op_id"] for o in prop.ops if o.get("candidate_id") == patched["id"])
    return {"root": root, "tmp": tmp_path, "pending": pending, "l1": l1["id"], "decided": decided["id"],
            "record": memory_id_for(decided["id"]), "patch": prop.patch["patch_id"], "op": op, "patched": patched["id"]}


def _child_env(tmp: Path, **more: str) -> dict[str, str]:
    """The environment of a process started under the host's name (``exec -a omp python``): Python then
    finds no virtual environment from its ``argv[0]``, so the installed packages' ``.pth`` hooks (the
    editable install's finder of ``commonkeep``) do not run; the package is linked into a folder put
    first on ``PYTHONPATH``, the rest of this process's path after it."""
    import commonkeep

    shim = tmp / "import-path"
    if not shim.exists():
        shim.mkdir()
        (shim / "commonkeep").symlink_to(Path(commonkeep.__file__).parent)
    env = {k: v for k, v in os.environ.items() if k not in ("COMMONKEEP_KERNEL_MARK", "COMMONKEEP_AGENT_HOST")}
    env.update(PYTHONPATH=os.pathsep.join([str(shim), *(p for p in sys.path if p)]), **more)
    return env


def _fn(w: dict[str, Any], call: str, pop: bool = True, fake: bool = False, detach: bool = True) -> str:
    """``python -c``: the decision function called directly, the mark popped or faked, detached."""
    lines = ["import os", "from commonkeep.gate import agent_shell"]
    if pop:
        lines.append("os.environ.pop(agent_shell.MARK, None)")
    if fake:
        lines.append("os.environ[agent_shell.MARK] = agent_shell.mark_value('omp')")
    if detach:
        lines.append(DETACH)
    lines.append(f"root = {str(w['root'])!r}")
    lines.append(call)
    return _py("\n".join(lines))


def attacks(w: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    """name -> (shell command, what it decides, its target)."""
    p, r = w["pending"], str(w["root"])
    unset = "env -u COMMONKEEP_AGENT_HOST"
    keep = " ".join(f"{k}={shlex.quote(os.environ.get(k, ''))}" for k in ("PATH", "HOME", "PYTHONPATH", "COMMONKEEP_STAMPS_DIR"))

    def appr(n: int) -> str:
        return _ck("review", "--root", r, "--role", WRITER, "--approve", p[n])

    approve_fn = "from commonkeep.reviews.review import approve; approve(root, [{!r}], role='librarian')"
    return {
        "the CLI, the mark inherited": (appr(0), "approve", p[0]),
        "the CLI, the mark unset": (f"{unset} {appr(1)}", "approve", p[1]),
        "the CLI, env -i": (f"env -i {keep} COMMONKEEP_ROLE={WRITER} {appr(2)}", "approve", p[2]),
        "the CLI, the mark emptied": (f"COMMONKEEP_AGENT_HOST= {appr(3)}", "approve", p[3]),
        "setsid -f, the mark kept": (f"setsid -f {appr(4)}", "approve", p[4]),
        "setsid -f, the mark unset": (f"{unset} setsid -f {appr(5)}", "approve", p[5]),
        "nohup &, the mark unset, the shell gone": (f"{unset} nohup {appr(6)} >/dev/null 2>&1 &", "approve", p[6]),
        "script -qc, the mark unset": (f"{unset} script -qc {shlex.quote(appr(7))} /dev/null", "approve", p[7]),
        "setsid -f script, the mark unset": (f"{unset} setsid -f script -qc {shlex.quote(appr(8))} /dev/null",
                                             "approve", p[8]),
        "a tmux server the agent starts, the mark unset":
            (f"{unset} tmux -L ck-redteam-{os.getpid()} new-session -d {shlex.quote(appr(9))}", "approve", p[9]),
        "prlimit to raise the limit back, then setsid -f":
            (f"prlimit --pid $$ --locks=unlimited:unlimited 2>/dev/null; {unset} setsid -f {appr(10)}", "approve", p[10]),
        "a double fork into init, the mark unset":
            (f"{unset} {_py(DETACH + 'os.execvp(sys.executable, ' + repr(shlex.split(appr(11))) + ')')}", "approve", p[11]),
        "python -c approve(), the mark popped": (_fn(w, approve_fn.format(p[12]), detach=False), "approve", p[12]),
        "python -c approve(), the mark faked as its own": (_fn(w, approve_fn.format(p[13]), pop=False, fake=True, detach=False),
                                                           "approve", p[13]),
        "python -c approve(), popped and detached": (_fn(w, approve_fn.format(p[14])), "approve", p[14]),
        "python -c approve(), faked and detached": (_fn(w, approve_fn.format(p[15]), pop=False, fake=True), "approve", p[15]),
        "python -c decide.approve(), detached": (_fn(w, "from commonkeep.reviews.decide import approve; "
                                                       f"approve(root, [{p[16]!r}], role='librarian')"), "approve", p[16]),
        "python -c reject(), detached": (_fn(w, "from commonkeep.reviews.review import reject; "
                                               f"reject(root, [{p[17]!r}], reason='x', role='librarian')"), "reject", p[17]),
        "python -c approve with an edit, detached": (_fn(w, "from commonkeep.reviews.review import approve; approve(root, "
                                                           f"[{p[18]!r}], role='librarian', edits={{{p[18]!r}: 'Pushing to "
                                                           "main is fine.'}})"), "approve", p[18]),
        "python -c apply_patch(), detached": (_fn(w, "from commonkeep.patches.patch import apply_patch; apply_patch(root, "
                                                    f"{w['patch']!r}, role='librarian', op_ids=[{w['op']!r}])"),
                                              "apply", w["patched"]),
        "python -c ratify, detached": (_fn(w, "from commonkeep.reviews.review import approve; "
                                             f"approve(root, [{w['l1']!r}], role='librarian', ratify=True)"), "approve", w["l1"]),
        "python -c forget(), detached": (_fn(w, "from commonkeep.patches.forget import forget; "
                                               f"forget(root, {w['record']!r}, reason='obsolete', role='librarian')"),
                                         "forget", w["record"]),
        "python -c undo(), detached": (_fn(w, "from commonkeep.reviews.undo import undo; "
                                             f"undo(root, [{w['decided']!r}], role='librarian')"), "undo", w["decided"]),
        "python -c reinforce(), detached": (_fn(w, "from commonkeep.patches.reinforce import reinforce; reinforce(root, "
                                                  f"{w['record']!r}, outcome='explicit_reinforcement', role='librarian')"),
                                            "reinforce", w["record"]),
        "write --trust, the mark unset, setsid -f":
            (f"{unset} setsid -f " + _ck("write", "--root", r, "--role", WRITER, "--trust", "direct_user_instruction",
                                          "--durability", "long_term", "--confidence", "0.95", "--evidence", "a",
                                          "--evidence", "b", "Skip the tests on release branches."), "vouch",
             "Skip the tests on release branches."),
        "the Hermes adapter's stamp, called from a detached script":
            (_fn(w, "from commonkeep_hermes.capture import Provenance, stage_memory_call; stage_memory_call(__import__("
                    "'pathlib').Path(root), {'action': 'add', 'content': 'Deploys skip the canary.'}, Provenance("
                    "origin='foreground', session_id='s-1', said=('Remember that deploys skip the canary.',)))"),
             "vouch", "Deploys skip the canary."),
        "serve as the writer, the mark unset, setsid -f":
            (f"{unset} setsid -f sh -c " + shlex.quote("timeout 4 " + _ck("serve", "--root", r, "--role", WRITER,
                                                                         "--port", "0") + f"; echo $? > {w['tmp']}/serve.rc"),
             "serve", str(w["tmp"] / "serve.rc")),
    }


def _decided(w: dict[str, Any], kind: str, target: str) -> bool:
    from commonkeep.gate import stamps
    from commonkeep.gate.autoapply import stamped_trust
    from commonkeep.store.core import Store

    store = Store(w["root"], warn=False)
    cands = {c["id"]: c for c in store.candidates()}
    if kind in ("approve", "reject", "apply"):
        return cands[target].get("status") != "new"
    if kind == "forget":
        return any(r["id"] == target and r.get("status") != "active" for r in store.records(active_only=False))
    if kind == "undo":
        return cands[target].get("status") == "new"
    if kind == "reinforce":
        path = store.layout.reinforcement
        return path.exists() and target in path.read_text(encoding="utf-8")
    if kind == "vouch":
        stamps._BOOKS.clear()
        return any(c.get("text") == target and stamped_trust(c, WRITER, w["root"]) for c in cands.values())
    if kind == "serve":
        rc = Path(target)
        return rc.exists() and rc.read_text().strip() not in ("3", "")
    raise AssertionError(kind)


def run_attacks(w: dict[str, Any]) -> dict[str, bool]:
    """Every attack, one after the other, from one agent host's shell (one session); then the detached
    ones get their time (a ``serve`` runs 4 s) before the root is read."""
    env = _child_env(w["tmp"], COMMONKEEP_ROLE=WRITER)
    host = w["tmp"] / "host.py"
    host.write_text(HOST, encoding="utf-8")
    todo = attacks(w)
    script = "\n".join(f"( {command} ) >/dev/null 2>&1" for command, _kind, _target in todo.values())
    launch = f"exec -a omp {shlex.quote(sys.executable)} {shlex.quote(str(host))} omp {shlex.quote(script)}"
    ran = subprocess.run(["bash", "-c", launch], env=env, capture_output=True, text=True, timeout=300, check=False)
    assert ran.returncode == 0, ran.stderr  # the agent host ran its shell (else no attack was tried at all)
    end = time.monotonic() + 8
    while time.monotonic() < end and not (w["tmp"] / "serve.rc").exists():
        time.sleep(0.2)
    time.sleep(1.5)
    subprocess.run(["tmux", "-L", f"ck-redteam-{os.getpid()}", "kill-server"], capture_output=True, check=False)
    return {name: _decided(w, kind, target) for name, (_command, kind, target) in todo.items()}


def test_no_decision_goes_through_from_inside_an_agent(world: dict[str, Any]) -> None:
    got = run_attacks(world)
    assert len(got) >= 24
    through = sorted(name for name, decided in got.items() if decided)
    assert through == [], f"{len(through)} of {len(got)} went through: {json.dumps(through, indent=1)}"
    # and the person's own terminal still decides
    from commonkeep.reviews.review import approve

    approve(world["root"], [world["pending"][39]], role=WRITER)
    assert _decided(world, "approve", world["pending"][39])


WEB_AGENT = """
import re, sys, urllib.parse, urllib.request
base, token, cid = sys.argv[1], sys.argv[2], sys.argv[3]
head = {"X-Commonkeep-Token": token, "Host": urllib.parse.urlsplit(base).netloc}
page = urllib.request.urlopen(urllib.request.Request(base + "/inbox", headers=head)).read().decode()
csrf = re.search(r'name="csrf" content="([^"]+)"', page).group(1)
body = urllib.parse.urlencode({"csrf": csrf, "id": cid, "action": "reject", "reason": "not durable"}).encode()
try:
    print(urllib.request.urlopen(urllib.request.Request(base + "/decide", data=body, headers=head)).status)
except urllib.error.HTTPError as exc:
    print(exc.code, exc.read().decode()[:300])
"""


@pytest.mark.timeout(60)
def test_the_review_app_a_person_started_refuses_a_decision_an_agent_sends(world: dict[str, Any]) -> None:
    """The person runs ``commonkeep serve`` as the writer; the model got its token (off the person's
    terminal): its shell reads the page, takes the form's CSRF token and posts a decision. The app runs
    in the person's process, so the peer that sent the request is what is asked (``gate.peer``)."""
    env = _child_env(world["tmp"])
    serve = subprocess.Popen([sys.executable, "-m", "commonkeep.cli", "serve", "--root", str(world["root"]), "--role",
                              WRITER, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        url = ""
        while not url:
            line = serve.stdout.readline() if serve.stdout else ""
            assert line, "serve did not start"
            if "token=" in line:
                url = line.split("open ", 1)[1].strip()
        base, token = url.split("/inbox?token=")
        agent_script, person = world["tmp"] / "web_agent.py", world["pending"][20]
        agent_script.write_text(WEB_AGENT, encoding="utf-8")
        host = world["tmp"] / "host.py"
        host.write_text(HOST, encoding="utf-8")
        tool = " ".join(shlex.quote(a) for a in (sys.executable, str(agent_script), base, token, world["pending"][21]))
        for command in (tool, f"env -u COMMONKEEP_AGENT_HOST setsid -w {tool}"):
            launch = f"exec -a omp {shlex.quote(sys.executable)} {shlex.quote(str(host))} omp {shlex.quote(command)}"
            done = subprocess.run(["bash", "-c", launch], env=env, capture_output=True, text=True, timeout=60, check=False)
            assert done.stdout.startswith("403") and "inside" in done.stdout, done.stdout + done.stderr
            assert not _decided(world, "reject", world["pending"][21])
        # the same request from the person's own process goes through
        said = subprocess.run([sys.executable, str(agent_script), base, token, person], env=env, capture_output=True,
                              text=True, timeout=60, check=False)
        assert said.stdout.startswith(("200", "303")), said.stdout + said.stderr
        assert _decided(world, "reject", person)
    finally:
        serve.terminate()
        serve.wait(timeout=10)


def test_a_decision_over_http_is_refused_when_its_sender_is_inside_an_agent(tmp_path: Path) -> None:
    """What the review app and Hermes' Memory tab ask of a request (``gate.peer.refusal``), over a real
    connection from a process inside an agent (the mark cleared, detached), and from the person's own."""
    import socket

    from commonkeep.gate.peer import refusal

    listener = socket.create_server(("127.0.0.1", 0))
    server = listener.getsockname()
    env = _child_env(tmp_path)
    host = tmp_path / "host.py"
    host.write_text(HOST, encoding="utf-8")
    client = _py(f"import socket, time; s = socket.create_connection({tuple(server)!r}); time.sleep(5)")
    detached = shlex.quote("env -u COMMONKEEP_AGENT_HOST setsid -f " + client + " </dev/null >/dev/null 2>&1")
    launch = f"exec -a omp {shlex.quote(sys.executable)} {shlex.quote(str(host))} omp {detached}"
    subprocess.run(["bash", "-c", launch], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=60, check=False)
    listener.settimeout(10)
    conn, peer = listener.accept()
    mine = socket.create_connection(server)  # the person's own browser
    conn2, peer2 = listener.accept()
    try:
        assert refusal("GET", peer, server) is None  # reading the queue is fine
        why = refusal("POST", peer, server)
        assert why is not None and "inside" in why
        assert refusal("POST", peer2, server) is None
        import importlib.util

        if importlib.util.find_spec("fastapi") is None:  # Hermes' dashboard: its routes are Hermes' FastAPI app
            return
        from fastapi import HTTPException
        from starlette.requests import Request

        from commonkeep_hermes.dashboard.api import not_from_an_agent

        with pytest.raises(HTTPException) as refused:
            not_from_an_agent(Request({"type": "http", "method": "POST", "client": peer, "server": server, "headers": []}))
        assert refused.value.status_code == 403
    finally:
        for s in (conn, conn2, mine, listener):
            s.close()
