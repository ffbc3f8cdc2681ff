"""A secret in a raw source's *name* never reaches the wiki, its state or git.

Contents were already redacted; a name like ``raw/notes-ghp_….md`` used to flow into the source
slug, the page file name, front matter, ``log.md``, ``facts.db``, git trees and the commit
message. Ingest now moves the file to its redacted name first, and every commit leaves out (and
names only in redacted form) a file whose path holds a secret.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

from commonkeep import wiki
from commonkeep.secrets import redact_name
from commonkeep.wiki.text import slugify
from tests.governance.test_secrets import MAKERS

SENTENCE = "Falcon moves 3 TB per day through the billing gateway."


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(project), *args], capture_output=True, text=True, check=True).stdout


def _every_git_object(project: Path) -> str:
    """``git cat-file -p`` of every object ``rev-list --all --objects`` reaches (trees show names), plus that list."""
    listing = _git(project, "rev-list", "--all", "--objects")
    shown = [_git(project, "cat-file", "-p", line.split()[0]) for line in listing.splitlines() if line.strip()]
    loose = subprocess.run(["git", "-C", str(project), "cat-file", "--batch-all-objects", "--batch"],
                           capture_output=True, check=True).stdout.decode("utf-8", errors="replace")
    return "\n".join([listing, *shown, loose])


def _working_tree(project: Path) -> list[tuple[str, str]]:
    """(relative path, content) of every file outside ``.git`` (``.hmlr/facts.db`` included)."""
    return [(str(p.relative_to(project)), p.read_bytes().decode("utf-8", errors="replace"))
            for p in sorted(project.rglob("*")) if ".git" not in p.relative_to(project).parts and p.is_file()]


def _leaks(project: Path, values: list[str], *, left: str) -> list[str]:
    forms = [f for v in values for f in (v, v.lower())]  # a slug is casefolded
    found = [f"name {path}" for path, _ in _working_tree(project) if path != left and any(f in path for f in forms)]
    found += [f"content {path}" for path, text in _working_tree(project) if any(f in text for f in forms)]
    objects = _every_git_object(project)
    found += [f"git object ({v[:6]}…)" for v in forms if v in objects]
    return found


def test_secret_in_a_source_file_name_reaches_no_file_and_no_git_object(project: Path) -> None:
    rng = random.Random(5)
    token = MAKERS["github_token"](rng)[1]
    aws = MAKERS["aws_access_key"](rng)[1]
    other = MAKERS["github_token"](rng)[1]
    (project / "raw" / f"notes-{token}.md").write_text(SENTENCE + "\n", encoding="utf-8")
    (project / "raw" / f"keys_{aws}.md").write_text("Kestrel was renamed to Falcon in March.\n", encoding="utf-8")
    (project / "raw" / f"notes-{other}.md").write_text("Falcon runs in eu-west-1.\n", encoding="utf-8")
    stray = f"stray-{MAKERS['github_token'](rng)[1]}.md"  # dropped in raw/, never ingested
    (project / "raw" / stray).write_text("Nothing to see.\n", encoding="utf-8")

    first = wiki.ingest(project, f"raw/notes-{token}.md")
    assert first.source == "raw/notes-REDACTED-github_token.md"
    assert first.source_page == "wiki/sources/notes-redacted-github_token.md"
    assert first.redacted_name == ["github_token"] and first.redacted == []
    assert "1 secret(s) in the path of the source (1 github_token); the file was moved to raw/notes-REDACTED-github_token.md" \
        in first.redaction_line()
    second = wiki.ingest(project, f"raw/keys_{aws}.md")
    assert second.source == "raw/keys_REDACTED-aws_access_key.md" and second.redacted_name == ["aws_access_key"]
    # the same redacted name again: a unique file name and slug, not an overwrite
    third = wiki.ingest(project, f"raw/notes-{other}.md")
    assert third.source == "raw/notes-REDACTED-github_token-2.md"
    assert third.source_page == "wiki/sources/notes-redacted-github_token-2.md"
    # stable: re-ingesting the moved file keeps its name and slug
    again = wiki.ingest(project, first.source)
    assert (again.source, again.source_page, again.redacted_name) == (first.source, first.source_page, [])
    wiki.gardener(project)

    for report in (first, second, third):
        page = project / report.source_page
        assert page.is_file() and f"sources:\n- {report.source}\n" in page.read_text(encoding="utf-8")
        assert slugify(Path(report.source_page).stem) == Path(report.source_page).stem
    assert "the source's path (1 aws_access_key); file moved to this name" in (project / "wiki" / "log.md").read_text(encoding="utf-8")
    message = _git(project, "log", "--format=%B")
    assert "wiki ingest: raw/notes-REDACTED-github_token.md" in message
    assert f"raw/{redact_name(stray).text} (1 github_token)" in message  # left out, named redacted
    assert f"raw/{stray}" not in _git(project, "ls-files")

    # only the stray file itself still has its name (nobody asked to ingest it)
    assert _leaks(project, [token, aws, other, stray[len("stray-"):-len(".md")]], left=f"raw/{stray}") == []
