"""Sessions for ``commonkeep bench userturn``, generated at run time from the templates in
``data/userturn.json`` (seeded), in the shapes each host hands its adapter.

A session is one JSON object::

    {"id", "group": "attack" | "request" | "not_asked", "class", "host": "hermes" | "omp",
     "platform", "language", "shape", "statement", "turns": [TURN, ...]}

and a turn says what reached the host in one turn of the person's:

- Hermes: ``message``, the turn's ``user_message`` as Hermes hands the plugin's ``pre_llm_call``
  hook (with the attached context, reply quote or notes Hermes put in);
- OMP: ``typed``, the text of OMP's ``input`` event (``null``: none fired, as in ``omp acp`` or
  for a message an extension sent), ``message``, the ``role: user`` message OMP stored (a prompt
  template expanded), ``remember``, what was typed after ``/commonkeep-remember``, and ``file``,
  an ``@file`` mention's content.

``statement`` is what the model then saves. Groups: ``attack`` must never be stamped;
``request`` is the person asking, explicitly, to remember the statement (it should be stamped and
applied); ``not_asked`` is the person stating something without asking to remember it, or a model
rewording a request: it waits for review by design. A JSONL file of sessions (one per line, this
shape) or a templates file like ``data/userturn.json`` can replace the default.
"""

from __future__ import annotations

import json
import random
from importlib import resources
from pathlib import Path
from typing import Any

GROUPS = ("attack", "request", "not_asked")
_KEYS = ("slots", "facts", "requests", "shapes", "attacks", "not_asked")
HOSTS = ("hermes", "omp")


def templates(path: str | Path | None = None) -> dict[str, Any]:
    """The templates: ``path`` or the packaged ``data/userturn.json``."""
    if path is not None:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        missing = [k for k in _KEYS if not isinstance(data, dict) or k not in data]
        if missing:
            raise ValueError(f"{path}: a templates file needs {', '.join(_KEYS)} (missing: {', '.join(missing)})")
        return dict(data)
    text = resources.files("commonkeep.bench").joinpath("data/userturn.json").read_text(encoding="utf-8")
    return dict(json.loads(text))


class _Filler:
    """Fills a template's ``{slots}`` with values drawn for one session."""

    def __init__(self, data: dict[str, Any], rng: random.Random, language: str = "en") -> None:
        self.values: dict[str, str] = {k: rng.choice(v) for k, v in data["slots"].items()}
        self.values.update(n=str(rng.randint(10, 9999)), port=str(rng.randint(1024, 65000)),
                           small=str(rng.choice([2, 4, 8])))
        fact = rng.choice(data["facts"][language])
        said = fact["said"].format(**self.values)
        saved = rng.choice(fact["saved"]).format(**self.values)
        self.values.update(fact=said, Fact=said[:1].upper() + said[1:], saved=saved,
                           saved_lower=saved[:1].lower() + saved[1:])

    def __call__(self, template: str | None) -> str | None:
        return None if template is None else template.format(**self.values)


def _turn(raw: dict[str, Any], fill: _Filler) -> dict[str, Any]:
    return {k: fill(v) for k, v in raw.items()}


def _attack_turns(host: str, tpl: dict[str, Any], fill: _Filler) -> list[dict[str, Any]]:
    typed = fill(tpl.get("typed"))
    message = fill(tpl["message"]) if "message" in tpl else typed
    if host == "hermes":
        return [{"message": message or ""}]
    turn: dict[str, Any] = {"typed": typed, "message": message}
    if "file" in tpl:
        turn["file"] = fill(tpl["file"])
    return [turn]


def generate(per_template: int = 2, seed: int = 35, data: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The sessions: every attack and ``not_asked`` template in each host it applies to, and every
    request form of each language in each host shape, ``per_template`` times with fresh values."""
    data = templates() if data is None else data
    rng = random.Random(seed)
    sessions: list[dict[str, Any]] = []

    def add(group: str, cls: str, host: str, statement: str, turns: list[dict[str, Any]], **extra: Any) -> None:
        sessions.append({"id": f"s{len(sessions):04d}", "group": group, "class": cls, "host": host,
                         "platform": extra.pop("platform", None) or "cli", "statement": statement, "turns": turns,
                         **extra})

    for group in ("attack", "not_asked"):
        for tpl in data["attacks" if group == "attack" else "not_asked"]:
            for host in tpl.get("hosts", HOSTS):
                for _ in range(per_template):
                    fill = _Filler(data, rng)
                    add(group, tpl["class"], host, str(fill(tpl["saved"])), _attack_turns(host, tpl, fill),
                        platform=tpl.get("platform"))
    for language, forms in data["requests"].items():
        for form in forms:
            for host in HOSTS:
                for shape in data["shapes"][host]:
                    if shape.get("command"):
                        continue
                    for _ in range(per_template):
                        fill = _Filler(data, rng, language)
                        typed = form.format(fact=fill.values["fact"])
                        fill.values["typed"] = typed
                        add("request", f"{host}: {shape['shape']}", host, fill.values["saved"],
                            [_turn(t, fill) for t in shape["turns"]], platform=shape.get("platform"),
                            language=language, form=form)
        for host in HOSTS:
            for shape in data["shapes"][host]:
                if shape.get("command"):
                    for _ in range(per_template * 2):
                        fill = _Filler(data, rng, language)
                        add("request", f"{host}: {shape['shape']}", host, fill.values["saved"],
                            [_turn(t, fill) for t in shape["turns"]], language=language, form="/commonkeep-remember")
    return sessions


def load_sessions(path: str | Path) -> list[dict[str, Any]]:
    """Sessions from a JSONL file (one per line); raises ``ValueError`` naming the bad line."""
    out: list[dict[str, Any]] = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{path}:{n}: not JSON ({exc})") from None
        if (not isinstance(row, dict) or row.get("host") not in HOSTS or row.get("group") not in GROUPS
                or not isinstance(row.get("statement"), str) or not isinstance(row.get("turns"), list)
                or not all(isinstance(t, dict) for t in row["turns"])):
            raise ValueError(f"{path}:{n}: a session needs host (hermes|omp), group (attack|request|not_asked), "
                             "statement and a list of turns")
        row.setdefault("id", f"line{n}")
        row.setdefault("class", row["group"])
        row.setdefault("platform", "cli")
        out.append(row)
    return out
