"""What a reviewer can do from a page: the CLI's governance functions, nothing else.

Each action calls exactly what the matching command calls — ``review.approve`` / ``review.reject``
(``commonkeep review``), ``review.approve(ratify=True)`` (``commonkeep ratify``),
``patch.apply_patch`` (``commonkeep apply``) and ``forget.forget`` (``commonkeep forget``) — so a
decision leaves the same patch files, and the role gate, the writer lock and every refusal are
theirs. The result is a sentence for the page; a refusal is a :class:`Refused` carrying the
governance error's own message and hint.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commonkeep.errors import CommonkeepError, RoleRefused
from commonkeep.gate.writer import configured_writer_role, require_writer

DECISIONS = ("approve", "reject", "ratify")


class Refused(Exception):
    """A decision was not made; ``str()`` says why (shown to the reviewer, HTTP 403 or 400)."""

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Writer:
    """Who this server acts as, and whether that is the writer role."""

    role: str | None
    writer_role: str

    @property
    def can_write(self) -> bool:
        return self.role == self.writer_role

    def why_read_only(self, root: Path | str) -> str:
        try:
            require_writer("review", self.role, root)
        except RoleRefused as exc:
            return str(exc)
        return ""


def writer_for(root: Path | str, role: str | None) -> Writer:
    return Writer(role=role, writer_role=configured_writer_role(root))


def _run(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except RoleRefused as exc:
        raise Refused(str(exc), status=403) from exc
    except CommonkeepError as exc:
        raise Refused(str(exc)) from exc
    except OSError as exc:  # the file system said no (permissions, disk full): said as the CLI says it
        where = f": {exc.filename}" if exc.filename else ""
        raise Refused(f"{exc.strerror or exc}{where}; check that the root's files exist and that you may write them",
                      status=500) from exc


def _applied(res: Any) -> str:
    pid = res.patch["patch_id"]
    return f"patch {pid}: {len(res.applied)} op(s) applied" + (f", {len(res.skipped)} skipped" if res.skipped else "")


def decide(root: Path | str, role: str | None, action: str, ids: list[str], *,
           reason: str = "", edit: str = "", choice: str = "", queue: Any = None, choices: dict[str, str] | None = None) -> str:
    """Approve (optionally with an edited statement), reject with a reason, or ratify L1 candidates.

    ``choice``: what approving does, one of ``decide.CHOICES`` (``add``, ``reinforce``, ``replace``,
    ``keep_both``; ``contest`` is read as ``keep_both``); empty: each candidate's default, and a
    conflict, which has none, is refused with its choices named. ``choices``: each candidate's own
    (id -> choice; the others take ``choice``, or their default). ``queue``: the server's
    :class:`~commonkeep.web.queue.Queue`; the decision then uses its cached records and inbox and
    updates it in place (``Queue.decided``) instead of leaving a full recompute to the next page,
    and the projection and search index are caught up after the response (``Queue.owe``).
    """
    ids = [i for i in dict.fromkeys(i.strip() for i in ids) if i]
    if action not in DECISIONS:
        raise Refused(f"unknown decision {action!r}; use one of {', '.join(DECISIONS)}")
    if not ids:
        raise Refused("select at least one candidate")
    if edit.strip() and len(ids) != 1:
        raise Refused("an edit applies to one candidate; select only the one you edited")
    if queue is None:
        from commonkeep.web.queue import Queue

        queue = Queue.live(root)  # the server's own queue, when a server in this process keeps one
    chosen: str | dict[str, str] | None = choice.strip() or None
    if choices:
        chosen = {i: (choices.get(i) or choice).strip() for i in ids if (choices.get(i) or choice).strip()}
    if queue is None:
        return _decide(root, role, action, ids, reason=reason, edit=edit, choice=chosen, queue=None)
    with queue.deciding:
        return _decide(root, role, action, ids, reason=reason, edit=edit, choice=chosen, queue=queue)


def outline(root: Path | str, ids: list[str], *, choice: str = "", choices: dict[str, str] | None = None,
            queue: Any = None) -> list[dict[str, Any]]:
    """What approving ``ids`` together would do, each candidate's plan in plain words
    (``decide.preview(strict=False)``, ``Plan.to_json``); nothing is written."""
    from commonkeep.patches.waiting import candidates_named
    from commonkeep.reviews.decide import load_context, preview

    ids = [i for i in dict.fromkeys(i.strip() for i in ids) if i]
    if not ids:
        raise Refused("select at least one candidate")
    chosen: str | dict[str, str] | None = choice.strip() or None
    if choices:
        chosen = {i: (choices.get(i) or choice).strip() for i in ids if (choices.get(i) or choice).strip()}
    if queue is None:
        from commonkeep.web.queue import Queue

        queue = Queue.live(root)
    ctx = queue.context() if queue is not None else load_context(root)
    rows = queue.named(ids) if queue is not None else candidates_named(root, ids)
    return [p.to_json() for p in _run(preview, ctx, rows, ids, choice=chosen, strict=False)]


def _decide(root: Path | str, role: str | None, action: str, ids: list[str], *, reason: str, edit: str,
            choice: str | dict[str, str] | None, queue: Any) -> str:
    from contextlib import nullcontext

    from commonkeep.patches.after_apply import derived_deferred
    from commonkeep.reviews.review import approve, reject

    before = queue.begin() if queue is not None else None
    inbox = queue.named(ids) if queue is not None else None  # the decided candidates' rows, as cached
    # a server answers once the decision is written; rendered/ and the search index follow (``Queue.owe``)
    with derived_deferred() if queue is not None else nullcontext():
        if action == "reject":
            res = _run(reject, root, ids, reason=reason, role=role, inbox=inbox)
            said = f"rejected {', '.join(ids)} ({_applied(res)})"
        else:
            edits = {ids[0]: edit} if edit.strip() else None
            ctx = queue.context() if queue is not None else None
            res = _run(approve, root, ids, role=role, edits=edits, ratify=action == "ratify", choice=choice,
                       ctx=ctx, inbox=inbox)
            verb = "ratified" if action == "ratify" else ("approved with an edit" if edits else "approved")
            said = f"{verb} {', '.join(ids)} ({_applied(res)})"
    if queue is not None:
        queue.decided(ids, res, before)
        if res.records_changed or res.finished_applies:
            queue.owe(str(role))
    return said


def undo(root: Path | str, role: str | None, ids: list[str], *, reason: str = "", queue: Any = None) -> str:
    """Undo the decisions on candidates ``ids`` (``commonkeep review --undo``): a reversing patch,
    applied now, and each candidate back in the queue as a new copy (``governance.undo``)."""
    from commonkeep.reviews.undo import undo as undo_decisions

    ids = [i for i in dict.fromkeys(i.strip() for i in ids) if i]
    if not ids:
        raise Refused("select at least one decided candidate to undo")
    done = _run(undo_decisions, root, ids, role=role, reason=reason)
    if queue is None:
        from commonkeep.web.queue import Queue

        queue = Queue.live(root)
    if queue is not None:
        queue.refresh()  # the requeued copies are appended: shown at once, scored in the background
    return str(done.sentence())


def apply_ops(root: Path | str, role: str | None, patch_id: str, op_ids: list[str]) -> str:
    """Apply the selected ops of a proposed patch (``commonkeep apply PATCH --ops …``)."""
    from commonkeep.patches.patch import apply_patch

    if not op_ids:
        raise Refused("select at least one op to apply")
    res = _run(apply_patch, root, patch_id, role=role, op_ids=op_ids)
    return _applied(res)


def forget_record(root: Path | str, role: str | None, record_id: str, *, reason: str, purge: bool) -> str:
    """Tombstone a record, optionally with a privacy purge (``commonkeep forget``)."""
    from commonkeep.patches.forget import forget

    res = _run(forget, root, record_id, reason=reason, role=role, purge=purge)
    what = "forgotten and purged" if purge else "forgotten"
    return f"{record_id} {what} ({_applied(res)})"
