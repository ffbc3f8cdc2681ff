"""The house stays drawn as docs/architecture.md draws it (issue 34).

The layers themselves are one list, in pyproject.toml (``[tool.importlinter]``); import-linter, a
maintained tool, checks every import against it, function-level ones included.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"


def test_no_package_imports_one_above_it() -> None:
    tool = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run([str(tool), "--config", str(ROOT / "pyproject.toml")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " 0 broken" in done.stdout and "BROKEN" not in done.stdout


def _lines(path: Path) -> int:
    return sum(1 for _ in path.open(encoding="utf-8"))


def test_no_package_holds_more_than_a_fifth_of_the_code() -> None:
    sizes: dict[str, int] = {}
    for path in CORE.rglob("*.py"):
        rel = path.relative_to(CORE).parts
        top = rel[0] if len(rel) > 1 else "(entry points)"
        sizes[top] = sizes.get(top, 0) + _lines(path)
    total = sum(sizes.values())
    over = {name: round(n / total, 3) for name, n in sizes.items() if n > total / 5}
    assert not over, f"packages over 20 % of {total} lines: {over}"


def test_benchmarks_and_corpora_live_only_in_the_bench_package() -> None:
    stray = sorted(str(p.relative_to(ROOT)) for p in CORE.rglob("*.py")
                   if p.relative_to(CORE).parts[0] != "bench"
                   and (p.name.startswith("bench") or "corpus" in p.name or p.name == "baseline.py"))
    assert stray == []
