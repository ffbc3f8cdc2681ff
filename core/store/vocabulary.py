"""The closed vocabularies of candidate fields, as plain tuples.

The CLI offers them as ``choices`` without importing pydantic (``write`` is on hosts' hot path);
``commonkeep.store.models`` spells the same values as ``Literal`` types, and a test keeps the two
equal.
"""

from __future__ import annotations

TRUST_CLASSES: tuple[str, ...] = (
    "direct_user_instruction", "user_correction", "repeated_user_preference", "accepted_code_review_outcome",
    "existing_project_convention", "passing_tool_or_test_outcome", "agent_inference", "single_session_observation",
    "repository_text", "generated_content", "third_party_documentation",
)
DURABILITIES: tuple[str, ...] = ("temporary", "session", "task", "project", "repository", "user_global", "long_term", "unknown")
RULE_TYPES: tuple[str, ...] = (
    "workflow", "preference", "convention", "architecture", "avoid_pattern", "prefer_pattern", "testing", "correction", "tool",
)
