"""Benign text from real code: the sentences of the docstrings of every Python file under a folder
(``commonkeep bench secrets --benign-docstrings DIR``), test folders left out. Documentation of
code is what a coding agent's memories read like: names, paths, examples of configuration, and
the words "password", "token" and "key" in ordinary sentences."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from commonkeep.errors import BadInput

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n\s*\n")


def sentences(folder: str, min_chars: int = 20) -> list[str]:
    """The docstring sentences (whitespace joined, ``min_chars`` or longer) of the ``*.py`` files under ``folder``."""
    base = Path(folder)
    if not base.is_dir():
        raise BadInput(f"--benign-docstrings: {folder} is not a folder")
    out: list[str] = []
    for path in sorted(base.rglob("*.py")):
        if {"test", "tests"} & set(path.relative_to(base).parts):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
            continue  # not Python this interpreter reads: skipped
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                if doc:
                    out += [s for s in (" ".join(p.split()) for p in _SENTENCE.split(doc)) if len(s) >= min_chars]
    return out
