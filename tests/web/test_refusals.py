"""What the server refuses: no token, a wrong CSRF token, a foreign Host, decisions on a
read-only server, and a non-loopback bind unless explicitly allowed. Nothing is written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from commonkeep.errors import BadInput
from commonkeep.store.core import Store
from commonkeep.web.server import prepare
from tests.web import seed as data


def _client(server: Any) -> httpx.Client:
    c = httpx.Client(follow_redirects=True, timeout=30)
    assert c.get(server.token_url).status_code == 200  # sets the token cookie
    return c


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" content="([^"]+)"', page)
    assert found
    return found.group(1)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "locks" not in p.parts and "search" not in p.parts}


def _new_id(root: Path) -> str:
    return str(next(c["id"] for c in Store(root).candidates(status="new")))


def test_no_token_is_403(root: Path, serve: Any) -> None:
    server = serve()
    for path in ("/inbox", "/static/app.js", "/api/stamp", "/memory"):
        r = httpx.get(server.url + path)
        assert r.status_code == 403, path
        assert "token" in r.text
    assert httpx.get(server.url + "/inbox?token=wrong").status_code == 403
    assert httpx.post(server.url + "/decide", data={"id": _new_id(root), "action": "approve"}).status_code == 403


def test_wrong_csrf_is_403_and_nothing_is_written(root: Path, serve: Any) -> None:
    server = serve()
    c = _client(server)
    before = _snapshot(root)
    cid = _new_id(root)
    for form in ({"id": cid, "action": "approve"}, {"id": cid, "action": "approve", "csrf": "forged"}):
        r = c.post(server.url + "/decide", data=form)
        assert r.status_code == 403
        assert "CSRF" in r.text
    assert _snapshot(root) == before
    # with the page's token the same post is done
    r = c.post(server.url + "/decide", data={"id": cid, "action": "reject", "reason": "dup",
                                             "csrf": _csrf(c.get(server.url + "/inbox").text)})
    assert r.status_code == 200 and f"rejected {cid}" in r.text


def test_a_foreign_host_header_is_refused(serve: Any) -> None:
    server = serve()
    c = _client(server)
    assert c.get(server.url + "/inbox", headers={"Host": "evil.example:80"}).status_code == 400


def test_read_only_server_refuses_decisions_with_the_reason(root: Path, serve: Any) -> None:
    server = serve(role="hermes")
    c = _client(server)
    page = c.get(server.url + "/inbox").text
    assert "Read-only" in page and "only the writer role" in page
    assert "hint:" not in page and "start the server as the writer (librarian)" in page  # plain words, no CLI hint
    before = _snapshot(root)
    cid = _new_id(root)
    csrf = _csrf(page)
    for url, form in ((f"{server.url}/decide", {"id": cid, "action": "approve", "csrf": csrf}),
                      (f"{server.url}/decide", {"id": cid, "action": "reject", "reason": "x", "csrf": csrf})):
        r = c.post(url, data=form)
        assert r.status_code == 403
        assert "read-only" in r.text and "&#39;librarian&#39;" in r.text and "hermes" in r.text
    rec = Store(root).records()[0]
    r = c.post(f"{server.url}/memory/{rec['id']}/forget", data={"reason": "invalid", "csrf": csrf})
    assert r.status_code == 403 and "read-only" in r.text
    assert _snapshot(root) == before


def test_non_loopback_bind_is_refused_unless_allowed(root: Path) -> None:
    with pytest.raises(BadInput, match="not a loopback address"):
        prepare(root, data.WRITER, host="0.0.0.0")
    running, sock = prepare(root, data.WRITER, host="0.0.0.0", allow_remote=True)
    assert running.url.startswith("http://0.0.0.0:")
    sock.close()
    cli = subprocess.run([sys.executable, "-m", "commonkeep.cli", "serve", "--root", str(root), "--host", "0.0.0.0"],
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 2
    assert "refusing to listen on 0.0.0.0" in cli.stderr and "--allow-remote" in cli.stderr
    assert "Traceback" not in cli.stderr


def test_serve_prints_a_url_with_the_token(root: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "commonkeep.cli", "serve", "--root", str(root), "--port", "0",
                             "--role", data.WRITER], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(2)]
        assert "as the writer (librarian)" in lines[0]
        url = re.search(r"(http://127\.0\.0\.1:\d+/inbox\?token=\S+)", lines[1])
        assert url, lines
        r = httpx.get(url.group(1), follow_redirects=True, timeout=30)
        assert r.status_code == 200 and "Inbox" in r.text
    finally:
        proc.terminate()
        proc.wait(timeout=10)
