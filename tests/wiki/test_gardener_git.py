"""Gardener behaviour, human-owned pages, and one content-free git commit per pass."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from commonkeep import wiki
from commonkeep.errors import LockHeld
from commonkeep.wiki.layout import WikiLayout
from commonkeep.wiki.lock import writer_lock
from tests.wiki.conftest import WriteRaw

SECRET_LINE = "Kestrel was renamed to 'Falcon' after the zebra-quartz incident."


def _commits(project: Path) -> int:
    return int(git.Repo(project).git.rev_list("--count", "HEAD"))


def test_each_ingest_and_gardener_pass_is_exactly_one_commit(project: Path, write_raw: WriteRaw) -> None:
    wiki.ingest(project, write_raw("a.md", SECRET_LINE))
    assert _commits(project) == 1
    wiki.ingest(project, write_raw("b.md", "Falcon moves 3 TB per day."))
    assert _commits(project) == 2
    wiki.gardener(project)
    assert _commits(project) == 3
    wiki.gardener(project)  # nothing to fix: still one commit for the pass (its log entry)
    assert _commits(project) == 4
    assert git.Repo(project).is_dirty(untracked_files=True) is False


def test_commit_message_names_files_and_counts_but_no_page_content(project: Path, write_raw: WriteRaw) -> None:
    wiki.ingest(project, write_raw("a.md", SECRET_LINE))
    msg = git.Repo(project).head.commit.message
    assert msg.startswith("wiki ingest: raw/a.md\n")
    assert "wiki/entities/falcon.md" in msg and "wiki/sources/a.md" in msg
    assert "facts=1" in msg and "files: " in msg
    for word in ("zebra", "quartz", "incident", "renamed"):
        assert word not in msg
    wiki.gardener(project)
    gmsg = git.Repo(project).head.commit.message
    assert gmsg.startswith("wiki gardener pass\n") and "orphans=" in gmsg and "zebra" not in gmsg


def test_facts_db_stays_out_of_git(project: Path, write_raw: WriteRaw) -> None:
    wiki.ingest(project, write_raw("a.md", SECRET_LINE))
    tracked = git.Repo(project).git.ls_files().splitlines()
    assert "raw/a.md" in tracked and "wiki/log.md" in tracked
    assert not [t for t in tracked if t.startswith(".hmlr/")]


def test_human_pages_are_never_rewritten(project: Path, write_raw: WriteRaw) -> None:
    wiki.ingest(project, write_raw("a.md", SECRET_LINE))
    page = project / "wiki/entities/falcon.md"
    human = "---\nkind: entity\nname: Falcon\nedited_by: human\n---\n# Falcon\n\nMy own notes.\n"
    page.write_text(human, encoding="utf-8")
    report = wiki.ingest(project, write_raw("b.md", "Falcon moves 3 TB per day."))
    assert report.skipped_human == ["wiki/entities/falcon.md"]
    g = wiki.gardener(project)
    assert "wiki/entities/falcon.md" in g.skipped_human
    assert page.read_text(encoding="utf-8") == human
    assert "entities/falcon" in g.review_pages  # newer evidence than the person's page, and missing alias link
    assert "[[entities/falcon]] — Falcon (human-edited)" in (project / "wiki/index.md").read_text(encoding="utf-8")


def test_page_with_unreadable_frontmatter_is_treated_as_a_persons(project: Path, write_raw: WriteRaw) -> None:
    wiki.ingest(project, write_raw("a.md", SECRET_LINE))
    page = project / "wiki/entities/kestrel.md"
    page.write_text("# Kestrel\n\nno frontmatter here\n", encoding="utf-8")
    wiki.gardener(project)
    assert page.read_text(encoding="utf-8") == "# Kestrel\n\nno frontmatter here\n"


def test_gardener_counts_orphans_stale_and_missing_links_then_fixes_them(project: Path, write_raw: WriteRaw) -> None:
    wiki.ingest(project, write_raw("a.md", SECRET_LINE))
    dead = project / "wiki/entities/ghost.md"
    dead.write_text("---\nkind: entity\nname: Ghost\nedited_by: llm\n---\n## Evidence\n", encoding="utf-8")
    falcon = project / "wiki/entities/falcon.md"
    falcon.write_text(falcon.read_text(encoding="utf-8").replace("[[entities/kestrel]]", ""), encoding="utf-8")
    (project / "raw/a.md").write_text("changed behind our back\n", encoding="utf-8")
    report = wiki.gardener(project)
    assert (report.orphans, report.stale, report.missing_xref) == (1, 3, 1)
    assert report.summary() == "gardener complete — orphans=1 stale=3 review=0 missing_xref=1"
    assert not dead.exists() and report.removed == ["wiki/entities/ghost.md"]
    assert "[[entities/kestrel]]" in falcon.read_text(encoding="utf-8")


def test_a_second_writer_is_refused_while_the_lock_is_held(project: Path, write_raw: WriteRaw) -> None:
    rel = write_raw("a.md", SECRET_LINE)
    wiki.ingest(project, rel)
    with writer_lock(WikiLayout(project.resolve()).lock), pytest.raises(LockHeld, match="holds"):
        wiki.gardener(project)
    assert _commits(project) == 1


@pytest.mark.parametrize("configured", [False, True])
def test_an_account_without_a_git_identity_still_commits(project: Path, write_raw: WriteRaw, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch, configured: bool) -> None:
    """git itself is asked whether it has an identity (not its config files read by hand: git also
    honours ``GIT_CONFIG_GLOBAL``): with none, the wiki commits as ``commonkeep wiki``; with one, as it."""
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tuseConfigOnly = true\n" + ("\tname = Ada\n\temail = ada@example.invalid\n" if configured else ""))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    wiki.ingest(project, write_raw("a.md", SECRET_LINE))
    author = git.Repo(project).git.log("-1", "--format=%an <%ae>")
    assert author == ("Ada <ada@example.invalid>" if configured else "commonkeep wiki <wiki@commonkeep.invalid>")
