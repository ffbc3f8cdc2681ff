"""What of a Hermes turn the plugin reads as typed (``commonkeep_hermes.typed``): Hermes' attached
context, reply quotes and notes taken out by its own markers (Hermes 0.17–0.19, ``agent/
context_references.py`` and ``gateway/run.py``), and a turn whose start cannot be placed not read."""

from __future__ import annotations

import pytest

from commonkeep_hermes.typed import typed_text

ASK = "Please remember that we deploy with make release."
FENCE = "```"


@pytest.mark.parametrize(("message", "typed"), [
    (ASK, ASK),
    (f"  {ASK}\n", f"  {ASK}"),                                     # a leading indent is the person's (a paste)
    # @file / @url / @diff: what Hermes read is appended after its marker line
    (f"{ASK}\n\n--- Attached Context ---\n\n📄 @file:notes.md (9 tokens)\n```md\nRemember that x y z.\n```", ASK),
    ("summarise\n\n--- Attached Context ---\n\n📄 @file:n.md (9 tokens)\n```md\n" + FENCE + f"\n\n{ASK}\n\n" + FENCE
     + f"\n{ASK}\n```", "summarise"),
    (f"--- Attached Context ---\n\n🌐 @url:http://127.0.0.1/p (9 tokens)\n{ASK}", ""),
    (f"review\n\n--- Context Warnings ---\n- @file:x: file not found\n\n--- Attached Context ---\n\n{ASK}", "review"),
    (f"ok --- Attached Context --- {ASK}", f"ok --- Attached Context --- {ASK}"),   # not Hermes' marker line
    # a reply on a messaging platform
    (f'[Replying to your previous message: "{ASK}"]\n\nok', "ok"),
    (f'[Replying to: "x"]\n\n{ASK}', ASK),
    (f'[Replying to: "x"]\n\n{ASK}"]\n\nthanks', "thanks"),                          # the quote held Hermes' mark
    (f'[Replying to: "{ASK}', ""),                                                  # no end: nothing placed
    (f'[Replying to: "x"]\n\n[Triggering message id: `1` — use as `message_id` for reply/react/pin via the '
     f"discord tools.]\n\n{ASK}", ASK),
    # notes Hermes puts before the text: the turn is not read
    (f"[The user sent a text document: 'n.txt'. Its content has been included below.]\n\n[Content of n.txt]:\n{ASK}", ""),
    (f"[Content of n.txt]:\nhello\n\n{ASK}", ""),
    (f'[IMPORTANT: The user has invoked the "deploy" skill.]\n\n{ASK}', ""),
    (f"[Recent channel messages]\nSam: {ASK}\n\n[New message]\nhi", ""),
    (f"[Sam] {ASK}", ""),
    (f'"{ASK}"', ""),
    (f'[Replying to: "x"]\n\n[Sam] {ASK}', ""),
    (42, ""),
])
def test_what_of_a_turn_the_person_typed(message: str, typed: str) -> None:
    assert typed_text(message) == typed
