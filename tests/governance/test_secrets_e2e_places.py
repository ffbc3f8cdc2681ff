"""Every kind of the generated corpus (80: provider tokens our own rules never named, credentials
known only by their place, key armour, seed phrases, tokens split across single-value fields)
through the CLI's single-value fields and the commands that print memory, the web app's review
actions, handoffs and a shared root: afterwards no file, file name, SQLite cell or FTS term, git
object (of the root and of its bare remote) and no printed line holds any of them.

Entry points: ``write`` (text, ``--tags``, ``--evidence``, ``--session``, ``--source-ref``; a
token split between ``--evidence`` and ``--session``; an AWS key id split across two tags),
``review --approve ID --text`` and ``review --reject ID --reason``, the web app's decide action
(``commonkeep.web.actions.decide``: approve with an edit, reject with a reason; the function the
``/decide`` form posts to), ``handoff --goal``, ``curate --auto``, ``render``, ``reindex``, then
``share init`` and ``share sync`` to a bare remote. Printed: ``inbox``, ``project``, ``select``,
``search``, ``review --list`` (with ``--json`` too).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from commonkeep.bench import secrets_corpus as corpus
from tests.governance.conftest import WRITER
from tests.governance.test_secrets_e2e import leaks


def _found(items: list[corpus.Planted], text: str, where: str) -> list[str]:
    return sorted({f"{i.kind} in {where}" for i in items if corpus.survivors(i, text)})


def _bare_objects(repo: Path) -> str:
    """Every object of a bare repository, decompressed (its files on disk are zlib streams)."""
    dump = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch-all-objects", "--batch"], capture_output=True, check=True)
    return dump.stdout.decode("utf-8", "replace")


def _fts_terms(base: Path) -> str:
    """The terms of every FTS5 index under ``base`` (on disk they are prefix-compressed, so a raw
    byte search could miss one), read through ``fts5vocab`` on a copy of each database."""
    import shutil
    import sqlite3

    terms: list[str] = []
    for db in sorted(base.rglob("*.db")):
        copy = db.with_name(db.name + ".vocab-copy")
        shutil.copy(db, copy)
        try:
            con = sqlite3.connect(copy)
            tables = [t for (t, sql) in con.execute("SELECT name, sql FROM sqlite_master WHERE type='table'")
                      if sql and "using fts5" in sql.lower()]
            for t in tables:
                con.execute(f"CREATE VIRTUAL TABLE temp.v_{t} USING fts5vocab(main, {t}, row)")
                terms += [row[0] for row in con.execute(f"SELECT term FROM temp.v_{t}")]
            con.close()
        finally:
            copy.unlink()
    assert terms, "no FTS5 terms read: the search databases were not found"
    return "\n".join(terms)


def test_every_kind_through_single_value_fields_review_web_handoff_and_share_reaches_nothing(
    tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from commonkeep.cli import main
    from commonkeep.store.core import Store
    from commonkeep.web.actions import decide

    items = corpus.planted(len(corpus.MAKERS) * 2, seed=29)  # every kind, twice
    assert len({i.kind for i in items}) >= 60
    singles = [i for i in items if len(i.fields) == 1]
    pairs = [i for i in items if len(i.fields) == 2]
    r = ["--root", str(root), "--role", WRITER]
    printed: list[str] = []

    def run(*args: str) -> None:
        code = main([*args, *r])
        out = capsys.readouterr()
        printed.append(out.out + out.err)
        assert code == 0, f"commonkeep {' '.join(args)} exited {code}:\n{out.out}{out.err}"

    # 1. write: the secret as the text, as a tag, as evidence, as the session, as the source ref
    for n, item in enumerate(singles):
        text = item.fields[0]
        where = n % 5
        if where == 0:
            run("write", f"Fact {n}: {text}", "--evidence", "docs/ops.md", "--confidence", "0.9")
        elif where == 1:
            run("write", f"Tagged fact {n} about deploys.", "--tags", f"ops,{text.split()[-1]}", "--evidence", text)
        elif where == 2:
            run("write", f"Session fact {n} about deploys.", "--session", text, "--evidence", "ci.log")
        elif where == 3:
            run("write", f"Sourced fact {n}: {text}", "--source-ref", text, "--evidence", "docs/ops.md")
        else:
            run("write", "--daily", text)
    # 2. the halves of one secret in two single-value fields
    for n, item in enumerate(pairs):
        a, b = (next(t for t in f.split() if p in t) for f, p in zip(item.fields, item.parts, strict=True))
        if n % 2:
            run("write", f"Split fact {n} about deploys.", "--evidence", a, "--session", b)
        else:
            run("write", f"Split tags fact {n} about deploys.", "--tags", f"{a},{b}")
    # 3. review from the CLI and through the web app's decide action: approve with an edit, reject with a reason
    pending = [c["id"] for c in Store(root).candidates() if c.get("status") == "new"]
    edits = iter(singles[::7])
    for cid in pending[:6]:
        run("review", "--approve", cid, "--text", f"Prefer short names; {next(edits).fields[0]}")
    for cid in pending[6:10]:
        run("review", "--reject", cid, "--reason", next(edits).fields[0])
    for cid in pending[10:16]:
        decide(root, WRITER, "approve", [cid], edit=f"Edited in the web app: {next(edits).fields[0]}")
    for cid in pending[16:20]:
        decide(root, WRITER, "reject", [cid], reason=next(edits).fields[0])
    # 4. curate, render, reindex, handoffs; and everything that prints memory
    run("curate", "--auto")
    run("render")
    run("reindex")
    for item in singles[1::9]:
        run("handoff", "--goal", item.fields[0])
    for item in singles[2::11]:
        run("select", item.fields[0])
        run("search", item.fields[0].split()[-1])
    for cmd in (["inbox"], ["inbox", "--json"], ["project"], ["project", "--format", "plain"], ["review", "--list"],
                ["review", "--list", "--json"], ["search", "deploys"], ["search", "deploys", "--json"]):
        run(*cmd)
    # 5. share: the root becomes a git repository and pushes to a bare remote
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    run("share", "init", "--remote", str(remote))
    run("share", "sync")
    assert subprocess.run(["git", "-C", str(remote), "rev-list", "--all"], capture_output=True, text=True).stdout.strip()

    lowered = [corpus.Planted(i.kind, i.fields, [p.lower() for p in i.parts]) for i in items]
    found = (leaks(root, items) + _found(items, _bare_objects(remote), "the bare remote's git objects")
             + _found(items, "\n".join(printed), "printed output") + _found(lowered, _fts_terms(root), "FTS5 terms"))
    assert found == [], "\n".join(found)
    # and the write path said what it removed, by kind only
    assert "[REDACTED:" in json.dumps(Store(root).candidates())
