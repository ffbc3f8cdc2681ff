"""`commonkeep review` in a terminal: the queue printed item by item, and the one-by-one prompt."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any


def print_item(item: Any) -> None:
    """One queue item as `review` prints it: the text, where it came from, risk, and before/after."""
    from commonkeep.patches.report import safe as _safe
    from commonkeep.patches.report import safe_block as _safe_block

    raw = item.to_json()
    d = _safe({k: v for k, v in raw.items() if k != "before_after"})
    d["before_after"] = [{k: _safe_block(v) for k, v in ba.items()} for ba in raw["before_after"]]
    prov = d["provenance"] or {}
    src = d["source"] or {}
    print(f"== {d['id']}" + ("   (below the curator's gate)" if d["below_gate"] else ""))
    print(f"   {d['text']}")
    who = ", ".join(f"{k} {v}" for k, v in prov.items() if k in ("agent", "role", "host", "session_id") and v)
    print(f"   from {src.get('type')} {src.get('ref')}" + (f" cwd {src['cwd']}" if src.get("cwd") else "")
          + (f"; by {who}" if who else "") + f"; captured {d['created_at']}")
    from commonkeep.reviews import plainwords as say

    print(f"   source: {say.trust_words(d['trust'])}; writer's confidence: {say.confidence_words(d['confidence'])}")
    print(f"   curator: {say.worth_words(d['worth']['decision'], d['worth']['score'])}")
    risk = d["poisoning_risk"] or "low"
    print(f"   risk of a misleading memory: {risk.upper() if risk == 'high' else risk}"
          + (f" ({'; '.join(say.reason_words(r) for r in d['poisoning_risk_reasons'])})" if d["poisoning_risk_reasons"] else ""))
    print(f"   compared with memory: {say.match_words(d['match_kind'], d['matched_memory_ids'])}")
    for op, ba in zip(d["ops"], d["before_after"], strict=True):
        print(f"   -> {op['op']} {op['target_id'] or ''} (risk {op['risk']})" + (f": {op['reason']}" if op["reason"] else ""))
        print("      before:\n" + "\n".join("        " + line for line in ba["before"]))
        print("      after:\n" + "\n".join("        " + line for line in ba["after"]))


def _items(root: str) -> Iterator[Any]:
    """The review items of the ``new`` candidates, oldest first, each planned when it is reached
    (``decide.plan``, as the web app's queue does): the first is asked about at once, not after
    the whole queue is curated (10,000 pending: about 5 s)."""
    from commonkeep.gate.scoring import memory_worth
    from commonkeep.reviews.decide import load_context, plan
    from commonkeep.reviews.review import item_of
    from commonkeep.secrets import redacted_kinds
    from commonkeep.store.core import Store

    pending = Store(root, warn=False).candidates(status="new")
    if not pending:
        return
    ctx = load_context(root)
    for cand in pending:
        item = item_of(plan(ctx, cand), ctx.by_id)
        text = str(item.candidate["text"])  # the curator's worth, as the queue shows it (``review.pending``)
        worth = memory_worth(text, evidence_count=len(item.candidate.get("evidence_refs") or []),
                             secret_kinds=redacted_kinds(text))
        item.candidate.setdefault("worth_decision", worth.decision)
        item.candidate.setdefault("worth_score", worth.score)
        yield item


def list_first(root: str, limit: int, as_json: Callable[[list[Any]], None] | None) -> int:
    """``review --list --limit N``: the first ``limit`` pending candidates, oldest first, planned one by
    one (as the terminal review and the web app do), and how many more wait; ``as_json`` prints the
    items' JSON instead."""
    from itertools import islice

    from commonkeep.store.core import Store

    total = len(Store(root, warn=False).candidates(status="new"))
    items = list(islice(_items(root), limit))
    if as_json is not None:
        as_json([i.to_json() for i in items])
        return 0
    if not items:
        print("review queue empty: no new candidates")
        return 0
    for item in items:
        print_item(item)
    more = total - len(items)
    print(f"{len(items)} of {total} pending" + (f" shown; {more} more (--limit 0 lists all)" if more > 0 else "")
          + ". Decide with --approve ID / --reject ID --reason R, or run `commonkeep review` in a terminal.")
    return 0


def interactive(root: str, role: str | None) -> int:
    """Plain `commonkeep review` in a terminal: ask about each candidate in turn."""
    from commonkeep.patches.report import apply_text as _apply_text
    from commonkeep.reviews.review import approve, reject

    approved: list[str] = []
    edits: dict[str, str] = {}
    rejected: dict[str, str] = {}
    seen = 0
    for item in _items(root):
        seen += 1
        print_item(item)
        while True:
            try:
                answer = input("   [a]pprove [r]eject [e]dit [s]kip [q]uit > ").strip().lower()
            except EOFError:
                answer = "q"
            if answer in ("a", "approve"):
                approved.append(item.candidate["id"])
            elif answer in ("r", "reject"):
                rejected[item.candidate["id"]] = input("   reason > ").strip() or "rejected in review"
            elif answer in ("e", "edit"):
                text = input("   new statement > ").strip()
                if not text:
                    print("   empty statement; not changed")
                    continue
                edits[item.candidate["id"]] = text
                approved.append(item.candidate["id"])
            elif answer not in ("s", "skip", "q", "quit"):
                print("   please answer a, r, e, s or q")
                continue
            break
        if answer in ("q", "quit"):
            break
    if not seen:
        print("review queue empty: no new candidates")
        return 0
    if approved:
        res = approve(root, approved, role=role, edits=edits)
        print(_apply_text(res))
    for cid, why in rejected.items():
        print(_apply_text(reject(root, [cid], reason=why, role=role)))
    if not approved and not rejected:
        print("nothing decided; the queue is unchanged")
    return 0
