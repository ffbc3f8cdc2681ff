"""The web app's locks, request by request against a real running server (issue 28: a server that
took any ``X-Commonkeep-Token``, sent no security headers, or set its cookie without ``HttpOnly;
SameSite=Strict`` passed every test).

The headers matter to a user because the review pages show text agents wrote: the CSP keeps a
stored ``<script>`` from running even if escaping failed, ``frame-ancestors``/``X-Frame-Options``
stop another page from framing the approve button, ``nosniff`` stops a JSONL served as text from
being run as script, ``no-referrer`` keeps page addresses from leaking.
"""

from __future__ import annotations

from typing import Any

import httpx

from commonkeep.web.security import CSP

EXPECTED = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


def _token(server: Any) -> str:
    return str(server.token_url.rsplit("token=", 1)[1])


def _assert_locked_down(r: httpx.Response, where: str) -> None:
    for name, value in EXPECTED.items():
        assert r.headers.get(name) == value, f"{where}: {name} is {r.headers.get(name)!r}"
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "object-src 'none'" in csp


def test_the_token_header_must_carry_the_token(serve: Any) -> None:
    server = serve()
    token = _token(server)
    for wrong in ("wrong", token[:-1], token + "x", "", token.swapcase() if token.swapcase() != token else "x"):
        r = httpx.get(server.url + "/inbox", headers={"X-Commonkeep-Token": wrong})
        assert r.status_code == 403, repr(wrong)
        assert "token" in r.text
    r = httpx.get(server.url + "/inbox", headers={"X-Commonkeep-Token": token})
    assert r.status_code == 200 and "<html" in r.text.lower()


def test_a_wrong_cookie_is_refused_and_the_right_one_is_let_in(serve: Any) -> None:
    server = serve()
    port = server.url.rsplit(":", 1)[1]
    name = f"commonkeep_token_{port}"
    assert httpx.get(server.url + "/inbox", cookies={name: "wrong"}).status_code == 403
    assert httpx.get(server.url + "/inbox", cookies={f"commonkeep_token_{int(port) + 1}": _token(server)}).status_code == 403
    assert httpx.get(server.url + "/inbox", cookies={name: _token(server)}).status_code == 200


def test_the_token_url_sets_an_httponly_samesite_strict_cookie_and_drops_the_token(serve: Any) -> None:
    server = serve()
    r = httpx.get(server.token_url)
    assert r.status_code == 303
    assert "token=" not in r.headers["location"] and r.headers["location"].startswith("/inbox")
    cookie = r.headers["set-cookie"]
    parts = [p.strip() for p in cookie.split(";")]
    port = server.url.rsplit(":", 1)[1]
    assert parts[0] == f"commonkeep_token_{port}={_token(server)}"
    assert "HttpOnly" in parts and "SameSite=Strict" in parts and "Path=/" in parts
    _assert_locked_down(r, "the redirect")


def test_every_answer_carries_the_security_headers(serve: Any) -> None:
    server = serve()
    headers = {"X-Commonkeep-Token": _token(server)}
    for path in ("/inbox", "/memory", "/static/app.js", "/api/stamp"):
        r = httpx.get(server.url + path, headers=headers)
        assert r.status_code == 200, path
        _assert_locked_down(r, path)
    refused = httpx.get(server.url + "/inbox")
    assert refused.status_code == 403
    _assert_locked_down(refused, "the 403")
    foreign = httpx.get(server.url + "/inbox", headers={**headers, "Host": "evil.example"})
    assert foreign.status_code == 400
    _assert_locked_down(foreign, "the 400")


def test_a_post_needs_the_csrf_token_even_with_the_right_token(root: Any, serve: Any) -> None:
    server = serve()
    headers = {"X-Commonkeep-Token": _token(server)}
    r = httpx.post(server.url + "/decide", data={"id": "cand_x", "action": "approve"}, headers=headers)
    assert r.status_code == 403 and "CSRF" in r.text
