"""Bad input, as a person or another program gives it (issue 38): malformed and huge lines, torn
writes, corrupt databases and config, symlinks, path escapes, odd Unicode, closed or narrow
output. Every case ends with a clear message and a documented exit code (0 ok, 1 findings,
2 bad usage or input, 3 refused, 4 locked, 130 interrupted), never a traceback, and nothing is
lost: a damaged line is still in its file or in the quarantine.

The CLI runs in process (``commonkeep.cli.main``): an exception that escapes it fails the test.
"""

from __future__ import annotations

import io
import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from commonkeep.cli import main
from commonkeep.store.layout import ensure_layout

WRITER = "librarian"
DOCUMENTED = {0, 1, 2, 3, 4, 130}

Setup = Callable[[Path], None]


@pytest.fixture(autouse=True)
def _quiet_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMONKEEP_SEMANTIC", "off")  # the embedder is not what these cases are about
    monkeypatch.setenv("COMMONKEEP_PROGRESS", "0")
    monkeypatch.setenv("HOME", "/nonexistent-home-of-the-bad-input-tests")  # no host config is read


@pytest.fixture
def mem(tmp_path: Path) -> Path:
    root = ensure_layout(tmp_path / "mem").root
    assert main(["write", "Run pytest -q before every commit.", "--root", str(root), "--evidence", "a",
                 "--evidence", "b", "--confidence", "0.9"]) == 0
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    text = out.out + out.err
    assert "Traceback" not in text, text
    assert code in DOCUMENTED, (code, text)
    return code, text


# --- malformed store files: every file a command reads, every way a line can be wrong -----------

FILES = {
    "L1": "memory/L1.identity.jsonl",
    "L2": "memory/L2.playbooks.jsonl",
    "inbox": "inbox/captured.jsonl",
    "evidence": "memory/evidence.jsonl",
    "tombstones": "memory/tombstones.jsonl",
}
BAD_LINES: dict[str, bytes] = {
    "not_json": b"this is not json\n",
    "torn_tail": b'{"id": "mem_torn", "statement": "half a li',  # a write cut off, no newline
    "array": b"[1, 2, 3]\n",
    "string": b'"just a string"\n',
    "null": b"null\n",
    "nul_bytes": b'{"id": "mem_\x00nul"}\n',
    "bad_utf8": b'{"id": "mem_\xff\xfe"}\n',
    "bom": b'\xef\xbb\xbf{"id": "mem_bom", "statement": "x"}\n',
    "deep": b"[" * 5000 + b"]" * 5000 + b"\n",
    "huge": b'{"id": "mem_huge", "statement": "' + b"x" * 2_000_000 + b'"}\n',
    "lone_surrogate": b'{"id": "mem_sur", "statement": "\\ud800"}\n',
    "wrong_types": b'{"id": 7, "statement": ["a"], "layer": 3, "status": {}}\n',
}
READERS = [("inbox",), ("search", "pytest"), ("doctor",), ("select", "how do we test"),
           ("review", "--list"), ("project",)]


def _corrupt(rel: str, line: bytes) -> Setup:
    def setup(root: Path) -> None:
        path = root / rel
        with open(path, "ab") as fh:
            fh.write(line)

    return setup


def _kept(root: Path, line: bytes) -> bool:
    """The bad line is still on disk: in its file, or copied to the quarantine (as text)."""
    probe = line.strip()[:40]
    for path in root.rglob("*"):
        if path.is_file() and path.suffix in (".jsonl", ".md", ""):
            data = path.read_bytes()
            if probe in data:
                return True
            try:
                if json.dumps(probe.decode("utf-8", "replace"))[1:-1][:30].encode() in data:
                    return True
            except UnicodeError:
                pass
    return b"\xff" in line or b"\x00" in line  # kept as escaped text in the quarantine (checked apart)


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r[0])
@pytest.mark.parametrize("bad", sorted(BAD_LINES))
@pytest.mark.parametrize("where", ["L2", "inbox"])
def test_a_malformed_line_never_ends_in_a_traceback_and_is_kept(
    mem: Path, capsys: pytest.CaptureFixture[str], where: str, bad: str, reader: tuple[str, ...]
) -> None:
    _corrupt(FILES[where], BAD_LINES[bad])(mem)
    code, text = run(capsys, *reader, "--root", str(mem))
    assert code in (0, 1, 2)
    assert _kept(mem, BAD_LINES[bad]), f"the {bad} line was lost"


@pytest.mark.parametrize("bad", sorted(BAD_LINES))
@pytest.mark.parametrize("where", ["L1", "evidence", "tombstones"])
def test_doctor_names_every_malformed_line_of_any_store_file(
    mem: Path, capsys: pytest.CaptureFixture[str], where: str, bad: str
) -> None:
    _corrupt(FILES[where], BAD_LINES[bad])(mem)
    code, text = run(capsys, "doctor", "--root", str(mem))
    parseable = {"wrong_types", "bom", "bad_utf8", "lone_surrogate", "huge"}  # JSON objects: rows of odd shape
    if bad not in parseable or where == "L1":  # L1 lines are checked as records; evidence and tombstones as JSON
        assert code == 1 and FILES[where].split("/")[-1] in text, text


@pytest.mark.parametrize("bad", sorted(BAD_LINES))
def test_the_writer_commands_survive_a_malformed_inbox_line(
    mem: Path, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    _corrupt(FILES["inbox"], BAD_LINES[bad])(mem)
    run(capsys, "curate", "--root", str(mem), "--role", WRITER)
    code, text = run(capsys, "apply", "--root", str(mem), "--role", WRITER)
    assert code in (0, 1, 2)
    assert _kept(mem, BAD_LINES[bad])


# --- corrupt databases and config ----------------------------------------------------------------

DB_DAMAGE: dict[str, bytes] = {
    "garbage": b"this is not a database" * 100,
    "empty": b"",
    "truncated_header": b"SQLite format 3\x00" + b"\x00" * 50,
}


@pytest.mark.parametrize("command", [("search", "pytest"), ("select", "run tests"), ("doctor",), ("reindex",),
                                     ("search", "--notes", "pytest")], ids=lambda c: "-".join(c))
@pytest.mark.parametrize("damage", sorted(DB_DAMAGE))
@pytest.mark.parametrize("db", ["recall.db", "memory-fts.db"])
def test_a_damaged_search_database_is_rebuilt_or_named(
    mem: Path, capsys: pytest.CaptureFixture[str], db: str, damage: str, command: tuple[str, ...]
) -> None:
    assert main(["reindex", "--root", str(mem)]) == 0
    capsys.readouterr()
    (mem / "search" / db).write_bytes(DB_DAMAGE[damage])
    before = (mem / "memory" / "L2.playbooks.jsonl").read_bytes()
    code, text = run(capsys, *command, "--root", str(mem))
    assert code in (0, 1, 2)
    assert (mem / "memory" / "L2.playbooks.jsonl").read_bytes() == before  # the index is derived, memory untouched


def _sqlite_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-only root, as any account but root sees it: SQLite says "readonly database"."""
    from commonkeep.recall.search import index

    def refuse(*_: object, **__: object) -> sqlite3.Connection:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(index, "connect_recall", refuse)


def test_reindex_on_a_root_sqlite_refuses_is_a_named_error(
    mem: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _sqlite_refuses(monkeypatch)
    code, text = run(capsys, "reindex", "--root", str(mem), "--json")
    assert code == 2
    error = json.loads(text[: text.index("\n}\n") + 2])["error"]
    assert error["kind"] == "IndexUnusable" and str(mem / "search") in error["message"]
    assert "readonly" in error["message"] and "were not changed" in error["message"]


@pytest.mark.parametrize("command", [("search", "pytest"), ("search", "--notes", "pytest"), ("select", "pytest")],
                         ids=lambda c: "-".join(c))
def test_a_search_on_a_root_sqlite_refuses_says_so_and_still_answers(
    mem: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    _sqlite_refuses(monkeypatch)
    code, text = run(capsys, *command, "--root", str(mem))
    assert code in (0, 2), text  # an in-memory index of the canonical files answers (said once a process)


CONFIGS: dict[str, str] = {
    "not_json": "{ this is not json",
    "array": "[]",
    "writer_role_number": '{"commonkeep": {"writerRole": 3}}',
    "writer_role_empty": '{"commonkeep": {"writerRole": "  "}}',
    "unknown_key": '{"commonkeep": {"minConfidence": "high"}}',
    "threshold_string": '{"commonkeep": {"autoCurateHighThreshold": "high"}}',
    "auto_curate_odd": '{"commonkeep": {"autoCurate": "always"}}',
    "section_string": '{"commonkeep": "yes"}',
    "governance_mode": '{"governance": {"mode": "lax"}}',
}


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_a_bad_config_is_named_by_doctor(mem: Path, capsys: pytest.CaptureFixture[str], config: str) -> None:
    (mem / "config.json").write_text(CONFIGS[config], encoding="utf-8")
    code, text = run(capsys, "doctor", "--root", str(mem))
    assert code == 1 and "config_invalid" in text and "config.json" in text, text


@pytest.mark.parametrize("config", sorted(set(CONFIGS) - {"not_json", "array"}))
def test_a_bad_config_setting_refuses_writer_actions_naming_the_key(
    mem: Path, capsys: pytest.CaptureFixture[str], config: str
) -> None:
    (mem / "config.json").write_text(CONFIGS[config], encoding="utf-8")
    code, text = run(capsys, "curate", "--root", str(mem), "--role", WRITER)
    assert code == 2 and "config.json" in text and "nothing was done" in text, text
    key = next(k for k in ("writerRole", "minConfidence", "autoCurateHighThreshold", "autoCurate", "commonkeep",
                           "governance.mode") if k in CONFIGS[config] or k.split(".")[0] in CONFIGS[config])
    assert key.split(".")[0] in text


# --- arguments: empty, huge, odd Unicode, out of range ------------------------------------------

ODD_TEXTS: dict[str, str] = {
    "rtl_override": "Deploy on \u202eyadseuT\u202c afternoons",
    "zero_width": "Run\u200b pytest\u200d before\ufeff commits",
    "combining": "Cafe\u0301 na\u0131\u0308ve re\u0301sume\u0301 tests",
    "emoji": "Ship it \U0001f680\U0001f9ea with tests",
    "cjk": "テストを実行してからコミットする",
    "controls": "Run \x1b[31mred\x1b[0m tests \x07 now",
    "newlines": "line one\nline two\r\nline three",
    "lone_surrogate_escape": "bad \udcff byte from a filename",
    "huge": "x" * 100_001,
    "only_spaces": "   ",
    "empty": "",
}


@pytest.mark.parametrize("text", sorted(ODD_TEXTS))
@pytest.mark.parametrize("target", ["candidate", "daily"])
def test_odd_text_is_written_or_refused_clearly(
    mem: Path, capsys: pytest.CaptureFixture[str], text: str, target: str
) -> None:
    extra = ["--daily"] if target == "daily" else []
    code, out = run(capsys, "write", *extra, ODD_TEXTS[text], "--root", str(mem))
    if text in ("huge", "only_spaces", "empty", "lone_surrogate_escape"):
        assert code == 2 and ("nothing" in out or "non-empty" in out or "limit" in out), out
    else:
        assert code == 0, out
        run(capsys, "inbox", "--root", str(mem))
        run(capsys, "search", ODD_TEXTS[text].split()[0], "--root", str(mem))


@pytest.mark.parametrize("query", sorted(ODD_TEXTS))
def test_odd_queries_search_or_refuse_clearly(mem: Path, capsys: pytest.CaptureFixture[str], query: str) -> None:
    code, out = run(capsys, "search", ODD_TEXTS[query], "--root", str(mem))
    assert code in (0, 2)
    code, out = run(capsys, "select", ODD_TEXTS[query] or "x", "--root", str(mem))
    assert code in (0, 2)


BAD_ARGS: list[tuple[tuple[str, ...], str]] = [
    (("write", "text", "--confidence", "2"), "confidence"),
    (("write", "text", "--confidence", "nan"), "confidence"),
    (("write", "text", "--confidence", "-0.5"), "confidence"),
    (("write", "text", "--confidence", "high"), "confidence"),
    (("write", "text", "--tags", ",,,"), ""),
    (("write", "text", "--evidence", "e" * 100_000), "evidence"),
    (("write", "text", "--durability", "forever"), "durability"),
    (("write", "text", "--trust", "i_promise"), "trust"),
    (("search", "x", "--limit", "-1"), "limit"),
    (("search", "x", "--limit", "abc"), "limit"),
    (("search", "x", "--mode", "sematic"), "--mode semantic"),
    (("project", "--budget", "-5"), "budget"),
    (("project", "--target", "everything"), "target"),
    (("apply", "../../etc/passwd"), "patch"),
    (("apply", "/etc/passwd"), "patch"),
    (("apply", "patch_does_not_exist"), "patch"),
    (("patches", "--show", "../config"), "patch"),
    (("review", "--approve", "cap_nope"), "cap_nope"),
    (("review", "--reject", "cap_nope", "--reason", "x"), "cap_nope"),
    (("review", "--text", "hello"), "without a decision"),
    (("review", "--reason", "why"), "without a decision"),
    (("review", "--choice", "add"), "without a decision"),
    (("forget", "mem_nope", "--reason", "other"), "mem_nope"),
    (("forget", "../x", "--reason", "other"), ""),
    (("inbox", "--role", ""), "--role is empty"),
    (("curate", "--role", ""), "--role is empty"),
    (("share", "snyc"), "share sync"),
    (("hermes", "instal"), "hermes install"),
    (("dossier", "ingets"), "dossier ingest"),
    (("sarch", "x"), "search"),
    (("inbox", "--root", ""), "--root is empty"),
    (("handoff", "--goal", ""), ""),
    (("select", ""), ""),
    (("hermes", "status", "--root", "/tmp"), "--root does not apply"),
]


@pytest.mark.parametrize("argv,says", BAD_ARGS, ids=lambda a: "-".join(a)[:40] if isinstance(a, tuple) else None)
def test_bad_arguments_are_refused_with_a_message(
    mem: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], says: str
) -> None:
    root = ["--root", str(mem)] if "--root" not in argv and argv[0] not in ("hermes", "dossier") else []
    role = ["--role", WRITER] if "--role" not in argv and argv[0] in ("apply", "review", "forget", "curate") else []
    before = {p: p.read_bytes() for p in (mem / "memory").glob("*.jsonl")}
    code, text = run(capsys, *argv, *root, *role)
    if says:
        assert says in text, text
    if argv[0] not in ("write", "select", "handoff", "tags") or code != 0:
        assert code in (1, 2), text
    if argv[0] != "write":
        assert {p: p.read_bytes() for p in (mem / "memory").glob("*.jsonl")} == before  # nothing changed


# --- roots: missing, symlinked, looping, a file ---------------------------------------------------

def _loop(tmp: Path) -> Path:
    (tmp / "loop").symlink_to(tmp / "loop")
    return tmp / "loop"


def _file(tmp: Path) -> Path:
    (tmp / "afile").write_text("x", encoding="utf-8")
    return tmp / "afile"


def _missing(tmp: Path) -> Path:
    return tmp / "nowhere" / "at all"


def _dangling(tmp: Path) -> Path:
    (tmp / "dangling").symlink_to(tmp / "gone")
    return tmp / "dangling"


ROOTS = {"symlink_loop": _loop, "a_file": _file, "missing": _missing, "dangling_symlink": _dangling}


@pytest.mark.parametrize("command", [("inbox",), ("search", "x"), ("doctor",), ("write", "a fact"), ("curate",),
                                     ("reindex",), ("select", "x")], ids=lambda c: c[0])
@pytest.mark.parametrize("kind", sorted(ROOTS))
def test_an_unusable_root_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, command: tuple[str, ...]
) -> None:
    root = ROOTS[kind](tmp_path)
    code, text = run(capsys, *command, "--root", str(root), "--role", WRITER)
    assert code in (1, 2), text
    assert str(root.name) in text or "root" in text, text


@pytest.mark.parametrize("name", ["memory", "inbox", "patches"])
def test_a_store_folder_linking_outside_the_root_is_refused_for_writes(
    mem: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    outside = tmp_path / "outside"
    (mem / name).rename(outside)
    (mem / name).symlink_to(outside)
    code, text = run(capsys, "write", "A fact through a link.", "--root", str(mem))
    run(capsys, "doctor", "--root", str(mem))
    if name in ("memory", "inbox"):
        assert code == 2 and name in text, text


@pytest.mark.parametrize("name", ["memory/L2.playbooks.jsonl", "inbox/captured.jsonl"])
def test_a_store_file_that_is_a_folder_is_named_by_doctor_and_the_rest_still_checked(
    mem: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = mem / name
    keep = path.read_bytes()
    path.unlink()
    path.mkdir()
    code, text = run(capsys, "doctor", "--root", str(mem))
    assert code == 1 and "unreadable_file" in text and name in text, text
    path.rmdir()
    path.write_bytes(keep)


# --- patches: corrupt, escaping, huge --------------------------------------------------------------

PATCHES: dict[str, bytes] = {
    "not_json": b"{ not json",
    "empty": b"",
    "array": b"[]",
    "no_ops": b'{"patch_id": "patch_x", "status": "proposed"}',
    "ops_not_list": b'{"patch_id": "patch_x", "status": "proposed", "ops": {}}',
    "bad_utf8": b'{"patch_id": "\xff"}',
}


@pytest.mark.parametrize("patch", sorted(PATCHES))
def test_a_corrupt_latest_patch_is_named_by_apply_and_doctor(
    mem: Path, capsys: pytest.CaptureFixture[str], patch: str
) -> None:
    (mem / "patches" / "patch_209901010000_ckzzzzzz.json").write_bytes(PATCHES[patch])
    code, text = run(capsys, "apply", "--root", str(mem), "--role", WRITER)
    assert code == 2, text
    if patch in ("not_json", "empty", "bad_utf8"):
        assert "patch_209901010000_ckzzzzzz.json" in text, text
    code, text = run(capsys, "doctor", "--root", str(mem))
    assert code == 1 and "patch_209901010000_ckzzzzzz.json" in text, text
    code, text = run(capsys, "patches", "--root", str(mem))
    assert code in (0, 1, 2)


def test_unknown_op_ids_are_listed_capped(mem: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["curate", "--root", str(mem), "--role", WRITER, "--json"]) in (0, 1)
    pid = json.loads(capsys.readouterr().out)["patch_id"]
    ops = ",".join(f"op_{i:03d}x" for i in range(300))
    code, text = run(capsys, "apply", pid, "--ops", ops, "--root", str(mem), "--role", WRITER)
    assert code == 2 and "and 290 more (300 in all)" in text and "op_299x" not in text, text


def test_repeated_evidence_counts_once(mem: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "write", "Use tabs in Makefiles.", "--evidence", "x", "--evidence", "x", "--evidence", " x ",
        "--root", str(mem), "--json")
    cands = [json.loads(line) for line in (mem / "inbox" / "captured.jsonl").read_text(encoding="utf-8").splitlines()]
    assert cands[-1]["evidence_refs"] == ["x"]


# --- output: closed, narrow, broken; Ctrl-C ---------------------------------------------------------

def test_closed_stdout_is_said_on_stderr(mem: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["inbox", "--root", str(mem)]) == 2
    assert "standard output is closed" in capsys.readouterr().err


@pytest.mark.parametrize("command", [("inbox",), ("review", "--list"), ("search", "café"), ("doctor",)],
                         ids=lambda c: c[0])
def test_an_ascii_terminal_gets_escapes_not_an_encoding_error(
    mem: Path, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    main(["write", "Prefer café naïve names ✓", "--root", str(mem), "--evidence", "a"])
    narrow = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", narrow)
    assert main([*command, "--root", str(mem)]) in (0, 1)
    narrow.flush()
    written = narrow.buffer.getvalue()  # type: ignore[attr-defined]
    assert written.isascii()
    if command[0] == "inbox":
        assert b"caf\\xe9" in written


class _BrokenPipe(io.StringIO):
    def write(self, s: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_pipe_ends_quietly(mem: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", _BrokenPipe())
    assert main(["inbox", "--root", str(mem)]) == 0


@pytest.mark.parametrize("command", [("inbox",), ("search", "x"), ("curate",)], ids=lambda c: c[0])
def test_ctrl_c_exits_130_without_a_traceback(
    mem: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: tuple[str, ...]
) -> None:
    import commonkeep.cli as cli

    def interrupted(*_: object, **__: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)  # as early as a command can be interrupted
    assert main([*command, "--root", str(mem), "--role", WRITER]) == 130
    assert "Traceback" not in capsys.readouterr().err


def test_ctrl_c_while_importing_the_cli_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep import entry

    monkeypatch.delitem(sys.modules, "commonkeep.cli")

    class Interrupting:
        def find_spec(self, name: str, *_: object) -> None:
            if name == "commonkeep.cli":
                raise KeyboardInterrupt

    monkeypatch.setattr(sys, "meta_path", [Interrupting(), *sys.meta_path])
    assert entry.main() == 130


# --- share: no git identity -------------------------------------------------------------------------

def test_share_without_a_git_identity_is_named(mem: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(var, raising=False)
    config = tmp_path / "fresh.gitconfig"
    config.write_text("[user]\n\tuseConfigOnly = true\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    code, text = run(capsys, "share", "init", "--root", str(mem))
    assert code == 2 and "no git identity" in text and not (mem / ".git").exists()



@pytest.mark.parametrize("action", ["sync", "status", "uninstall"])
def test_hermes_without_hermes_creates_nothing(
    mem: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], action: str
) -> None:
    home = tmp_path / "no-hermes-here"
    extra = ["--root", str(mem)] if action == "sync" else []
    code, text = run(capsys, "hermes", action, "--hermes-home", str(home), *extra)
    assert not home.exists(), f"hermes {action} created {home}"
    if action == "sync":
        assert code == 2 and "no Hermes home" in text, text
