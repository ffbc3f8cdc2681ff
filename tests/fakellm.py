"""A scripted fake OpenAI-compatible chat server for driving the real host agents in tests.

This is a fake on purpose: the tests run the real Hermes Agent, but a hosted LLM cannot be
reached from here (no network, no API key), so the model's side of the conversation is a script.
Each ``POST /v1/chat/completions`` records the request body and answers with the next scripted
step; once the script is exhausted it answers with plain text. Both the streaming
(``text/event-stream`` chunks, Hermes' default) and the non-streaming shapes are served
(contracts/hermes-host.md §9.1). The server binds 127.0.0.1 on a free port, in a daemon thread.

Standard library only, so it can run inside any host's venv::

    with FakeLLM([Step.call("memory", {"action": "add", "target": "memory", "content": "x"}),
                  Step.say("done")]) as llm:
        base_url = llm.base_url   # http://127.0.0.1:<port>/v1
        ...
        llm.requests[0]["messages"][0]["content"]   # the system prompt Hermes sent

It can also run as a process: ``python tests/fakellm.py SCRIPT.json`` prints the base URL on
its first line and serves until killed; ``SCRIPT.json`` is a list of steps
(``{"content": str|null, "tool_calls": [{"name": str, "arguments": {...}}]}``) and the recorded
requests are appended to ``SCRIPT.json.requests.jsonl``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL_ID = "fake-model"


@dataclass
class Step:
    """One scripted model reply: text, tool calls, or both."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def say(cls, text: str) -> Step:
        return cls(content=text)

    @classmethod
    def call(cls, name: str, arguments: dict[str, Any]) -> Step:
        return cls(tool_calls=[{"name": name, "arguments": arguments}])

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Step:
        return cls(content=raw.get("content"), tool_calls=list(raw.get("tool_calls") or []))


class FakeLLM:
    """The server: ``start()``/``stop()`` or use as a context manager."""

    def __init__(self, script: list[Step] | None = None, default_reply: str = "OK.",
                 record_to: Path | None = None) -> None:
        self.script: list[Step] = list(script or [])
        self.default_reply = default_reply
        self.requests: list[dict[str, Any]] = []
        self.record_to = record_to
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- script ---------------------------------------------------------------------------
    def push(self, *steps: Step) -> None:
        """Append steps to the script (thread-safe)."""
        with self._lock:
            self.script.extend(steps)

    def next_step(self, body: dict[str, Any]) -> Step:
        with self._lock:
            self.requests.append(body)
            if self.record_to is not None:
                with self.record_to.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(body) + "\n")
            if self.script:
                return self.script.pop(0)
            return Step.say(self.default_reply)

    # -- lifecycle ------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeLLM is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> FakeLLM:
        handler = type("Handler", (_Handler,), {"llm": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _tool_call_objects(step: Step) -> list[dict[str, Any]]:
    return [
        {
            "index": i,
            "id": f"call_{int(time.time() * 1000) % 100000}_{i}",
            "type": "function",
            "function": {"name": tc["name"], "arguments": json.dumps(tc.get("arguments", {}))},
        }
        for i, tc in enumerate(step.tool_calls)
    ]


_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


class _Handler(BaseHTTPRequestHandler):
    llm: FakeLLM
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return  # keep test output clean

    def _send_json(self, obj: Any, status: int = 200) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send_json({"object": "list", "data": [
                {"id": MODEL_ID, "object": "model", "owned_by": "fake", "context_length": 128000}]})
        else:
            self._send_json({"error": {"message": f"not found: {self.path}"}}, 404)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._send_json({"error": {"message": "bad JSON"}}, 400)
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json({"error": {"message": f"not found: {self.path}"}}, 404)
            return
        step = self.llm.next_step(body)
        calls = _tool_call_objects(step)
        finish = "tool_calls" if calls else "stop"
        created = int(time.time())
        if body.get("stream"):
            self._stream(step, calls, finish, created)
            return
        message: dict[str, Any] = {"role": "assistant", "content": step.content}
        if calls:
            message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
        self._send_json({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": created, "model": MODEL_ID,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": _USAGE,
        })

    def _stream(self, step: Step, calls: list[dict[str, Any]], finish: str, created: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def chunk(delta: dict[str, Any], finish_reason: str | None = None, usage: bool = False) -> None:
            obj: dict[str, Any] = {
                "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created,
                "model": MODEL_ID,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }
            if usage:
                obj["usage"] = _USAGE
            self.wfile.write(f"data: {json.dumps(obj)}\n\n".encode())

        chunk({"role": "assistant"})
        if step.content:
            chunk({"content": step.content})
        for call in calls:
            chunk({"tool_calls": [call]})
        chunk({}, finish, usage=True)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def main(argv: list[str]) -> int:
    """Serve a script file until killed (see the module docstring)."""
    if len(argv) != 1:
        print("usage: python tests/fakellm.py SCRIPT.json", file=sys.stderr)
        return 2
    path = Path(argv[0])
    steps = [Step.from_dict(s) for s in json.loads(path.read_text())]
    llm = FakeLLM(steps, record_to=path.with_name(path.name + ".requests.jsonl")).start()
    print(llm.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        llm.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
