"""``config.json`` ``curator.autoCurateHighThreshold``: only a number in [0, 1] is taken.

``true`` used to read as 1.0 (Python's bool is an int) and ``-1`` as "every confidence"; upstream
reads only a JS number, and a threshold below 0 or above 1 means nothing. Anything else keeps the
default, 0.85."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonkeep.store.curators import curator_config


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("0.9", 0.9),
        ("1", 1.0),
        ("0", 0.0),
        ("true", 0.85),
        ("false", 0.85),
        ('"0.5"', 0.85),
        ("-1", 0.85),
        ("1.5", 0.85),
        ("NaN", 0.85),
        ("-Infinity", 0.85),
        ("null", 0.85),
    ],
)
def test_only_a_number_in_range_sets_the_threshold(root: Path, raw: str, want: float) -> None:
    (root / "config.json").write_text(
        '{"curator": {"autoCurate": "high-only", "autoCurateHighThreshold": ' + raw + "}}", encoding="utf-8"
    )
    conf = curator_config(root)
    assert conf["autoCurateHighThreshold"] == want
    assert conf["autoCurate"] == "high-only"
    json.dumps(conf, allow_nan=False)  # what doctor and --json print stays valid JSON
