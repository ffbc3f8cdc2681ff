"""The Memory tab's API, mounted by Hermes under ``/api/plugins/commonkeep-governance/``.

Hermes' dashboard guards every ``/api/`` route with its session token (sent as a header by the
SDK's ``fetchJSON``), which also stops cross-site posts. A request that changes something and comes
from a process inside an agent (its shell, with the token in hand) is refused (``not_from_an_agent``). The root is the one this Hermes profile
uses (``memory.commonkeep.root``); the role is ``$COMMONKEEP_ROLE`` or ``memory.commonkeep.role``;
a role other than the writer role sees the queue read-only and its decisions are refused with
the reason.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse

from commonkeep.gate.writer import acting_role
from commonkeep.patches.forget import REASONS
from commonkeep.web import actions, decisions, flow, views
from commonkeep.web.fingerprint import stamp
from commonkeep.web.queue import Queue


def not_from_an_agent(request: Request) -> None:
    """A request that changes something is a person's decision: refused when the process that sent it
    runs inside an agent (``commonkeep.gate.peer``; the tab's decisions run in Hermes' own process)."""
    if request.method in ("GET", "HEAD"):
        return
    from commonkeep.gate.peer import refusal

    why = refusal(request.method, request.scope.get("client"), request.scope.get("server"))
    if why is not None:
        raise HTTPException(403, why)


router = APIRouter(dependencies=[Depends(not_from_an_agent)])
_QUEUES: dict[str, Queue] = {}
PAGE = 25
FORGET_REASONS = REASONS  # the reasons `commonkeep forget` takes


def _where() -> tuple[Any, str | None]:
    from commonkeep_hermes.settings import current_profile

    profile = current_profile()
    root, _rule = profile.shared_root()
    return root, acting_role(None, host_role=profile.configured_role())


def _queue(root: Any) -> Queue:
    key = str(root)
    if key not in _QUEUES:
        _QUEUES[key] = Queue(root)
    return _QUEUES[key]



def inbox(page: int = 1, risk: str = "", agent: str = "", q: str = "", tag: str = "", session: str = "",
          sort: str = "oldest") -> dict[str, Any]:
    """A page of the queue in one view (the same filters, session and sort as ``serve``'s inbox)."""
    root, role = _where()
    w = actions.writer_for(root, role)
    queue = _queue(root)
    view = flow.View.from_query({"risk": risk, "agent": agent, "q": q, "tag": tag, "session": session, "sort": sort})
    rows, facets, refreshing = flow.view_rows(queue, view)
    pages = max(1, -(-len(rows) // PAGE))
    n = min(max(1, page), pages)
    shown = rows[(n - 1) * PAGE: n * PAGE]
    recs = queue.records() if any(c.get("matched_memory_ids") for c in shown) else {}
    items = [{"id": c["id"], "text": c.get("text", ""), "agent": (c.get("provenance") or {}).get("agent", ""),
              "session": flow.session_of(c), "created_at": c.get("created_at"),
              "trust": c.get("primary_trust_class"), "risk": c.get("poisoning_risk"),
              "why": [flow.plain_reason(r) for r in c.get("poisoning_risk_reasons") or []],
              "match": flow.PLAIN_MATCHES.get(str(c.get("match_kind")), c.get("match_kind")) if c.get("match_kind") != "new" else "",
              "kind": c.get("match_kind"), "asks_twice": flow.asks_twice(c), "secrets_removed": flow.secrets_removed(c),
              "matches": [{"id": m, "statement": (recs.get(m) or {}).get("statement", "")} for m in c.get("matched_memory_ids") or []],
              "evidence": c.get("evidence_refs") or [], "tags": c.get("tags") or []} for c in shown]
    if refreshing:
        queue.refresh()  # after building the page, so the recompute does not delay it
    return {"root": str(root), "role": role, "writer_role": w.writer_role, "can_write": w.can_write,
            "read_only_reason": "" if w.can_write else _read_only(w, root), "total": len(rows), "page": n,
            "pages": pages, "refreshing": refreshing, "items": items, "stamp": stamp(root),
            "facets": {"agents": facets.agents, "risks": facets.risks, "sessions": facets.sessions},
            "sorts": flow.SORTS, "forget_reasons": list(FORGET_REASONS)}


def candidate(id: str) -> Any:  # noqa: A002 - the query parameter's name
    """What approving one pending candidate does: its ops, each with a before/after diff."""
    root, _role = _where()
    item = _queue(root).item(id) if len(id) <= views.MAX_ID_CHARS else None
    if item is None:
        return JSONResponse({"ok": False, "detail": f"{id} is no longer pending (decided, or not in this inbox)."}, status_code=404)
    ops = [{"op": o.get("op"), "target_id": o.get("target_id"), "risk": o.get("risk"), "reason": o.get("reason"),
            "diff": [[k, line] for k, line in views.diff(b, a)]} for o, (b, a) in zip(item.ops, item.before_after, strict=False)]
    return {"ok": True, "id": id, "below_gate": item.below_gate, "ops": ops}


def current_stamp() -> dict[str, str]:
    root, _role = _where()
    return {"stamp": stamp(root)}



def decide(body: dict[str, Any]) -> Any:
    root, role = _where()
    ids = body.get("ids")
    try:
        if not isinstance(ids, list):
            raise actions.Refused("ids must be a list of candidate ids")
        _writer(root, role)
        action, _, choice = str(body.get("action", "")).partition(":")
        reason = str(body.get("reason") or "").strip()
        if action == "reject" and not reason:
            raise actions.Refused("To reject, say why in the reason box (for example: not durable). Nothing was rejected.")
        picked = body.get("choices")
        per = {str(k): str(v) for k, v in picked.items()} if isinstance(picked, dict) else None
        # the decided candidates only (scored), never every pending one: the same decision as the CLI's and the web app's
        pending = _queue(root).pending_rows([str(i) for i in ids])
        msg = decisions.decide(root, role, action, [str(i) for i in ids], reason=reason, edit=str(body.get("edit") or ""),
                               choice=choice or str(body.get("choice") or ""), pending=pending, choices=per,
                               conflict_choice=str(body.get("conflict_choice") or ""))
    except actions.Refused as exc:
        return _refused(exc)
    return {"ok": True, "message": msg}


def _refused(exc: actions.Refused) -> JSONResponse:
    from commonkeep.web.app import plain_error

    return JSONResponse({"ok": False, "detail": plain_error(exc)}, status_code=exc.status)


def _writer(root: Any, role: str | None) -> None:
    w = actions.writer_for(root, role)
    if not w.can_write:
        raise actions.Refused("read-only: " + _read_only(w, root), status=403)


def _read_only(w: actions.Writer, root: Any) -> str:
    """Why the tab cannot decide, in plain words (Hermes acts as $COMMONKEEP_ROLE or memory.commonkeep.role)."""
    why = str(w.why_read_only(root)).split("\n  hint:", 1)[0]
    return f"{why} To decide here, run Hermes' dashboard with COMMONKEEP_ROLE={w.writer_role}."



def patches() -> dict[str, Any]:
    """Patches still waiting (proposed or partly applied), each op with its before/after diff."""
    root, _role = _where()
    recs = _queue(root).records()
    out = []
    for p in views.read_patches(root):
        if p.get("status") not in ("proposed", "partially_applied"):
            continue
        ops = [{"op_id": v["op"].get("op_id"), "op": v["op"].get("op"), "risk": v["op"].get("risk"),
                "selected": bool(v["op"].get("default_selected")), "applied": v["applied"],
                "diff": [[k, line] for k, line in v["diff"]]} for v in views.op_views(p, recs)]
        out.append({"patch_id": p.get("patch_id"), "status": p.get("status"), "generated_by": p.get("generated_by"),
                    "created_at": p.get("created_at"), "summary": p.get("summary"), "ops": ops})
    return {"patches": out}



def apply(body: dict[str, Any]) -> Any:
    root, role = _where()
    try:
        _writer(root, role)
        ops = body.get("op_ids")
        if not isinstance(ops, list):
            raise actions.Refused("op_ids must be a list of op ids")
        msg = actions.apply_ops(root, role, str(body.get("patch_id", "")), [str(o) for o in ops])
    except actions.Refused as exc:
        return _refused(exc)
    return {"ok": True, "message": msg}



def records(q: str = "") -> dict[str, Any]:
    root, _role = _where()
    rows, _layers, _projects = views.memory(list(_queue(root).records().values()), q=q[:200])
    keep = ("id", "layer", "project", "status", "statement")
    return {"total": len(rows), "records": [{k: r.get(k) for k in keep} for r in rows[:100]],
            "tombstones": views.tombstones(root)}



def forget_preview(id: str, purge: bool = False) -> Any:  # noqa: A002 - the query parameter's name
    root, _role = _where()
    rec = _queue(root).records().get(id)
    if rec is None:
        return JSONResponse({"ok": False, "detail": f"no record {id}"}, status_code=404)
    return {"ok": True, "lines": views.scrub_preview(root, rec, purge, how_to_purge="use “Forget and purge…” to scrub them"),
            "reasons": list(FORGET_REASONS)}



def forget(body: dict[str, Any]) -> Any:
    root, role = _where()
    try:
        _writer(root, role)
        reason = str(body.get("reason") or "")
        if reason not in FORGET_REASONS:
            raise actions.Refused(f"Choose why it is forgotten: one of {', '.join(FORGET_REASONS)}. Nothing was forgotten.")
        msg = actions.forget_record(root, role, str(body.get("id", "")), reason=reason, purge=bool(body.get("purge")))
    except actions.Refused as exc:
        return _refused(exc)
    return {"ok": True, "message": msg}


# plain calls, not decorators: the routes stay typed where FastAPI is not installed (mypy)
router.add_api_route("/inbox", inbox, methods=["GET"])
router.add_api_route("/candidate", candidate, methods=["GET"])
router.add_api_route("/stamp", current_stamp, methods=["GET"])
router.add_api_route("/decide", decide, methods=["POST"])
router.add_api_route("/patches", patches, methods=["GET"])
router.add_api_route("/apply", apply, methods=["POST"])
router.add_api_route("/records", records, methods=["GET"])
router.add_api_route("/forget-preview", forget_preview, methods=["GET"])
router.add_api_route("/forget", forget, methods=["POST"])
