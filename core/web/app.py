"""``commonkeep serve``'s web app: Starlette routes rendering Jinja2 templates (autoescaped).

Pages: Inbox (the review queue, filtered, searched, paginated), a candidate with its matches,
ops and decisions, Patches (ops as diffs; apply the selected ones), Memory (records, search,
history, forget/purge with a confirmation), Wiki, Health. Every write goes through
:mod:`commonkeep.web.actions`, i.e. the governance functions the CLI calls. ``/api/stamp`` lets
the page script notice a store change (another agent wrote a candidate) and refresh in place.

Pages are plain functions, which Starlette runs in its thread pool, and decisions run there too:
a slow read or write never blocks the server's event loop (the live-update polls keep answering).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from markupsafe import Markup
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from commonkeep.patches.forget import REASONS
from commonkeep.store.backlog import ago, backlog, write_digest
from commonkeep.web import actions, decisions, flow, views
from commonkeep.web import wiki as wiki_view
from commonkeep.web.filters import PAGE_SIZE, RISKS, STATUSES
from commonkeep.web.fingerprint import stamp
from commonkeep.web.queue import Queue
from commonkeep.web.security import Guard, Keys

HERE = Path(__file__).parent
MEMORY_PAGE = 100
FORGET_REASONS = REASONS  # the reasons `commonkeep forget` takes


@dataclass
class Settings:
    """One server run: the root it serves, the role it acts as, its wiki, its tokens."""

    root: Path
    role: str | None
    keys: Keys
    wiki: Path | None = None
    host: str = "127.0.0.1"
    port: int = 0


class Web:
    def __init__(self, settings: Settings) -> None:
        self.s = settings
        self.queue = Queue(settings.root)
        self.writer = actions.writer_for(settings.root, settings.role)
        self.templates = Jinja2Templates(directory=str(HERE / "templates"))
        self.templates.env.filters["ago"] = ago  # "3 h ago", the ISO time in the title attribute
        self.templates.env.finalize = self._shown

    def _shown(self, value: Any) -> Any:
        """Every value a template prints passes the exit gate (an inbox line OmpKeep wrote, a patch
        or record another program wrote never passed capture); the server's own tokens stay."""
        if not isinstance(value, str) or isinstance(value, Markup) or len(value) < 8:
            return value
        from commonkeep.store import exitgate

        own = [k for k in (self.s.keys.csrf, self.s.keys.token) if k in value]
        for i, key in enumerate(own):
            value = value.replace(key, f"\x00{i}\x00")
        value = exitgate.text(value)
        for i, key in enumerate(own):
            value = value.replace(f"\x00{i}\x00", key)
        return value

    # -- helpers ------------------------------------------------------------------------
    def page(self, request: Request, name: str, status: int = 200, **ctx: Any) -> Response:
        base = {"csrf": self.s.keys.csrf, "can_write": self.writer.can_write, "role": self.writer.role,
                "writer_role": self.writer.writer_role, "root": str(self.s.root),
                "read_only_reason": "" if self.writer.can_write else read_only_words(self.writer, self.s.root),
                "msg": request.query_params.get("msg", "")[:2000], "err": request.query_params.get("err", "")[:2000],
                "undo": request.query_params.get("undo", "")[:4000], "here_qs": _here_qs(request), "nav": name.split(".")[0],
                "stamp": stamp(self.s.root), "waiting": backlog(self.s.root).count}
        return self.templates.TemplateResponse(request, name, {**base, **ctx}, status_code=status)

    async def form(self, request: Request) -> Any:
        form = await request.form()
        given = form.get("csrf") or request.headers.get("x-csrf-token")
        if not self.s.keys.csrf_ok(str(given) if given is not None else None):
            raise _Denied("403: the form's CSRF token is missing or wrong; reload the page and try again", 403)
        return form

    def refused(self, request: Request, exc: Exception, back: str) -> Response:
        status = getattr(exc, "status", 400)
        return self.page(request, "error.html", status=status, error=plain_error(exc), back=back)

    def need_writer(self) -> None:
        if not self.writer.can_write:
            raise actions.Refused("this server is read-only: " + read_only_words(self.writer, self.s.root), status=403)

    # -- inbox and decisions ------------------------------------------------------------
    def inbox(self, request: Request) -> Response:
        view = flow.View.from_query(request.query_params)
        seen = stamp(self.s.root)  # before the rows are read: a write after it is noticed by the page's poll
        rows, facets, refreshing = flow.view_rows(self.queue, view)
        f = view.filters
        pages = max(1, -(-len(rows) // PAGE_SIZE))
        n = min(f.page, pages)
        shown = rows[(n - 1) * PAGE_SIZE: n * PAGE_SIZE]
        records = self.queue.records() if any(c.get("matched_memory_ids") for c in shown) else {}
        response = self.page(request, "inbox.html", f=f, view=view, total=len(rows), page_no=n, pages=pages,
                             groups=flow.grouped(shown), facets=facets, records=records, risks=RISKS, statuses=STATUSES,
                             sorts=flow.SORTS, qs=view.qs, error=self.queue.error, refreshing=refreshing, flow=flow, stamp=seen)
        if refreshing:  # recompute once the page is sent, so it does not slow the page down
            response.background = BackgroundTask(self.queue.refresh)
        return response

    def candidate(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        view = flow.View.from_query(request.query_params)
        item = self.queue.item(cid) if len(cid) <= views.MAX_ID_CHARS else None
        if item is None:
            raw = self.queue.stored(cid) if len(cid) <= views.MAX_ID_CHARS else None
            if raw is None:
                return self.page(request, "error.html", status=404, error=f"There is no candidate {cid}.", back="/inbox")
            return self.page(request, "candidate.html", c=raw, item=None, ops=[], records=self.queue.records(), view=view,
                             outcome=views.outcome(self.s.root, cid), flow=flow)
        records = self.queue.records()
        ops = [{"op": o, "diff": views.diff(b, a)} for o, (b, a) in zip(item.ops, item.before_after, strict=False)]
        l1 = any((o.get("record") or o.get("to_record") or {}).get("layer") == "L1" for o in item.ops)
        response = self.page(request, "candidate.html", c=item.candidate, item=item, ops=ops, records=records, l1=l1,
                             view=view, outcome=[], flow=flow)
        response.background = BackgroundTask(self.queue.refresh)  # a no-op when the queue is current
        return response

    async def decide(self, request: Request) -> Response:
        try:
            form = await self.form(request)
            self.need_writer()
        except (actions.Refused, _Denied) as exc:
            return self.refused(request, exc, "/inbox")
        view = flow.View.from_query(dict(parse_qsl(str(form.get("view") or "").lstrip("?"))))
        action, _, choice = str(form.get("action", "")).partition(":")  # approve:reinforce, approve:contest, ...
        choice = choice or str(form.get("choice", ""))
        origin = str(form.get("from") or "inbox")
        reason, edit = str(form.get("reason", "")).strip(), str(form.get("edit", ""))
        ids = [i for i in dict.fromkeys(str(v).strip() for v in form.getlist("id")) if i]
        if form.get("all") == "1":  # "select all": the view, sorted (the next candidate never sorts it: flow.next_candidate)
            ids = [str(c["id"]) for c in flow.view_rows(self.queue, view, with_facets=False)[0]]
        pending = self.queue.pending_rows(ids)  # the decided ones, scored (risk, match), by id
        here = f"/candidates/{ids[0]}{view.qs()}" if origin == "candidate" and ids else f"/inbox{view.qs()}"
        if not ids:
            return self._back(here, err="Nothing is selected, so nothing was done. Tick candidates (x) or open one first.")
        if action not in ("approve", "reject", "ratify"):
            return self._back(here, err="Choose Approve or Reject with its button; nothing was done.")
        if action == "reject" and not reason:
            return self._back(here, err="To reject, say why in the reason box (for example: not durable). Nothing was rejected.")
        if edit.strip() and edit.strip() == str((self.queue.stored(ids[0]) or {}).get("text", "")).strip():
            edit = ""  # the pre-filled statement, unchanged: approved as is
        if action != "reject" and form.get("confirmed") != "1":
            per = decisions.choices_from_form(form)
            risky = [(pending[i], why) for i in ids if i in pending
                     for why in [flow.asks_twice(pending[i], per.get(i) or choice)] if why]
            # a batch: every candidate that would reinforce, replace or contest a record is listed
            # with its own choice (the safe one ticked), never one choice for all of them
            items = self._item_choices(ids, pending) if action == "approve" and not choice else []
            listed = {str(e["id"]) for e in items}
            risky = [(c, why) for c, why in risky if str(c["id"]) not in listed or c.get("poisoning_risk") == "high"]
            if risky or items:
                return self.page(request, "confirm.html", risky=risky, items=items, records=self.queue.records(),
                                 form=form, ids=ids, view=view, flow=flow, back=here)
        try:
            msg = await run_in_threadpool(decisions.decide, self.s.root, self.s.role, action, ids,
                                          reason=reason, edit=edit, choice=choice, pending=pending,
                                          choices=decisions.choices_from_form(form),
                                          conflict_choice=str(form.get("conflict_choice") or "keep_both"))
        except (actions.Refused, _Denied) as exc:
            return self._back(here, err=plain_error(exc))
        msg = _short(msg, ids)
        undo = ",".join(ids) if len(ids) <= MAX_UNDO else ""
        if origin == "candidate":
            nxt = flow.next_candidate(self.queue, view, ids)  # from the queue's order index, the decided ones skipped
            if nxt is not None:
                return self._back(f"/candidates/{nxt}{view.qs()}", msg=msg, undo=undo)
        return self._back(f"/inbox{view.qs()}", msg=msg, undo=undo)

    def _item_choices(self, ids: list[str], pending: dict[str, Any]) -> list[dict[str, Any]]:
        """The candidates of a batch whose approval acts on a record already in memory (reinforce,
        replace, keep both), each with its choices in words and the one to tick (the server's own
        or default one; never a replace unless the server took it; none when one must be named).

        From the server's batch plan (``decisions.plan``: each candidate matched against memory and
        the rest of the batch) where it has one, else from each candidate's review item."""
        plan = getattr(decisions, "plan", None)
        out: list[dict[str, Any]] = []
        if plan is not None:
            try:
                entries = plan(self.s.root, ids, queue=self.queue)
            except actions.Refused:
                entries = []
            for e in entries:
                named = [str(c["choice"]) for c in e.get("choices") or []]
                if not [c for c in named if c != "add"]:
                    continue
                tick = e.get("choice") or e.get("default") or ""
                out.append({**e, "row": pending.get(str(e.get("id"))) or {"id": e.get("id"), "text": e.get("text")},
                            "tick": tick if tick in named else ""})
            return out
        records = self.queue.records()
        for i in ids:
            row = pending.get(i)
            item = self.queue.item(i) if row is not None else None
            named = flow.choices_of(item) if item is not None else []
            if row is None or not [c for c in named if c != "add"]:
                continue
            rid = str((row.get("matched_memory_ids") or ["the record"])[0])
            default = getattr(item, "default_choice", None)
            safe = [c for c in named if c in flow.SAFE_CHOICES]
            out.append({"id": i, "text": row.get("text"), "row": row,
                        "kind_words": flow.PLAIN_MATCHES.get(str(row.get("match_kind")), str(row.get("match_kind") or "")),
                        "target_id": rid, "target_text": str((records.get(rid) or {}).get("statement") or "(gone)"),
                        "choices": [{"choice": c, "words": flow.CHOICE_LABELS.get(c, c).format(rid=rid)} for c in named],
                        "default": default, "tick": default if default in safe else (safe[0] if safe else "")})
        return out

    def _back(self, where: str, **say: str) -> Response:
        sep = "&" if "?" in where else "?"
        return RedirectResponse(f"{where}{sep}{urlencode({k: v for k, v in say.items() if v})}", 303)

    async def undo(self, request: Request) -> Response:
        try:
            form = await self.form(request)
            self.need_writer()
        except (actions.Refused, _Denied) as exc:
            return self.refused(request, exc, "/inbox")
        view = str(form.get("view") or "")
        back = f"/inbox{view if view.startswith('?') and '//' not in view else ''}"
        try:
            ids = [i for i in str(form.get("ids", "")).split(",") if i.strip()]
            msg = await run_in_threadpool(decisions.undo, self.s.root, self.s.role, ids)
        except actions.Refused as exc:
            return self._back(back, err=plain_error(exc))
        return self._back(back, msg=msg)

    def favicon(self, request: Request) -> Response:
        return Response(FAVICON, media_type="image/svg+xml", headers={"cache-control": "max-age=86400"})

    # -- patches ------------------------------------------------------------------------
    def patches(self, request: Request) -> Response:
        return self.page(request, "patches.html", patches=views.read_patches(self.s.root))

    def patch(self, request: Request) -> Response:
        pid = request.path_params["pid"]
        p = views.patch_by_id(self.s.root, pid)
        if p is None:
            return self.page(request, "error.html", status=404, error=f"There is no patch {pid[:80]}.", back="/patches")
        return self.page(request, "patch.html", p=p, ops=views.op_views(p, self.queue.records(), self.s.root),
                         decided=views.decided_elsewhere(self.queue, p))

    async def apply(self, request: Request) -> Response:
        pid = request.path_params["pid"]
        try:
            form = await self.form(request)
            self.need_writer()
        except (actions.Refused, _Denied) as exc:
            return self.refused(request, exc, f"/patches/{pid}")
        try:
            msg = await run_in_threadpool(actions.apply_ops, self.s.root, self.s.role, pid, [str(v) for v in form.getlist("op")])
        except actions.Refused as exc:
            return self._back(f"/patches/{pid}", err=plain_error(exc))
        return RedirectResponse(f"/patches/{pid}?{urlencode({'msg': msg})}", 303)

    # -- memory -------------------------------------------------------------------------
    def memory(self, request: Request) -> Response:
        q = request.query_params
        layer, project, text, mode = (str(q.get(k, ""))[:200] for k in ("layer", "project", "q", "mode"))
        notices: list[str] = []
        records = self.queue.records()
        rows, layers, projects = views.memory(list(records.values()), layer, project, "" if mode else text)
        if text and mode:
            try:
                rows, notices = views.search(self.s.root, text, records, mode)
            except Exception as exc:
                notices = [f"search failed: {exc}"]
        try:
            page = max(1, int(str(q.get("page", "1"))))
        except ValueError:
            page = 1
        pages = max(1, -(-len(rows) // MEMORY_PAGE))
        page = min(page, pages)
        keep = {k: v for k, v in (("layer", layer), ("project", project), ("q", text), ("mode", mode)) if v}
        return self.page(request, "memory.html", rows=rows[(page - 1) * MEMORY_PAGE: page * MEMORY_PAGE], total=len(rows),
                         page=page, pages=pages, qs=lambda **kw: "?" + urlencode({**keep, **kw}), layers=layers, projects=projects,
                         layer=layer, project=project, q=text, mode=mode, notices=notices,
                         tombstones=views.tombstones(self.s.root))

    def record(self, request: Request) -> Response:
        rid = request.path_params["rid"]
        rec = self.queue.records().get(rid)
        if rec is None:
            return self.page(request, "error.html", status=404, error=f"no record {rid} (forgotten records keep only a tombstone)",
                             back="/memory")
        purge = request.query_params.get("purge") == "1"
        confirm = request.query_params.get("confirm") == "1"
        return self.page(request, "record.html", r=rec, history=views.history(self.s.root, rid), purge=purge, confirm=confirm,
                         preview=views.scrub_preview(self.s.root, rec, purge) if confirm else [], reasons=FORGET_REASONS)

    async def forget(self, request: Request) -> Response:
        rid = request.path_params["rid"]
        try:
            form = await self.form(request)
            self.need_writer()
        except (actions.Refused, _Denied) as exc:
            return self.refused(request, exc, f"/memory/{rid}")
        try:
            msg = await run_in_threadpool(actions.forget_record, self.s.root, self.s.role, rid,
                                          reason=str(form.get("reason", "")), purge=form.get("purge") == "1")
        except actions.Refused as exc:
            return self._back(f"/memory/{rid}", err=plain_error(exc))
        return RedirectResponse(f"/memory?{urlencode({'msg': msg})}", 303)

    # -- wiki and health ----------------------------------------------------------------
    def wiki(self, request: Request) -> Response:
        project = self.s.wiki
        if project is None or not project.is_dir():
            return self.page(request, "wiki.html", project=None, files=[], shown=None, html="", history=[])
        rel = str(request.query_params.get("page", "") or "")
        html, history = "", wiki_view.git_history(project)
        if rel:
            try:
                html = wiki_view.render(wiki_view.resolve(project, rel))
                history = wiki_view.git_history(project, rel)
            except Exception as exc:
                return self.page(request, "error.html", status=404, error=str(exc), back="/wiki")
        return self.page(request, "wiki.html", project=str(project), files=wiki_view.listing(project), shown=rel,
                         html=html, history=history)

    def health(self, request: Request) -> Response:
        return self.page(request, "health.html", report=views.health(self.s.root))

    def api_stamp(self, request: Request) -> Response:
        queue = backlog(self.s.root)
        if self.writer.can_write:  # the writer's server keeps reports/review-digest.txt current (only when it changed)
            write_digest(self.s.root, queue)
        return JSONResponse({"stamp": stamp(self.s.root), "waiting": queue.count})

    def home(self, request: Request) -> Response:
        return RedirectResponse("/inbox", 303)


FAVICON = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2f5d8a"/>'
           b'<path d="M9 8h14v17l-7-4-7 4z" fill="#fff"/></svg>')


_ID_RUN = re.compile(r"(?:[\w-]+, ){3,}[\w-]+")  # four or more ids in a row
MAX_UNDO = 100  # a decision on more candidates is undone from each candidate's page (the ids ride in the URL)


def _short(msg: str, ids: list[str]) -> str:
    """The decision's sentence with a long list of ids said as a count."""
    return _ID_RUN.sub(lambda m: f"{m.group(0).count(',') + 1} candidates", msg)


def plain_error(exc: Exception) -> str:
    """A refusal in plain words: the governance message without its command-line hint."""
    text = str(getattr(exc, "message", None) or exc).split("\n  hint:", 1)[0]
    text = text.replace("rejecting needs --reason", "rejecting needs a reason")
    return text if text.endswith((".", "!", ")")) else text + "."


def read_only_words(writer: actions.Writer, root: Path) -> str:
    """Why this server cannot decide, and how to start one that can, in plain words."""
    why = str(writer.why_read_only(root)).split("\n  hint:", 1)[0]
    return f"{why} To decide here, start the server as the writer ({writer.writer_role})."


def _here_qs(request: Request) -> str:
    """This page's query without the one-shot message keys (the view an Undo goes back to)."""
    keep = [(k, v) for k, v in request.query_params.multi_items() if k not in ("msg", "err", "undo")]
    return f"?{urlencode(keep)}" if keep else ""


class _Denied(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def build(settings: Settings) -> tuple[Guard, Web]:
    """The ASGI app (guarded) and its state; the guard's cookie name follows the bound port."""
    web = Web(settings)
    routes = [
        Route("/", web.home), Route("/inbox", web.inbox), Route("/candidates/{cid}", web.candidate),
        Route("/decide", web.decide, methods=["POST"]), Route("/undo", web.undo, methods=["POST"]),
        Route("/favicon.ico", web.favicon),
        Route("/patches", web.patches), Route("/patches/{pid}", web.patch), Route("/patches/{pid}/apply", web.apply, methods=["POST"]),
        Route("/memory", web.memory), Route("/memory/{rid}", web.record), Route("/memory/{rid}/forget", web.forget, methods=["POST"]),
        Route("/wiki", web.wiki), Route("/health", web.health), Route("/api/stamp", web.api_stamp),
        Mount("/static", app=StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(routes=routes)
    return Guard(app, settings.keys, settings.host, settings.port), web
