"""The web app's security layer (``commonkeep.web.security``), request by request, in process.

``Guard`` is driven as the ASGI server drives it, around a small app that records whether it
ran; the end-to-end checks against a real server are in ``test_security_headers.py`` and
``test_refusals.py``. What a user relies on: only the loopback names reach a loopback server
(DNS rebinding), the one-time ``?token=`` URL turns into the cookie and leaves the address,
nothing else gets in, and a non-loopback bind is refused unless asked for.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from commonkeep.errors import BadInput
from commonkeep.web.security import CSP, Guard, Keys, check_bind, is_loopback

PORT = 8765
COOKIE = f"commonkeep_token_{PORT}"


class App:
    """The app behind the guard: reads the request and answers 200 with one header of its own
    (``bare``: a start message with no headers at all, which ASGI allows)."""

    def __init__(self, bare: bool = False) -> None:
        self.calls = 0
        self.bare = bare
        self.seen: list[tuple[Any, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.calls += 1
        self.seen.append((scope.get("path"), (await receive())["type"]))
        start: dict[str, Any] = {"type": "http.response.start", "status": 200}
        if not self.bare:
            start["headers"] = [(b"x-app", b"1")]
        await send(start)
        await send({"type": "http.response.body", "body": b"ok"})


def _call(guard: Guard, path: str = "/inbox", *, query: str = "", host: str = "127.0.0.1:8765",
          method: str = "GET", headers: dict[str, str] | None = None, kind: str = "http",
          scope: dict[str, Any] | None = None) -> dict[str, Any]:
    sent: list[dict[str, Any]] = []
    raw = [(b"host", host.encode())] if host else []
    raw += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    if scope is None:
        scope = {"type": kind, "method": method, "path": path, "query_string": query.encode(), "headers": raw}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        sent.append(dict(message))

    asyncio.run(guard(scope, receive, send))
    start = next((m for m in sent if m["type"] == "http.response.start"), {"status": None, "headers": []})
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return {"status": start["status"], "headers": {k.decode(): v.decode() for k, v in start["headers"]},
            "all_headers": start["headers"], "body": body.decode(), "sent": sent}


def _guard(bound: str = "127.0.0.1") -> tuple[Guard, App, Keys]:
    app, keys = App(), Keys()
    return Guard(app, keys, bound, PORT), app, keys


def test_keys_are_fresh_random_and_compared_exactly() -> None:
    a, b = Keys(), Keys()
    assert a.token != b.token and a.csrf != b.csrf and a.token != a.csrf and len(a.token) >= 32
    assert a.token_ok(a.token) and not a.token_ok(b.token) and not a.token_ok(a.csrf)
    assert a.csrf_ok(a.csrf) and not a.csrf_ok(a.token)
    for bad in (None, "", a.token[:-1], a.token + "x"):
        assert not a.token_ok(bad) and not a.csrf_ok(bad)


@pytest.mark.parametrize(("host", "loopback"), [
    ("localhost", True), ("127.0.0.1", True), ("::1", True), ("[::1]", True), ("127.0.0.9", True),
    ("0.0.0.0", False), ("192.168.1.5", False), ("example.com", False), ("localhost.example.com", False), ("", False),
])
def test_loopback_names(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_non_loopback_bind_is_refused_unless_allowed() -> None:
    check_bind("127.0.0.1", False)
    check_bind("0.0.0.0", True)
    with pytest.raises(BadInput) as refused:
        check_bind("0.0.0.0", False)
    assert "refusing to listen on 0.0.0.0" in str(refused.value) and "nothing was started" in str(refused.value)
    assert refused.value.hint is not None and "--allow-remote" in refused.value.hint


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost:8765", "LOCALHOST", "[::1]:8765", "127.0.0.1"])
def test_a_loopback_server_answers_loopback_names(host: str) -> None:
    guard, app, keys = _guard()
    assert _call(guard, host=host, headers={"X-Commonkeep-Token": keys.token})["status"] == 200
    assert app.calls == 1


@pytest.mark.parametrize("host", ["evil.example:8765", "evil.example", "192.168.1.5:8765", "", "[::2]:8765", "[::1.evil.example]"])
def test_a_loopback_server_refuses_other_host_names_before_anything_else(host: str) -> None:
    guard, app, keys = _guard()
    got = _call(guard, host=host, headers={"X-Commonkeep-Token": keys.token})
    assert got["status"] == 400 and "Host header" in got["body"] and app.calls == 0
    assert got["headers"]["content-security-policy"] == CSP


def test_a_server_bound_to_one_address_answers_only_that_name_and_a_wildcard_bind_any() -> None:
    guard, app, keys = _guard("192.168.1.5")
    ok = {"X-Commonkeep-Token": keys.token}
    assert _call(guard, host="192.168.1.5:8765", headers=ok)["status"] == 200
    assert _call(guard, host="127.0.0.1:8765", headers=ok)["status"] == 400
    assert _call(guard, host="other.example", headers=ok)["status"] == 400
    for wildcard in ("0.0.0.0", "::"):
        guard, app, keys = _guard(wildcard)
        assert _call(guard, host="anything.example:1", headers={"X-Commonkeep-Token": keys.token})["status"] == 200


def test_the_token_url_sets_the_cookie_and_redirects_to_the_same_address_without_it() -> None:
    guard, app, keys = _guard()
    got = _call(guard, "/candidates/c1", query=f"status=new&token={keys.token}&page=2")
    assert got["status"] == 303 and app.calls == 0
    assert got["headers"]["location"] == "/candidates/c1?status=new&page=2"
    assert got["headers"]["set-cookie"] == f"{COOKIE}={keys.token}; HttpOnly; SameSite=Strict; Path=/"
    assert got["headers"]["x-frame-options"] == "DENY"
    bare = _call(guard, "/inbox", query=f"token={keys.token}")
    assert bare["status"] == 303 and bare["headers"]["location"] == "/inbox"


def test_a_token_in_the_url_of_a_post_or_a_wrong_one_lets_nothing_in() -> None:
    guard, app, keys = _guard()
    assert _call(guard, "/decide", query=f"token={keys.token}", method="POST")["status"] == 403
    assert _call(guard, "/inbox", query="token=wrong")["status"] == 403
    assert _call(guard, "/inbox", query="token=")["status"] == 403
    assert app.calls == 0


def test_the_cookie_of_this_port_lets_in_and_nothing_else_does() -> None:
    guard, app, keys = _guard()
    assert _call(guard, headers={"Cookie": f"{COOKIE}={keys.token}"})["status"] == 200
    assert _call(guard, headers={"Cookie": f"other=1; {COOKIE}={keys.token}"})["status"] == 200
    for cookie in (f"{COOKIE}=wrong", f"commonkeep_token_{PORT + 1}={keys.token}", "garbage;;;=", ""):
        refused = _call(guard, headers={"Cookie": cookie})
        assert refused["status"] == 403 and "X-Commonkeep-Token" in refused["body"], cookie
    assert app.calls == 2
    guard.set_port(PORT + 1)  # the server learned its real port after binding port 0
    assert _call(guard, headers={"Cookie": f"commonkeep_token_{PORT + 1}={keys.token}"})["status"] == 200
    assert _call(guard, headers={"Cookie": f"{COOKIE}={keys.token}"})["status"] == 403


def test_answers_of_the_app_keep_their_headers_and_gain_the_security_headers() -> None:
    guard, app, keys = _guard()
    got = _call(guard, headers={"X-Commonkeep-Token": keys.token})
    assert got["status"] == 200 and got["body"] == "ok"
    assert got["headers"]["x-app"] == "1"
    assert got["headers"]["content-security-policy"] == CSP
    assert got["headers"]["x-content-type-options"] == "nosniff"
    assert got["headers"]["referrer-policy"] == "no-referrer"
    assert got["headers"]["cache-control"] == "no-store"
    refused = _call(guard)
    assert refused["status"] == 403 and refused["headers"]["x-frame-options"] == "DENY"
    assert refused["headers"]["content-type"] == "text/plain; charset=utf-8"
    assert int(refused["headers"]["content-length"]) == len(refused["body"].encode())


def test_what_is_not_http_goes_to_the_app_untouched() -> None:
    guard, app, _keys = _guard()
    got = _call(guard, kind="lifespan", host="evil.example")
    assert app.calls == 1 and "content-security-policy" not in got["headers"]


REFUSED = ("403: this commonkeep server needs its token. Open the URL it printed at start "
           "(http://HOST:PORT/?token=...), or send the X-Commonkeep-Token header.")


def test_the_refusals_say_what_to_do_word_for_word() -> None:
    guard, _app, keys = _guard()
    assert _call(guard)["body"] == REFUSED
    assert _call(guard, host="evil.example", headers={"X-Commonkeep-Token": keys.token})["body"] == (
        "400: the Host header does not name the address this server is bound to")
    with pytest.raises(BadInput) as refused:
        check_bind("10.0.0.2", False)
    assert refused.value.args[0] == (
        "refusing to listen on 10.0.0.2: it is not a loopback address, so other machines could reach the memory "
        "(the token is the only lock); nothing was started")
    assert refused.value.hint == "use the default 127.0.0.1, or pass --allow-remote if you really mean it"


def test_the_redirect_is_a_complete_answer_with_an_empty_body() -> None:
    guard, _app, keys = _guard()
    got = _call(guard, "/inbox", query=f"token={keys.token}")
    assert got["sent"][1:] == [{"type": "http.response.body", "body": b""}]
    assert len(got["sent"]) == 2


def test_the_redirect_keeps_the_other_parameters_even_blank_ones() -> None:
    guard, _app, keys = _guard()
    got = _call(guard, "/memory", query=f"q=&token={keys.token}&page=2")
    assert got["headers"]["location"] == "/memory?q=&page=2"


def test_the_app_gets_the_request_as_it_came() -> None:
    guard, app, keys = _guard()
    _call(guard, "/memory", headers={"X-Commonkeep-Token": keys.token})
    assert app.seen == [("/memory", "http.request")]
    _call(guard, "/x", kind="lifespan")
    assert app.seen[-1] == ("/x", "http.request")


def test_an_app_answer_without_headers_still_gets_the_security_headers() -> None:
    app, keys = App(bare=True), Keys()
    got = _call(Guard(app, keys, "127.0.0.1", PORT), headers={"X-Commonkeep-Token": keys.token})
    assert got["status"] == 200 and got["headers"]["content-security-policy"] == CSP


def test_a_request_without_headers_or_query_is_refused_not_crashed() -> None:
    guard, app, _keys = _guard()
    got = _call(guard, scope={"type": "http", "method": "GET", "path": "/inbox"})
    assert got["status"] == 400 and app.calls == 0


def test_a_server_bound_to_a_named_or_ipv6_address_answers_that_name() -> None:
    for bound, host in (("myhost.lan", "myhost.lan:8765"), ("myhost.lan", "MyHost.LAN"), ("fd00::5", "[fd00::5]:8765"),
                        ("fd00::5", "[FD00::5]")):
        guard, _app, keys = _guard(bound)
        assert _call(guard, host=host, headers={"X-Commonkeep-Token": keys.token})["status"] == 200, (bound, host)
    guard, _app, keys = _guard("fd00::5")
    assert _call(guard, host="[fd00::6]:8765", headers={"X-Commonkeep-Token": keys.token})["status"] == 400
