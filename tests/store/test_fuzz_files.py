"""Fuzzing every file kind a root holds (issue 14 §2): the line reader, the JSONL store files,
patch files, ``config.json`` and the settings files that choose the root.

Whatever the bytes, no command prints a traceback, each exits 0, 1 or 2, a bad file is named,
and no good line is lost. (The SQLite files under ``search/`` are the search index's own tests.)
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commonkeep.cli import main
from commonkeep.store.jsonl import parse_jsonl, read_jsonl

WRITER = "librarian"
FAST = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

json_scalar = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
json_value = st.recursive(json_scalar, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                          max_leaves=12)
good_row = st.dictionaries(st.text(max_size=8), json_value, max_size=5).map(lambda d: {"id": "good", **d})
# what a line of another program's file may hold: random bytes, near-JSON, huge numbers, deep nesting
junk_line = st.one_of(
    st.binary(max_size=60).map(lambda b: b.replace(b"\n", b"")),
    st.text(max_size=60).map(lambda t: t.replace("\n", "").encode("utf-8", "surrogatepass")),
    json_value.map(lambda v: json.dumps(v).encode()),
    st.integers(4301, 6000).map(lambda n: b'{"n":' + b"7" * n + b"}"),
    st.integers(1, 3000).map(lambda n: b"[" * n),
    st.sampled_from([b'{"id":', b"{}", b"null", b"\xef\xbb\xbf{}", b"\r", b'{"a":1}{"b":2}', b"NaN", b'"\\ud800"']),
)


@given(st.lists(st.tuples(st.booleans(), good_row, junk_line), max_size=12), st.booleans())
@settings(max_examples=120, deadline=None)
def test_the_line_reader_keeps_every_good_line_and_names_every_other(parts: list[tuple[bool, dict[str, object], bytes]], crlf: bool) -> None:
    lines: list[bytes] = []
    good_at: list[int] = []
    for is_good, row, junk in parts:
        if is_good:
            lines.append(json.dumps(row, ensure_ascii=False).encode("utf-8", "surrogatepass"))
            good_at.append(len(lines))
        else:
            lines.append(junk)
    data = (b"\r\n" if crlf else b"\n").join(lines)
    read = parse_jsonl(data, Path("f.jsonl"))  # never raises
    at = dict(zip(read.line_nos, read.rows, strict=True))
    for n in good_at:
        assert n in at, f"good line {n} lost"
    bad_nos = {b.line_no for b in read.bad}
    assert not bad_nos & set(at)
    for b in read.bad:
        assert b.describe().startswith(f"f.jsonl:{b.line_no}: ")
    shown = [line[3:] if i == 0 and line.startswith(b"\xef\xbb\xbf") else line for i, line in enumerate(lines)]  # a leading BOM
    blank = {i for i, line in enumerate(shown, 1) if not line.decode("utf-8", "surrogateescape").strip()}
    assert set(at) | bad_nos | blank == set(range(1, len(lines) + 1))


@pytest.fixture(scope="module")
def template() -> Iterator[Path]:
    """A root with one applied record, one new candidate, evidence and a patch."""
    from commonkeep.gate.capture import capture
    from commonkeep.patches.curate import curate
    from commonkeep.patches.patch import apply_patch

    with tempfile.TemporaryDirectory(prefix="ck-fuzz-") as tmp:
        root = Path(tmp) / "root"
        capture(root, "Always run pytest -q before committing.", tags=["testing"],
                evidence_refs=["daily/2026-12-02.md", "pyproject.toml"], confidence=0.9,
                primary_trust_class="direct_user_instruction", durability_signal="long_term",
                provenance={"role": WRITER})  # the writer's own write: a stamp, so the plain apply takes it
        prop = curate(root, role=WRITER)
        apply_patch(root, prop.patch["patch_id"], role=WRITER)
        capture(root, "Deploys run on Tuesdays.", tags=["deploy"], evidence_refs=["a"])
        yield root


@contextlib.contextmanager
def _copy(template: Path) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="ck-fuzz-") as tmp:
        root = Path(tmp) / "root"
        shutil.copytree(template, root, symlinks=True)
        yield root


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)  # an unexpected exception fails the test: that is the traceback
    said = out.getvalue() + err.getvalue()
    assert code in (0, 1, 2), (argv, code, said)
    assert "Traceback" not in said
    return code, said


JSONL_KINDS = ["inbox/captured.jsonl", "memory/L2.playbooks.jsonl", "memory/L1.identity.jsonl", "memory/evidence.jsonl",
               "memory/tombstones.jsonl", "memory/inquiries.jsonl", "memory/reinforcement.jsonl", "memory/profiles.jsonl",
               "memory/projects/fuzz.jsonl", "quarantine/lines.jsonl"]
READERS = [["doctor"], ["inbox"], ["render"], ["curate", "--role", WRITER], ["handoff"], ["inquiries"]]


@pytest.mark.parametrize("rel", JSONL_KINDS)
@given(junk=st.lists(junk_line, min_size=1, max_size=4))
@FAST
def test_a_store_file_with_junk_lines_breaks_no_command_and_loses_no_good_line(template: Path, rel: str, junk: list[bytes]) -> None:
    with _copy(template) as root:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        original = path.read_bytes() if path.exists() else b""
        good = [line for line in original.split(b"\n") if line.strip()]
        path.write_bytes(b"\n".join([*junk[:2], *good, *junk[2:]]) + b"\n")
        bad_expected = read_jsonl(path).bad
        said = ""
        for argv in READERS:
            said += _run([*argv, "--root", str(root)])[1]
        if bad_expected:
            assert f"{rel}:" in said, f"no command named {rel}"
        # every good line is still in the file or kept in the quarantine
        q = root / "quarantine" / "lines.jsonl"
        kept = (path.read_bytes() if path.exists() else b"") + (q.read_bytes() if q.exists() else b"")
        for line in good:
            row = json.loads(line)
            assert json.dumps(row.get("id")).encode() in kept, f"lost {row.get('id')}"


def _doc(value: object) -> bytes:
    return json.dumps(value, indent=2).encode()


whole_file = st.one_of(
    st.binary(max_size=200),
    json_value.map(_doc),
    st.integers(4301, 5000).map(lambda n: b'{"ops": [' + b"1" * n + b"]}"),
    st.integers(1, 5000).map(lambda n: b"[" * n + b"]" * n),
    st.dictionaries(st.sampled_from(["patch_id", "ops", "status", "created_at", "summary", "mode", "applied_ops"]), json_value, max_size=7).map(_doc),
)


@given(content=whole_file)
@FAST
def test_a_patch_file_of_any_content_is_named_and_left_as_it_is(template: Path, content: bytes) -> None:
    with _copy(template) as root:
        path = root / "patches" / "patch_202612021200_ckfuzz01.json"
        path.write_bytes(content)
        said = ""
        for argv in (["doctor"], ["curate", "--role", WRITER], ["inbox"]):
            said += _run([*argv, "--root", str(root)])[1]
        try:
            doc = json.loads(content)
            looks_like_patch = isinstance(doc, dict) and isinstance(doc.get("ops"), list)
        except (ValueError, RecursionError):
            looks_like_patch = False
        if not looks_like_patch:
            assert "patches/patch_202612021200_ckfuzz01.json" in said
        assert path.read_bytes() == content  # never rewritten or removed by a reader


@given(content=whole_file)
@FAST
def test_patches_lists_a_patch_file_of_any_content(template: Path, content: bytes) -> None:
    with _copy(template) as root:
        path = root / "patches" / "patch_202612021200_ckfuzz01.json"
        path.write_bytes(content)
        _run(["patches", "--root", str(root)])
        assert path.read_bytes() == content


@given(content=whole_file)
@FAST
def test_a_config_json_of_any_content_is_named_and_left_as_it_is(template: Path, content: bytes) -> None:
    with _copy(template) as root:
        path = root / "config.json"
        path.write_bytes(content)
        said = ""
        for argv in (["doctor"], ["curate", "--role", WRITER], ["select", "how do we run the tests"], ["handoff"], ["inbox"]):
            said += _run([*argv, "--root", str(root)])[1]
        try:
            json.loads(content)
            valid = True
        except (ValueError, RecursionError):
            valid = False
        if not valid:
            assert "config.json" in said
        assert path.read_bytes() == content


@pytest.mark.parametrize("rel", [".omp/settings.json", ".pi/settings.json"])
@given(content=whole_file)
@FAST
def test_a_settings_file_of_any_content_is_named_and_never_moves_the_root_silently(
    rel: str, content: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    with tempfile.TemporaryDirectory(prefix="ck-fuzz-") as tmp:
        cwd, home = Path(tmp) / "project", Path(tmp) / "home"
        (cwd / rel).parent.mkdir(parents=True)
        home.mkdir()
        (cwd / rel).write_bytes(content)
        monkeypatch.chdir(cwd)
        monkeypatch.setenv("HOME", str(home))
        code, said = _run(["root"])
        assert code == 0
        try:
            json.loads(content)
            valid = True
        except (ValueError, RecursionError):
            valid = False
        if not valid:
            assert rel in said
        _run(["doctor"])
        assert (cwd / rel).read_bytes() == content
