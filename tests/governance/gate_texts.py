"""The texts the poisoning assessment's shortcuts are held to (``test_poisoning_narrowed``,
``test_poisoning_short_ways``): the gate corpora, the capture benchmark's mixed and token texts, and
their folded, leet, rot13 and upper-case views."""

from __future__ import annotations

import json
from pathlib import Path

from commonkeep.bench.capture import WORKLOADS
from commonkeep.util.normalize import fold, rot13, unleet

_DATA = Path(__file__).resolve().parents[1] / "data" / "gate"


def gate_texts(seed: int, *, plain_rot13: bool = False) -> list[str]:
    """The texts and their views; ``plain_rot13``: the rot13 of the folded text unfolded too."""
    texts: list[str] = []
    for path in sorted(_DATA.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                texts.append(row["text"] if isinstance(row, dict) else str(row))
    for name in ("mixed", "tokens"):
        texts += [text for text, _ in WORKLOADS[name](400, seed)]
    views = []
    for text in texts:
        folded = fold(text)
        views += [folded, unleet(folded), *([rot13(folded)] if plain_rot13 else []), fold(rot13(folded)), text.upper()]
    return texts + views
