"""What the review queue is filtered and paged by: the filters a URL carries, one page of rows."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from commonkeep.reviews.review import session_of

Row = dict[str, Any]


PAGE_SIZE = 50


RISKS = ("low", "medium", "high")


STATUSES = ("new", "patched", "rejected", "all")


def agent_of(cand: Row) -> str:
    prov = cand.get("provenance")
    if isinstance(prov, dict) and prov.get("agent"):
        return str(prov["agent"])
    return ""


@dataclass
class Filters:
    """What the reviewer asked to see."""

    agent: str = ""
    risk: str = ""
    status: str = "new"
    tag: str = ""
    q: str = ""
    page: int = 1
    session: str = ""  # one capture session's candidates (``provenance.session_id``), reviewed together
    group: str = ""  # the candidates that match one record (a record id): duplicates side by side

    @classmethod
    def from_query(cls, params: Any) -> Filters:
        def get(key: str) -> str:
            value = params.get(key)
            return str(value).strip()[:200] if value is not None else ""

        try:
            page = max(1, int(get("page") or 1))
        except ValueError:
            page = 1
        status = get("status") or "new"
        return cls(agent=get("agent"), risk=get("risk") if get("risk") in RISKS else "",
                   status=status if status in STATUSES else "new", tag=get("tag"), q=get("q"), page=page,
                   session=get("session"), group=get("group"))

    def matches(self, cand: Row) -> bool:
        if self.agent and agent_of(cand) != self.agent:
            return False
        if self.risk and cand.get("poisoning_risk") != self.risk:
            return False
        if self.tag and self.tag not in (cand.get("tags") or []):
            return False
        if self.session and session_of(cand) != self.session:
            return False
        if self.group and self.group not in (cand.get("matched_memory_ids") or []):
            return False
        if self.q:
            hay = " ".join([str(cand.get("text", "")), str(cand.get("id", "")), " ".join(map(str, cand.get("tags") or []))]).casefold()
            if not all(word in hay for word in self.q.casefold().split()):
                return False
        return True


@dataclass
class Page:
    """One page of the inbox."""

    items: list[Row]
    total: int
    page: int
    pages: int
    agents: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    refreshing: bool = False


def _tags(rows: Iterable[Row]) -> set[str]:
    out: set[str] = set()
    for c in rows:
        out.update(str(t) for t in c.get("tags") or [])
    return out
