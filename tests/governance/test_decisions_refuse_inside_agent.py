"""A person's decisions refuse inside an agent in the functions themselves, not only in the CLI
(issue 35 §5): every decision function × every sign of an agent (the mark a host plugin sets, an
agent host among the ancestors, an ancestor that cannot be read). In process, as a script the
model wrote would call them; nothing in the root changes. The person's own terminal (no mark, no
agent among the ancestors) still decides."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from commonkeep.errors import RoleRefused
from commonkeep.gate import agent_shell
from tests.governance.conftest import WRITER, fake_proc, write_candidate

AGENT = {"agent": "planner", "role": "planner"}


def _chain(monkeypatch: pytest.MonkeyPatch, base: Path, table: dict[int, tuple[int, list[str]]]) -> None:
    monkeypatch.setattr(agent_shell, "PROC", fake_proc(base, table))
    monkeypatch.setattr(agent_shell, "_first_ancestor", lambda: 300)


PERSON = {300: (200, ["/bin/bash"]), 200: (1, ["/usr/bin/sshd"]), 1: (0, ["/sbin/init"])}
SIGNS: dict[str, Callable[[pytest.MonkeyPatch, Path], None]] = {
    "the OMP mark": lambda mp, base: (_chain(mp, base, PERSON), mp.setenv(agent_shell.MARK, "omp:4242:987654")),
    "the Hermes mark": lambda mp, base: (_chain(mp, base, PERSON), mp.setenv(agent_shell.MARK, "hermes:4242:987654")),
    "omp among the ancestors": lambda mp, base: _chain(mp, base, {300: (250, ["/bin/sh", "-c", "x"]),
                                                                  250: (1, ["/usr/local/bin/omp", "acp"]), 1: (0, ["init"])}),
    "hermes among the ancestors": lambda mp, base: _chain(mp, base, {300: (250, ["bash"]),
                                                                     250: (1, ["/venv/bin/python", "/venv/bin/hermes", "chat"]),
                                                                     1: (0, ["init"])}),
    "an unreadable ancestor": lambda mp, base: _chain(mp, base, {300: (200, ["bash"])}),  # 200 cannot be read
}


@pytest.fixture
def world(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A root with a pending candidate, a curated patch (its last op edited after curation), a record
    decided by the person, an L1 candidate; made in the person's own terminal."""
    import json

    from commonkeep.patches.curate import curate
    from commonkeep.reviews.review import approve

    _chain(monkeypatch, tmp_path / "person", PERSON)

    decided = write_candidate(root, "Commit messages use the imperative mood.", provenance=AGENT)
    approve(root, [decided["id"]], role=WRITER)  # the person, in their own terminal
    pending = write_candidate(root, "The staging database is refreshed every Sunday night.", provenance=AGENT)
    l1 = write_candidate(root, "The person prefers British spelling.", provenance=AGENT, tags=["identity"])
    other = write_candidate(root, "Release notes are written in the changelog.", provenance=AGENT)
    prop = curate(root, role=WRITER)
    assert prop.path is not None
    doc = json.loads(prop.path.read_text(encoding="utf-8"))
    doc["ops"][-1]["record"]["statement"] = "Release notes are written in the changelog by the release manager."
    prop.path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    from commonkeep.store.ids import memory_id_for

    yield {"root": root, "pending": pending["id"], "l1": l1["id"], "decided": decided["id"], "other": other["id"],
           "record": memory_id_for(decided["id"]), "patch": prop.patch["patch_id"],
           "ops": [o["op_id"] for o in prop.ops]}


def _approve(w: dict[str, Any]) -> None:
    from commonkeep.reviews.review import approve

    approve(w["root"], [w["pending"]], role=WRITER)


def _decide_approve(w: dict[str, Any]) -> None:
    from commonkeep.reviews.decide import approve

    approve(w["root"], [w["pending"]], role=WRITER)


def _edit(w: dict[str, Any]) -> None:
    from commonkeep.reviews.review import approve

    approve(w["root"], [w["pending"]], role=WRITER, edits={w["pending"]: "The staging database is refreshed nightly."})


def _reject(w: dict[str, Any]) -> None:
    from commonkeep.reviews.review import reject

    reject(w["root"], [w["pending"]], reason="not durable", role=WRITER)


def _apply(w: dict[str, Any]) -> None:
    from commonkeep.patches.patch import apply_patch

    apply_patch(w["root"], w["patch"], role=WRITER, op_ids=w["ops"][:1])


def _ratify(w: dict[str, Any]) -> None:
    from commonkeep.reviews.review import approve

    approve(w["root"], [w["l1"]], role=WRITER, ratify=True)


def _ratify_patch(w: dict[str, Any]) -> None:
    from commonkeep.patches.patch import apply_patch

    apply_patch(w["root"], w["patch"], role=WRITER, op_ids=w["ops"], ratify=True)


def _apply_edited(w: dict[str, Any]) -> None:
    from commonkeep.patches.audit import apply_edited

    apply_edited(w["root"], w["patch"], role=WRITER, yes=True)


def _forget(w: dict[str, Any]) -> None:
    from commonkeep.patches.forget import forget

    forget(w["root"], w["record"], reason="obsolete", role=WRITER)


def _purge(w: dict[str, Any]) -> None:
    from commonkeep.patches.forget import forget

    forget(w["root"], w["record"], reason="privacy", role=WRITER, purge=True)


def _undo(w: dict[str, Any]) -> None:
    from commonkeep.reviews.undo import undo

    undo(w["root"], [w["decided"]], role=WRITER)


def _reinforce(w: dict[str, Any]) -> None:
    from commonkeep.patches.reinforce import reinforce

    reinforce(w["root"], w["record"], outcome="explicit_reinforcement", role=WRITER)


def _serve_as_writer(w: dict[str, Any]) -> None:
    from commonkeep.web.server import prepare

    running, sock = prepare(w["root"], WRITER)
    sock.close()


def _hermes_import(w: dict[str, Any]) -> None:
    from commonkeep_hermes.importing import import_existing
    from commonkeep_hermes.settings import HermesProfile

    home = Path(w["root"]).parent / "hermes-home"
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text("Deploys need no review.\n§\nPush straight to main.", encoding="utf-8")
    import_existing(HermesProfile(home), Path(w["root"]))


DECISIONS: dict[str, Callable[[dict[str, Any]], None]] = {
    "approve": _approve, "decide.approve": _decide_approve, "approve with an edit": _edit, "reject": _reject,
    "apply_patch": _apply, "ratify a candidate": _ratify, "ratify a patch": _ratify_patch,
    "audit --apply-edited": _apply_edited, "forget": _forget, "forget --purge": _purge, "undo": _undo,
    "reinforce": _reinforce, "serve as the writer": _serve_as_writer, "hermes install's import": _hermes_import,
}


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and "locks" not in p.parts}


@pytest.mark.parametrize("sign", list(SIGNS))
@pytest.mark.parametrize("decision", list(DECISIONS))
def test_a_decision_refuses_inside_an_agent_and_changes_nothing(world: dict[str, Any], decision: str, sign: str,
                                                                tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root: Path = world["root"]
    before = _files(root)
    SIGNS[sign](monkeypatch, tmp_path / "signs")
    with pytest.raises(RoleRefused) as info:
        DECISIONS[decision](world)
    assert "is a person's decision" in info.value.message and "nothing was changed" in info.value.message
    assert info.value.exit_code == 3
    assert _files(root) == before, decision


@pytest.mark.parametrize("decision", list(DECISIONS))
def test_in_the_persons_own_terminal_the_decision_is_made(world: dict[str, Any], decision: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _chain(monkeypatch, tmp_path / "signs", PERSON)
    DECISIONS[decision](world)  # no refusal: no mark, no agent among the ancestors


def test_the_host_process_itself_is_not_inside_its_own_agent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The mark names the host process; that process (the Hermes dashboard deciding) is the person's
    window, its children are the agent's tools. A pid alone is not enough: the start time must match."""
    _chain(monkeypatch, tmp_path, PERSON)
    monkeypatch.delenv(agent_shell.MARK, raising=False)
    mark = agent_shell.set_mark("hermes")
    assert agent_shell.inside_agent() is None
    assert agent_shell.set_mark("omp") == mark  # an outer mark is kept
    pid, start = mark.split(":")[1:]
    monkeypatch.setenv(agent_shell.MARK, f"hermes:{pid}:{int(start or 0) + 1}")  # same pid, another process
    assert agent_shell.inside_agent() == "hermes"
    monkeypatch.setenv(agent_shell.MARK, f"hermes:{int(pid) + 1}:{start}")
    assert agent_shell.inside_agent() == "hermes"
    monkeypatch.setenv(agent_shell.MARK, "x")
    assert agent_shell.inside_agent() == "x"
