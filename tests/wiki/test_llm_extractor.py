"""The optional LLM extractor against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from commonkeep import wiki
from commonkeep.errors import CommonkeepError
from commonkeep.wiki.llm import configured_extractor
from tests.wiki.conftest import WriteRaw

SOURCE = "The Heron service stores invoices. Heron and Egret refer to one service, says ops."


class Scripted:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        self.reply: dict[str, Any] = {"facts": [
            {"kind": "alias", "subject": "Heron", "other": "Egret",
             "sentence": "Heron and Egret refer to one service, says ops."},
            {"kind": "fact", "subject": "Heron", "value": "runs in Paris",
             "sentence": "Heron runs in Paris."},  # invented: not in the source
        ]}


@pytest.fixture
def server() -> Iterator[tuple[str, Scripted]]:
    script = Scripted()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            script.requests.append({"path": self.path, "json": json.loads(body), "auth": self.headers.get("Authorization")})
            payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": json.dumps(script.reply)}}]})
            self.send_response(script.status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(payload.encode())

        def log_message(self, *args: object) -> None:
            return

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", script
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_extractor_is_off_unless_configured() -> None:
    assert configured_extractor({}) is None
    assert configured_extractor({"COMMONKEEP_WIKI_LLM_URL": "  "}) is None


def test_grounded_llm_facts_are_added_and_invented_ones_dropped(
    project: Path, write_raw: WriteRaw, server: tuple[str, Scripted], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = server
    monkeypatch.setenv("COMMONKEEP_WIKI_LLM_URL", url)
    monkeypatch.setenv("COMMONKEEP_WIKI_LLM_MODEL", "tiny-local")
    monkeypatch.setenv("COMMONKEEP_WIKI_LLM_KEY", "k-test")
    report = wiki.ingest(project, write_raw("h.md", SOURCE))
    assert report.extractor == "deterministic+llm (1 fact(s) added)"
    [req] = script.requests
    assert req["path"] == "/v1/chat/completions" and req["json"]["model"] == "tiny-local"
    assert req["auth"] == "Bearer k-test" and SOURCE in req["json"]["messages"][1]["content"]
    rows = sqlite3.connect(project / ".hmlr/facts.db").execute("SELECT key, sentence FROM facts").fetchall()
    assert ("alias:egret~heron@h", "Heron and Egret refer to one service, says ops.") in rows
    assert not [r for r in rows if "Paris" in r[1]]
    result = wiki.query(project, "Where does Egret store invoices?")
    assert "The Heron service stores invoices." in [e.text for e in result.evidence]


def test_failing_endpoint_is_a_clear_error_and_nothing_is_written(
    project: Path, write_raw: WriteRaw, server: tuple[str, Scripted], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = server
    script.status = 500
    monkeypatch.setenv("COMMONKEEP_WIKI_LLM_URL", url)
    with pytest.raises(CommonkeepError, match=r"LLM extractor at http://127\.0\.0\.1:\d+/v1/chat/completions failed") as info:
        wiki.ingest(project, write_raw("h.md", SOURCE))
    assert "unset it" in str(info.value)
    assert not (project / ".git").exists()
    assert sqlite3.connect(project / ".hmlr/facts.db").execute("SELECT COUNT(*) FROM facts").fetchone() == (0,)


def test_the_llm_sees_only_redacted_text_and_nothing_it_returns_stores_a_secret(
    project: Path, write_raw: WriteRaw, server: tuple[str, Scripted], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    token = "ghp_" + "Zy9xWv8uTs7rQp6oNm5lKj4iHg3fEd2cBa1z"
    url, script = server
    redacted_sentence = "The Heron service calls billing with [REDACTED:openai_key] daily."
    script.reply = {"facts": [
        {"kind": "fact", "subject": "Heron", "value": f"uses {token}", "sentence": redacted_sentence},
        {"kind": "definition", "subject": token, "value": "a token", "sentence": redacted_sentence},
        {"kind": "fact", "subject": "Heron", "value": "calls billing",
         "sentence": f"The Heron service calls billing with {key} daily."},  # the unredacted text: not grounded
    ]}
    monkeypatch.setenv("COMMONKEEP_WIKI_LLM_URL", url)
    report = wiki.ingest(project, write_raw("h.md", f"The Heron service calls billing with {key} daily."))
    assert report.redacted == ["openai_key"] and report.extractor == "deterministic+llm (1 fact(s) added)"
    [req] = script.requests
    assert key not in json.dumps(req["json"]) and redacted_sentence in req["json"]["messages"][1]["content"]
    rows = sqlite3.connect(project / ".hmlr/facts.db").execute("SELECT key, value, sentence FROM facts").fetchall()
    assert ("llm:fact:heron@h", "uses [REDACTED:github_token]", redacted_sentence) in rows
    for path in project.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert key.encode() not in data and token.encode() not in data, path
    objects = subprocess.run(["git", "-C", str(project), "cat-file", "--batch-all-objects", "--batch"],
                             capture_output=True, check=True).stdout
    assert key.encode() not in objects and token.encode() not in objects
