"""The scanner service (``commonkeep.secrets.scanner_service``): real processes, real sockets.

Every other test runs with ``COMMONKEEP_SCANNER_SERVICE=0`` (``tests/conftest.py``); these start
their own service in a private runtime directory of theirs, with a short idle time, and kill every
service whose environment names that directory in teardown."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from commonkeep.secrets import provider
from commonkeep.secrets import scanner_service as service

pytestmark = pytest.mark.skipif(not hasattr(socket, "SO_PEERCRED") or importlib.util.find_spec("kingfisher_sdk") is None,
                                reason="Linux (SO_PEERCRED) and Kingfisher")

# a token Kingfisher names and our rules of place do not take (a Postman key: our rule of shape takes its hex
# tail, so the provider rules read the text whole): a write must ask for it (``secrets.redact_obj``)
TOKEN = "PMAK-" + "a4c123b1612dd272d1371c17" + "-" + "149d439536b3216fdaeeb975729fae923d"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
TEXT = f"The collection runner calls the API with {TOKEN} monthly."
# a write in a subprocess: the CLI as run from the command line (argv from sys.argv), then what
# this process loaded
WRITE = ("import sys\n"
         "from commonkeep.cli import main\n"
         "sys.argv = ['commonkeep', *sys.argv[1:]]\n"
         "code = main()\n"
         "from commonkeep.secrets import provider\n"
         "print(json.dumps({'code': code, 'scanner': 'scanner' in provider._STATE,"
         " 'kingfisher': 'kingfisher_sdk' in sys.modules}), file=sys.stderr)\n")


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private runtime directory (short: a socket path has at most 107 bytes), and no service
    left behind."""
    where = Path(tempfile.mkdtemp(prefix="ckscan", dir="/tmp"))
    where.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(where))
    monkeypatch.setattr(service, "_SPENT", [0.0])  # this process's time spent asking, from zero
    try:
        yield where
    finally:
        for pid in services(where):
            os.kill(pid, signal.SIGKILL)
        _wait(lambda: not services(where), 10)
        shutil.rmtree(where, ignore_errors=True)


def services(where: Path) -> list[int]:
    """The scanner services started for ``where`` (their environment names it), by /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes()
            env = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if b"commonkeep.secrets.scanner_service" in cmd and f"XDG_RUNTIME_DIR={where}".encode() in env and state != "Z":
            found.append(int(entry.name))
    return found


def _wait(ok: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ok():
            return True
        time.sleep(0.05)
    return ok()


def env_for(where: Path, idle: float = 30, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != provider.SERVICE_OFF}
    return {**env, "XDG_RUNTIME_DIR": str(where), "COMMONKEEP_SCANNER_IDLE": str(idle), **(extra or {})}


def sock_path() -> str:
    path, _why = service.socket_path()
    assert path is not None
    return path


def start(where: Path, idle: float = 30) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-B", "-m", "commonkeep.secrets.scanner_service"], env=env_for(where, idle),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert _wait(lambda: service.query(sock_path(), f"warm {TOKEN}".encode()) is not None, 60), "no service"
    return proc


def write(root: Path, where: Path, text: str, **extra: str) -> tuple[dict[str, bool], str]:
    done = subprocess.run([sys.executable, "-c", "import json\n" + WRITE, "write", "--root", str(root), text],
                          env=env_for(where, extra=extra), capture_output=True, text=True, timeout=120, check=False)
    *said, last = done.stderr.strip().splitlines()
    loaded = json.loads(last)
    assert loaded.pop("code") == 0, done.stderr
    stored = (root / "inbox" / "captured.jsonl").read_text(encoding="utf-8")
    assert TOKEN not in stored and TOKEN[:12] not in stored, "the token was written"
    return loaded, "\n".join(said)


def test_the_other_tests_run_with_the_service_off() -> None:
    assert os.environ.get(provider.SERVICE_OFF) == "0"


def test_the_service_finds_what_the_process_finds(runtime: Path) -> None:
    from commonkeep.bench import secrets_corpus as corpus

    start(runtime)
    texts = [TEXT, f"SLACK_BOT_TOKEN={SLACK}", f"two: {TOKEN} and {SLACK}.", "x9y8z7w6v5u4 abc123def456ghi789",
             "Call parseHttpHeaderValue2 from FooBarBazQux9 in src/a.py", "a lone surrogate \udce9 " + TOKEN]
    texts += ["\n".join(item.fields) for item in corpus.planted(120, seed=3)] + corpus.benign(40, seed=5)
    found = 0
    for text in texts:
        served = service.query(sock_path(), text.encode("utf-8", "surrogatepass"))
        for _ in range(5):  # None is a timeout (0.2 s) on a loaded box, after which a caller scans itself: ask again
            if served is not None:
                break
            served = service.query(sock_path(), text.encode("utf-8", "surrogatepass"))
        assert served == provider._scan_here(text), text
        found += bool(served)
    assert found >= 30  # a good part of the corpus holds a token Kingfisher knows
    assert service.ask(TEXT) == ((TOKEN, "postmanapikey"),)


def test_a_write_asks_the_service_and_does_not_load_kingfisher(runtime: Path, root: Path) -> None:
    start(runtime)
    loaded, said = write(root, runtime, TEXT)
    assert loaded == {"scanner": False, "kingfisher": False}
    assert "warning" not in said
    plain, _ = write(root, runtime, "The build uses uv.")
    assert plain == {"scanner": False, "kingfisher": False}


def test_a_long_command_loads_the_rules_itself_once_asking_has_cost_as_much(runtime: Path) -> None:
    """``doctor`` over a big root scans thousands of texts: after ~0.3 s spent asking, the process
    loads the rules and scans the rest itself, with the same hits."""
    start(runtime)
    script = ("import json, os, sys, time\n"
              "os.environ['COMMONKEEP_SCANNER_CLIENT'] = str(os.getpid())  # as the CLI marks its process\n"
              "from commonkeep.secrets import provider, scanner_service\n"
              # a budget far below what 3,000 round trips cost on any box (~50 us each): the test asks
              # what happens once it is spent, not how fast this box answers (it was 0.3 s, the default)
              "scanner_service.BUDGET = 0.01\n"
              "texts = [f'{n} token ghp_{n:06d}aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1x' for n in range(3000)]\n"
              "hits = [provider.provider_values(t) for t in texts]\n"
              "print(json.dumps({'all': all(h and h[0][0].startswith('ghp_') for h in hits),"
              " 'scanner': 'scanner' in provider._STATE, 'spent': scanner_service._SPENT[0],"
              " 'budget': scanner_service.BUDGET}))\n")
    done = subprocess.run([sys.executable, "-c", script], env=env_for(runtime), capture_output=True, text=True,
                          timeout=300, check=True)
    out = json.loads(done.stdout)
    assert out["all"] and out["scanner"]
    assert out["budget"] < out["spent"] < out["budget"] + 1


def test_the_off_switch_scans_in_process_and_starts_nothing(runtime: Path, root: Path) -> None:
    loaded, _ = write(root, runtime, TEXT, COMMONKEEP_SCANNER_SERVICE="0")
    assert loaded["scanner"] and loaded["kingfisher"]
    time.sleep(0.5)
    assert not services(runtime) and not (runtime / "commonkeep").exists()


def test_no_service_yet_the_write_scans_in_process_and_starts_one(runtime: Path, root: Path) -> None:
    started = time.monotonic()
    loaded, said = write(root, runtime, TEXT, COMMONKEEP_SCANNER_IDLE="120")
    # the service outlives the write, holding none of its pipes: the caller reading them to the end
    # (capture_output) is not kept waiting for it
    assert time.monotonic() - started < 60
    assert loaded["scanner"] and "warning" not in said
    assert _wait(lambda: service.alive(sock_path()), 60)
    assert len(services(runtime)) == 1
    assert (runtime / "commonkeep").stat().st_mode & 0o777 == 0o700


def test_two_writes_at_once_start_one_service(runtime: Path, root: Path) -> None:
    argv = [sys.executable, "-m", "commonkeep.cli", "write", "--root", str(root)]
    writes = [subprocess.Popen([*argv, f"{TEXT} ({i})"], env=env_for(runtime), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL) for i in range(2)]
    assert [w.wait(timeout=120) for w in writes] == [0, 0]
    assert _wait(lambda: service.query(sock_path(), TEXT.encode()) is not None, 60)
    assert _wait(lambda: len(services(runtime)) == 1, 30)  # a second one, if any, has seen the first and left


def test_a_killed_service_the_write_still_redacts_and_the_stale_socket_is_replaced(runtime: Path, root: Path) -> None:
    proc = start(runtime)
    proc.kill()
    proc.wait()
    assert os.path.exists(sock_path()) and not service.alive(sock_path())  # stale: nobody answers
    loaded, _ = write(root, runtime, TEXT)
    assert loaded["scanner"]  # scanned here
    assert _wait(lambda: service.alive(sock_path()), 60), "the stale socket was not replaced"
    assert len(services(runtime)) == 1


def test_a_service_that_does_not_answer_the_write_still_redacts(runtime: Path, root: Path) -> None:
    proc = start(runtime)
    os.kill(proc.pid, signal.SIGSTOP)  # stopped mid-way: connections queue, no answer comes
    try:
        started = time.monotonic()
        loaded, _ = write(root, runtime, TEXT)
        assert loaded["scanner"]
        assert time.monotonic() - started < 30
        assert services(runtime) == [proc.pid]  # connected: no second service
    finally:
        os.kill(proc.pid, signal.SIGCONT)


def test_a_bad_reply_is_no_answer(runtime: Path) -> None:
    path = Path(runtime / "commonkeep")
    path.mkdir(mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock_path())
    listener.listen(4)
    replies = [b"\x00\x00\x00\x05hello", b"\x00\x00\x00\x0f{\"hits\": [[1]]}", b"\xff\xff\xff\xff", b""]

    def serve() -> None:
        for reply in replies:
            conn, _ = listener.accept()
            with conn:
                conn.recv(1 << 16)
                conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        for _ in replies:
            assert service.ask(TEXT) is None
    finally:
        listener.close()
        thread.join(5)


@pytest.mark.skipif(os.getuid() != 0, reason="a listener of another uid needs root")
def test_a_service_of_another_user_is_not_asked(runtime: Path) -> None:
    (runtime / "commonkeep").mkdir(mode=0o700)
    fake = ("import os, socket, sys\n"
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind(sys.argv[1])\n"
            "os.setuid(65534); s.listen(4); print('up', flush=True)\n"
            "c, _ = s.accept(); c.recv(65536); r = b'{\"hits\": []}'; c.sendall(len(r).to_bytes(4, 'big') + r)\n")
    proc = subprocess.Popen([sys.executable, "-c", fake, sock_path()], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "up"
        assert service.ask(TEXT) is None
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(os.getuid() != 0, reason="a client of another uid needs root")
def test_the_service_does_not_answer_another_user(runtime: Path) -> None:
    start(runtime)
    path = sock_path()
    for opened in (runtime, runtime / "commonkeep"):  # for the test only, so that another uid can reach it
        opened.chmod(0o711)
    os.chmod(path, 0o777)
    read, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: another user, connecting and asking
        code = 1
        try:
            os.close(read)
            os.setgid(65534)
            os.setuid(65534)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(10)
                sock.connect(path)
                data = TEXT.encode()
                try:
                    sock.sendall(len(data).to_bytes(4, "big") + data)
                    os.write(write_end, b"answer:" + sock.recv(65536))
                except ConnectionError:  # closed on us, before or after the text
                    os.write(write_end, b"answer:")
            code = 0
        except BaseException as exc:  # noqa: BLE001 - said to the parent, which fails the test
            os.write(write_end, repr(exc).encode())
        finally:
            os._exit(code)
    os.close(write_end)
    try:
        _, status = os.waitpid(pid, 0)
        said = os.read(read, 65536)
    finally:
        os.close(read)
        for opened in (runtime, runtime / "commonkeep"):
            opened.chmod(0o700)
    assert os.waitstatus_to_exitcode(status) == 0
    assert said == b"answer:"  # connected, and closed without an answer
    assert service.query(path, TEXT.encode()) == ((TOKEN, "postmanapikey"),)  # ours still is


def _unsafe(runtime: Path, how: str) -> None:
    run = runtime / "commonkeep"
    if how == "symlink":
        real = runtime / "elsewhere"
        real.mkdir(mode=0o700)
        run.symlink_to(real)
    elif how == "0777":
        run.mkdir()
        run.chmod(0o777)
    else:
        run.mkdir(mode=0o700)
        os.chown(run, 65534, 65534)


@pytest.mark.parametrize("how", ["symlink", "0777", "foreign"])
def test_an_unsafe_run_directory_is_not_used(runtime: Path, root: Path, how: str) -> None:
    if how == "foreign" and os.getuid() != 0:
        pytest.skip("a directory of another uid needs root")
    _unsafe(runtime, how)
    loaded, said = write(root, runtime, TEXT)
    assert loaded["scanner"]  # scanned here, and redacted (write checks the store)
    assert said.count("the scanner service is not used") == 1, said
    time.sleep(0.5)
    assert not services(runtime)
    proc = subprocess.run([sys.executable, "-B", "-m", "commonkeep.secrets.scanner_service"], env=env_for(runtime),
                          capture_output=True, timeout=60, check=False)
    assert proc.returncode == 1 and not any(p.suffix == ".sock" for p in runtime.rglob("*"))


def test_the_service_exits_when_idle(runtime: Path) -> None:
    proc = start(runtime, idle=1.5)
    path = sock_path()
    assert proc.wait(timeout=30) == 0
    assert not os.path.exists(path)


def test_the_service_exits_on_sigterm_and_when_its_socket_is_removed_or_replaced(runtime: Path) -> None:
    proc = start(runtime)
    proc.terminate()
    assert proc.wait(timeout=10) == 0 and not os.path.exists(sock_path())
    proc = start(runtime)
    os.unlink(sock_path())
    assert proc.wait(timeout=10) == 0
    proc = start(runtime)
    os.unlink(sock_path())
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    other.bind(sock_path())  # replaced by another
    try:
        assert proc.wait(timeout=10) == 0
        assert os.path.exists(sock_path())  # not removed: it was not the service's own
    finally:
        other.close()


def test_two_services_started_at_once_end_as_one(runtime: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-B", "-m", "commonkeep.secrets.scanner_service"], env=env_for(runtime),
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for _ in range(3)]
    assert _wait(lambda: sum(p.poll() is None for p in procs) == 1, 60)
    assert _wait(lambda: service.query(sock_path(), TEXT.encode()) == ((TOKEN, "postmanapikey"),), 60)  # once its rules are loaded
    assert sum(p.poll() is None for p in procs) == 1


def test_a_bad_idle_time_is_one_warning_and_no_service(runtime: Path, root: Path) -> None:
    loaded, said = write(root, runtime, TEXT, COMMONKEEP_SCANNER_IDLE="soon")
    assert loaded["scanner"]
    assert said.count("COMMONKEEP_SCANNER_IDLE must be a positive number of seconds") == 1
    time.sleep(0.5)
    assert not services(runtime)


def test_a_bad_idle_time_is_a_clear_error() -> None:
    done = subprocess.run([sys.executable, "-B", "-m", "commonkeep.secrets.scanner_service"],
                          env={**os.environ, "COMMONKEEP_SCANNER_IDLE": "soon"}, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "COMMONKEEP_SCANNER_IDLE must be a positive number of seconds" in done.stderr and "Traceback" not in done.stderr


def test_bench_startup_times_write_with_the_service_and_leaves_none(monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep.bench import startup

    monkeypatch.setattr(startup, "READ_COMMANDS", (("--version",),))
    report = startup.measure(runs=1, records=1)
    rows = {r["command"]: r for r in report["commands"]}
    assert report["ok"], rows
    assert [name for name in rows if name.startswith("write")] == [w[0] for w in startup.WRITES]
    assert rows["write (token text, in process)"]["within_goal"] is None  # the baseline
    assert "baseline" in startup.format_report(report)
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _started_by_the_bench(p)]
    assert not left


def _started_by_the_bench(proc: Path) -> bool:
    try:
        cmd, env = (proc / "cmdline").read_bytes(), (proc / "environ").read_bytes()
        state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return b"commonkeep.secrets.scanner_service" in cmd and b"commonkeep-startup-" in env and state != "Z"


def test_the_socket_name_carries_both_versions() -> None:
    import kingfisher_sdk

    from commonkeep import __version__

    name = service.socket_name()
    assert name is not None and name.startswith(f"scanner-{__version__}-kingfisher-{kingfisher_sdk.__version__}-")
    assert name.endswith(".sock")
