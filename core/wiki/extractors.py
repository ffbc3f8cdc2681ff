"""Fact extractors beyond the deterministic one, and the one gate their facts pass (``admit``).

An extractor has ``name: str`` and ``propose(body: str) -> list[dict]``: raw fact proposals
``{"kind", "subject", "value", "other"?, "sentence"}``. It only ever sees the redacted source.
Plugins contribute extractors through ``commonkeep_wiki_extractors``; the built-in LLM extractor
(``commonkeep.wiki.llm``) is contributed by the default plugin ``commonkeep.wiki.extractors``
when ``COMMONKEEP_WIKI_LLM_URL`` is set.

The guarantees live here, not in each extractor. A proposal becomes a fact only if its kind is
known, its subject is not empty, its sentence is found verbatim (``normalise``) among the
source's sentences, and neither its subject nor its other name holds a secret (a quantity also
needs a number with a unit in that sentence, which it records); its value is redacted; a fact whose key is already taken is skipped. Each kept fact records which extractor
proposed it (``detail["extractor"]``).

An extractor that raises, or returns something that is not a list of dicts, adds nothing: a
one-line, redacted notice names it and the ingest goes on with the others. An extractor with
``required = True`` (the built-in LLM extractor: it was asked for explicitly) fails the ingest
instead, before anything is written.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from commonkeep.errors import CommonkeepError
from commonkeep.secrets import contains_secret, redact
from commonkeep.wiki.extract import Extraction, Fact
from commonkeep.wiki.quantities import find_quantities
from commonkeep.wiki.text import collapse, normalise, slugify

KINDS = frozenset({"alias", "definition", "quantity", "fact"})
"""Kinds of fact an extractor may propose."""

BUILTIN_PLUGIN = "commonkeep.wiki.extractors"
"""Name of the default plugin that contributes the built-in LLM extractor."""


def builtin_extractors() -> list[Any]:
    """The built-in LLM extractor when ``COMMONKEEP_WIKI_LLM_URL`` is set, else nothing."""
    from commonkeep.wiki.llm import configured_extractor

    llm = configured_extractor()
    return [llm] if llm is not None else []


def one_line(text: object, limit: int = 200) -> str:
    """``text`` on one line, redacted and cut to ``limit`` characters (for notices and labels)."""
    return redact(collapse(str(text))).text[:limit]


def admit(proposals: Iterable[Any], ex: Extraction, *, source_slug: str, extractor: str) -> int:
    """Add the grounded, secret-free proposals to ``ex``; returns how many facts were added.

    Nothing is added unless every proposal could be looked at: the facts (and the alias names
    they add to the sentence's mentions) are applied together at the end.
    """
    by_text = {normalise(s.text): s for s in ex.sentences}
    existing = {f.key for f in ex.facts}
    prefix = slugify(extractor)
    facts: list[Fact] = []
    mentions: list[tuple[int, str]] = []
    for item in proposals:
        if not isinstance(item, dict):
            continue
        kind, subject = str(item.get("kind", "")), str(item.get("subject", "")).strip()
        sentence = by_text.get(normalise(str(item.get("sentence", ""))))
        if kind not in KINDS or not subject or sentence is None:
            continue  # ungrounded or malformed: dropped, never stored
        other = str(item.get("other", "")).strip()
        if contains_secret(subject) or contains_secret(other):
            continue  # a name that is a secret would become a page name: dropped, never stored
        detail: dict[str, object] = {"extractor": extractor}
        if kind == "alias":
            if not other or subject not in sentence.text or other not in sentence.text:
                continue
            a, b = sorted((slugify(subject), slugify(other)))
            key = f"alias:{a}~{b}@{source_slug}"
            detail["names"] = [subject, other]
            value = f"{subject} = {other}"
            mentions.extend((sentence.ordinal, n) for n in (subject, other))
        else:
            key = f"{prefix}:{kind}:{slugify(subject)}@{source_slug}"
            value = redact(str(item.get("value", "")).strip()).text[:200] or sentence.text
            if kind == "quantity":
                # the statuses of quantities compare numbers: take it from the sentence, never the value
                found = find_quantities(sentence.text)
                if not found:
                    continue  # no number with a unit in the sentence: not a grounded quantity
                q = next((q for q in found if q.text in value), found[0])
                detail.update(number=q.number, unit=q.unit)
        if key in existing:
            continue
        existing.add(key)
        facts.append(Fact(kind, key, value, subject, sentence.text, sentence.ordinal, detail))
    for ordinal, name in mentions:
        names = ex.mentions.setdefault(ordinal, [])
        if name not in names:
            names.append(name)
    ex.facts.extend(facts)
    return len(facts)


class BadProposals(CommonkeepError):
    """An extractor returned something that is not a list of dicts."""


def _proposals(x: Any, body: str) -> list[dict[str, Any]]:
    got = x.propose(body)
    if not isinstance(got, list):
        raise BadProposals(f"propose() returned {type(got).__name__}, not a list of dicts")
    bad = next((p for p in got if not isinstance(p, dict)), None)
    if bad is not None:
        raise BadProposals(f"propose() returned a list holding {type(bad).__name__}, not only dicts")
    return got


def run_extractors(body: str, ex: Extraction, extractors: Iterable[tuple[Any, bool]], *,
                   source_slug: str) -> tuple[list[str], list[str]]:
    """Run each ``(extractor, required)`` in order and admit its proposals into ``ex``.

    Returns (labels, notices): one label per extractor, ``"name (N fact(s) added)"`` or
    ``"name (failed)"``, and one redacted line per extractor that failed or was malformed. A
    required extractor's error is raised, not noticed.
    """
    labels: list[str] = []
    notices: list[str] = []
    for x, required in extractors:
        raw_name = getattr(x, "name", None)
        if not isinstance(raw_name, str) or not raw_name.strip() or not callable(getattr(x, "propose", None)):
            notices.append(f"wiki extractor {one_line(repr(x), 80)} skipped: it needs a name (str) and propose(body)")
            continue
        name = one_line(raw_name, 60)
        try:
            added = admit(_proposals(x, body), ex, source_slug=source_slug, extractor=name)
        except Exception as exc:
            if required:
                raise
            labels.append(f"{name} (failed)")
            notices.append(f"wiki extractor {name!r} failed, its facts were left out: "
                           f"{one_line(f'{type(exc).__name__}: {exc}')}")
            continue
        labels.append(f"{name} ({added} fact(s) added)")
    return labels, notices
