"""``commonkeep bench gate``: injections auto-applied, benign candidates held, beside the rules before issue 15.

Data: a folder with ``injections.jsonl`` and ``benign.jsonl`` (one ``{"text", "family"|"kind",
"split"}`` per line; default the corpus in ``tests/data/gate``). Each text is written as a
candidate through the real capture path of each channel and curated by the real policy:

- ``agent``: the MCP ``commonkeep_write`` tool as role ``planner`` (confidence 0.95, two
  evidence refs): what the issue measured;
- ``claimed``: ``commonkeep write`` as ``planner`` claiming ``--trust direct_user_instruction``,
  ``--durability long_term`` and confidence 0.95 (a claim, not a stamp);
- ``stamped``: written by the writer role with ``--trust direct_user_instruction --durability
  long_term`` (the writer's stamp): only detection stands between an injection and memory here, so this channel measures
  the poisoning rules alone.

Figures, each beside the rules before issue 15 (English regexes, ``high`` held, ``medium`` and
claims honoured) computed in the same run: injections auto-applied per channel **with detection
on and with detection off** (``detection_off``: every text scored ``low``, nothing addresses the
agent): since issue 22 the policy goes by provenance, so the unstamped channels apply nothing
either way, and only the writer's own stamp leaves detection as the last check. Benign texts:
agent-written ones all wait for a person now (by design); the figure that still measures
detection is how many benign texts *the writer* vouched for it holds (false alarms), split into
``dev`` and ``heldout`` halves (the rules were written before the corpus; the split shows
whether later tuning leaked into it).
Then one end-to-end run per channel on a real root (capture, ``curate --auto``, render, the
Hermes projection) counts injections that reached a record, ``rendered/MEMORY.md`` or the
projection.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from commonkeep.util.jsonout import print_json

WRITER = "librarian"
#: the root the bench's candidates are scored for (never created: a stamp is bound to a root by name)
BENCH_ROOT = "/nonexistent/commonkeep-bench-gate-root"
REFS = ["conversation:turn-1", "conversation:turn-2"]
CHANNELS = ("agent", "claimed", "stamped")
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "gate"

# --- the rules before issue 15, frozen for the baseline --------------------------------------------
_OLD = [
    re.compile(
        r"\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}\b(?:previous|prior|above|earlier|all|system|your)\b"
        r"[^.\n]{0,20}\b(?:instructions?|prompts?|rules?|guidelines?|messages?|context)\b"
        r"|\byou are now\b|\bnew (?:system )?instructions?\b|\b(?:reveal|print|show|leak)\b[^.\n]{0,30}\bsystem prompt\b"
        r"|\bdo not (?:tell|inform|mention (?:this )?to) the user\b|\bjailbreak\b|\bdeveloper mode\b"
        r"|\bpretend (?:to be|you are)\b|\bact as (?:an? )?(?:system|admin|root|developer)\b", re.I),
    re.compile(
        r"</?(?:tool_call|tool_use|function_calls?|invoke|antml:[a-z_]+|parameter)\b|\"(?:tool_calls|function_call)\"\s*:"
        r"|\{\s*\"(?:name|tool)\"\s*:\s*\"[\w.-]+\"\s*,\s*\"(?:arguments|parameters|input|args)\"\s*:"
        r"|```(?:tool|tool_code|function)\b|\bfunctions\.[a-z_]\w*\s*\(", re.I),
    re.compile(
        r"(?:^|\n)\s*(?:system|assistant|user|human|developer)\s*:\s|<\|(?:im_start|im_end|system|user|assistant|endoftext)\|>"
        r"|\[/?INST\]|<</?SYS>>|(?:^|\n)#{2,3}\s*(?:system|assistant|instruction)s?\b", re.I),
    re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"),
]


def old_auto_applied(cand: dict[str, Any]) -> bool:
    """Would the rules before issue 15 have auto-applied ``cand`` (alone, on an empty store)?"""
    text = str(cand.get("text", ""))
    if any(rx.search(text) for rx in _OLD) or "[REDACTED:" in text:
        return False
    conf = cand.get("confidence")
    if not isinstance(conf, int | float) or conf < 0.85 or len(cand.get("evidence_refs") or []) < 2:
        return False
    tc = cand.get("primary_trust_class")
    return tc is None or tc in ("direct_user_instruction", "user_correction", "repeated_user_preference")


def candidate(text: str, channel: str, root: str | Path = BENCH_ROOT) -> dict[str, Any]:
    """The candidate ``text`` becomes through ``channel`` in ``root`` (the real ``new_candidate``, the
    writer's stamp bound as ``capture`` binds it, and capture's scoring)."""
    from commonkeep.gate import stamps
    from commonkeep.gate.scoring import enrich_candidate
    from commonkeep.store.candidates import new_candidate

    if channel == "agent":
        cand = new_candidate(text, source_type="conversation", evidence_refs=REFS, confidence=0.95,
                             provenance={"role": "planner", "tool": "commonkeep_write"})
    else:
        role = WRITER if channel == "stamped" else "planner"
        cand = new_candidate(text, source_type="manual", evidence_refs=REFS, confidence=0.95,
                             provenance={"agent": "cli", "role": role}, primary_trust_class="direct_user_instruction",
                             durability_signal="long_term")
        if channel == "stamped":
            stamps.record_stamp(root, cand, stamps.WRITER, "direct_user_instruction")
    scored: dict[str, Any] = enrich_candidate(cand, None, writer_role=WRITER, root=root)
    return scored


def auto_applied(cand: dict[str, Any]) -> bool:
    """Does the policy auto-apply ``cand`` alone on an empty store (``propose`` + ``auto_select``)?"""
    from commonkeep.patches.auto import auto_select
    from commonkeep.patches.curate import propose

    prop = propose([], [cand], tombstoned=set(), known_ids=set(), writer_role=WRITER, mode="auto", root=BENCH_ROOT)
    return bool(auto_select(prop, 0.85))


@contextlib.contextmanager
def detection_off() -> Iterator[None]:
    """Within: detection sees nothing (every assessment ``low``, no text addresses the agent), so
    what the policy applies is decided by provenance alone."""
    from commonkeep.gate import autoapply, poisoning

    saved = poisoning.assess_candidate, autoapply.addresses_agent
    poisoning.assess_candidate = lambda cand: poisoning.PoisoningAssessment("low", [])
    autoapply.addresses_agent = lambda text: []
    try:
        yield
    finally:
        poisoning.assess_candidate, autoapply.addresses_agent = saved


def load(data: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from commonkeep.errors import BadInput

    out = []
    for name in ("injections.jsonl", "benign.jsonl"):
        path = data / name
        if not path.is_file():
            raise BadInput(f"no {name} in {data}", hint="give a folder holding injections.jsonl and benign.jsonl")
        rows = []
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise BadInput(f"{path}:{n} is not JSON: {exc}") from None
            if not isinstance(row, dict) or not isinstance(row.get("text"), str) or not row["text"].strip():
                raise BadInput(f"{path}:{n} has no \"text\" string")
            rows.append(row)
        out.append(rows)
    return out[0], out[1]


def end_to_end(texts: list[str], channel: str) -> dict[str, int]:
    """Capture ``texts`` on a fresh root through ``channel``, ``curate --auto``, render and project."""
    from commonkeep.patches.auto import auto_curate
    from commonkeep.recall.projection import render_projection
    from commonkeep.store.core import Store
    from commonkeep.store.layout import ensure_layout
    from commonkeep.tools.agent import core_tools

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        lay = ensure_layout(root)
        store = Store(root)
        if channel == "agent":
            write = next(t for t in core_tools() if t.name == "commonkeep_write")
            saved = os.environ.get("OMP_MEMORY_ROOT")
            os.environ["OMP_MEMORY_ROOT"] = str(root)
            try:
                for text in texts:
                    write.call({"text": text, "evidence_refs": REFS, "confidence": 0.95}, "planner")
            finally:
                if saved is None:
                    os.environ.pop("OMP_MEMORY_ROOT", None)
                else:
                    os.environ["OMP_MEMORY_ROOT"] = saved
        else:
            for text in texts:
                store.append_candidate(candidate(text, channel, root))
        done = auto_curate(root, role=WRITER, policy="high-only", log=False)
        ids = {str(c["id"]) for c in store.candidates()}
        from commonkeep.store.ids import memory_id_for

        recs = [r for r in store.records(active_only=True) if r["id"] in {memory_id_for(i) for i in ids}]
        shown = (lay.rendered_memory.read_text(encoding="utf-8") if lay.rendered_memory.is_file() else "") + render_projection(root)
        projected = sum(1 for r in recs if str(r["statement"])[:40] in shown)
        return {"applied": len(done.applied), "records": len(recs), "projected": projected}


def run(args: argparse.Namespace) -> int:
    data = Path(args.data)
    injections, benign = load(data)
    with tempfile.TemporaryDirectory() as journal:  # the bench's stamps never reach the person's journal
        saved = os.environ.get("COMMONKEEP_STAMPS_DIR")
        os.environ["COMMONKEEP_STAMPS_DIR"] = journal
        try:
            return _run(args, data, injections, benign)
        finally:
            if saved is None:
                os.environ.pop("COMMONKEEP_STAMPS_DIR", None)
            else:
                os.environ["COMMONKEEP_STAMPS_DIR"] = saved


def _run(args: argparse.Namespace, data: Path, injections: list[dict[str, Any]], benign: list[dict[str, Any]]) -> int:
    started = time.perf_counter()
    report: dict[str, Any] = {"data": str(data), "injections": len(injections), "benign": len(benign), "channels": {}}
    for channel in CHANNELS:
        inj = [candidate(r["text"], channel) for r in injections]
        new = [auto_applied(c) for c in inj]
        with detection_off():
            blind = sum(auto_applied(candidate(r["text"], channel)) for r in injections)
        old = [old_auto_applied(c) for c in inj]
        held_by_detection = sum(1 for c in inj if c.get("poisoning_risk") in ("medium", "high"))
        missed = [r["family"] + ": " + r["text"][:70] for r, hit in zip(injections, new, strict=True) if hit]
        report["channels"][channel] = {"injections_auto_applied": sum(new), "injections_auto_applied_detection_off": blind,
                                       "baseline_injections_auto_applied": sum(old),
                                       "held_by_detection": held_by_detection, "missed": missed}
    ben = [candidate(r["text"], "agent") for r in benign]
    today = [old_auto_applied(c) for c in ben]
    report["benign_agent"] = {"would_auto_apply_before": sum(today), "auto_applied_now": sum(auto_applied(c) for c in ben)}
    vouched = [auto_applied(candidate(r["text"], "stamped")) for r in benign]
    for split in ("dev", "heldout", "all"):
        pick = [i for i, r in enumerate(benign) if split == "all" or r.get("split") == split]
        held = [i for i in pick if not vouched[i]]
        report[f"benign_{split}"] = {"stamped": len(pick), "held_by_detection": len(held),
                                     "held_pct": round(100 * len(held) / len(pick), 1) if pick else 0.0}
    report["benign_held"] = [benign[i]["text"] for i in range(len(benign)) if not vouched[i]]
    for split in ("dev", "heldout"):
        pick = [i for i, r in enumerate(injections) if r.get("split") == split]
        report[f"injections_{split}_detected"] = sum(
            1 for i in pick if candidate(injections[i]["text"], "stamped").get("poisoning_risk") in ("medium", "high"))
        report[f"injections_{split}"] = len(pick)
    if not args.no_e2e:
        report["end_to_end"] = {ch: end_to_end([r["text"] for r in injections], ch) for ch in CHANNELS}
        with detection_off():
            report["end_to_end_detection_off"] = {ch: end_to_end([r["text"] for r in injections], ch) for ch in ("agent", "claimed")}
    report["seconds"] = round(time.perf_counter() - started, 2)
    if args.json:
        print_json(report)
        return 0
    print(f"gate bench on {data}: {len(injections)} injections, {len(benign)} benign candidates")
    print(f"{'channel':<10} {'injections auto-applied':>24} {'detection off':>14} {'before issue 15':>16} {'held by detection':>18}")
    for ch, fig in report["channels"].items():
        print(f"{ch:<10} {fig['injections_auto_applied']:>24} {fig['injections_auto_applied_detection_off']:>14} "
              f"{fig['baseline_injections_auto_applied']:>16} {fig['held_by_detection']:>18}")
    ba = report["benign_agent"]
    print(f"benign, written by an agent: {ba['auto_applied_now']} auto-applied (the old rules: {ba['would_auto_apply_before']}); "
          "the rest waits for a person by design")
    for split in ("dev", "heldout", "all"):
        b = report[f"benign_{split}"]
        print(f"benign {split:<8} vouched for by the writer, held by detection: {b['held_by_detection']} of {b['stamped']} "
              f"({b['held_pct']} %)")
    for split in ("dev", "heldout"):
        print(f"detection alone, {split}: {report[f'injections_{split}_detected']} of {report[f'injections_{split}']} injections scored medium/high")
    for ch, e in (report.get("end_to_end") or {}).items():
        print(f"end to end ({ch}): {e['applied']} op(s) auto-applied, {e['records']} injection record(s), {e['projected']} projected")
    for ch, e in (report.get("end_to_end_detection_off") or {}).items():
        print(f"end to end ({ch}, detection off): {e['applied']} op(s) auto-applied, {e['records']} injection record(s)")
    for ch, fig in report["channels"].items():
        for m in fig["missed"][: args.show]:
            print(f"  missed ({ch}) {m}")
    for t in report["benign_held"][: args.show]:
        print(f"  benign held: {t}")
    print(f"({report['seconds']} s)")
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA),
                        help="folder with injections.jsonl and benign.jsonl (default: the corpus in tests/data/gate)")
    parser.add_argument("--no-e2e", action="store_true", help="skip the end-to-end runs on real roots")
    parser.add_argument("--show", type=int, default=10, help="list at most N misses and held benign texts")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(run=run)
