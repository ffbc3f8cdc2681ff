"""``commonkeep bench capture``: ``capture()`` per second on generated memory text, beside the
previous release in the same run.

``capture()`` is the path of ``commonkeep write``, the Hermes plugin, OMP and the MCP server:
build the candidate (every field through the secret gate, single-value fields held strict,
terminal controls made visible), score it, append it to the inbox. The calls are generated
(seeded; nothing is read from evaluation data): facts, conventions, commands with flags, paths,
URLs, versions, commit hashes, UUIDs, JSON and code snippets, prose that talks about passwords and
tokens, and one text in fifty holding a generated secret, with tags, evidence refs and a host's
provenance (a session id shared by ten captures, as a host's turns share theirs).

``--against REV…`` (git revisions of this repository, extracted with ``git archive``, or
checkout folders whose ``core/`` is the package) runs the same calls through that code too: each
version lives in its own process, and the rounds alternate (A, B, A, B…) so load on the machine
hits all alike. The figure is CPU time (``time.process_time``) of the capture loop
alone, median over the rounds; wall-clock is shown beside it. Beside this code runs, by default,
the same code with the secret gate replaced by a plain copy of the fields ("no scan"): the ratio
of the two is what the scan costs. ``--workload tokens`` is the token-heavy mix (public hashes,
keys and ids, one text in ten a secret known by its place).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import string
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

# one worker process per version: reads "FILE" lines, captures every call in FILE, prints timings
_WORKER = r"""
import json, os, sys, tempfile, time
from pathlib import Path
import commonkeep
from commonkeep.gate.capture import capture
if os.environ.get("CK_BENCH_UNSCANNED"):  # the baseline: every field copied as the gate copies it, nothing scanned
    import commonkeep.store.candidates as candidates
    def _copy(value, findings=None):
        if isinstance(value, dict):
            return {k: _copy(v) for k, v in value.items()}
        if isinstance(value, list):
            return [_copy(v) for v in value]
        return value
    candidates.redact_obj = _copy
    candidates.strict = lambda cand, sink: None
with tempfile.TemporaryDirectory(prefix="ck-bench-capture-") as tmp:  # removed when the bench closes stdin
    root = Path(tmp) / "root"
    capture(root, "warm-up: the bench root exists", tags=["bench"])
    print(json.dumps({"package": str(Path(commonkeep.__file__).resolve().parent)}), flush=True)
    for line in sys.stdin:
        try:  # the net of the secret rules a long-lived process builds (``secrets/rule_net.py``) is part of warming up
            from commonkeep.secrets import rule_net, rules
            if not rule_net.ready(rules._PLAN):
                rule_net.build(rules._PLAN)
        except ImportError:  # an older version
            pass
        try:  # and the net of the provider scanner's own patterns (``secrets/provider_net.py``)
            from commonkeep.secrets import provider, provider_net
            if provider._scanner() is not None and not provider_net.ready(provider._STATE["rules"]):
                provider_net.build(provider._STATE["rules"])
        except (ImportError, KeyError):  # an older version
            pass
        calls = [json.loads(row) for row in Path(line.strip()).read_text(encoding="utf-8").splitlines()]
        cpu, wall = time.process_time(), time.perf_counter()
        for text, kwargs in calls:
            capture(root, text, **kwargs)
        print(json.dumps({"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall, "n": len(calls)}), flush=True)
"""

_SERVICES = ["billing", "search", "ingest", "auth", "cache", "runner", "docs", "frontend", "worker", "scheduler",
             "gateway", "mailer", "payments", "reports"]
_TOOLS = ["pytest -q", "pytest -x -k 'not slow'", "ruff check .", "npm run build", "cargo test --release", "make lint",
          "uv sync --frozen", "docker compose up -d", "git log --oneline -20", "kubectl rollout status deploy/api",
          "terraform plan -out plan.bin", "pip install -e '.[dev]'"]
_TAGS = ["ops", "ci", "prefs", "deploy", "config", "python", "py3", "k8s", "db", "testing", "release", "docs", "security"]
_LANGS = ["English", "French", "German", "Spanish"]


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _secret(rng: random.Random) -> str:
    """A generated credential (never a real one): a provider-shaped token, a password, a URL with one."""
    core = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    return rng.choice([f"the deploy token is ghp_{core}", f"password={core[:14]}!", f"postgres://app:{core[:16]}@db.internal:5432/app",
                       f"export API_KEY=sk-{core}"])


def _text(rng: random.Random, i: int) -> str:
    s, t = rng.choice(_SERVICES), rng.choice(_TOOLS)
    port, ver = 8000 + rng.randrange(1000), f"{rng.randrange(5)}.{rng.randrange(30)}.{rng.randrange(10)}"
    makers = [
        lambda: f"The {s} service on port {port} restarts nightly; its logs are in /var/log/{s}/{s}.log.",
        lambda: f"Run `{t}` before pushing: CI fails otherwise ({rng.randrange(2, 20)} flaky tests in tests/{s}/test_{s}.py).",
        lambda: f"Deploy of {s} v{ver} (commit {_hex(rng, 7)}) moved the cache to redis://cache.internal:6379/{rng.randrange(16)}.",
        lambda: f"The user prefers short answers in {rng.choice(_LANGS)} and wants the {s} summary on Mondays at {rng.randrange(7, 11)}:{rng.randrange(60):02d}.",
        lambda: f"The {s} job reads ~/.config/{s}/config.toml; timeout = {rng.randrange(10, 90)} seconds, retries = {rng.randrange(1, 5)}.",
        lambda: f"Pin requests==2.{rng.randrange(20, 33)}.0: newer releases break the {s} import, see https://github.com/acme/{s}/issues/{rng.randrange(100, 999)}.",
        lambda: f"When the {s} migration fails with 'relation does not exist', run `alembic upgrade head` in the {s} container first (ticket {s.upper()}-{rng.randrange(100, 9999)}).",
        lambda: f"Release branches are named release/2026.{rng.randrange(1, 13)}; tags follow v{ver} and the changelog lives in CHANGELOG.md.",
        lambda: f"Fixed the {s} flake in commit {_hex(rng, 40)}; the root cause was a shared temp dir under /tmp/pytest-of-ci.",
        lambda: f"Request {_hex(rng, 8)}-{_hex(rng, 4)}-4{_hex(rng, 3)}-a{_hex(rng, 3)}-{_hex(rng, 12)} timed out in {s} after {rng.randrange(5, 60)} s.",
        lambda: f'The {s} defaults are {{"retries": {rng.randrange(1, 6)}, "timeout_s": {rng.randrange(5, 60)}, "queue": "{s}-jobs"}}.',
        lambda: f"Use `def load_{s}_config(path: Path) -> dict[str, Any]` from src/{s}/settings.py (line {rng.randrange(1, 900)}); never read os.environ directly.",
        lambda: f"Never paste a password or token into chat; the {s} token is read from $TOKEN and rotated every {rng.choice([30, 60, 90])} days (audit {rng.randrange(1000, 9999)}).",
        lambda: (f"Context for the {s} rewrite: the old worker polled the queue every {rng.randrange(1, 10)} s and held a lock per job; "
                 f"the new one uses LISTEN/NOTIFY, batches {rng.randrange(10, 200)} jobs, and writes progress to the {s}_progress table. "
                 f"Rollback: set {s.upper()}_WORKER=legacy and restart with `systemctl restart {s}-worker`."),
    ]
    return _secret(rng) if i % 50 == 49 else makers[i % len(makers)]()


def fact_calls(n: int, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """``bench store``'s calls: one short sentence and the tag ``bench`` (the figure of issue 24's goal)."""
    return [(f"fact {seed * n + i}: the service on port {8000 + i % 1000} restarts nightly", {"tags": ["bench"]}) for i in range(n)]


def calls(n: int, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """``n`` capture calls: (text, keyword arguments) as a host or the CLI passes them."""
    rng = random.Random(seed)
    out: list[tuple[str, dict[str, Any]]] = []
    session = ""
    for i in range(n):
        if i % 10 == 0:
            session = (f"2026120{rng.randrange(1, 4)}_{rng.randrange(240000):06d}_{_hex(rng, 6)}" if rng.random() < 0.5
                       else f"{_hex(rng, 8)}-{_hex(rng, 4)}-4{_hex(rng, 3)}-8{_hex(rng, 3)}-{_hex(rng, 12)}")
        s = rng.choice(_SERVICES)
        kwargs: dict[str, Any] = {
            "tags": rng.sample(_TAGS, rng.randrange(1, 4)) + [s],
            "evidence_refs": [f"daily/2026-12-0{rng.randrange(1, 4)}.md", rng.choice([f"src/{s}/main.py", f"docs/{s}.md",
                                                                                      f"https://wiki.internal/{s}/runbook"])],
            "provenance": {"agent": rng.choice(["hermes", "omp"]), "role": "coder", "host": "hermes", "session_id": session},
        }
        out.append((_text(rng, i), kwargs))
    return out


def token_calls(n: int, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """A token-heavy mix: the texts are public high-entropy data and ids (lockfile lines, ``go.sum``,
    SRI, public keys, JWKs, URLs with ids, log lines with request ids: ``bench/data/secrets_benign.json``)
    with one in ten a secret known by its place (``secrets_kinds.json``); fields as ``calls`` makes them."""
    from commonkeep.bench import secrets_templates

    texts = secrets_templates.benign(n, seed)
    placed = secrets_templates.planted(1, seed)
    rng = random.Random(seed)
    for i in range(0, n, 10):
        texts[i] = rng.choice(placed)[1]
    return [(text, kwargs) for text, (_, kwargs) in zip(texts, calls(n, seed), strict=True)]


WORKLOADS = {"mixed": calls, "fact": fact_calls, "tokens": token_calls}


UNSCANNED = "unscanned"


def _checkout(against: str, tmp: Path) -> Path:
    """A folder whose ``commonkeep`` is the package of ``against`` (a checkout folder or a git revision)."""
    tmp.mkdir(parents=True)
    src = Path(against)
    if not (src / "core" / "__init__.py").is_file():
        repo = Path(__file__).resolve().parents[2]
        try:
            tar = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", against, "core"],
                                 capture_output=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError) as exc:
            raise SystemExit(f"--against {against}: not a checkout folder with core/, and not a git revision of {repo} "
                             f"({getattr(exc, 'stderr', b'').decode(errors='replace').strip() or exc})") from None
        src = tmp / "against"
        with tarfile.open(fileobj=BytesIO(tar)) as tf:
            if hasattr(tarfile, "data_filter"):  # Python 3.11.4+
                tf.extractall(src, filter="data")
            else:
                tf.extractall(src)  # our own repository's archive
    path = tmp / "path"
    path.mkdir()
    (path / "commonkeep").symlink_to((src / "core").resolve(), target_is_directory=True)
    return path


class _Worker:
    def __init__(self, pythonpath: Path | None, unscanned: bool = False) -> None:
        env = dict(os.environ)
        if unscanned:
            env["CK_BENCH_UNSCANNED"] = "1"
        if pythonpath is not None:
            env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), *filter(None, [env.get("PYTHONPATH")])])
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env)
        self.package = self._read()["package"]

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the capture worker for {getattr(self, 'package', 'a version')} stopped (exit {self.proc.wait()})")
        row: dict[str, Any] = json.loads(line)
        return row

    def run(self, batch: Path) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{batch}\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()


def measure(captures: int, rounds: int, against: list[str] | None, seed: int = 24, workload: str = "mixed",
            baseline: bool = True) -> dict[str, Any]:
    make = WORKLOADS[workload]
    with tempfile.TemporaryDirectory(prefix="ck-bench-capture-") as tmp_name:
        tmp = Path(tmp_name)
        versions = {"this": _Worker(None)}
        if baseline:  # this code with the secret gate replaced by a plain copy: what the scan costs
            versions[UNSCANNED] = _Worker(None, unscanned=True)
        for n, other in enumerate(against or []):
            versions[other] = _Worker(_checkout(other, tmp / f"v{n}"))
        per: dict[str, list[dict[str, Any]]] = {name: [] for name in versions}
        try:
            warm = tmp / "warm.jsonl"  # loads what each version loads lazily (rules, word lists), untimed
            warm.write_text("".join(json.dumps(c) + "\n" for c in calls(200, seed - 1) + make(200, seed - 1)), encoding="utf-8")
            for w in versions.values():
                w.run(warm)
            for r in range(rounds):
                batch = tmp / f"round{r}.jsonl"
                batch.write_text("".join(json.dumps(c) + "\n" for c in make(captures, seed + r)), encoding="utf-8")
                order = list(versions) if r % 2 == 0 else list(reversed(versions))
                for name in order:
                    per[name].append(versions[name].run(batch))
        finally:
            for w in versions.values():
                w.close()
    out: dict[str, Any] = {"workload": workload, "captures_per_round": captures, "rounds": rounds}
    for name, rows in per.items():
        out[name] = {"package": versions[name].package,
                     "cpu_per_s": [round(r["n"] / r["cpu_s"]) for r in rows],
                     "wall_per_s": [round(r["n"] / r["wall_s"]) for r in rows]}
        out[name]["cpu_per_s_median"] = round(statistics.median(out[name]["cpu_per_s"]))
        out[name]["wall_per_s_median"] = round(statistics.median(out[name]["wall_per_s"]))
    if against:
        out["ratio_cpu"] = {other: round(out["this"]["cpu_per_s_median"] / out[other]["cpu_per_s_median"], 3) for other in against}
    if baseline:  # how many times the unscanned cost a capture with the scan costs
        out["scan_cost_ratio"] = round(out[UNSCANNED]["cpu_per_s_median"] / out["this"]["cpu_per_s_median"], 3)
    return out


def run(args: argparse.Namespace) -> int:
    result = measure(args.captures, args.rounds, args.against, workload=args.workload, baseline=not args.no_baseline)
    if args.json:
        from commonkeep.util.jsonout import print_json

        print_json(result, ensure_ascii=True)
        return 0
    for name in ["this", *([UNSCANNED] if UNSCANNED in result else []), *(args.against or [])]:
        row = result[name]
        label = {"this": "this code", UNSCANNED: "no scan"}.get(name, name)
        print(f"capture(), {label:>12}: {row['cpu_per_s_median']:>6}/s CPU median of {result['rounds']} rounds of "
              f"{result['captures_per_round']} {result['workload']} calls ({', '.join(map(str, row['cpu_per_s']))}); "
              f"wall {row['wall_per_s_median']}/s")
    for other, ratio in result.get("ratio_cpu", {}).items():
        print(f"this code / {other}: {ratio:.3f} (CPU, rounds alternated in one run)")
    if "scan_cost_ratio" in result:
        print(f"capture with the scan costs {result['scan_cost_ratio']:.2f}x capture without it (CPU; goal <= 1.5 on --workload tokens)")
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    from commonkeep.bench import positive_int

    parser.add_argument("--captures", type=positive_int, default=2000, help="capture() calls in each round (default 2,000)")
    parser.add_argument("--rounds", type=positive_int, default=6, help="rounds per version, alternated (default 6)")
    parser.add_argument("--against", metavar="REV_OR_DIR", nargs="+",
                        help="also run these git revisions of this repository (or checkout folders) in the same rounds")
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="mixed",
                        help="mixed: generated memory text (default); fact: bench store's one sentence and tag; "
                             "tokens: public high-entropy data and ids, one in ten a secret known by its place")
    parser.add_argument("--no-baseline", action="store_true", help="do not run the unscanned baseline beside this code")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(run=run)
