"""The Memory tab's API, mounted by Hermes under ``/api/plugins/commonkeep-governance/``.

Hermes' dashboard guards every ``/api/`` route with its session token (sent as a header by the
SDK's ``fetchJSON``), which also stops cross-site posts. The root is the one this Hermes profile
uses (``memory.commonkeep.root``); the role is ``$COMMONKEEP_ROLE`` or ``memory.commonkeep.role``;
a role other than the writer role sees the queue read-only and its decisions are refused with
the reason.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from commonkeep.governance.writer import acting_role
from commonkeep.web import actions, views
from commonkeep.web.queue import Filters, Queue, stamp

router = APIRouter()
_QUEUES: dict[str, Queue] = {}
PAGE = 25


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



def inbox(page: int = 1, risk: str = "", agent: str = "", q: str = "", tag: str = "") -> dict[str, Any]:
    root, role = _where()
    w = actions.writer_for(root, role)
    pg = _queue(root).page(Filters.from_query({"page": page, "risk": risk, "agent": agent, "q": q, "tag": tag}), PAGE)
    recs = _queue(root).records() if any(c.get("matched_memory_ids") for c in pg.items) else {}
    items = [{"id": c["id"], "text": c.get("text", ""), "agent": (c.get("provenance") or {}).get("agent", ""),
              "trust": c.get("primary_trust_class"), "risk": c.get("poisoning_risk"),
              "why": c.get("poisoning_risk_reasons") or [], "match": c.get("match_kind"),
              "matches": [{"id": m, "statement": (recs.get(m) or {}).get("statement", "")} for m in c.get("matched_memory_ids") or []],
              "evidence": c.get("evidence_refs") or [], "tags": c.get("tags") or []} for c in pg.items]
    if pg.refreshing:
        _queue(root).refresh()  # after building the page, so the recompute does not delay it
    return {"root": str(root), "role": role, "writer_role": w.writer_role, "can_write": w.can_write,
            "read_only_reason": "" if w.can_write else w.why_read_only(root), "total": pg.total, "page": pg.page,
            "pages": pg.pages, "refreshing": pg.refreshing, "items": items, "stamp": stamp(root)}



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
        msg = actions.decide(root, role, str(body.get("action", "")), [str(i) for i in ids],
                             reason=str(body.get("reason") or ""), edit=str(body.get("edit") or ""))
    except actions.Refused as exc:
        return _refused(exc)
    return {"ok": True, "message": msg}


def _refused(exc: actions.Refused) -> JSONResponse:
    return JSONResponse({"ok": False, "detail": str(exc)}, status_code=exc.status)


def _writer(root: Any, role: str | None) -> None:
    w = actions.writer_for(root, role)
    if not w.can_write:
        raise actions.Refused("read-only: " + w.why_read_only(root), status=403)



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
    return {"ok": True, "lines": views.scrub_preview(root, rec, purge)}



def forget(body: dict[str, Any]) -> Any:
    root, role = _where()
    try:
        _writer(root, role)
        msg = actions.forget_record(root, role, str(body.get("id", "")), reason=str(body.get("reason") or ""),
                                    purge=bool(body.get("purge")))
    except actions.Refused as exc:
        return _refused(exc)
    return {"ok": True, "message": msg}


# plain calls, not decorators: the routes stay typed where FastAPI is not installed (mypy)
router.add_api_route("/inbox", inbox, methods=["GET"])
router.add_api_route("/stamp", current_stamp, methods=["GET"])
router.add_api_route("/decide", decide, methods=["POST"])
router.add_api_route("/patches", patches, methods=["GET"])
router.add_api_route("/apply", apply, methods=["POST"])
router.add_api_route("/records", records, methods=["GET"])
router.add_api_route("/forget-preview", forget_preview, methods=["GET"])
router.add_api_route("/forget", forget, methods=["POST"])
