"""The literals a regular expression's every match holds, read from its parsed pattern: the
poisoning rules (``gate.literal_rule``) and the secret rules (``secrets.literals``) skip a pattern
whose literals a text lacks. Here, below both, so neither imports the other."""

from __future__ import annotations

from typing import Any


def required_literals(pattern: str, flags: int) -> frozenset[str] | None:
    """Lower-cased substrings one of which every match of ``pattern`` contains; ``None`` when no such set is known."""
    from re import _constants as c  # type: ignore[attr-defined]
    from re import _parser as parser  # type: ignore[attr-defined]

    def seq(items: Any) -> frozenset[str] | None:
        options: list[frozenset[str]] = []
        run: list[str] = []

        def flush() -> None:
            if run:
                options.append(frozenset({"".join(run).lower()}))
                run.clear()

        for op, av in items:
            if op is c.LITERAL:
                run.append(chr(av))
                continue
            flush()
            got: frozenset[str] | None = None
            if op is c.SUBPATTERN:
                got = seq(av[-1])
            elif op is c.BRANCH:
                alts = [seq(a) for a in av[1]]
                got = None if any(a is None for a in alts) else frozenset().union(*alts)  # type: ignore[arg-type]
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
                got = seq(av[2]) if av[0] >= 1 else None
            elif op is getattr(c, "ATOMIC_GROUP", None):
                got = seq(av)
            if got is not None and all(got):
                options.append(got)
        flush()
        if not options:
            return None
        return max(options, key=lambda o: (min(len(x) for x in o), -len(o)))

    try:
        return seq(parser.parse(pattern, flags))
    except Exception:  # pragma: no cover - a parser change in a future Python: fall back to the plain regex
        return None
