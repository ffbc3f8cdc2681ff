"""The optional LLM extractor over an OpenAI-compatible ``/chat/completions`` endpoint
(``commonkeep.llm.chat_json``).

Off unless ``COMMONKEEP_WIKI_LLM_URL`` is set (e.g. ``http://127.0.0.1:8080/v1``); the model is
``COMMONKEEP_WIKI_LLM_MODEL`` and an optional bearer key ``COMMONKEEP_WIKI_LLM_KEY``. It only
*adds* facts to the deterministic extraction, and only facts whose quoted sentence is found
verbatim in the source: a paraphrase or an invented sentence is dropped, so the grounding
guarantee holds whatever the model says. The model only ever sees the redacted source, and what
it returns is redacted too: a fact whose name holds a secret is dropped, a value is redacted
(``commonkeep.secrets``), so no secret is stored whatever the model says.
"""

from __future__ import annotations

import os
from typing import Any

from commonkeep.llm import chat_json
from commonkeep.secrets import contains_secret, redact
from commonkeep.wiki.extract import Extraction, Fact
from commonkeep.wiki.text import normalise, slugify

PROMPT = (
    "Extract durable facts from the document. Reply with JSON only: "
    '{"facts": [{"kind": "alias|definition|quantity|fact", "subject": "<name>", "value": "<short value>", '
    '"other": "<second name, for alias only>", "sentence": "<the exact sentence from the document>"}]}. '
    "Copy each sentence exactly as written; do not paraphrase."
)
KINDS = frozenset({"alias", "definition", "quantity", "fact"})


class LLMExtractor:
    """Ask an OpenAI-compatible endpoint for extra facts; keep only the grounded ones."""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout

    def _ask(self, body: str) -> list[dict[str, Any]]:
        data = chat_json(
            self.base_url,
            self.model,
            [{"role": "system", "content": PROMPT}, {"role": "user", "content": body}],
            api_key=self.api_key,
            timeout=self.timeout,
            label="LLM extractor",
            failed_hint="check COMMONKEEP_WIKI_LLM_URL, or unset it to use only the deterministic extractor",
            reply_hint="use a model that follows JSON instructions, or unset COMMONKEEP_WIKI_LLM_URL",
        )
        facts = data.get("facts") if isinstance(data, dict) else None
        return [f for f in facts if isinstance(f, dict)] if isinstance(facts, list) else []

    def enrich(self, body: str, ex: Extraction, *, source_slug: str) -> int:
        """Add grounded facts from the model to ``ex``; returns how many were added."""
        by_text = {normalise(s.text): s for s in ex.sentences}
        existing = {f.key for f in ex.facts}
        added = 0
        for item in self._ask(body):
            kind, subject = str(item.get("kind", "")), str(item.get("subject", "")).strip()
            sentence = by_text.get(normalise(str(item.get("sentence", ""))))
            if kind not in KINDS or not subject or sentence is None:
                continue  # ungrounded or malformed: dropped, never stored
            other = str(item.get("other", "")).strip()
            if contains_secret(subject) or contains_secret(other):
                continue  # a name that is a secret would become a page name: dropped, never stored
            detail: dict[str, object] = {"extractor": "llm"}
            if kind == "alias":
                if not other or subject not in sentence.text or other not in sentence.text:
                    continue
                a, b = sorted((slugify(subject), slugify(other)))
                key = f"alias:{a}~{b}@{source_slug}"
                detail["names"] = [subject, other]
                value = f"{subject} = {other}"
                names = ex.mentions.setdefault(sentence.ordinal, [])
                names.extend(n for n in (subject, other) if n not in names)
            else:
                key = f"llm:{kind}:{slugify(subject)}@{source_slug}"
                value = redact(str(item.get("value", "")).strip()).text[:200] or sentence.text
            if key in existing:
                continue
            existing.add(key)
            ex.facts.append(Fact(kind, key, value, subject, sentence.text, sentence.ordinal, detail))
            added += 1
        return added


def configured_extractor(env: dict[str, str] | None = None) -> LLMExtractor | None:
    """The LLM extractor when ``COMMONKEEP_WIKI_LLM_URL`` is set, else ``None`` (the default)."""
    env = dict(os.environ) if env is None else env
    url = env.get("COMMONKEEP_WIKI_LLM_URL", "").strip()
    if not url:
        return None
    return LLMExtractor(url, env.get("COMMONKEEP_WIKI_LLM_MODEL", "").strip() or "local-model",
                        api_key=env.get("COMMONKEEP_WIKI_LLM_KEY") or None)
