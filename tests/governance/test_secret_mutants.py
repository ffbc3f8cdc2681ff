"""The secret gate's promises that its mutation run (``scripts/mutation secrets``) found unguarded:
each test names what a user depends on (a token of a given shape is removed whole, a benign text
or name is left exactly as written, a report points at the right line)."""

from __future__ import annotations

from commonkeep.governance.secrets import redact_name

GITHUB = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b"
AWS = "AKIAQ3ZT7RX2WBN5K4JD"


def test_a_file_name_loses_its_token_keeps_its_extension_and_redacts_to_itself() -> None:
    red = redact_name(f"notes-{GITHUB}.md")
    assert (red.text, red.findings) == ("notes-REDACTED-github_token.md", ["github_token"])
    glued = redact_name(f"keys_{AWS}.txt")  # a token after ``_`` is found as in any text
    assert (glued.text, glued.findings) == ("keys_REDACTED-aws_access_key.txt", ["aws_access_key"])
    swallowed = redact_name("password=hunter22.md")  # the value ran into the extension: it is put back
    assert (swallowed.text, swallowed.findings) == ("password=REDACTED-password_assignment.md", ["password_assignment"])
    again = redact_name(swallowed.text)  # the file-name marker is no secret: the name stays
    assert (again.text, again.findings) == (swallowed.text, [])


def test_a_benign_file_name_is_left_exactly_as_written() -> None:
    for name in ("2026-12-03 standup notes.md", "release_plan_v2.final.txt", "Überblick-Zugänge.md", "README"):
        assert (redact_name(name).text, redact_name(name).findings) == (name, [])
