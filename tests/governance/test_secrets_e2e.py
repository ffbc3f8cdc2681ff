"""210 generated secrets of 35 kinds through every entry point; afterwards no byte holds one.

Entry points: CLI ``write`` (candidates, tags, evidence, daily log), ``capture()``, MCP
``commonkeep_write`` as a non-writer role, the Hermes ``memory`` tool path and its entry
capture, curate and apply (also a hand-written patch), review, reinforce, forget with a purge,
inquiries, ``select`` (``runtime/context.md``), ``search`` (both search databases), handoffs, and
the wiki (``raw/`` sources, one named after a secret, ingest, gardener, query: its files, file
names, ``facts.db`` and every git object). A secret split across two fields goes through the
entry points that take two. The check looks for each secret's random core and every window of it
(``corpus.windows``), as UTF-8 and as a JSON escape, in every file and git object.
"""

from __future__ import annotations

import contextlib
import json
import random
import subprocess
from pathlib import Path

import pytest

from commonkeep.bench import secrets_corpus as corpus
from commonkeep.errors import CommonkeepError
from tests.governance.conftest import WRITER, write_candidate


def _forms(window: str) -> list[bytes]:
    forms = [window.encode("utf-8")]
    if not window.isascii():
        forms.append(json.dumps(window)[1:-1].encode("ascii"))
    return forms


def _blobs(base: Path) -> list[tuple[str, bytes]]:
    """(where, bytes) of every file under ``base`` (its path too), and every object of each git repo."""
    out: list[tuple[str, bytes]] = []
    for p in sorted(base.rglob("*")):
        rel = str(p.relative_to(base))
        out.append((f"name {rel}", rel.encode("utf-8")))
        if p.is_file() and ".git" not in p.relative_to(base).parts:
            out.append((rel, p.read_bytes()))
        if p.name == ".git" and p.is_dir():
            repo = p.parent
            dump = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch-all-objects", "--batch"],
                                  capture_output=True, check=True).stdout
            listing = subprocess.run(["git", "-C", str(repo), "rev-list", "--all", "--objects"],
                                     capture_output=True, check=True).stdout
            out.append((f"git objects of {repo.relative_to(base)}", dump + listing))
    return out


def leaks(base: Path, items: list[corpus.Planted]) -> list[str]:
    blobs = _blobs(base)
    found = []
    for item in items:
        for part in item.parts:
            for window in corpus.windows(part):
                for form in _forms(window):
                    found += [f"{item.kind} in {where}" for where, data in blobs if form in data]
    return sorted(set(found))


def test_two_hundred_and_ten_secrets_through_every_entry_point_reach_no_file(
    tmp_path: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from commonkeep import wiki
    from commonkeep.cli import main
    from commonkeep.patches.curate import curate
    from commonkeep.patches.forget import forget
    from commonkeep.patches.patch import apply_patch
    from commonkeep.patches.reinforce import reinforce
    from commonkeep.recall.select import select_for_prompt
    from commonkeep.reviews.review import approve, reject
    from commonkeep.store.core import Store
    from commonkeep.store.inquiries import upsert_inquiries
    from commonkeep.tools.agent import core_tools
    from commonkeep_hermes.capture import Provenance, capture_entries, stage_memory_call

    monkeypatch.setenv("OMP_MEMORY_ROOT", str(root))
    items = corpus.planted(210, seed=13)
    assert len({i.kind for i in items}) >= 25
    pairs = iter([i for i in items if len(i.fields) == 2])
    singles = iter([i for i in items if len(i.fields) == 1])

    def take(n: int) -> list[str]:
        return [next(singles).fields[0] for _ in range(n)]

    r = ["--root", str(root), "--role", WRITER]
    # 1. CLI write: text, tags, evidence; a split secret in text and evidence; the daily log
    for i, text in enumerate(take(15)):
        assert main(["write", f"Fact {i}: {text}", "--evidence", "daily/x.md", "--evidence", "ci.log", "--confidence", "0.9", *r]) == 0
    for text in take(5):
        assert main(["write", "tagged", "--tags", f"t,{text.split()[-1]}", "--evidence", text, *r]) == 0
    first, rest = next(pairs).fields
    assert main(["write", first, "--evidence", rest, *r]) == 0
    for text in take(12):
        assert main(["write", "--daily", text, *r]) == 0
    # 2. capture(): extra fields, provenance; a split secret in text and known exceptions
    for i, text in enumerate(take(12)):
        write_candidate(root, f"Rule {i}: {text}", tags=[f"r{i}"], provenance={"agent": "hermes", "session_id": text},
                        proposed_known_exceptions=[text])
    first, rest = next(pairs).fields
    write_candidate(root, first, proposed_known_exceptions=[rest])
    # 3. MCP commonkeep_write as a role that is not the writer
    write_tool = next(t for t in core_tools() if t.name == "commonkeep_write")
    for text in take(12):
        assert "Wrote candidate" in write_tool.call({"text": f"Team note: {text}", "tags": ["mcp"]}, "planner")
    first, rest = next(pairs).fields
    write_tool.call({"text": first, "tags": [rest]}, "planner")
    # 4. Hermes: the memory tool path (add, replace) and entries captured from its files
    prov = Provenance(origin="foreground", session_id="s1", tool_call_id="c1")
    for text in take(8):
        stage_memory_call(root, {"action": "add", "target": "memory", "content": text}, prov)
    stage_memory_call(root, {"operations": [{"action": "replace", "old_text": t, "content": u}
                                            for t, u in zip(take(3), take(3), strict=True)]}, prov)
    first, rest = next(pairs).fields
    stage_memory_call(root, {"action": "replace", "old_text": first, "content": rest}, prov)
    capture_entries(root, {"memory": take(5), "user": take(3)}, origin="external_edit")
    # 5. curate, apply; a hand-written patch; review; reinforce; forget with purge; inquiries
    prop = curate(root, role=WRITER, min_evidence=1, min_confidence=0.0)
    apply_patch(root, prop.patch["patch_id"], role=WRITER,
                op_ids=[o["op_id"] for o in prop.ops if o["op"] == "add" and o["record"]["layer"] == "L2"])
    hand = take(10)
    ops = []
    for i, text in enumerate(hand, 1):
        rec = {"id": f"mem_20261202120000_hand{i:04d}", "layer": "L2", "scope": {"type": "global"}, "tags": ["hand"],
               "statement": f"Hand rule {i}: {text}", "evidence": [{"type": "manual", "ref": text, "note": "typed"}],
               "confidence": 0.9, "stability": "semi-stable", "created_at": "2026-12-02", "updated_at": "2026-12-02",
               "review": {"cadence_days": 30, "next_review": "2027-01-01", "change_condition": "when it changes"},
               "status": "active", "supersedes": [], "superseded_by": [], "vault_ref": None}
        ops.append({"op_id": f"op_{i:03d}", "op": "add", "record": rec, "reason": text, "risk": "low", "default_selected": True})
    (root / "patches" / "patch_202612021200_ckhand.json").write_text(json.dumps({
        "patch_id": "patch_202612021200_ckhand", "created_at": "2026-12-02T12:00:00.000Z", "generated_by": "manual",
        "mode": "supervised", "summary": "hand", "ops": ops, "status": "proposed", "applied_at": None,
        "applied_ops": [], "skipped_ops": []}))
    with contextlib.suppress(CommonkeepError):  # apply may refuse a patch no candidate explains (§3); the file stays
        apply_patch(root, "patch_202612021200_ckhand", role=WRITER)
    for text in take(4):
        cand = write_candidate(root, "Prefer short names for loop variables.", tags=["style"], confidence=0.5)
        approve(root, [cand["id"]], role=WRITER, edits={cand["id"]: f"Prefer short names; {text}"})
    for text in take(4):
        cand = write_candidate(root, "Unclear note about builds.", tags=["n"], confidence=0.5)
        reject(root, [cand["id"]], reason=text, role=WRITER)
    recs = [rec["id"] for rec in Store(root).records()]
    for rid, text in zip(recs[:5], take(5), strict=True):
        reinforce(root, rid, outcome="implicit_success", role=WRITER, notes=text)
    for rid, text in zip(recs[5:15], take(10), strict=True):
        forget(root, rid, reason=text, role=WRITER, purge=rid.endswith(("0", "2", "4", "6", "8")))
    upsert_inquiries(root, [{"question": f"Is this still true? {t}", "context": t} for t in take(8)])
    # 6. curate --auto from the CLI; select (context.md), search (both databases), handoffs
    for text in take(8):
        assert main(["write", f"Team fact: {text}", "--evidence", "a", "--evidence", "b", "--confidence", "0.95",
                     "--trust", "direct_user_instruction", "--durability", "long_term", *r]) == 0
    assert main(["curate", "--auto", *r]) == 0
    for text in take(4):
        select_for_prompt(root, f"please help: {text}")
    assert main(["reindex", *r]) == 0
    for text in take(4):
        main(["search", text, *r])
    for text in take(4):
        assert main(["handoff", "--goal", text, *r]) == 0
    assert main(["render", *r]) == 0
    # 7. the wiki: sources with secrets (one named after a secret), ingest, gardener, query
    project = tmp_path / "wiki"
    (project / "raw").mkdir(parents=True)
    notes = [f"Design note {i}: {t}." for i, t in enumerate(take(10))]
    first, rest = next(pairs).fields
    (project / "raw" / "notes.md").write_text("\n".join([*notes, first, rest]) + "\n", encoding="utf-8")
    core = corpus.rand(random.Random(5), 36)
    token = "ghp_" + core
    items.append(corpus.Planted("github_token_in_a_file_name", [token], [core]))
    (project / "raw" / f"keys-{token}.md").write_text("Falcon moves 3 TB per day.\n", encoding="utf-8")
    wiki.ingest(project, "raw/notes.md")
    wiki.ingest(project, f"raw/keys-{token}.md")
    wiki.gardener(project)
    wiki.query(project, f"what is {take(1)[0]}")
    found = leaks(root, items) + leaks(project, items)
    assert found == []
    assert "[REDACTED:" in (root / "rendered" / "MEMORY.md").read_text(encoding="utf-8")
