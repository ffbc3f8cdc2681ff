"""The shared store: reading and writing the canonical JSONL files of one memory root.

Reads work on plain dicts and never import pydantic. Every bad line met on a read is reported
(file and line) and copied to ``quarantine/lines.jsonl``; the rest loads. Canonical record files
change only through ``rewrite_records`` (the patch path, see ``commonkeep.patches.patch``); everyone may
append candidates and daily-log entries.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.store import jsonl
from commonkeep.store.appender import Appender
from commonkeep.store.jsonjs import dumps_line
from commonkeep.store.layout import Layout, ensure_layout
from commonkeep.store.limits import candidate_limit_problem
from commonkeep.store.records import candidate_problem, memory_record_problem
from commonkeep.util.timeutil import now_iso, today

Row = dict[str, Any]


@dataclass(frozen=True)
class Problem:
    """Something wrong in a store file, with where it is."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


def _id_of(row: Row) -> str:
    """`` <id>`` for a message about a row, or nothing when the row has no usable id."""
    rid = row.get("id")
    if not isinstance(rid, str) or not rid.strip():
        return ""
    return f" {rid[:80]}…" if len(rid) > 80 else f" {rid}"


class Store:
    """One memory root. Cheap to create; every method re-reads the files it needs."""

    def __init__(self, root: Path | str, *, warn: bool = True, check: bool = True) -> None:
        self.layout = Layout(root, check=check)
        self.root = self.layout.root
        self._warn = warn
        self.problems: list[Problem] = []
        # (file, line, record) of every valid record line whose id is tombstoned, as the last
        # ``records_by_file`` read them (a deletion interrupted before its file was rewritten).
        self.tombstoned_lines: list[tuple[Path, int, Row]] = []
        self._ensured = False
        self._inbox_appender: Appender | None = None
        # ``doctor`` sets it: a file that cannot be read (a folder in its place, no permission) is
        # reported here (path -> why) and read as empty, so one such file never hides the others
        self.unreadable: dict[str, str] | None = None

    # -- reading -------------------------------------------------------------------------
    def read(self, path: Path) -> jsonl.JsonlRead:
        """Read one JSONL file; bad lines are reported and quarantined, the rest returned."""
        try:
            result = jsonl.read_jsonl(path)
        except OSError as exc:
            if self.unreadable is None:
                raise
            self.unreadable[self.layout.rel(path)] = f"{exc.strerror or exc}"
            return jsonl.JsonlRead()
        if result.bad:
            fresh = self._quarantine(result.bad)
            for b in result.bad:
                self.problems.append(Problem(self.layout.rel(b.path), b.line_no, b.error))
                if self._warn and fresh:
                    print(f"commonkeep: warning: {self.layout.rel(b.path)}:{b.line_no}: {b.error}; kept in {self.layout.rel(self.layout.quarantine)}", file=sys.stderr)
        return result

    def _quarantine(self, bad: list[jsonl.BadLine]) -> int:
        """Copy bad lines to the quarantine; where it cannot be written (a read-only root, a
        quarantine/ linking outside the root) they are still reported, and stay in their file."""
        try:
            return jsonl.quarantine_lines(self.layout.quarantine, bad, self.layout.rel, now_iso())
        except (BadInput, OSError):
            return 1

    def tombstoned_ids(self) -> set[str]:
        return {str(t.get("deleted_record_id")) for t in self.read(self.layout.tombstones).rows}

    def records_by_file(self, *, active_only: bool = False) -> dict[Path, list[Row]]:
        """Valid, non-tombstoned records of every canonical file, in file order.

        Lines that parse but are not valid records are reported as problems and left in place.
        """
        dead = self.tombstoned_ids()
        out: dict[Path, list[Row]] = {}
        self.tombstoned_lines = []
        for path in self.layout.canonical_files():
            read = self.read(path)
            keep = []
            for row, line_no in zip(read.rows, read.line_nos, strict=True):
                problem = memory_record_problem(row)
                if problem:
                    self.problems.append(Problem(self.layout.rel(path), line_no, f"not a valid memory record{_id_of(row)}: {problem}"))
                    continue
                if row["id"] in dead:
                    self.tombstoned_lines.append((path, line_no, row))
                    continue
                if active_only and row.get("status") != "active":
                    continue
                keep.append(row)
            out[path] = keep
        return out

    def records(self, *, active_only: bool = True) -> list[Row]:
        """All records (``status == "active"`` only by default), L1, L2, then projects."""
        return [r for rows in self.records_by_file(active_only=active_only).values() for r in rows]

    def candidates(self, status: str | None = None) -> list[Row]:
        """Capture candidates from the inbox, optionally only those with ``status``."""
        read = self.read(self.layout.inbox)
        out = []
        oversized = []
        for row, line_no in zip(read.rows, read.line_nos, strict=True):
            problem = candidate_problem(row)
            if problem:
                self.problems.append(Problem(self.layout.rel(self.layout.inbox), line_no, f"not a valid candidate{_id_of(row)}: {problem}"))
                continue
            too_big = candidate_limit_problem(row)
            if too_big:  # another program wrote what our write path refuses: never proposed
                why = f"candidate{_id_of(row)} refused, over the write path's limits: {too_big}"
                self.problems.append(Problem(self.layout.rel(self.layout.inbox), line_no, why))
                oversized.append(jsonl.BadLine(self.layout.inbox, line_no, why, dumps_line(row)))
                continue
            if status is None or row.get("status") == status:
                out.append(row)
        if oversized:
            fresh = self._quarantine(oversized)
            if self._warn and fresh:
                for b in oversized:
                    print(f"commonkeep: warning: {self.layout.rel(b.path)}:{b.line_no}: {b.error}; kept in {self.layout.rel(self.layout.quarantine)}", file=sys.stderr)
        return out

    def rows(self, path: Path) -> list[Row]:
        """Every parseable row of any JSONL file of the store (evidence, inquiries …)."""
        return self.read(path).rows

    # -- writing -------------------------------------------------------------------------
    def ensure(self) -> Layout:
        """Create the layout once per ``Store`` (idempotent; writes call it before every write path
        would otherwise pay ~40 syscalls per append)."""
        if not self._ensured:
            ensure_layout(self.root)
            self._ensured = True
        return self.layout

    def append_candidate(self, candidate: Row, *, redacted: bool = False) -> Row:
        """Append one candidate to the inbox (anyone may). Text must already be redacted."""
        return self.append_candidates([candidate], redacted=redacted)[0]

    def append_candidates(self, candidates: list[Row], *, redacted: bool = False) -> list[Row]:
        """Append candidates, every field redacted again first unless ``redacted`` says the caller's
        own pass just did (``capture``: built by ``new_candidate``, which redacts every field, then only
        scored, which adds fields derived from that redacted text)."""
        if not redacted:
            from commonkeep.secrets import redact_obj

            candidates = [redact_obj(c) for c in candidates]  # every field, provenance and extras too
        for c in candidates:
            problem = candidate_problem(c)
            if problem:
                raise BadInput(f"refusing to write candidate {c.get('id', '?')}: {problem}")
        self.ensure()
        appender = self._inbox_appender  # ``jsonl.append_jsonl``, its paths kept (``appender``)
        if appender is None or appender.path is not self.layout.inbox:
            appender = self._inbox_appender = Appender(self.layout.inbox)
        appender.append(candidates)
        return candidates

    def append_daily(self, content: str, date: str | None = None) -> tuple[Path, list[str]]:
        """Append to ``daily/<date>.md`` (§2.3), secrets redacted; returns the file and findings."""
        from commonkeep.secrets import redact
        from commonkeep.store.limits import MAX_DAILY_ENTRY_CHARS

        if len(content) > MAX_DAILY_ENTRY_CHARS:
            raise BadInput(f"the daily entry is {len(content):,} characters; one write takes at most "
                           f"{MAX_DAILY_ENTRY_CHARS:,}; nothing was written",
                           hint="write it in parts, or keep the text in a file and write a line that names it")
        red = redact(content)
        text = red.text.strip()
        if not text:
            raise BadInput("nothing to write: the daily entry is empty")
        self.ensure()
        path = self.layout.daily_file(date or today())
        jsonl.refuse_symlink(path)
        with jsonl.file_lock(path):
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, jsonl.NEW_FILE_MODE)
            try:
                prefix = "\n\n" if os.fstat(fd).st_size else ""
                jsonl.write_all(fd, (prefix + text + "\n").encode("utf-8", "surrogateescape"))
            finally:
                os.close(fd)
        return path, red.findings

    def rewrite(self, path: Path, transform: Callable[[list[Row]], list[Row]]) -> jsonl.JsonlRead:
        """Rewrite one store file atomically under its lock (re-read first; bad lines quarantined)."""
        self.ensure()
        return jsonl.rewrite_jsonl(path, transform, quarantine=self.layout.quarantine, rel=self.layout.rel, when=now_iso())

    def rewrite_records(self, path: Path, transform: Callable[[list[Row]], list[Row]]) -> jsonl.JsonlRead:
        """The patch path's rewrite of a canonical file. The lines of tombstoned records stay as they
        are unless ``transform`` changes them (OmpKeep keeps an audit-deleted record's line with
        ``status: "deleted"``; contract §14.9; an interrupted deletion is finished by ``forget``, not
        by an unrelated patch). A ``line_edit.RecordChanges`` rewrites only the lines of the records it
        changes (``edit``)."""
        from commonkeep.store.line_edit import RecordChanges

        if isinstance(transform, RecordChanges):
            from commonkeep.store.range_edit import edit_records

            self.ensure()
            path.parent.mkdir(parents=True, exist_ok=True)
            jsonl.refuse_symlink(path)
            with jsonl.file_lock(path):  # the lines found at the line index's offsets, copied around
                left = edit_records(self.layout, path, transform)
            if left is None:
                self.edit(path, transform, transform.ids, transform.one, transform.tail, records=True)
            return jsonl.JsonlRead()
        return self.rewrite(path, transform)

    def update_candidates(self, transform: Callable[[list[Row]], list[Row]], ids: set[str] | None = None) -> None:
        """Rewrite the inbox through ``transform`` (every row, as ``rewrite``). With ``ids``: only
        the rows of those candidates change (``transform`` sees one row at a time), and the other
        lines keep their bytes when the file is clean (``line_edit``); else the full rewrite."""
        if ids is None:
            self.rewrite(self.layout.inbox, transform)
            return
        self.edit(self.layout.inbox, transform, ids, transform)

    def edit(self, path: Path, transform: Callable[[list[Row]], list[Row]], ids: set[str],
             one: Callable[[list[Row]], list[Row]], tail: Callable[[], list[Row]] | None = None, *,
             records: bool = False) -> None:
        """Rewrite ``path`` changing only the rows of ``ids`` (each through ``one``, then ``tail()``
        appended), the other lines kept byte for byte (``line_edit``); a file that is not plainly
        clean takes the full rewrite through ``transform`` (bad lines quarantined).

        ``records``: a record file. When every line of it was found to be a valid record before
        and every row written is one, the new bytes are remembered as valid records
        (``record_lines``), so the next apply checks none of them again."""
        from commonkeep.store import clean_memo, line_edit, line_index, record_lines
        from commonkeep.store.exitcarry import Carry
        from commonkeep.store.generations import replace
        from commonkeep.store.records import memory_record_problem

        self.ensure()
        path.parent.mkdir(parents=True, exist_ok=True)
        jsonl.refuse_symlink(path)
        memo = self.layout.runtime_dir / clean_memo.NAME
        carry = Carry(self.root, path)  # the exit gate's memo of the file follows the edit (``exitcarry``)
        written_bad: list[bool] = []  # a row written that is not a valid record
        vouch: list[bytes] = []  # the new bytes, when every line of them is known to be a valid record

        def wrote(rows: list[Row]) -> list[Row]:
            if records and any(memory_record_problem(r) for r in rows):
                written_bad.append(True)
            return carry.wrote(rows)

        def build(data: bytes) -> bytes:
            written_bad.clear()
            vouch.clear()
            if records and line_index.vouches(self.layout, path, stat, len(data)):  # every line a record, as indexed
                line_edit.remember_clean(path, data)
                line_edit.remember_plain(path, data)
                record_lines.vouch(path, data)
            before = records and record_lines.vouched(path, data)
            new = line_edit.edit_lines(path, data, ids, lambda rows: wrote(one(rows)),
                                       (lambda: wrote(tail())) if tail is not None else None, memo)
            if before and new is not None and not written_bad:
                vouch.append(new)
            if new is None:
                carry.whole()
                read = jsonl.parse_jsonl(data, path)
                jsonl.quarantine_lines(self.layout.quarantine, read.bad, self.layout.rel, now_iso())
                new = jsonl.encode_rows(transform(list(read.rows)))
                line_edit.forget(path)
            else:
                line_edit.remember_clean(path, new)
            carry.built(data, new)
            return new

        with jsonl.file_lock(path):
            stat = line_index.file_stat(path)
            replace(path, build)
        if vouch:
            record_lines.vouch(path, vouch[0])
        line_edit.persist(memo, path, vouch[0] if vouch else None)
        carry.done()
