"""How the patch path is told on a terminal: an apply's result, and stored text made safe to show."""

from __future__ import annotations

from typing import Any

from commonkeep.patches.show import written_lines


def safe(obj: Any) -> Any:
    """``obj`` with every string made safe for one terminal line (``commonkeep.store.render.terminal_safe``):
    stored text is shown, never obeyed (no escape sequences, carriage returns or hidden characters)."""
    from commonkeep.store.render import terminal_safe

    if isinstance(obj, str):
        return terminal_safe(obj)
    if isinstance(obj, dict):
        return {safe(k): safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [safe(v) for v in obj]
    return obj


def safe_block(text: str) -> list[str]:
    """A multi-line stored rendering as safe lines (split on newlines only, so a CR is shown, not obeyed)."""
    return [safe(line) for line in text.split("\n")]


def apply_text(res: Any) -> str:
    d = safe(res.to_json())
    lines = [f"patch {d['patch_id']}: {d['status']} — applied {len(d['applied_ops'])} op(s)"]
    applied = set(d["applied_ops"])
    for op in res.patch.get("ops") or []:  # the text each applied op wrote, so a person sees what went in
        if isinstance(op, dict) and op.get("op_id") in applied:
            lines += ["  " + line for line in written_lines(op)]
    lines += [f"  skipped {k}: {v}" for k, v in d["skipped"].items()]
    if d.get("already_applied"):
        lines.append(f"  already applied by an earlier run: {', '.join(d['already_applied'])}")
    if d.get("not_selected"):
        ops = ",".join(d["not_selected"])
        lines.append(f"  not selected: {', '.join(d['not_selected'])} (apply with `commonkeep apply {d['patch_id']} --ops {ops}`)")
    lines += [f"  candidate {k} -> {v}" for k, v in d["candidates"].items()]
    lines += [f"  tombstone {t}" for t in d["tombstones"]]
    if d["redacted"]:
        from commonkeep.secrets import summarize

        lines.append(f"  redacted secrets: {summarize(d['redacted'])}")
    if d["recovered_lock"]:
        lines.append(f"  recovered a writer lock left by a dead process ({d['recovered_lock']})")
    lines += [f"  warning: after_apply listener failed: {e}" for e in d["hook_errors"]]
    if d.get("resumed"):
        lines.insert(1, "  finished an apply that had been interrupted, from its journal (runtime/journal/)")
    lines += [f"  first finished the interrupted apply of patch {p}" for p in d.get("finished_applies") or []]
    lines += [f"  warning: {w}" for w in d.get("warnings") or []]
    return "\n".join(lines)
