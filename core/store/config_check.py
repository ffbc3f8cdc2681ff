"""The types of commonkeep's own settings in ``config.json``, checked, never ignored in silence.

An ill-typed value (``"writerRole": 3``, ``"autoCurateHighThreshold": "high"``) or an unknown key
of the ``commonkeep`` section (``minConfidence``: a typo, or a setting that does not exist) used
to fall back to the default without a word, the writer role included. :func:`problems` names
each one with the file and key; :func:`require_valid` refuses a writer action (``BadConfig``,
exit 2) while one stands; ``doctor`` reports them (``config_invalid``). OmpKeep's own sections
(``curator``) are OmpKeep's to check.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput


class BadConfig(BadInput):
    """``config.json`` holds a setting of the wrong type or a key commonkeep does not know."""


def _role(v: Any) -> bool:
    return isinstance(v, str) and bool(v.strip())


def _fraction(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and 0 <= v <= 1


#: commonkeep's own keys: what each must be, in words, and the check
KEYS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "writerRole": ("a non-empty string (the role that may change memory)", _role),
    "autoCurate": ('one of "high-only", "propose", "off"', lambda v: v in ("high-only", "propose", "off")),
    "autoCurateHighThreshold": ("a number from 0 to 1", _fraction),
    "embedder": ("an object (see docs/recall.md)", lambda v: isinstance(v, dict)),
    "reranker": ("an object (see docs/recall.md)", lambda v: isinstance(v, dict)),
}
GOVERNANCE_MODES = ("compatibility", "strict")


def problems(root: Path | str) -> list[str]:
    """Each ill-typed or unknown commonkeep setting in ``root``'s ``config.json``, in words
    (empty when the file is missing, unreadable or not JSON: ``doctor`` reports that apart)."""
    path = Path(root) / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []
    if not isinstance(data, dict):
        return [f"{path}: must be a JSON object, not {type(data).__name__}"]
    out: list[str] = []
    own = data.get("commonkeep")
    if own is not None and not isinstance(own, dict):
        out.append(f"{path}: key commonkeep must be an object, not {json.dumps(own)[:60]}")
    for key, value in (own or {}).items() if isinstance(own, dict) else ():
        if key not in KEYS:
            import difflib  # only for a misspelt key: a decision checks the config and finds none

            near = difflib.get_close_matches(key, KEYS, n=1, cutoff=0.6)
            out.append(f"{path}: unknown key commonkeep.{key}" + (f" (did you mean {near[0]}?)" if near else "")
                       + f"; known: {', '.join(KEYS)}")
        elif not KEYS[key][1](value):
            out.append(f"{path}: commonkeep.{key} must be {KEYS[key][0]}, not {json.dumps(value)[:60]}")
    gov = data.get("governance")
    if isinstance(gov, dict) and "mode" in gov and gov["mode"] not in GOVERNANCE_MODES:
        out.append(f"{path}: governance.mode must be one of {', '.join(map(json.dumps, GOVERNANCE_MODES))}, "
                   f"not {json.dumps(gov['mode'])[:60]}")
    return out


def require_valid(root: Path | str, action: str) -> None:
    """Refuse ``action`` (nothing done) while ``config.json`` holds an ill-typed or unknown setting."""
    found = problems(root)
    if found:
        raise BadConfig(f"{action}: refused, config.json has {len(found)} setting(s) commonkeep cannot use; "
                        "nothing was done:\n  " + "\n  ".join(found),
                        hint="fix or remove those keys (`commonkeep doctor` lists them), then run the command again")
