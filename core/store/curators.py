"""commonkeep's curation settings in config.json (OmpKeep §4.12): which curator may apply what.

Read by curate and review, written by ``init`` and ``omp install``, checked by ``doctor``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

AUTO_POLICIES = ("high-only", "propose", "off")


#: what OmpKeep must be told so its own session-end curation applies nothing (``config.json``
#: ``curator.autoCurate``; OmpKeep reads ``"propose"`` as "all eligible", so only ``"off"`` holds)
OMPKEEP_AUTO_CURATE = "off"


def _config(root: Path | str) -> dict[str, Any] | None:
    from commonkeep.store.layout import Layout

    try:  # read only: doctor reads it on a root whose folders it reports as linked outside
        data = json.loads(Layout(root, check=False).config.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _threshold(value: Any) -> float | None:
    # A number in [0, 1]; anything else (``true``, a string, NaN, -1) keeps the default, as
    # upstream reads only a JS number: ``true`` is not 1.0 and a negative value is not "all".
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)
    return None


def curator_config(root: Path | str) -> dict[str, Any]:
    """commonkeep's curation settings: ``config.json`` ``commonkeep`` over ``curator`` over the defaults (§4.12).

    The ``commonkeep`` section (``autoCurate``, ``autoCurateHighThreshold``) is commonkeep's own and
    OmpKeep ignores it; ``curator`` is OmpKeep's, read here only where ``commonkeep`` says nothing.
    ``init`` and ``omp install`` write ``curator.autoCurate: "off"`` (OmpKeep applies nothing) and
    ``commonkeep.autoCurate: "high-only"`` (commonkeep's policy still runs at session end).
    ``ompkeepAutoCurate`` is what OmpKeep itself will do (``doctor`` checks it).
    """
    conf: dict[str, Any] = {"autoCurate": "high-only", "autoCurateHighThreshold": 0.85, "governanceMode": "compatibility",
                            "ompkeepAutoCurate": "high-only"}
    data = _config(root)
    if data is None:
        return conf
    cur, own, gov = data.get("curator"), data.get("commonkeep"), data.get("governance")
    for section in (cur, own):  # commonkeep's own section last: it wins
        if not isinstance(section, dict):
            continue
        if section.get("autoCurate") in AUTO_POLICIES:
            conf["autoCurate"] = section["autoCurate"]
        threshold = _threshold(section.get("autoCurateHighThreshold"))
        if threshold is not None:
            conf["autoCurateHighThreshold"] = threshold
    if isinstance(cur, dict) and "autoCurate" in cur:
        conf["ompkeepAutoCurate"] = str(cur["autoCurate"])
    if isinstance(gov, dict) and gov.get("mode") in ("compatibility", "strict"):
        conf["governanceMode"] = gov["mode"]
    return conf


def configure_curators(root: Path | str) -> dict[str, Any]:
    """Write ``config.json`` so OmpKeep's own curator applies nothing and commonkeep's policy runs.

    Sets ``curator.autoCurate`` to ``"off"`` and, when the root has no ``commonkeep.autoCurate``
    yet, carries the policy commonkeep used so far into it (``high-only`` by default; a root that
    had ``curator.autoCurate: "propose"`` keeps proposing). Other settings are kept. A
    ``config.json`` that is not a JSON object is left alone (``BadInput`` names it). Returns the
    settings written.
    """
    from commonkeep.errors import BadInput
    from commonkeep.store.jsonl import atomic_write_bytes
    from commonkeep.store.layout import Layout

    path = Layout(root).config
    data: Any = {}
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            raise BadInput(f"{path} is not valid JSON ({exc}); it was left as it is",
                           hint='fix it, then run this again; it must hold {"curator": {"autoCurate": "off"}}') from None
        if not isinstance(data, dict):
            raise BadInput(f"{path} is not a JSON object; it was left as it is")
    before = curator_config(root)
    cur = data.get("curator") if isinstance(data.get("curator"), dict) else {}
    own = data.get("commonkeep") if isinstance(data.get("commonkeep"), dict) else {}
    changed = False
    if own.get("autoCurate") not in AUTO_POLICIES:
        own = {**own, "autoCurate": before["autoCurate"] if cur.get("autoCurate") != OMPKEEP_AUTO_CURATE else "high-only"}
        changed = True
    if cur.get("autoCurate") != OMPKEEP_AUTO_CURATE:
        cur = {**cur, "autoCurate": OMPKEEP_AUTO_CURATE}
        changed = True
    if changed:
        data = {**data, "curator": cur, "commonkeep": own}
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
    return {"curator": {"autoCurate": cur["autoCurate"]}, "commonkeep": {"autoCurate": own["autoCurate"]}, "changed": changed}


def curator_findings(root: Path | str, *, omp_uses_root: bool = False) -> list[dict[str, Any]]:
    """``doctor``: whether another curator (OmpKeep, at every OMP session end) could apply what commonkeep holds.

    A ``warning`` when ``config.json`` sets ``curator.autoCurate`` to anything but ``"off"``, or
    says nothing while an OMP installed here uses the root (``omp_uses_root``); ``info`` when it
    says nothing and no OMP is known to use the root (a Hermes-only root).
    """
    conf = curator_config(root)
    if conf["ompkeepAutoCurate"] == OMPKEEP_AUTO_CURATE:
        return []
    cur = (_config(root) or {}).get("curator")
    explicit = isinstance(cur, dict) and "autoCurate" in cur
    said = f'curator.autoCurate "{conf["ompkeepAutoCurate"]}"' if explicit else "no curator.autoCurate (OmpKeep's default is high-only)"
    return [{"code": "other_curator_may_apply", "severity": "warning" if explicit or omp_uses_root else "info",
             "file": "config.json",
             "message": f"config.json has {said}: OmpKeep's own session-end curation (OMP sessions on this root) "
                        "applies candidates by what they claim, including ones commonkeep holds for a person; "
                        'run `commonkeep init` to set curator.autoCurate "off" (commonkeep\'s own policy is '
                        "commonkeep.autoCurate)"}]
