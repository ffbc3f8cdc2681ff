"""MEMORY.md / USER.md rendering, hand-edit capture and config editing (pure Python, no Hermes)."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from commonkeep_hermes.configyaml import ConfigDoc
from commonkeep_hermes.hermesfiles import DELIMITER, pack_entries, refresh, split_entries
from commonkeep_hermes.install import edit_config
from commonkeep_hermes.settings import HermesProfile


def _approve(root: Path, *texts: str, layer: str = "L2") -> None:
    from commonkeep.patches.curate import curate
    from commonkeep.patches.patch import apply_patch
    from commonkeep.store.candidates import new_candidate
    from commonkeep.store.core import Store

    for text in texts:
        Store(root).append_candidate(new_candidate(text, evidence_refs=["a", "b"], confidence=0.9, proposed_layer=layer))
    prop = curate(root, role="librarian", min_confidence=0.0, min_evidence=1)
    apply_patch(root, prop.patch["patch_id"], role="librarian", op_ids=[o["op_id"] for o in prop.ops],
                ratify=True, fire_hooks=False)


def _profile(tmp_path: Path, memory_limit: int = 120, user_limit: int = 80) -> HermesProfile:
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "config.yaml").write_text(f"memory:\n  memory_char_limit: {memory_limit}\n  user_char_limit: {user_limit}\n")
    return HermesProfile(home)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=90), max_size=30), st.integers(min_value=1, max_value=400))
def test_packed_entries_never_exceed_the_limit(texts: list[str], limit: int) -> None:
    packed = pack_entries([(str(i), t) for i, t in enumerate(texts)], limit)
    joined = DELIMITER.join(t for _, t in packed)
    assert len(joined) <= limit
    assert all(len(t) <= limit for _, t in packed)
    assert split_entries(joined) == [t for _, t in packed] or any(DELIMITER.strip() in t for _, t in packed)


def test_projection_fills_both_files_within_their_limits(root: Path, tmp_path: Path) -> None:
    profile = _profile(tmp_path)
    facts = {"Alpha fact about the build.", "Beta fact about the deploy pipeline.",
             "Gamma fact that is long enough that it cannot fit in the remaining budget of this file."}
    _approve(root, *sorted(facts))
    _approve(root, "The user is called Sam.", layer="L1")
    report = refresh(profile, root)
    mem = profile.memory_file("memory").read_text()
    user = profile.memory_file("user").read_text()
    assert len(mem) <= 120 and len(user) <= 80
    for entry in split_entries(mem):  # whole records, or one cut to half the file with "…"
        assert entry in facts or (entry.endswith("…") and len(entry) <= 60
                                  and any(f.startswith(entry[:-1]) for f in facts))
    assert len(split_entries(mem)) >= 2
    assert user == "The user is called Sam."
    assert report["captured"] == []
    again = refresh(profile, root)  # deterministic: nothing changes the second time
    assert not any(t["changed"] for t in again["targets"].values())


def test_hand_edit_becomes_a_candidate_and_is_kept_in_a_backup(root: Path, tmp_path: Path) -> None:
    from commonkeep.store.core import Store

    profile = _profile(tmp_path)
    _approve(root, "Alpha fact about the build.")
    refresh(profile, root)
    path = profile.memory_file("memory")
    edited = path.read_text() + DELIMITER + "Hand-written: the VPN needs a restart on Mondays."
    path.write_text(edited)

    report = refresh(profile, root, reason="session_finalize")
    cands = [c for c in Store(root).candidates(status="new")]
    assert [c["text"] for c in cands] == ["Hand-written: the VPN needs a restart on Mondays."]
    assert cands[0]["provenance"]["origin"] == "external_edit"
    assert Path(report["backups"][0]).read_text() == edited
    assert path.read_text() == "Alpha fact about the build."  # the store decides; the edit waits for review

    refresh(profile, root)
    assert len(Store(root).candidates(status="new")) == 1  # not captured twice


def test_removing_a_rendered_entry_by_hand_proposes_forgetting_it(root: Path, tmp_path: Path) -> None:
    from commonkeep.store.core import Store

    profile = _profile(tmp_path)
    _approve(root, "Alpha fact about the build.", "Beta fact about the deploy.")
    refresh(profile, root)
    path = profile.memory_file("memory")
    path.write_text(split_entries(path.read_text())[0])
    refresh(profile, root)
    (cand,) = Store(root).candidates(status="new")
    assert cand["text"].startswith("Forget this memory entry:")
    assert cand["matched_memory_ids"] and cand["matched_memory_ids"][0].startswith("mem_")


FLOW = """\
# top comment
model:
  default: x  # keep me
plugins:
  enabled: [other-plugin]   # trailing
memory:
  provider: ''   # was empty
"""
BLOCK = """\
memory:
  memory_char_limit: 2200
plugins:
  enabled:
    - a
    - b
  disabled: []
"""


def test_config_edit_keeps_comments_and_list_styles(tmp_path: Path) -> None:
    root = tmp_path / "r"
    # flow-style memory sections made the old line editor crash with a raw ParserError (issue 16)
    for original in (FLOW, BLOCK, "", "memory: {}\n", "memory: {memory_char_limit: 1000}  # flow\n"):
        new = edit_config(original, root)
        data = yaml.safe_load(new)
        assert data["memory"]["provider"] == "commonkeep"
        assert data["memory"]["commonkeep"] == {"root": str(root)}
        assert "commonkeep-governance" in data["plugins"]["enabled"]
        for line in original.splitlines():
            if "#" in line and "provider" not in line and "enabled" not in line:
                assert (line if "{" not in line else line[line.index("#"):]) in new
        assert edit_config(new, root) == new  # idempotent
    [flow] = [line for line in edit_config(FLOW, root).splitlines() if "enabled:" in line]
    assert flow.startswith("  enabled: [other-plugin, commonkeep-governance]") and flow.endswith("# trailing")
    block = edit_config(BLOCK, root)
    assert "    - b\n    - commonkeep-governance\n" in block
    doc = ConfigDoc(block)
    doc.remove_from_list("plugins", "enabled", "commonkeep-governance")
    assert doc.text().count("- ") == 2


def _refresh_many(home: str, root: str, n: int) -> None:
    for _ in range(n):
        refresh(HermesProfile(Path(home)), Path(root), reason="race")


def test_concurrent_refreshes_never_mistake_each_other_for_hand_edits(root: Path, tmp_path: Path) -> None:
    import multiprocessing

    from commonkeep.store.core import Store

    profile = _profile(tmp_path)
    _approve(root, "Alpha fact about the build.", "Beta fact about the deploy.")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_refresh_many, args=(str(profile.home), str(root), 15)) for _ in range(3)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    assert Store(root).candidates(status="new") == []
    assert not (profile.state_dir / "backups").exists()
    assert set(split_entries(profile.memory_file("memory").read_text())) == {
        "Alpha fact about the build.", "Beta fact about the deploy."}


def test_install_on_a_home_without_config_and_uninstall_removes_it(root: Path, tmp_path: Path) -> None:
    from commonkeep_hermes.install import install, uninstall

    profile = HermesProfile(tmp_path / "fresh-hermes")
    first = install(profile, root)
    assert any("created it" in c for c in first["changed"])
    assert yaml.safe_load(profile.config_path.read_text())["memory"]["provider"] == "commonkeep"
    assert install(profile, root)["changed"] == []
    uninstall(profile)
    assert not profile.config_path.exists() and not profile.shim_dir.exists()
