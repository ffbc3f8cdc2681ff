"""Handoff resolves the working folder's profile as OmpKeep's ``/memory-handoff`` does, and every
handoff gets its own files, even three in the same second."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from commonkeep.recall.handoff import write_handoff
from commonkeep.recall.profile import project_identity, resource_id
from commonkeep.store.ids import h
from commonkeep.store.jsonl import read_jsonl
from tests.recall.conftest import make_record, seed

NOW = "2026-12-02T10:56:16.123Z"
LATER = "2026-12-03T08:00:00.000Z"


def test_handoff_upserts_the_profile_and_counts_only_its_records(root: Path, tmp_path: Path) -> None:
    cwd = tmp_path / "OmpProj"
    cwd.mkdir()
    seed(root, [make_record("mem_mine", "Mine.", profile_id="project:ompproj"),
                make_record("mem_none", "Shared."),
                make_record("mem_other", "Theirs.", profile_id="project:other")])
    seed(root, [{"id": "inq_a", "question": "Which port?", "status": "open", "profile_id": "project:other"},
                {"id": "inq_b", "question": "Which db?", "status": "open"}], file="memory/inquiries.jsonl")
    snap = json.loads(write_handoff(root, now=NOW, cwd=cwd).read_text(encoding="utf-8"))
    assert snap["profile_id"] == "project:ompproj"
    assert snap["id"] == "handoff_" + h("project:ompproj\n" + NOW, 12)
    assert snap["active_l2_count"] == 2 and snap["open_inquiry_count"] == 1  # another profile's are not counted
    [profile] = read_jsonl(root / "memory" / "profiles.jsonl").rows
    assert profile == {"profile_id": "project:ompproj", "profile_type": "project", "resource_id": resource_id(),
                       "project_identity": {"project_id": "ompproj", "source": "cwd_fallback"},
                       "storage_root": str(root.resolve()), "created_at": NOW, "updated_at": NOW}
    write_handoff(root, now=LATER, cwd=cwd)
    [again] = read_jsonl(root / "memory" / "profiles.jsonl").rows  # upserted in place, not appended
    assert again["created_at"] == NOW and again["updated_at"] == LATER


def test_project_identity_follows_upstream_order(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / "package.json").write_text('{"name": "@acme/Web App"}', encoding="utf-8")
    assert project_identity(repo / "sub") == {"project_id": "acme-web-app", "source": "package_name", "package_name": "@acme/Web App"}
    (repo / ".git").mkdir()
    assert project_identity(repo / "sub")["source"] == "git_root"
    (repo / ".git" / "config").write_text('[core]\n\tbare = false\n[remote "origin"]\n\turl = git@example.org:a/b.git\n', encoding="utf-8")
    ident = project_identity(repo / "sub")
    assert ident["project_id"] == "git-" + h("git@example.org:a/b.git", 16) and ident["source"] == "git_remote"
    (repo / "sub" / ".pi").mkdir()
    (repo / "sub" / ".pi" / "settings.json").write_text(
        '{"pi-persistent-intelligence": {"projectIdentity": {"project_id": "My Proj"}}}', encoding="utf-8")
    assert project_identity(repo / "sub") == {"project_id": "my-proj", "source": "explicit_config"}


def test_three_handoffs_in_the_same_second_each_get_their_own_files(root: Path, tmp_path: Path) -> None:
    paths = [write_handoff(root, now=NOW, cwd=tmp_path) for _ in range(3)]
    assert [p.name for p in paths] == ["2026-12-02T10-56-16.json", "2026-12-02T10-56-16-2.json", "2026-12-02T10-56-16-3.json"]
    assert all(p.is_file() and p.with_suffix(".md").is_file() for p in paths)
    goal = [write_handoff(root, goal="ship it", now=NOW, cwd=tmp_path) for _ in range(2)]
    assert [p.name for p in goal] == ["goal-2026-12-02T10-56-16.json", "goal-2026-12-02T10-56-16-2.json"]


def test_concurrent_handoff_commands_print_different_paths(root: Path, tmp_path: Path) -> None:
    env = {"COMMONKEEP_NOW": NOW, "PATH": "/usr/bin:/bin"}
    cmd = [str(Path(sys.executable).parent / "commonkeep"), "handoff", "--root", str(root), "--goal", "ship it"]
    procs = [subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    printed = {o.strip().splitlines()[-1] for o, _ in outs}
    assert len(printed) == 3
    assert len(list((root / "reports" / "handoff").glob("goal-*.json"))) == 3
