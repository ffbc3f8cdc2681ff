"""The web app's locks: loopback by default, a token on every request, a CSRF token on every POST.

As Jupyter does, the server makes a random token at start and prints the URL carrying it. The
first request with ``?token=`` sets an ``HttpOnly``, ``SameSite=Strict`` cookie (named after the
port, as cookies ignore ports) and redirects to the same URL without the token, so it does not
linger in the address bar or a ``Referer``. Every other request needs that cookie, or the
``X-Commonkeep-Token`` header; without it the answer is 403.

POSTs also carry a second random token (``csrf`` form field or ``X-CSRF-Token`` header) that
pages embed; a wrong or missing one is 403. The ``Host`` header must name the address the server
is bound to (loopback names for a loopback bind), which stops DNS-rebinding pages. Every page is
sent with a Content-Security-Policy that allows scripts and styles from this server only.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from commonkeep.errors import BadInput

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; "
       "frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"), (b"cache-control", b"no-store")]


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, allow_remote: bool) -> None:
    """Refuse a non-loopback address unless explicitly allowed (``--allow-remote``)."""
    if not is_loopback(host) and not allow_remote:
        raise BadInput(f"refusing to listen on {host}: it is not a loopback address, so other machines could reach "
                       "the memory (the token is the only lock); nothing was started",
                       hint="use the default 127.0.0.1, or pass --allow-remote if you really mean it")


@dataclass
class Keys:
    """The tokens of one server run."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    def token_ok(self, given: str | None) -> bool:
        return bool(given) and secrets.compare_digest(str(given), self.token)

    def csrf_ok(self, given: str | None) -> bool:
        return bool(given) and secrets.compare_digest(str(given), self.csrf)


# A Host header is a name or an address and an optional port, nothing else (RFC 9110 §7.2): anything
# with userinfo (``127.0.0.1:80@evil.example``), a path or spaces is refused rather than guessed at.
_HOST_HEADER = re.compile(r"^(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9.-]+))(?::\d{1,5})?$")


def _host_only(header: str) -> str | None:
    """The host part of a Host header, or ``None`` when the header is not a well-formed ``host[:port]``."""
    found = _HOST_HEADER.match(header.strip().lower())
    if found is None:
        return None
    return found.group("v6") or found.group("name")


async def _plain(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                            *HEADERS, *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


def _from_an_agent(scope: Scope) -> str | None:
    """Why this request is refused: it changes something and the process that sent it runs inside an
    agent (``commonkeep.gate.peer``); a decision is a person's, not a tool's."""
    if scope.get("method") in ("GET", "HEAD"):
        return None
    from commonkeep.gate.peer import refusal

    return refusal(str(scope.get("method")), scope.get("client"), scope.get("server"))


class Guard:
    """ASGI middleware: Host check, token check (cookie, header or one-time ``?token=``), headers."""

    def __init__(self, app: ASGIApp, keys: Keys, bound_host: str, port: int) -> None:
        self.app, self.keys, self.bound_host = app, keys, bound_host
        self.cookie = f"commonkeep_token_{port}"

    def set_port(self, port: int) -> None:
        self.cookie = f"commonkeep_token_{port}"

    def _host_ok(self, header: str) -> bool:
        if not header:
            return False
        host = _host_only(header)
        if host is None:
            return False
        if self.bound_host in ("0.0.0.0", "::"):
            return True
        if is_loopback(self.bound_host):
            return is_loopback(host)
        return host == self.bound_host.lower()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if not self._host_ok(headers.get("host", "")):
            await _plain(send, 400, "400: the Host header does not name the address this server is bound to")
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        jar: SimpleCookie = SimpleCookie()
        with contextlib.suppress(Exception):
            jar.load(headers.get("cookie", ""))
        cookie = jar[self.cookie].value if self.cookie in jar else None
        if "token" in query and scope["method"] == "GET" and self.keys.token_ok(query["token"]):
            rest = urlencode([(k, v) for k, v in query.items() if k != "token"])
            where = scope["path"] + (f"?{rest}" if rest else "")
            await send({"type": "http.response.start", "status": 303, "headers": [
                (b"location", where.encode()), *HEADERS,
                (b"set-cookie", f"{self.cookie}={self.keys.token}; HttpOnly; SameSite=Strict; Path=/".encode())]})
            await send({"type": "http.response.body", "body": b""})
            return
        if not (self.keys.token_ok(cookie) or self.keys.token_ok(headers.get("x-commonkeep-token"))):
            await _plain(send, 403, "403: this commonkeep server needs its token. Open the URL it printed at start "
                                    "(http://HOST:PORT/?token=...), or send the X-Commonkeep-Token header.")
            return
        if (why := _from_an_agent(scope)) is not None:
            await _plain(send, 403, f"403: {why}.")
            return

        async def with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)
