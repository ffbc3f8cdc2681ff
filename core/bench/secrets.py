"""``commonkeep bench secrets``: the secret gate on a corpus of planted secrets and benign text.

For each kind: how many planted secrets the gate removed whole (no 8-character window of the
secret survives, ``corpus.survivors``), beside the same figure for the old detector (the
hand-written rules before issue 15, kept frozen in ``baseline.py``) and, when it is installed, for
Yelp's detect-secrets keyword, entropy and Basic-auth plugins; then the share of benign memory
texts each one changed. Data: ``--data FILE`` (JSON ``{"planted": [{"kind", "fields", "parts"}],
"benign": [text, ...]}``, as ``--write-corpus`` writes it); default, the generated corpus.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from commonkeep.bench import secrets_corpus as corpus
from commonkeep.errors import BadInput
from commonkeep.util.jsonout import print_json

Detector = Callable[[list[str]], list[str]]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", help="corpus file (JSON: planted and benign); default: the generated corpus")
    parser.add_argument("--planted", type=int, default=480, help="planted secrets to generate (default 480, 6 of each kind)")
    parser.add_argument("--benign", type=int, default=600, help="benign texts to generate (default 600)")
    parser.add_argument("--placed", type=int, default=4,
                        help="secrets of each kind known by its place, from bench/data/secrets_kinds.json (default 4)")
    parser.add_argument("--public", type=int, default=2400,
                        help="benign texts of public data and notes, from bench/data/secrets_benign.json (default 2400)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--benign-text", nargs="+", metavar="FILE",
                        help="use each line (20+ characters) of these text files as the benign texts instead")
    parser.add_argument("--benign-docstrings", metavar="DIR",
                        help="use the docstring sentences of the Python files under DIR (tests left out) as the benign texts")
    parser.add_argument("--write-corpus", metavar="FILE", help="write the generated corpus to FILE and stop")
    parser.add_argument("--notes-mb", type=float, default=0,
                        help="also write this many MB of daily notes made of the benign texts and count the lines "
                             "`doctor`'s secret scan flags (its [error] lines)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)


def load(path: str) -> tuple[list[corpus.Planted], list[str]]:
    """The planted items and benign texts of a corpus file; a clear error naming what is wrong."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadInput(f"cannot read the corpus {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise BadInput(f"{path} is not JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("planted"), list) or not isinstance(doc.get("benign"), list):
        raise BadInput(f"{path}: expected an object with lists 'planted' and 'benign'",
                       hint="commonkeep bench secrets --write-corpus FILE writes one")
    items = []
    for i, row in enumerate(doc["planted"]):
        ok = isinstance(row, dict) and isinstance(row.get("kind"), str)
        ok = ok and all(isinstance(x, list) and x and all(isinstance(s, str) and s for s in x)
                        for x in (row.get("fields"), row.get("parts")))
        if not ok:
            raise BadInput(f"{path}: planted[{i}] needs 'kind' (text), 'fields' and 'parts' (non-empty lists of text)")
        items.append(corpus.Planted(row["kind"], list(row["fields"]), list(row["parts"])))
    if not all(isinstance(t, str) for t in doc["benign"]):
        raise BadInput(f"{path}: 'benign' must be a list of texts")
    return items, list(doc["benign"])


def _ours(fields: list[str]) -> list[str]:
    from commonkeep.secrets import redact_obj

    out: list[str] = redact_obj(fields)
    return out


def _old(fields: list[str]) -> list[str]:
    from commonkeep.bench import secrets_baseline as baseline

    return [baseline.redact(f).text for f in fields]


def kingfisher_detector() -> Detector | None:
    """The maintained provider layer alone (``provider.py``): Kingfisher's built-in rules, each value
    found replaced; None when the package is not installed."""
    from commonkeep.secrets import provider

    if not provider.available():
        return None

    def run(fields: list[str]) -> list[str]:
        hits = provider.provider_values("\n".join(fields))
        out = []
        for text in fields:
            for value, _ in hits:
                text = text.replace(value, "[REDACTED]")
            out.append(text)
        return out

    return run


def detect_secrets_detector() -> Detector | None:
    """detect-secrets' keyword, Base64/Hex entropy and Basic-auth plugins, values replaced; None when
    the package is not installed. Lines are scanned as YAML, the file type on which its keyword
    plugin finds the most in prose (plain text finds nothing)."""
    try:
        from detect_secrets.plugins.basic_auth import BasicAuthDetector
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString
        from detect_secrets.plugins.keyword import KeywordDetector
        from detect_secrets.settings import transient_settings
    except ImportError:
        return None
    plugins = [KeywordDetector(), Base64HighEntropyString(limit=4.5), HexHighEntropyString(limit=3.0), BasicAuthDetector()]

    def run(fields: list[str]) -> list[str]:
        out = []
        with transient_settings({"plugins_used": []}):
            for text in fields:
                values = {s.secret_value for p in plugins for line in text.split("\n")
                          for s in p.analyze_line(filename="memory.yaml", line=line, line_number=1) if s.secret_value}
                for v in sorted(values, key=len, reverse=True):
                    text = text.replace(v, "[REDACTED]")
                out.append(text)
        return out

    return run


def measure(items: list[corpus.Planted], benign: list[str], detector: Detector) -> dict[str, Any]:
    """Per kind ``[removed, total]``, benign texts changed, and microseconds per text."""
    per: dict[str, list[int]] = {}
    start = time.perf_counter()
    for item in items:
        row = per.setdefault(item.kind, [0, 0])
        row[1] += 1
        if not corpus.survivors(item, "\n".join(detector(item.fields))):
            row[0] += 1
    changed = sum(1 for text in benign if detector([text]) != [text])
    spent = time.perf_counter() - start
    texts = sum(len(i.fields) for i in items) + len(benign)
    return {"kinds": per, "removed": sum(r[0] for r in per.values()), "planted": len(items),
            "benign_changed": changed, "benign": len(benign), "us_per_text": round(spent / max(texts, 1) * 1e6, 1)}


def doctor_lines(benign: list[str], megabytes: float, seed: int = 5) -> dict[str, Any]:
    """Write ``megabytes`` MB of daily notes (``- HH:MM text`` entries of the benign texts, in a seeded
    order, a text of several lines kept whole) and scan them as ``doctor`` does
    (``secrets.scan.scan_file``): how many lines it flags."""
    import random
    import tempfile

    from commonkeep.secrets.scan import scan_file

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="ck-bench-notes-") as tmp:
        path = Path(tmp) / "2026-12-04.md"
        size, n = 0, 0
        with path.open("w", encoding="utf-8") as fh:
            while size < megabytes * 1e6:
                row = f"- {rng.randrange(24):02d}:{rng.randrange(60):02d} {rng.choice(benign).strip()}\n"
                fh.write(row)
                size += len(row.encode("utf-8"))
                n += 1
        flagged = sum(1 for _ in scan_file(path))
    return {"mb": megabytes, "lines": n, "flagged": flagged}


def run(args: argparse.Namespace) -> int:
    if args.write_corpus:
        planted = [i.to_json() for i in corpus.planted(args.planted, args.seed) + corpus.placed(args.placed)]
        texts = corpus.benign(args.benign, args.seed + 4) + corpus.public_benign(args.public)
        doc = {"planted": planted, "benign": texts}
        Path(args.write_corpus).write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {len(planted)} planted secrets and {len(texts)} benign texts to {args.write_corpus}")
        return 0
    if args.data:
        items, benign = load(args.data)
        source = args.data
    else:
        items = corpus.planted(args.planted, args.seed) + corpus.placed(args.placed)
        benign = corpus.benign(args.benign, args.seed + 4) + corpus.public_benign(args.public)
        source = f"generated (seed {args.seed}) and bench/data/secrets_*.json templates"
    if args.benign_text:
        benign = []
        for name in args.benign_text:
            try:
                text = Path(name).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise BadInput(f"cannot read the benign text {name}: {exc}") from None
            benign += [line for line in text.splitlines() if len(line.strip()) >= 20]
        source += f"; benign: {len(benign)} lines of {len(args.benign_text)} file(s)"
    if args.benign_docstrings:
        from commonkeep.bench.docstrings import sentences

        benign = sentences(args.benign_docstrings)
        source += f"; benign: {len(benign)} docstring sentences under {args.benign_docstrings}"
    detectors: dict[str, Detector | None] = {"commonkeep": _ours, "old rules": _old, "kingfisher alone": kingfisher_detector(),
                                             "detect-secrets": detect_secrets_detector()}
    for d in detectors.values():  # loading rules (Kingfisher's compiled catalogue) is not a per-text cost
        if d is not None:
            d(["warm up sk-proj-" + "Ab1" * 12])
    results = {name: measure(items, benign, d) for name, d in detectors.items() if d is not None}
    notes = doctor_lines(benign, args.notes_mb) if args.notes_mb else None
    if args.json:
        print_json({"data": source, "results": results, "doctor_notes": notes,
                    "missing": [n for n, d in detectors.items() if d is None]})
        return 0
    names = list(results)
    print(f"secret gate on {len(items)} planted secrets of {len({i.kind for i in items})} kinds and "
          f"{len(benign)} benign texts ({source})")
    print("kind".ljust(26) + "".join(n.rjust(18) for n in names))
    for kind in sorted({i.kind for i in items}):
        print(kind.ljust(26) + "".join(f"{results[n]['kinds'][kind][0]}/{results[n]['kinds'][kind][1]}".rjust(18) for n in names))
    print("removed".ljust(26) + "".join(f"{results[n]['removed']}/{results[n]['planted']}".rjust(18) for n in names))
    print("kinds all removed".ljust(26) + "".join(
        f"{sum(r[0] == r[1] for r in results[n]['kinds'].values())}/{len(results[n]['kinds'])}".rjust(18) for n in names))
    print("benign changed".ljust(26) + "".join(
        f"{results[n]['benign_changed']}/{results[n]['benign']} ({100 * results[n]['benign_changed'] / max(results[n]['benign'], 1):.1f}%)".rjust(18)
        for n in names))
    print("µs per text".ljust(26) + "".join(f"{results[n]['us_per_text']}".rjust(18) for n in names))
    if notes is not None:
        print(f"doctor on {notes['mb']} MB of daily notes ({notes['lines']} lines of the benign texts): "
              f"{notes['flagged']} lines flagged as secrets")
    if "detect-secrets" not in results:
        print("detect-secrets is not installed: pip install 'detect-secrets>=1.5,<2' to compare with it")
    return 0
