"""What of a Hermes turn the person typed: the turn's ``user_message`` without what Hermes added.

Hermes 0.17–0.20 gives plugins no hook with the raw input: ``pre_llm_call`` receives the turn's
user message after Hermes expanded it (``original_user_message`` in ``agent/turn_context.py``:
the model-switch and voice notes are already out, everything below is still in). So the plugin
takes out, by Hermes' own markers, what Hermes put in, and reads nothing it cannot place:

- ``@file:`` / ``@folder:`` / ``@diff`` / ``@staged`` / ``@git:`` / ``@url:`` references: Hermes
  removes the reference from the text and appends what it read after a line ``--- Attached
  Context ---`` (after ``--- Context Warnings ---`` when a reference failed;
  ``agent/context_references.py``). Everything from the first such line on is cut: a file's own
  fence cannot close it, since nothing after the marker is read at all.
- a reply on a messaging platform: ``[Replying to your previous message: "…"]`` or ``[Replying to:
  "…"]`` before the text (``gateway/run.py``; the quoted message is at most 500 characters of
  anyone's text, the model's own included). Everything up to the last ``"]`` + blank line is cut,
  so a quote holding that mark only cuts more.
- Discord's ``[Triggering message id: `…` …]`` line.
- Anything else Hermes puts before the text starts with ``[`` (documents and their inlined
  content, voice and video notes, image descriptions, channel history, a group member's name,
  a ``/skill`` invocation) or with ``"`` (a voice transcript): such a turn is not read at all,
  since where the person's words start cannot be told. A person whose own message starts with
  ``[`` or ``"`` loses nothing but the stamp: the write waits for review.
"""

from __future__ import annotations

import re

#: Where Hermes appends what ``@`` references read (``agent/context_references.py``).
ATTACHED = re.compile(r"^--- (?:Attached Context|Context Warnings) ---[ \t]*$", re.M)
#: How Hermes' gateway prefixes a reply (``gateway/run.py``, 0.17: the second form only).
REPLY_PREFIXES = ('[Replying to your previous message: "', '[Replying to: "')
REPLY_END = '"]\n\n'
_TRIGGER = re.compile(r"\A\[Triggering message id: `[^`\n]*` [^\n\]]*\]\n\n")
#: What a turn that starts with a Hermes note starts with: not read at all.
NOTE_STARTS = ("[", '"', "\u201c")


def typed_text(message: str) -> str:
    """The part of a Hermes turn's user message the person typed ("" when it cannot be told)."""
    if not isinstance(message, str):
        return ""
    cut = ATTACHED.search(message)
    if cut is not None:
        message = message[: cut.start()]
    if message.startswith(REPLY_PREFIXES):
        end = message.rfind(REPLY_END)
        if end < 0:
            return ""
        message = message[end + len(REPLY_END):]
    # only blank lines and trailing space go: a leading indent is the person's (an indented paste)
    message = _TRIGGER.sub("", message).rstrip().lstrip("\r\n")
    return "" if message.startswith(NOTE_STARTS) else message
