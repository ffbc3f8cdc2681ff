"""The red-team corpus of the ``user_turn`` stamp (``tests/data/redteam/``) as ``bench userturn``
sessions (``commonkeep.bench.userturn_corpus`` shape), for each host the entry applies to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data" / "redteam"
REMEMBER = "/commonkeep-remember "


def _load(name: str, key: str) -> list[dict[str, Any]]:
    return list(json.loads((DATA / name).read_text(encoding="utf-8"))[key])


def _hermes_turns(entry: dict[str, Any]) -> list[dict[str, Any]]:
    if "hermes" in entry:
        return [{"message": entry["hermes"]}]
    typed = entry["typed"]
    return [{"message": t} for t in (typed if isinstance(typed, list) else [typed])]


def _omp_turns(entry: dict[str, Any]) -> list[dict[str, Any]]:
    typed = entry["typed"]
    if "omp_message" in entry:
        return [{"typed": typed, "message": entry["omp_message"]}]
    out = []
    for t in typed if isinstance(typed, list) else [typed]:
        turn: dict[str, Any] = {"typed": t, "message": t}
        if t.startswith(REMEMBER):
            turn["remember"] = t[len(REMEMBER):]
        out.append(turn)
    return out


def _hosts(entry: dict[str, Any]) -> tuple[str, ...]:
    if "hermes" in entry:
        return ("hermes",)
    if "omp_message" in entry:
        return ("omp",)
    return ("hermes", "omp")


def sessions(group: str) -> list[dict[str, Any]]:
    """``attack`` (must never be stamped) or ``request`` (benign: must be stamped and applied)."""
    entries = _load("userturn_attacks.json", "attacks") if group == "attack" else _load("userturn_benign.json", "requests")
    out = []
    for n, entry in enumerate(entries):
        for host in _hosts(entry):
            turns = _hermes_turns(entry) if host == "hermes" else _omp_turns(entry)
            out.append({"id": f"rt-{group}-{n:03d}-{host}", "group": group, "class": entry.get("class", "request"),
                        "host": host, "platform": "cli", "language": entry.get("language", "en"),
                        "shape": "red team", "statement": entry["statement"], "turns": turns})
    return out
