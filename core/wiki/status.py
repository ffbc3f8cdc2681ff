"""Which facts still hold: rule statuses from events in date order, and replaced quantities.

Rules: a newer version of a family supersedes the older ones still in force; explicit events
(supersede, void, revoke, reinstate, reaffirm) then adjust. Quantities: for one subject and unit,
the newest source's value replaces older, different values ("superseded by" that source).
Equal values from several sources all stay current: a repeat confirms, it does not replace.
"""

from __future__ import annotations

from dataclasses import dataclass

from commonkeep.wiki.rules import version_key


@dataclass
class RuleStatus:
    """The state of one rule version after all events."""

    family: str
    version: str
    status: str  # current | superseded | revoked | draft
    by: str | None = None  # what changed it: "Policy v6" or a source path
    note: str = ""


@dataclass(frozen=True)
class RuleEvent:
    event: str
    family: str
    targets: tuple[str, ...]
    by: str | None
    source: str
    order: tuple[str, int, int]  # (date, ingest sequence, sentence ordinal)


def rule_statuses(events: list[RuleEvent]) -> dict[tuple[str, str], RuleStatus]:
    """Replay rule events in (date, ingest order, sentence) order."""
    state: dict[tuple[str, str], RuleStatus] = {}

    def label(family: str, version: str | None, source: str) -> str:
        return f"{family.capitalize()} {version}" if version else source

    for ev in sorted(events, key=lambda e: e.order):
        fam = ev.family
        by = label(fam, ev.by, ev.source)
        if ev.event == "declare":
            v = ev.targets[0]
            for (f, ver), st in state.items():
                if f == fam and st.status == "current" and version_key(ver) < version_key(v):
                    st.status, st.by, st.note = "superseded", by, "newer version"
            prev = state.get((fam, v))
            if prev is None or prev.status == "current":
                state[(fam, v)] = RuleStatus(fam, v, "current")
            continue
        targets = list(ev.targets)
        if ev.event == "supersede_all" and ev.by:
            targets = [ver for (f, ver) in state if f == fam and version_key(ver) < version_key(ev.by)]
        for v in targets:
            st = state.setdefault((fam, v), RuleStatus(fam, v, "current"))
            if ev.event in ("supersede", "supersede_all"):
                if st.status == "current":
                    st.status, st.by, st.note = "superseded", by, "superseded"
            elif ev.event == "void":
                st.status, st.by, st.note = "draft", by, "declared a draft / to be ignored"
            elif ev.event == "revoke":
                if st.status not in ("draft", "revoked"):
                    st.status, st.by, st.note = "revoked", by, "revoked"
            elif ev.event == "reinstate":
                st.status, st.by, st.note = "current", by, "reinstated"
                if ev.by:
                    for (f, ver), other in state.items():
                        if f == fam and version_key(v) < version_key(ver) < version_key(ev.by):
                            other.status, other.by, other.note = "revoked", by, "undone by a revert"
            elif ev.event == "reaffirm" and st.status == "superseded":
                st.status, st.by, st.note = "current", by, "reaffirmed"
    return state


@dataclass(frozen=True)
class QuantityRow:
    key: str
    group: str  # subject + unit
    number: float
    order: tuple[str, int, int]
    source: str


def quantity_replacements(rows: list[QuantityRow]) -> dict[str, str]:
    """fact key -> source path of the newer value that replaced it."""
    latest: dict[str, QuantityRow] = {}
    for row in rows:
        cur = latest.get(row.group)
        if cur is None or row.order > cur.order:
            latest[row.group] = row
    out: dict[str, str] = {}
    for row in rows:
        newest = latest[row.group]
        if row.order < newest.order and row.number != newest.number and row.source != newest.source:
            out[row.key] = newest.source
    return out
