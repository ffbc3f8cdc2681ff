"""The exit gate (``commonkeep.store.exitgate``): a secret another program writes into a file of the
root, or into Hermes' memory files, reaches nothing commonkeep writes, copies, indexes or pushes.

Planted, freshly random at every run: a GitHub token, an AWS key pair, a password assignment and a
private key block, each in every file another program writes, as that program writes it:

- OmpKeep's daily log (``daily/<today>.md``: ``"\\n\\n" + content + "\\n"``, contract §2.3),
- OmpKeep's scratchpad (``- [ ] text`` lines),
- an inbox line OmpKeep's ``memory_write`` appends raw (``JSON.stringify`` of a candidate),
- Hermes' ``MEMORY.md`` and ``USER.md`` edited by the model (an entry appended after ``§``).

Then every commonkeep path runs over them: ``select`` (``runtime/context.md``), ``project``,
``handoff`` (plain and with a goal), ``search --notes``, the web app's inbox and candidate pages,
``hermes sync`` (capture of the edit, the backup, the re-render), ``write``, ``review --approve``
of the raw inbox line, ``curate --auto``, ``render``, ``doctor`` (which names the file and the
kinds, never a value), ``share init`` and two ``share sync`` runs to a local bare remote (with a
line appended by "OmpKeep" between the gate's sweep and the staging), ``reindex`` and ``search``.
Each path's own output is checked right after it runs, before any later step could have cleaned
the originals in place; at the end nothing under the root (files, names, both search databases'
bytes and FTS5 terms, git objects), under the Hermes home, in the bare remote's objects (read
through ``git cat-file --batch-all-objects``, which inflates them) or in anything printed holds
a planted value, and ``audit/log.jsonl`` names each file the gate redacted, by kind only.
"""

from __future__ import annotations

import json
import random
import string
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.governance.conftest import WRITER
from tests.governance.test_secrets_e2e_places import _fts_terms

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


class Plants:
    """Four secrets (five values: the AWS pair is two), drawn at run time, nothing committed."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        self.github = "ghp_" + _rand(rng, ALNUM, 36)
        self.aws_id = "AKIA" + _rand(rng, string.ascii_uppercase + string.digits, 16)
        self.aws_secret = _rand(rng, B64, 40)
        self.password = _rand(rng, ALNUM, 10) + "!#" + _rand(rng, ALNUM, 6)
        self.key_lines = [_rand(rng, B64, 64) for _ in range(6)]

    @property
    def cores(self) -> list[str]:
        """The random parts that must never be found again (each checked by 12-character windows)."""
        return [self.github[4:], self.aws_id[4:], self.aws_secret, self.password, *self.key_lines]

    def key_block(self) -> str:
        return "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *self.key_lines, "-----END RSA PRIVATE KEY-----"])

    def sentences(self) -> list[str]:
        """One line each (the key block is several)."""
        return [f"deploy with the token {self.github} from now on",
                f"aws_access_key_id = {self.aws_id} and aws_secret_access_key = {self.aws_secret}",
                f"the staging database: DB_PASSWORD={self.password}",
                f"the signing key:\n{self.key_block()}"]

    def windows(self) -> list[str]:
        out = []
        for core in self.cores:
            out += [core[i:i + 12] for i in range(0, len(core) - 11, 3)]
        return out

    def found(self, data: bytes | str, where: str) -> list[str]:
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        low = text.lower()
        return sorted({f"{w!r} in {where}" for w in self.windows() if w in text or w.lower() in low})


def _git_objects(repo: Path) -> bytes:
    """Every object of a repository, inflated (git reads its own zlib streams and packs)."""
    done = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch-all-objects", "--batch"], capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


def _everything(base: Path) -> list[tuple[str, bytes]]:
    """(where, bytes) of every file and file name under ``base``, and every object of each git repo in it."""
    out: list[tuple[str, bytes]] = []
    for p in sorted(base.rglob("*")):
        rel = p.relative_to(base).as_posix()
        out.append((f"name {rel}", rel.encode()))
        if p.is_file() and not p.is_symlink() and ".git" not in p.relative_to(base).parts:
            out.append((rel, p.read_bytes()))
        if p.name == ".git" and p.is_dir():
            out.append((f"git objects of {rel}", _git_objects(p.parent)))
    return out


def _leaks(plants: Plants, base: Path, label: str) -> list[str]:
    return [hit for where, data in _everything(base) for hit in plants.found(data, f"{label}/{where}")]


def _ompkeep_writes(root: Path, plants: Plants, date: str, n: int = 1) -> None:
    """What OmpKeep writes, as it writes it (no commonkeep code involved)."""
    daily = root / "daily" / f"{date}.md"
    for sentence in plants.sentences():
        with daily.open("a", encoding="utf-8") as fh:  # contract §2.3: "\n\n" when not empty, trim(content) + "\n"
            fh.write(("\n\n" if daily.exists() and daily.stat().st_size else "") + sentence.strip() + "\n")
    with (root / "scratchpad.md").open("a", encoding="utf-8") as fh:
        for sentence in plants.sentences():
            fh.write(f"- [ ] {sentence}\n")
    # memory_write target long_term (contract §6.10), its text as the model gave it
    candidate = {"id": f"cap_{date.replace('-', '')}00000{n}_omp{n}", "created_at": f"{date}T08:00:0{n}.000Z",
                 "source": {"type": "manual", "ref": f"daily/{date}.md", "cwd": "/work/app"},
                 "text": " ".join(plants.sentences()[:3]), "tags": ["deploy"], "evidence_refs": [f"daily/{date}.md"],
                 "status": "new", "confidence": 0.7, "primary_trust_class": "direct_user_instruction",
                 "durability_signal": "long_term", "promotion_eligibility": "auto_candidate"}
    with (root / "inbox" / "captured.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(candidate, separators=(",", ":"), ensure_ascii=False) + "\n")


def _hermes_model_edits(profile: Any, plants: Plants) -> None:
    """Hermes' memory tool (the model) appends an entry to each file, as Hermes writes them."""
    for target, text in (("memory", f"{plants.sentences()[0]}; {plants.sentences()[2]}"),
                         ("user", f"{plants.sentences()[1]}\n{plants.key_block()}")):
        path = profile.memory_file(target)
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        path.write_text((old + "\n§\n" if old else "") + text, encoding="utf-8")


def test_secrets_other_programs_write_reach_nothing_commonkeep_writes_or_pushes(
    tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from starlette.testclient import TestClient

    from commonkeep.cli import main
    from commonkeep.store import exitgate
    from commonkeep.store.core import Store
    from commonkeep.util.timeutil import today
    from commonkeep.web.app import Settings, build
    from commonkeep.web.security import Keys
    from commonkeep_hermes.settings import HermesProfile

    for var, value in (("GIT_AUTHOR_NAME", "plant test"), ("GIT_AUTHOR_EMAIL", "plant@test.invalid"),
                       ("GIT_COMMITTER_NAME", "plant test"), ("GIT_COMMITTER_EMAIL", "plant@test.invalid")):
        monkeypatch.setenv(var, value)  # the CI account has no git identity
    plants = Plants(random.SystemRandom().randrange(1 << 30))
    date = today()
    r = ["--root", str(root), "--role", WRITER]
    printed: list[str] = []

    def run(*args: str, code: int | None = 0) -> str:
        got = main([*args, *(r if args[0] != "hermes" else r[:2])])
        out = capsys.readouterr()
        printed.append(out.out + out.err)
        if code is not None:
            assert got == code, f"commonkeep {' '.join(args)} exited {got}:\n{out.out}{out.err}"
        return out.out + out.err

    home = tmp_path / "hermes"
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  memory_char_limit: 2200\n  user_char_limit: 1375\n")
    profile = HermesProfile(home)
    run("write", "We deploy with make release.", "--evidence", "docs/ops.md", "--evidence", "ci.log")
    run("curate", "--auto")
    h = ["--hermes-home", str(home)]
    run("hermes", "sync", *h)  # the first render: the sidecar knows commonkeep's own entries from now on

    # the other programs write
    _ompkeep_writes(root, plants, date)
    _hermes_model_edits(profile, plants)
    assert plants.found((root / "daily" / f"{date}.md").read_text(), "daily"), "the plant did not land"

    # 1. select replays daily and scratchpad lines into the agent's context
    run("select", "deploy token staging database signing key")
    assert plants.found((root / "runtime" / "context.md").read_text(), "context.md") == []
    context = (root / "runtime" / "context.md").read_text()
    assert "## Daily Log" in context and "## Scratchpad" in context and "[REDACTED:" in context
    # ... because the two files it replays passed the gate in place first, each with an audit line
    assert plants.found((root / "daily" / f"{date}.md").read_text() + (root / "scratchpad.md").read_text(), "") == []
    assert {(e["file"], e["during"]) for e in exitgate.events(root)} == {(f"daily/{date}.md", "select"),
                                                                          ("scratchpad.md", "select")}
    _ompkeep_writes(root, plants, date, 2)  # OmpKeep goes on writing
    # 2. projections and handoffs
    run("project")
    run("handoff")
    run("handoff", "--goal", "rotate the deploy token")
    # 3. the notes index (daily logs) and its search
    run("search", "deploy", "--notes")
    # 4. the web app's views of the inbox, and what prints it (the raw line OmpKeep wrote is a candidate)
    keys = Keys()
    guard, _ = build(Settings(root=root, role=WRITER, keys=keys))
    with TestClient(guard, base_url="http://127.0.0.1") as client:
        pages = [client.get(p, headers={"x-commonkeep-token": keys.token})
                 for p in ("/inbox", f"/candidates/cap_{date.replace('-', '')}000001_omp1")]
    assert all(p.status_code == 200 for p in pages), [p.status_code for p in pages]
    assert "deploy with the token [REDACTED:" in pages[1].text
    assert plants.found("".join(p.text for p in pages), "web pages") == []
    # (the web app redacts what it shows; these commands redact the inbox in place first)
    for cmd in (["inbox"], ["inbox", "--json"], ["review", "--list"], ["review", "--list", "--json"]):
        assert plants.found(run(*cmd), " ".join(cmd)) == []
    assert plants.found((root / "inbox" / "captured.jsonl").read_text(), "inbox") == []
    # 5. Hermes: the model's edit is captured (redacted), backed up (redacted), re-rendered
    run("hermes", "sync", *h)
    backups = sorted((home / "commonkeep" / "backups").glob("*.md.*"))
    assert {b.name.split(".")[0] for b in backups} == {"MEMORY", "USER"}
    assert all("[REDACTED:" in b.read_text() for b in backups)
    assert _leaks(plants, home, "hermes home") == []
    # 6. the raw inbox line approved, everything curated and rendered
    run("review", "--approve", f"cap_{date.replace('-', '')}000001_omp1")
    run("curate", "--auto")
    run("render")
    assert [hit for rel in ("memory", "rendered", "patches", "reports", "search", "runtime")
            for hit in _leaks(plants, root / rel, rel)] == []
    # 7. doctor names what an outside file holds (file, kinds), never the value; exit 1
    said = run("doctor", code=1)
    assert f"daily/{date}.md:" in said and "scratchpad.md:" in said and "github_token" in said
    assert "doctor --redact" in said
    # 8. share: init redacts in place; a line OmpKeep appends right after the sync's own sweep is
    #    redacted on its way into git too
    remote = tmp_path / "remote.git"
    assert subprocess.run(["git", "init", "-q", "--bare", str(remote)]).returncode == 0
    said = run("share", "init", "--remote", str(remote))
    assert f"daily/{date}.md" in said and "(audit/log.jsonl)" in said
    assert plants.found((root / "daily" / f"{date}.md").read_text(), "daily") == []
    _ompkeep_writes(root, plants, date, 3)  # more after init: the sync's own sweep takes them
    run("share", "sync")
    real_sweep = exitgate.sweep

    def sweep_then_omp_appends(where: Any, **kw: Any) -> list[exitgate.Swept]:
        done = real_sweep(where, **kw)
        daily = Path(where) / "daily" / f"{date}.md"
        if daily.exists():
            with daily.open("a", encoding="utf-8") as fh:  # OmpKeep, between the sweep and `git add`
                fh.write(f"\n\nlate: {plants.sentences()[0]}\n")
        return done

    monkeypatch.setattr(exitgate, "sweep", sweep_then_omp_appends)
    said = run("share", "sync")
    monkeypatch.setattr(exitgate, "sweep", real_sweep)
    assert "secrets other programs wrote were redacted" in said
    log = subprocess.run(["git", "-C", str(remote), "log", "--all", "-p", "--format=%H"], capture_output=True)
    assert log.returncode == 0 and b"late: deploy with the token [REDACTED:" in log.stdout
    # 9. the indexes rebuilt and searched
    run("reindex")
    run("search", "deploy", "--notes")
    run("search", "signing key")
    run("doctor")  # nothing left: exit 0

    found = (_leaks(plants, root, "root") + _leaks(plants, home, "hermes home")
             + plants.found(_git_objects(remote), "the bare remote's objects")
             + plants.found(_fts_terms(root), "FTS5 terms") + plants.found("\n".join(printed), "printed output"))
    assert found == [], "\n".join(found[:20])
    # the audit log names each file the gate redacted, by kind, never a value
    events = exitgate.events(root)
    files = {e["file"] for e in events}
    assert {f"daily/{date}.md", "scratchpad.md", "inbox/captured.jsonl"} <= files
    assert any(f.endswith(tuple(f"{n}.md" for n in ("MEMORY", "USER"))) or "/backups/" in f for f in files)
    assert all(isinstance(e["kinds"], dict) and e["kinds"] for e in events)
    kinds = {k for e in events for k in e["kinds"]}
    assert "github_token" in kinds and "aws_access_key" in kinds
    assert Store(root).candidates()  # the store is still readable as a whole
