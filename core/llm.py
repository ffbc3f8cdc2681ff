"""One call to an OpenAI-compatible ``/chat/completions`` endpoint that answers with JSON (httpx).

The plumbing shared by the optional LLM parts, the wiki extractor (``commonkeep.wiki.llm``) and
the search reranker (``commonkeep.recall.search.llm_rerank``); both are off unless configured, and
nothing else in commonkeep talks to a network. One non-streaming ``POST {base_url}/chat/completions``
at temperature 0, a bearer key when one is given, a timeout; the JSON object in the reply's
content (from its first ``{`` to its last ``}``, so a model that wraps it in prose or a code fence
still counts) is returned as parsed. Every failure — connection, timeout, HTTP status, a reply that
is not the expected JSON — is a :class:`~commonkeep.errors.CommonkeepError` whose message is
redacted (``commonkeep.secrets``), so a secret in a URL or a server's error text is never shown.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from commonkeep.errors import CommonkeepError
from commonkeep.secrets import redact


def chat_json(
    base_url: str,
    model: str,
    messages: list[dict[str, str]],
    *,
    api_key: str | None = None,
    timeout: float = 60.0,
    label: str = "LLM",
    failed_hint: str | None = None,
    reply_hint: str | None = None,
) -> Any:
    """Send ``messages`` to ``model`` and return the JSON value in the reply's content.

    ``label`` names the caller in error messages (``"<label> at <url> failed: ..."``,
    ``"<label> at <url> returned a reply that is not the expected JSON (...)"``); ``failed_hint``
    and ``reply_hint`` are those errors' hints.
    """
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    payload = {"model": model, "temperature": 0, "stream": False, "messages": messages}
    url = f"{base_url.rstrip('/')}/chat/completions"
    try:
        resp = httpx.post(url, json=payload, headers=headers, timeout=timeout)
        resp.raise_for_status()
        content = resp.json()["choices"][0]["message"]["content"]
        start, end = content.find("{"), content.rfind("}")
        return json.loads(content[start : end + 1])
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        detail = str(exc) or type(exc).__name__
        raise CommonkeepError(redact(f"{label} at {url} failed: {detail}").text, hint=failed_hint) from None
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as exc:
        raise CommonkeepError(
            redact(f"{label} at {url} returned a reply that is not the expected JSON ({exc})").text,
            hint=reply_hint,
        ) from None
