"""Pydantic models of every record type in the OmpKeep store (contracts/ompkeep-store.md §4).

The store itself works on plain dicts, so rewrites keep unknown keys and key order byte for
byte and read paths never import pydantic. These models validate what we are about to write
(``validate_as``) and document the schemas. Field order is upstream's, so
``model.to_json_dict()`` (unset optional keys omitted, as ``JSON.stringify`` omits
``undefined``) serialises in the same key order as OMP.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from commonkeep.errors import BadInput


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)

    def to_json_dict(self) -> dict[str, Any]:
        """The record as JSON-ready dict: unset optional keys omitted, declared order kept."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)


EvidenceType = Literal[
    "artifact", "conversation", "commit", "source", "manual", "user_correction", "test_result", "codebase_analysis", "deletion"
]
TrustClass = Literal[
    "direct_user_instruction", "user_correction", "repeated_user_preference", "accepted_code_review_outcome",
    "existing_project_convention", "passing_tool_or_test_outcome", "agent_inference", "single_session_observation",
    "repository_text", "generated_content", "third_party_documentation",
]
Durability = Literal["temporary", "session", "task", "project", "repository", "user_global", "long_term", "unknown"]
RuleType = Literal["workflow", "preference", "convention", "architecture", "avoid_pattern", "prefer_pattern", "testing", "correction", "tool"]
MemoryKind = Literal["fact", "event", "instruction", "task"]
Risk = Literal["low", "medium", "high"]
DeletionMode = Literal["audit_preserving", "privacy_purge"]
DeletionReason = Literal["user_requested", "privacy_sensitive", "poisoned", "invalid", "other"]


class Scope(_Model):
    type: str
    project: str | None = None
    domains: list[str] | None = None


class EvidenceRef(_Model):
    type: str
    ref: str
    note: str


class Review(_Model):
    cadence_days: float
    next_review: str
    change_condition: str = Field(min_length=1)


class MemoryRecord(_Model):
    """A canonical record line in L1, L2 or a project file (§4.1)."""

    id: str
    layer: Literal["L1", "L2", "L3"]
    scope: Scope
    tags: list[str]
    statement: str = Field(min_length=1)
    evidence: list[EvidenceRef] = Field(min_length=1)
    confidence: float = Field(ge=0, le=1)
    stability: str
    created_at: str
    updated_at: str
    review: Review
    status: str
    supersedes: list[str]
    superseded_by: list[str]
    vault_ref: str | None
    resource_id: str | None = None
    profile_id: str | None = None
    thread_id: str | None = None
    normalized_key: str | None = None
    applies_when: list[str] | None = None
    does_not_apply_when: list[str] | None = None
    known_exceptions: list[str] | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    invalidated_by: str | None = None
    validity_reason: str | None = None
    ruleType: RuleType | None = None
    memory_kind: MemoryKind | None = None


class CandidateSource(_Model):
    type: str
    ref: str
    cwd: str | None = None


class Provenance(_Model):
    """commonkeep's extension of a candidate: who wrote it, stamped by the host plugin."""

    agent: str | None = None
    role: str | None = None
    host: str | None = None
    session_id: str | None = None
    turn: int | None = None
    tool_call_id: str | None = None
    target: str | None = None
    background_review: bool | None = None


class CaptureCandidate(_Model):
    """A line of ``inbox/captured.jsonl`` (§4.2)."""

    id: str
    created_at: str
    source: CandidateSource
    text: str = Field(min_length=1)
    tags: list[str]
    evidence_refs: list[str]
    status: Literal["new", "patched", "rejected"]
    resource_id: str | None = None
    profile_id: str | None = None
    thread_id: str | None = None
    evidence_ids: list[str] | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)
    ruleType: RuleType | None = None
    memory_kind: MemoryKind | None = None
    worth_decision: Literal["reject", "daily_only", "candidate", "inquiry"] | None = None
    worth_score: float | None = None
    worth_reasons: list[str] | None = None
    primary_trust_class: TrustClass | None = None
    source_trust_weight: float | None = None
    durability_signal: Durability | None = None
    promotion_eligibility: str | None = None
    poisoning_risk: Risk | None = None
    poisoning_risk_reasons: list[str] | None = None
    normalized_key: str | None = None
    match_kind: str | None = None
    matched_memory_ids: list[str] | None = None
    match_reasons: list[str] | None = None
    proposed_applies_when: list[str] | None = None
    proposed_does_not_apply_when: list[str] | None = None
    proposed_known_exceptions: list[str] | None = None
    verification_status: Literal["legacy_unverified", "verified", "review_required", "rejected"] | None = None
    verification_result: Any = None
    provenance: Provenance | None = None


class PatchOp(_Model):
    op_id: str
    op: Literal[
        "add", "update", "update_stability", "flag_for_review", "supersede", "deprecate", "decay", "contest",
        "uncontest", "add_exception", "delete", "reject_candidate", "promote_to_vault_candidate",
    ]
    target: str | None = None
    target_id: str | None = None
    from_: str | None = Field(default=None, alias="from")
    record: MemoryRecord | None = None
    to_record: MemoryRecord | None = None
    updates: dict[str, Any] | None = None
    reason: str | None = None
    rationale: str | None = None
    risk: Risk
    default_selected: bool
    candidate_id: str | None = None
    deletion_mode: DeletionMode | None = None
    deletion_reason: DeletionReason | None = None


class MemoryPatch(_Model):
    """A ``patches/<patch_id>.json`` document (§4.3)."""

    patch_id: str
    created_at: str
    generated_by: Literal["curator", "maintainer", "manual"]
    mode: Literal["propose", "supervised", "auto"]
    summary: str
    ops: list[PatchOp]
    status: Literal["proposed", "applied", "partially_applied"]
    applied_at: str | None
    applied_ops: list[str]
    skipped_ops: list[str]


class CodebaseAnalysis(_Model):
    source_kind: str
    tool: str
    timestamp: str


class EvidenceRecord(_Model):
    """A line of ``memory/evidence.jsonl`` (§4.4)."""

    id: str
    resource_id: str
    profile_id: str
    thread_id: str | None = None
    created_at: str
    source_kind: Literal[
        "conversation", "tool_result", "file", "patch", "test_result", "generated_content", "external_document", "codebase_analysis"
    ]
    source_session_id: str | None = None
    source_file: str | None = None
    source_tool: str | None = None
    source_ref: str | None = None
    source_summary: str = Field(max_length=300)
    source_excerpt: str | None = Field(default=None, max_length=1000)
    excerpt_hash: str | None = None
    excerpt_char_start: int | None = None
    excerpt_char_end: int | None = None
    redaction_status: Literal["none", "redacted", "deleted"] | None = None
    trust_class: str
    polarity: Literal["supports", "contradicts", "qualifies"]
    durability_signal: str | None = None
    related_memory_ids: list[str]
    scope_level: str | None = None
    scope_ref: str | None = None
    tags: list[str] | None = None
    notes: str | None = None
    codebase_analysis: CodebaseAnalysis | None = None


class Tombstone(_Model):
    """A line of ``memory/tombstones.jsonl`` (§4.5): content-free proof of a deletion."""

    id: str
    resource_id: str | None = None
    profile_id: str | None = None
    deleted_record_id: str
    deleted_at: str
    deletion_mode: DeletionMode
    deletion_reason: DeletionReason
    content_hash: str | None = None
    content_removed: Literal[True]


class Reinforcement(_Model):
    """A line of ``memory/reinforcement.jsonl`` (§4.6)."""

    id: str
    resource_id: str | None = None
    profile_id: str | None = None
    thread_id: str | None = None
    memory_id: str
    timestamp: str
    outcome: Literal["explicit_reinforcement", "implicit_success", "neutral_exposure", "explicit_correction"]
    evidence_id: str | None = None
    notes: str | None = Field(default=None, max_length=300)


class Inquiry(_Model):
    """A line of ``memory/inquiries.jsonl`` (§4.7)."""

    id: str
    resource_id: str | None = None
    profile_id: str | None = None
    question: str
    context: str
    scope_level: str | None = None
    scope_ref: str | None = None
    tags: list[str]
    related_memory_ids: list[str] | None = None
    related_evidence_ids: list[str] | None = None
    sessions_touched: list[str]
    first_seen: str
    last_seen: str
    status: Literal["open", "answered", "withdrawn", "stale"]
    priority: Literal["low", "medium", "high"]
    answer_memory_id: str | None = None


class ProjectIdentity(_Model):
    project_id: str
    source: str
    git_remote_hash: str | None = None
    git_root: str | None = None
    package_name: str | None = None
    aliases: list[str] | None = None


class Profile(_Model):
    """A line of ``memory/profiles.jsonl`` (§4.8)."""

    profile_id: str
    profile_type: Literal["project"]
    resource_id: str
    project_identity: ProjectIdentity
    storage_root: str
    created_at: str
    updated_at: str


class SessionIndexEntry(_Model):
    """A line of ``sessions/session-index.jsonl`` (§4.9)."""

    id: str
    file: str
    mtime: float
    sizeBytes: int
    date: str
    startedAt: str
    endedAt: str
    cwd: str
    project: str
    projectSlug: str
    archived: bool
    name: str | None = None
    models: list[str]
    userMessageCount: int
    toolsUsed: list[str]
    filesModified: list[str]
    firstMessage: str
    decisions: list[str]
    compactionSummaries: list[str]
    totalCost: float
    totalTokens: int
    indexText: str = Field(alias="_indexText")


class RuntimeEvent(_Model):
    """A line of ``runtime/events.jsonl`` (§4.10)."""

    type: Literal["info", "warn", "error"]
    severity: Literal["low", "medium", "high"]
    component: str
    message: str = Field(max_length=500)
    timestamp: str


class InjectionStats(_Model):
    """``runtime/injection-stats.json`` (§4.10)."""

    generated_at: str
    injectionMode: str
    charCount: int
    selectedMemoryCount: int
    hardRuleCount: int
    contestedMemoryCount: int
    inquiryCount: int
    dailyDigestChars: int
    timings: dict[str, float] | None = None


class HandoffSnapshot(_Model):
    """``reports/handoff/<stamp>.json`` (§8.1)."""

    id: str
    created_at: str
    profile_id: str | None = None
    resource_id: str | None = None
    active_l1_count: int
    active_l2_count: int
    selected_memory_brief: list[str]
    open_inquiry_count: int
    open_inquiry_questions: list[str]
    contested_record_ids: list[str]
    recent_evidence_count: int
    pending_candidate_count: int
    reinforcement_summary_brief: str


MODELS: dict[str, type[_Model]] = {
    "memory_record": MemoryRecord,
    "candidate": CaptureCandidate,
    "patch": MemoryPatch,
    "evidence": EvidenceRecord,
    "tombstone": Tombstone,
    "reinforcement": Reinforcement,
    "inquiry": Inquiry,
    "profile": Profile,
    "session_index": SessionIndexEntry,
    "event": RuntimeEvent,
    "injection_stats": InjectionStats,
    "handoff": HandoffSnapshot,
}


def validate_as(kind: str, data: dict[str, Any], where: str = "") -> None:
    """Raise ``BadInput`` naming each wrong field when ``data`` is not a valid ``kind``."""
    try:
        MODELS[kind].model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(record)'}: {e['msg']}" for e in exc.errors()[:5])
        raise BadInput(f"invalid {kind.replace('_', ' ')}{' in ' + where if where else ''}: {problems}") from None
