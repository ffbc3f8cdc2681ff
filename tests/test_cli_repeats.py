"""A repeated option never loses a value without a word: list options (``--tags``, ``--approve``,
``--ops`` …) add up across repeats and still take comma-separated values; a single-value option
given twice with different values is a usage error (exit 2) naming the option and both values,
and nothing is written. Real subprocesses on real roots made by ``commonkeep init``."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from commonkeep.store.jsonl import read_jsonl

REPO = Path(__file__).resolve().parents[1]
WRITER = "librarian"


def ck(*args: str, module: str = "commonkeep.cli") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_ROOT") and k != "COMMONKEEP_ROLE"}
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=env,
                          timeout=120, cwd=REPO)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "memory"
    done = ck("init", "--root", str(r))
    assert done.returncode == 0, done.stderr
    return r


def inbox(root: Path) -> list[dict[str, Any]]:
    path = root / "inbox" / "captured.jsonl"
    return read_jsonl(path).rows if path.exists() else []


def write(root: Path, text: str, *extra: str) -> str:
    done = ck("write", text, "--root", str(root), "--json", *extra)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["candidate"])


def assert_refused(done: subprocess.CompletedProcess[str], option: str, first: str, second: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert f"argument {option}: given twice with different values, {first} and {second}; give it once" in done.stderr


def test_repeated_tags_add_up_on_disk(root: Path) -> None:
    cid = write(root, "Run the tests with pytest -q.", "--tags", "testing,python", "--tags", "ci", "--tags", " python , ,ci",
                "--tag", "pytest")  # an abbreviation is the same option
    [cand] = inbox(root)
    assert cand["id"] == cid
    assert cand["tags"] == ["testing", "python", "ci", "pytest"]


def test_conflicting_single_values_are_refused_and_nothing_is_written(root: Path) -> None:
    done = ck("write", "Deploys happen on Tuesdays.", "--root", str(root), "--agent", "hermes", "--agent", "omp")
    assert_refused(done, "--agent", "'hermes'", "'omp'")
    done = ck("write", "Deploys happen on Tuesdays.", "--root", str(root), "--confidence", "0.9", "--confidence", "0.4", "--json")
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["kind"] == "usage" and error["message"] == (
        "argument --confidence: given twice with different values, 0.9 and 0.4; give it once")
    # --role given before the command (hoisted after it) and again after it
    done = ck("--role", "alice", "write", "Deploys happen on Tuesdays.", "--root", str(root), "--role", "bob")
    assert_refused(done, "--role", "'alice'", "'bob'")
    assert inbox(root) == []
    assert not list((root / "daily").glob("*.md"))
    # the same value twice is no conflict (0.9 and 0.90 are one number)
    write(root, "Deploys happen on Tuesdays.", "--agent", "hermes", "--agent", "hermes", "--confidence", "0.9",
          "--confidence", "0.90", "--role", WRITER, "--root", str(root))
    [cand] = inbox(root)
    assert cand["provenance"]["agent"] == "hermes" and cand["confidence"] == 0.9


def test_two_roots_are_refused_and_neither_gets_the_write(root: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    assert ck("init", "--root", str(other)).returncode == 0
    done = ck("--root", str(root), "write", "Deploys happen on Tuesdays.", "--root", str(other))
    assert_refused(done, "--root", repr(str(root)), repr(str(other)))
    assert inbox(root) == [] and inbox(other) == []


def test_a_nested_command_refuses_an_option_given_at_both_levels(root: Path, tmp_path: Path) -> None:
    done = ck("omp", "--root", str(root), "status", "--root", str(tmp_path / "elsewhere"))
    assert_refused(done, "--root", repr(str(root)), repr(str(tmp_path / "elsewhere")))


def test_review_approves_every_id_given_comma_separated_and_repeated(root: Path) -> None:
    ids = [write(root, text, "--role", WRITER) for text in
           ("Run the tests with pytest -q.", "Format Python with ruff format.", "Deploys happen on Tuesdays.")]
    done = ck("review", "--root", str(root), "--role", WRITER, "--approve", f"{ids[0]},{ids[1]}", "--approve", ids[2],
              "--approve", ids[0], "--json")
    assert done.returncode == 0, done.stderr
    assert {c["id"]: c["status"] for c in inbox(root)} == dict.fromkeys(ids, "patched")
    l2 = [r["statement"] for r in read_jsonl(root / "memory" / "L2.playbooks.jsonl").rows]
    assert sorted(l2) == sorted(["Run the tests with pytest -q.", "Format Python with ruff format.", "Deploys happen on Tuesdays."])


def test_review_refuses_two_reasons_an_empty_id_list_and_one_text_for_several(root: Path) -> None:
    a = write(root, "Run the tests with pytest -q.", "--role", WRITER)
    b = write(root, "Format Python with ruff format.", "--role", WRITER)
    done = ck("review", "--root", str(root), "--role", WRITER, "--reject", a, "--reason", "stale", "--reason", "wrong")
    assert_refused(done, "--reason", "'stale'", "'wrong'")
    done = ck("review", "--root", str(root), "--role", WRITER, "--approve", "")
    assert done.returncode == 2 and "--approve is empty" in done.stderr
    done = ck("review", "--root", str(root), "--role", WRITER, "--approve", a, "--approve", b, "--text", "Use pytest.")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--text edits one candidate, but --approve names 2" in done.stderr
    assert {c["id"]: c["status"] for c in inbox(root)} == {a: "new", b: "new"}
    assert not (root / "memory" / "L2.playbooks.jsonl").exists() or read_jsonl(root / "memory" / "L2.playbooks.jsonl").rows == []


def test_dossier_refuses_two_limits() -> None:
    done = ck("query", "how do we deploy?", "--limit", "3", "--limit", "4", module="commonkeep.dossier")
    assert_refused(done, "--limit", "3", "4")


def _parsed(*argv: str) -> argparse.Namespace:
    from commonkeep.cli import build_parser

    args, unknown = build_parser(only=argv[0]).parse_known_args(list(argv))
    assert unknown == []
    return args


def test_options_of_several_values_add_up_across_repeats() -> None:
    assert _parsed("bench", "capture", "--against", "HEAD~1", "--against", "HEAD~2", "HEAD~1").against == ["HEAD~1", "HEAD~2"]
    assert _parsed("bench", "store", "--rewrite", "10", "--rewrite", "20").rewrite == [10, 20]
    assert _parsed("bench", "store").rewrite == [10_000, 100_000]  # not given: the default
    assert _parsed("bench", "locomo", "--data", "x.json", "--modes", "keyword,rerank", "--modes", "deep").modes == [
        "keyword", "rerank", "deep"]
    assert _parsed("bench", "locomo", "--data", "x.json").modes == ["keyword"]


def _value_options(parser: argparse.ArgumentParser, path: str) -> list[tuple[str, argparse.Action]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _value_options(sub, f"{path} {name}")
        elif action.option_strings and action.nargs != 0:
            found.append((f"{path} {action.option_strings[0]}", action))
    return found


def test_every_option_of_every_command_keeps_its_repeats() -> None:
    """The class, not the instance: no option anywhere in the CLI (built-in and plugin commands,
    their sub-commands) may use argparse's plain store, which lets a repeat replace a value."""
    from commonkeep import cli
    from commonkeep.util.repeated_options import ListOption, StoreOption

    names = list(cli.COMMANDS) + sorted(set(cli._plugin_commands()) - set(cli.COMMANDS))
    options = []
    for name in names:
        sub = cli._subparser(cli.build_parser(only=name), name)
        assert sub is not None
        options += _value_options(sub, name)
    assert len(options) > 90
    loose = [where for where, action in options
             if not isinstance(action, ListOption | StoreOption) and where != "write --evidence"]
    assert loose == []
    # --evidence keeps argparse's append: each occurrence is one reference, commas and all (a URL may hold one)
    assert isinstance(dict(options)["write --evidence"], argparse._AppendAction)
