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

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from commonkeep.web import actions, views
from commonkeep.web import wiki as wiki_view
from commonkeep.web.queue import PAGE_SIZE, RISKS, STATUSES, Filters, Queue, stamp
from commonkeep.web.security import Guard, Keys

HERE = Path(__file__).parent
MEMORY_PAGE = 100
FORGET_REASONS = ("user_requested", "privacy_sensitive", "poisoned", "invalid", "other")


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

    # -- helpers ------------------------------------------------------------------------
    def page(self, request: Request, name: str, status: int = 200, **ctx: Any) -> Response:
        base = {"csrf": self.s.keys.csrf, "can_write": self.writer.can_write, "role": self.writer.role,
                "writer_role": self.writer.writer_role, "root": str(self.s.root),
                "read_only_reason": "" if self.writer.can_write else self.writer.why_read_only(self.s.root),
                "msg": request.query_params.get("msg", "")[:2000], "nav": name.split(".")[0]}
        return self.templates.TemplateResponse(request, name, {**base, **ctx}, status_code=status)

    async def form(self, request: Request) -> Any:
        form = await request.form()
        given = form.get("csrf") or request.headers.get("x-csrf-token")
        if not self.s.keys.csrf_ok(str(given) if given is not None else None):
            raise _Denied("403: the form's CSRF token is missing or wrong; reload the page and try again", 403)
        return form

    def refused(self, request: Request, exc: Exception, back: str) -> Response:
        status = getattr(exc, "status", 400)
        return self.page(request, "error.html", status=status, error=str(exc), back=back)

    def need_writer(self) -> None:
        if not self.writer.can_write:
            raise actions.Refused("this server is read-only: " + self.writer.why_read_only(self.s.root), status=403)

    # -- inbox and decisions ------------------------------------------------------------
    def inbox(self, request: Request) -> Response:
        f = Filters.from_query(request.query_params)
        pg = self.queue.page(f)
        records = self.queue.records() if any(c.get("matched_memory_ids") for c in pg.items) else {}
        keep = {k: v for k, v in (("agent", f.agent), ("risk", f.risk), ("status", f.status), ("tag", f.tag), ("q", f.q)) if v}
        response = self.page(request, "inbox.html", f=f, pg=pg, records=records, risks=RISKS, statuses=STATUSES,
                             page_size=PAGE_SIZE, qs=lambda **kw: "?" + urlencode({**keep, **kw}), error=self.queue.error)
        if pg.refreshing:  # recompute once the page is sent, so it does not slow the page down
            response.background = BackgroundTask(self.queue.refresh)
        return response

    def candidate(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        item = self.queue.item(cid)
        if item is None:
            raw = self.queue.stored(cid)
            if raw is None:
                return self.page(request, "error.html", status=404, error=f"no candidate {cid}", back="/inbox")
            return self.page(request, "candidate.html", c=raw, item=None, ops=[], records={})
        records = self.queue.records()
        ops = [{"op": o, "diff": views.diff(b, a)} for o, (b, a) in zip(item.ops, item.before_after, strict=False)]
        l1 = any((o.get("record") or o.get("to_record") or {}).get("layer") == "L1" for o in item.ops)
        response = self.page(request, "candidate.html", c=item.candidate, item=item, ops=ops, records=records, l1=l1)
        response.background = BackgroundTask(self.queue.refresh)  # a no-op when the queue is current
        return response

    async def decide(self, request: Request) -> Response:
        try:
            form = await self.form(request)
            self.need_writer()
            ids = [str(v) for v in form.getlist("id")]
            msg = await run_in_threadpool(actions.decide, self.s.root, self.s.role, str(form.get("action", "")), ids,
                                          reason=str(form.get("reason", "")), edit=str(form.get("edit", "")))
        except (actions.Refused, _Denied) as exc:
            return self.refused(request, exc, "/inbox")
        back = str(form.get("back") or "/inbox")
        if not back.startswith("/inbox") or "//" in back:
            back = "/inbox"
        return RedirectResponse(f"{back}{'&' if '?' in back else '?'}{urlencode({'msg': msg})}", 303)

    # -- patches ------------------------------------------------------------------------
    def patches(self, request: Request) -> Response:
        return self.page(request, "patches.html", patches=views.read_patches(self.s.root))

    def patch(self, request: Request) -> Response:
        p = views.patch_by_id(self.s.root, request.path_params["pid"])
        if p is None:
            return self.page(request, "error.html", status=404, error=f"no patch {request.path_params['pid']}", back="/patches")
        return self.page(request, "patch.html", p=p, ops=views.op_views(p, self.queue.records()))

    async def apply(self, request: Request) -> Response:
        pid = request.path_params["pid"]
        try:
            form = await self.form(request)
            self.need_writer()
            msg = await run_in_threadpool(actions.apply_ops, self.s.root, self.s.role, pid, [str(v) for v in form.getlist("op")])
        except (actions.Refused, _Denied) as exc:
            return self.refused(request, exc, f"/patches/{pid}")
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
            msg = await run_in_threadpool(actions.forget_record, self.s.root, self.s.role, rid,
                                          reason=str(form.get("reason", "")), purge=form.get("purge") == "1")
        except (actions.Refused, _Denied) as exc:
            return self.refused(request, exc, f"/memory/{rid}")
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
        return JSONResponse({"stamp": stamp(self.s.root)})

    def home(self, request: Request) -> Response:
        return RedirectResponse("/inbox", 303)


class _Denied(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def build(settings: Settings) -> tuple[Guard, Web]:
    """The ASGI app (guarded) and its state; the guard's cookie name follows the bound port."""
    web = Web(settings)
    routes = [
        Route("/", web.home), Route("/inbox", web.inbox), Route("/candidates/{cid}", web.candidate),
        Route("/decide", web.decide, methods=["POST"]),
        Route("/patches", web.patches), Route("/patches/{pid}", web.patch), Route("/patches/{pid}/apply", web.apply, methods=["POST"]),
        Route("/memory", web.memory), Route("/memory/{rid}", web.record), Route("/memory/{rid}/forget", web.forget, methods=["POST"]),
        Route("/wiki", web.wiki), Route("/health", web.health), Route("/api/stamp", web.api_stamp),
        Mount("/static", app=StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(routes=routes)
    return Guard(app, settings.keys, settings.host, settings.port), web
