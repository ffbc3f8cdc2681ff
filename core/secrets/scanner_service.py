"""The scanner service: Kingfisher's rules loaded once, for the short-lived ``commonkeep`` processes.

Loading Kingfisher's rules costs ~0.35 s a process (``provider.py``), more than a whole ``write``.
A ``commonkeep`` command run from the shell (the CLI marks its own process: ``provider.SERVICE_CLIENT``) asks
this small long-lived process instead: it connects to a Unix socket, sends the text and reads
back the provider hits, the same ``tuple[Hit, ...]`` the in-process scan returns (the service
runs that very scan). On any failure (no service, refused, timeout, a bad reply, another user at
the other end) the caller scans in process exactly as without the service, so no text passes
unscanned; when nothing listened, it also starts the service, detached, for next time.
Long-lived hosts (the Hermes plugin, ``commonkeep mcp``, ``serve``) load the rules themselves.

- The socket lives in a private directory: ``$XDG_RUNTIME_DIR/commonkeep/`` when that runtime
  directory exists and is ours, else ``$XDG_CACHE_HOME/commonkeep/run/`` (``~/.cache/…``). It is
  created 0700 and, before any use, must be a real directory (not a symlink) owned by our uid with
  no group or other permission; otherwise the service is not used (one warning on stderr).
- Its name carries commonkeep's and Kingfisher's versions and a fingerprint of the files that
  decide the answer, so an upgraded install never asks an older service.
- Both ends check the other's uid (``SO_PEERCRED``): it must be ours.
- The service exits after ``COMMONKEEP_SCANNER_IDLE`` seconds without a request (default 600), on
  SIGTERM, and when its socket file is removed or replaced. Binding the socket is the lock: of two
  services started at once one keeps the socket, and a socket file nobody answers on is replaced.
- It writes nothing but its socket (started with ``-B``: no bytecode either; Kingfisher keeps its
  compiled rules in ``~/.cache/kingfisher/`` as in any process), logs nothing, and keeps no text
  once it has answered (the uncached scan).
- ``COMMONKEEP_SCANNER_SERVICE=0`` turns it off: every process scans in process.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import socket
import stat
import struct
import sys
import time
import zlib
from typing import Any

from commonkeep.secrets import provider

MAX_TEXT = 4 * 1024 * 1024  # bytes of UTF-8; a longer text is scanned in process
MAX_REPLY = 16 * 1024 * 1024
CONNECT_TIMEOUT = 0.05  # seconds
REPLY_TIMEOUT = 0.2  # a scan takes ~20 µs; this is for a loaded machine
CONN_TIMEOUT = 1.0  # the service's limit on a slow client
POLL = 1.0  # how often the service checks that its socket file is still its own
IDLE_SECONDS = 600.0
_LEN = struct.Struct("!I")
_CRED = struct.Struct("3i")  # struct ucred: pid, uid, gid
_WARNED: list[str] = []
# a process that has spent this long asking (~0.5 ms a text) loads the rules itself from then on
# (~0.35 s, then ~20 µs a text): a long command (``doctor`` over a big root) stays as fast as before
BUDGET = 0.3
_SPENT = [0.0]


def _warn(message: str) -> None:
    """One warning a process at most: the service is not used, the scan runs here."""
    if not _WARNED:
        _WARNED.append(message)
        print(f"commonkeep: warning: the scanner service is not used: {message}; "
              "the secret gate scans in this process", file=sys.stderr)


def run_dir() -> tuple[str | None, str | None]:
    """The private directory of the socket (created ``0700`` if need be), or None and why it may
    not be used."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime) and _ours(runtime):
        path = os.path.join(runtime, "commonkeep")
    else:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        if not os.path.isabs(cache):
            return None, f"the cache directory {cache!r} is not an absolute path"
        path = os.path.join(cache, "commonkeep", "run")
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        return None, f"{path} cannot be created ({exc.strerror})"
    try:
        st = os.lstat(path)
    except OSError as exc:
        return None, f"{path} cannot be read ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return None, f"{path} is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return None, f"{path} is not a directory"
    if st.st_uid != os.getuid():
        return None, f"{path} belongs to uid {st.st_uid}, not to this user ({os.getuid()})"
    if st.st_mode & 0o077:
        return None, f"{path} may be used by others (mode {stat.S_IMODE(st.st_mode):04o}, must be 0700)"
    return path, None


def _ours(path: str) -> bool:
    """A directory (or a link to one) that exists and belongs to this user."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()


def _kingfisher() -> tuple[str, str] | None:
    """Kingfisher's version and its native library, found without importing it (~35 ms)."""
    for entry in sys.path:
        package = os.path.join(entry or os.curdir, "kingfisher_sdk")
        if not os.path.isdir(package):
            continue
        version = "unknown"
        try:
            for item in os.scandir(entry or os.curdir):
                if item.name.startswith("kingfisher_secret_scanner-") and item.name.endswith(".dist-info"):
                    version = item.name[len("kingfisher_secret_scanner-"):-len(".dist-info")]
            native = [os.path.join(package, n) for n in os.listdir(package) if n.startswith("_native")]
        except OSError:
            return None
        return version, (native[0] if native else package)
    return None


@functools.lru_cache(maxsize=1)
def socket_name() -> str | None:
    """``scanner-<commonkeep>-kingfisher-<version>-<fingerprint>.sock``, or None without Kingfisher."""
    from commonkeep import __version__

    found = _kingfisher()
    if found is None:
        return None
    version, native = found
    marks = []
    for path in (native, provider.__file__, __file__):
        try:
            st = os.stat(path)
            marks.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            marks.append(path)
    fingerprint = f"{zlib.crc32(chr(0).join(marks).encode('utf-8', 'surrogateescape')):08x}"
    safe = "".join(c if c.isalnum() or c in ".+-" else "_" for c in f"{__version__}-kingfisher-{version}")
    return f"scanner-{safe}-{fingerprint}.sock"


def socket_path() -> tuple[str | None, str | None]:
    """The socket's path, or None and why not (``None, None``: not here, nothing to say)."""
    if not hasattr(socket, "SO_PEERCRED") or not hasattr(socket, "AF_UNIX"):
        return None, None  # the peer's uid cannot be checked here (not Linux): never used
    name = socket_name()
    if name is None:
        return None, None
    where, why = run_dir()
    if where is None:
        return None, why
    path = os.path.join(where, name)
    if len(os.fsencode(path)) > 107:
        return None, f"the socket path {path} is longer than a Unix socket allows"
    return path, None


def peer_uid(sock: socket.socket) -> int:
    _pid, uid, _gid = _CRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CRED.size))
    return int(uid)


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    chunks: list[bytes] = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise ConnectionError("closed before the end")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _read_frame(sock: socket.socket, limit: int) -> bytes:
    (size,) = _LEN.unpack(_read_exactly(sock, _LEN.size))
    if size > limit:
        raise ValueError("frame too long")
    return _read_exactly(sock, size)


# ---- the client: a short-lived CLI process


def ask(text: str) -> tuple[provider.Hit, ...] | None:
    """The provider hits of ``text`` from the service, or None (no answer: scan in process)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > MAX_TEXT or _SPENT[0] > BUDGET:
        return None
    path, why = socket_path()
    if path is None:
        if why:
            _warn(why)
        return None
    started = time.perf_counter()
    try:
        return query(path, data, start_missing=True)
    finally:
        _SPENT[0] += time.perf_counter() - started


def query(path: str, data: bytes, start_missing: bool = False) -> tuple[provider.Hit, ...] | None:
    """Ask the service at ``path`` for the hits of ``data`` (UTF-8); None: no answer. When nobody
    listens there and ``start_missing``, start the service for next time."""
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:  # out of file descriptors
        return None
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            if start_missing:
                start()  # nobody listens: for next time
            return None
        if peer_uid(sock) != os.getuid():
            _warn(f"{path} is answered by another user")
            return None
        sock.settimeout(REPLY_TIMEOUT + len(data) / 10e6)  # and 0.1 s a megabyte for a long text
        sock.sendall(_LEN.pack(len(data)) + data)
        return _hits(json.loads(_read_frame(sock, MAX_REPLY)))
    except (OSError, ValueError):  # timeout, reset, a bad frame or bad JSON
        return None
    finally:
        sock.close()


def _hits(reply: Any) -> tuple[provider.Hit, ...] | None:
    hits = reply.get("hits") if isinstance(reply, dict) else None
    if not isinstance(hits, list):
        return None
    out: list[provider.Hit] = []
    for hit in hits:
        if not (isinstance(hit, list) and len(hit) == 2 and all(isinstance(h, str) for h in hit)):
            return None
        out.append((hit[0], hit[1]))
    return tuple(out)


def command() -> list[str]:
    """The service's command line: this interpreter, no bytecode written (``-B``)."""
    return [sys.executable, "-B", "-m", "commonkeep.secrets.scanner_service"]


def start() -> None:
    """Start the service detached: its own session, no pipe of ours held open (a caller that
    waits for our output, a CI step, never waits for it); if it cannot be started, the scan runs
    in process and nothing else depends on it."""
    import subprocess
    import warnings

    try:
        idle_seconds(os.environ.get("COMMONKEEP_SCANNER_IDLE"))
    except ValueError as exc:  # it would only exit again: said once instead
        _warn(str(exc))
        return
    with warnings.catch_warnings(), contextlib.suppress(OSError):
        warnings.simplefilter("ignore", ResourceWarning)  # it outlives us on purpose: not a leak
        subprocess.Popen(command(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         close_fds=True, start_new_session=True, cwd="/")


# ---- the service


def alive(path: str) -> bool:
    """Does a service of ours answer on ``path``?"""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(0.5)
        sock.connect(path)
        return peer_uid(sock) == os.getuid()
    except OSError:
        return False
    finally:
        sock.close()


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISSOCK(st.st_mode) else None


def _stale(path: str) -> bool:
    """Nobody answers on the socket file at ``path``, asked three times: a service that has just bound
    it listens within microseconds, and a socket bound but not yet listening refuses a connection."""
    for _ in range(3):
        if alive(path):
            return False
        time.sleep(0.05)
    return _identity(path) is not None


def bind(path: str) -> tuple[socket.socket, tuple[int, int]] | None:
    """The listening socket at ``path`` and the socket file's identity, or None when another service
    holds it (or replaced the file while this one bound it: then both would think it theirs)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            sock.bind(path)
        except OSError:
            if not _stale(path):  # answered, or not a socket: never removed
                sock.close()
                return None
            os.unlink(path)  # a stale socket file: nobody answers on it
            sock.bind(path)
        mine = _identity(path)
        sock.listen(64)
    except OSError:
        sock.close()
        return None
    if mine is None or _identity(path) != mine:  # replaced between our bind and listen: the other one keeps it
        sock.close()
        return None
    return sock, mine


def _answer(conn: socket.socket) -> None:
    conn.settimeout(CONN_TIMEOUT)
    if peer_uid(conn) != os.getuid():
        return
    text = _read_frame(conn, MAX_TEXT).decode("utf-8", "surrogatepass")
    hits = provider._scan_here(text)  # uncached: no text is kept once answered
    reply = json.dumps({"hits": hits}).encode("ascii")
    conn.sendall(_LEN.pack(len(reply)) + reply)


def serve(idle: float) -> int:
    """Run the service until idle, SIGTERM, or its socket file is gone or replaced."""
    import signal

    os.umask(0o077)
    path, _why = socket_path()
    if path is None:
        return 1
    if alive(path):
        return 0
    bound = bind(path)
    if bound is None:
        return 0
    sock, found = bound
    mine: tuple[int, int] | None = found

    def stop(_signum: int, _frame: Any) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    try:
        if provider._scanner() is None:  # Kingfisher does not load: the callers scan (and skip) themselves
            return 1
        last, checked = time.monotonic(), 0.0  # checked at once: another service may have replaced it while the rules loaded
        while True:
            now = time.monotonic()
            if now - last >= idle:
                return 0
            if now - checked >= POLL:
                if _identity(path) != mine:
                    mine = None  # removed or replaced: not ours to remove
                    return 0
                checked = now
            sock.settimeout(max(0.01, min(POLL, idle - (now - last))))
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            # a client that went away or sent a bad frame: nothing to report, nothing kept
            with conn, contextlib.suppress(OSError, ValueError):
                _answer(conn)
            last = time.monotonic()
    finally:
        if mine is not None and _identity(path) == mine:
            with contextlib.suppress(OSError):
                os.unlink(path)
        sock.close()


def idle_seconds(value: str | None) -> float:
    """``COMMONKEEP_SCANNER_IDLE``: seconds, a positive number (default 600)."""
    if value is None or not value.strip():
        return IDLE_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < 10 ** 7:
        raise ValueError(f"COMMONKEEP_SCANNER_IDLE must be a positive number of seconds, not {value!r}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args:
        print("usage: python -m commonkeep.secrets.scanner_service (no arguments; "
              "COMMONKEEP_SCANNER_IDLE=SECONDS sets the idle time, default 600)", file=sys.stderr)
        return 2
    try:
        idle = idle_seconds(os.environ.get("COMMONKEEP_SCANNER_IDLE"))
    except ValueError as exc:
        print(f"commonkeep scanner service: error: {exc}", file=sys.stderr)
        return 2
    return serve(idle)


if __name__ == "__main__":
    raise SystemExit(main())
