"""``commonkeep doctor``: is this root healthy, and what exactly is wrong where.

Checks the root resolution, the layout, the curation settings (``config.json`` must keep
OmpKeep's own curator from applying what commonkeep holds for a person), every JSONL file (bad lines with file and line,
invalid records, duplicate ids, and every line of a tombstoned record still on disk with the
``commonkeep forget`` command that finishes its interrupted deletion), the quarantine,
leftover temp files of interrupted rewrites, and whatever plugins add (index drift, hosts).
Exit code 1 when any finding has severity ``error`` or ``warning``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from commonkeep.errors import EXIT_FINDINGS, EXIT_OK
from commonkeep.store.cli import root_of
from commonkeep.util.jsonout import print_json


def diagnose(root: str, rule: str = "", root_notes: tuple[str, ...] = (), *, plugins: bool = True) -> dict[str, Any]:
    """Run every check on ``root``; returns ``{root, rule, ok, findings, counts}``.

    ``root_notes`` are settings files the root resolution skipped (``RootChoice.notes``);
    ``plugins=False`` runs the store's own checks only (``commonkeep bench store``).
    """
    from pathlib import Path

    from commonkeep.patches.patch import finish_command, leftover_lines
    from commonkeep.store.core import Store
    from commonkeep.store.jsonl import read_jsonl

    store = Store(Path(root), warn=False, check=False)  # doctor lists folders that link outside; others refuse
    store.unreadable = {}  # one file that cannot be read is a finding, never the end of the report
    lay = store.layout
    findings: list[dict[str, Any]] = []

    def add(code: str, severity: str, message: str, **where: Any) -> None:
        findings.append({"code": code, "severity": severity, "message": message, **where})

    for note in root_notes:
        if note.startswith("$"):  # a root variable's value that is likely a mistake (``root._env_notes``)
            add("root_variable", "warning", note)
        else:
            add("root_settings_skipped", "warning", f"{note}; the root came from the next rule ({rule})")
    if not lay.memory_dir.is_dir():
        # which root each host uses comes before the hint, so nobody creates a second store by mistake
        hosts = [f for f in _plugin_findings(root) if f.get("kind") == "host_root"]
        findings.extend(hosts)
        elsewhere = [f for f in hosts if f["severity"] != "ok"]
        add("missing_layout", "error", f"{root} has no memory/ folder; " + (
            "a host uses another root (see above): check that one with `commonkeep doctor --root DIR`; "
            "`commonkeep init` would start a separate, empty store here" if elsewhere else "run `commonkeep init`"))
        return {"root": root, "rule": rule, "ok": False, "findings": findings, "counts": {}}
    for path in lay.jsonl_files():
        if not path.exists():
            add("missing_store_file", "warning", f"{lay.rel(path)} is missing; `commonkeep init` recreates it", file=lay.rel(path))
    from commonkeep.store.health import root_findings

    findings.extend(root_findings(lay))
    records = store.records_by_file()
    candidates = store.candidates()
    dead = store.tombstoned_ids()
    for path in (lay.profiles, lay.evidence, lay.reinforcement, lay.inquiries):
        store.read(path)  # bad lines in every store file, not only those the checks below use
    for rel, why in store.unreadable.items():
        add("unreadable_file", "error", f"{rel} cannot be read ({why}); its lines are left out of every check "
            "and every command that needs it fails until it is fixed", file=rel)
    for p in dict.fromkeys(store.problems):  # a file read twice (tombstones) reports its bad lines twice
        add("bad_line", "error", p.message, file=p.file, line=p.line)
    seen: dict[str, str] = {}
    for path, rows in records.items():
        for r in rows:
            if r["id"] in seen:
                add("duplicate_id", "warning", f"record {r['id']} appears in {seen[r['id']]} and {lay.rel(path)}", file=lay.rel(path))
            seen[r["id"]] = lay.rel(path)
    tombs = {str(t.get("deleted_record_id")): t for t in store.rows(lay.tombstones)} if dead else {}
    for left in leftover_lines(store):
        tomb = tombs.get(left.record_id, {})
        why = ("kept with status deleted, as OMP's own delete does" if left.status == "deleted"
               else "a deletion interrupted before the file was rewritten")
        add("tombstoned_in_active_store", "warning",
            f"{left.record_id} is tombstoned ({tomb.get('id', '?')}, {tomb.get('deletion_mode', '?')}) but its line is still here, "
            f"content included ({why}); finish the deletion with `{finish_command(left.record_id, tomb)}`",
            file=lay.rel(left.path), line=left.line, record_id=left.record_id)
    qread = read_jsonl(lay.quarantine)
    quarantined = qread.rows
    for b in qread.bad:  # never quarantined into itself: named, left for the user
        add("bad_line", "error", f"{b.error} (in the quarantine itself; fix or remove the line)", file=lay.rel(b.path), line=b.line_no)
    for q in quarantined:
        add("quarantined_line", "info", f"{q.get('file')}:{q.get('line')}: {q.get('error')} (kept in {lay.rel(lay.quarantine)})", file=q.get("file"), line=q.get("line"))
    if lay.config.is_file():
        try:
            json.loads(lay.config.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            add("config_invalid", "error",
                f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                "its settings (writer role, curation policy, injection mode) are ignored until it is fixed",
                file="config.json", line=exc.lineno)
        except (OSError, ValueError, RecursionError) as exc:
            add("config_invalid", "error", f"cannot be read ({exc}); its settings are ignored", file="config.json")
    from commonkeep.store.config_check import problems as config_problems

    for problem in config_problems(root):
        add("config_invalid", "error", problem.split(": ", 1)[1] + "; writer actions are refused until it is fixed",
            file="config.json")
    if not any(f["code"] == "config_invalid" for f in findings):
        from commonkeep.store.curators import curator_findings

        findings.extend(curator_findings(root))  # another curator (OmpKeep) could apply what commonkeep holds
    for patch_file in sorted(lay.patches_dir.glob("*.json")):
        try:
            doc = json.loads(patch_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            add("bad_patch_file", "error", f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                "`commonkeep patches` and `apply` cannot use it: fix it or move it out of patches/",
                file=lay.rel(patch_file), line=exc.lineno)
            continue
        except (OSError, ValueError, RecursionError) as exc:
            add("bad_patch_file", "error", f"cannot be read ({exc})", file=lay.rel(patch_file))
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("ops"), list):
            add("bad_patch_file", "error", "not a patch (a JSON object with an 'ops' list); fix it or move it out of patches/",
                file=lay.rel(patch_file))
    for tmp in lay.root.rglob(".*.tmp-*"):
        if ".tmp-gen" in tmp.name:
            continue  # a previous generation (see root_findings), not a leftover
        add("interrupted_rewrite", "info", f"leftover temp file {lay.rel(tmp)} from an interrupted rewrite; the original is intact, the temp file can be deleted", file=lay.rel(tmp))
    if plugins:
        findings.extend(_plugin_findings(root))
        from commonkeep.util.bytecode import finding

        slow = finding()  # an editable install in a shell that never writes bytecode
        if slow is not None:
            findings.append(slow)
    if any(f["code"] == "other_curator_may_apply" and f["severity"] == "warning" for f in findings):  # the OMP plugin's, said once
        findings = [f for f in findings if not (f["code"] == "other_curator_may_apply" and f["severity"] == "info")]
    findings.sort(key=lambda f: f.get("kind") != "host_root")  # which root each host uses, first
    counts = {
        "records": sum(len(v) for v in records.values()),
        "active": sum(1 for v in records.values() for r in v if r.get("status") == "active"),
        "candidates_new": sum(1 for c in candidates if c.get("status") == "new"),
        "tombstones": len(dead),
        "quarantined": len(quarantined),
    }
    ok = not any(f["severity"] in ("error", "warning") for f in findings)
    return {"root": root, "rule": rule, "ok": ok, "findings": findings, "counts": counts}


def _plugin_findings(root: str) -> list[dict[str, Any]]:
    try:
        from commonkeep.plugins import plugin_manager

        return plugin_manager().doctor_checks(root)
    except Exception as exc:
        return [{"code": "plugin_check_failed", "severity": "warning", "message": f"a plugin's doctor check failed: {exc}"}]


def run(args: argparse.Namespace) -> int:
    choice = root_of(args)
    if getattr(args, "redact", False) and (Path(choice.path) / "memory").is_dir():
        from commonkeep.recall.search.sync import drop_after_sweep
        from commonkeep.store import exitgate

        swept = exitgate.sweep(choice.path, reason="doctor --redact")
        for one in swept:
            print(f"redacted in place: {one.file}: {one.as_dict()['kinds']} (written by {exitgate.writer_of(one.file)}; "
                  "audit/log.jsonl)", file=sys.stderr if args.json else sys.stdout)
        if drop_after_sweep(choice.path, swept):
            print("dropped the search databases (they may hold the raw rows); the next search or `commonkeep reindex` "
                  "rebuilds them", file=sys.stderr if args.json else sys.stdout)
    report = diagnose(str(choice.path), choice.rule, choice.notes)
    if args.json:
        print_json(report)
    else:
        print(f"root: {report['root']}  (chosen by {report['rule']})")
        for key, value in report["counts"].items():
            print(f"  {key}: {value}")
        for f in report["findings"]:
            where = ""
            if f["code"] in ("bad_line", "bad_patch_file", "config_invalid", "tombstoned_in_active_store") and f.get("file"):
                where = f"{f['file']}:{f['line']}: " if f.get("line") else f"{f['file']}: "
            print(f"[{f['severity']}] {f['code']}: {where}{f['message']}")
        print("ok" if report["ok"] else "problems found")
    return EXIT_OK if report["ok"] else EXIT_FINDINGS


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable report")
    parser.add_argument("--redact", action="store_true",
                        help="first redact in place the secrets other programs wrote into the root (daily logs, "
                             "scratchpad, inbox, records, patches), one audit line per file")
    parser.set_defaults(run=run)
