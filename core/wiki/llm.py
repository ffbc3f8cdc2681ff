"""The optional LLM extractor over an OpenAI-compatible ``/chat/completions`` endpoint
(``commonkeep.llm.chat_json``).

Off unless ``COMMONKEEP_WIKI_LLM_URL`` is set (e.g. ``http://127.0.0.1:8080/v1``); the model is
``COMMONKEEP_WIKI_LLM_MODEL`` and an optional bearer key ``COMMONKEEP_WIKI_LLM_KEY``. It only
*adds* facts to the deterministic extraction, and only facts whose quoted sentence is found
verbatim in the source: a paraphrase or an invented sentence is dropped, so the grounding
guarantee holds whatever the model says. The model only ever sees the redacted source, and what
it returns is redacted too: a fact whose name holds a secret is dropped, a value is redacted
(``commonkeep.secrets``), so no secret is stored whatever the model says. These checks are
``commonkeep.wiki.extractors.admit``, the gate every extractor's proposals pass.
"""

from __future__ import annotations

import os
from typing import Any

from commonkeep.llm import chat_json
from commonkeep.wiki.extract import Extraction
from commonkeep.wiki.extractors import KINDS, admit

PROMPT = (
    "Extract durable facts from the document. Reply with JSON only: "
    '{"facts": [{"kind": "alias|definition|quantity|fact", "subject": "<name>", "value": "<short value>", '
    '"other": "<second name, for alias only>", "sentence": "<the exact sentence from the document>"}]}. '
    "Copy each sentence exactly as written; do not paraphrase."
)
__all__ = ["KINDS", "PROMPT", "LLMExtractor", "configured_extractor"]


class LLMExtractor:
    """Ask an OpenAI-compatible endpoint for extra facts; keep only the grounded ones.

    An extractor like any other (``commonkeep.wiki.extractors``): its proposals pass the same
    ``admit``. It is ``required``: configured on purpose, so a failing endpoint is a clear error
    and the ingest writes nothing.
    """

    name = "llm"
    required = True

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout

    def propose(self, body: str) -> list[dict[str, Any]]:
        """The model's raw fact proposals for ``body`` (the redacted source); ``admit`` keeps the grounded ones."""
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
        """Add grounded facts from the model to ``ex`` (through ``admit``); returns how many were added."""
        return admit(self.propose(body), ex, source_slug=source_slug, extractor=self.name)


def configured_extractor(env: dict[str, str] | None = None) -> LLMExtractor | None:
    """The LLM extractor when ``COMMONKEEP_WIKI_LLM_URL`` is set, else ``None`` (the default)."""
    env = dict(os.environ) if env is None else env
    url = env.get("COMMONKEEP_WIKI_LLM_URL", "").strip()
    if not url:
        return None
    return LLMExtractor(url, env.get("COMMONKEEP_WIKI_LLM_MODEL", "").strip() or "local-model",
                        api_key=env.get("COMMONKEEP_WIKI_LLM_KEY") or None)
