"""The ``user_turn`` stamp: did the person ask, in words they typed, to remember exactly this?

A host adapter (the Hermes plugin, the OMP stamping pass) hands over what the person typed in
this session, as the host received it and before the host expanded it: never tool results, files,
web pages, the model's text, a tool's arguments, or what the host inlined into the turn (Hermes'
attached context and reply quotes, OMP's prompt templates). It stamps a candidate ``origin:
"user_turn"`` only when :func:`supported` finds that the person asked for that statement to be
remembered. The rule (version :data:`RULE`, documented in ``docs/security.md``, "The user_turn
stamp"):

1. **An explicit request.** A sentence (or a line) of the person's starts with a request to
   remember: "remember that …", "remember: …", "please remember …", "don't forget: …", "note for
   memory: …", "save to memory: …", "note: …", their German, French, Spanish, Portuguese, Russian,
   Japanese and Chinese equivalents, or the hosts'
   ``/commonkeep-remember …`` (:data:`~commonkeep.gate.user_turn_words.FORMS`), after at most a
   few words such as "ok", "and", "please". A request that is negated, asked ("can you remember
   …?"), reported ("Bob said remember that …"), set in a condition ("if …, remember that …") or
   placed anywhere else in a sentence is not one.
2. **The clause it names.** What the request names is the rest of its sentence. It is refused when
   it asks or supposes (it starts with "should", "what", "if", "suppose" …, or ends in a question
   mark or a tag such as ", right"), or says too little (under two words).
3. **That clause, nearly verbatim.** The statement is stamped only when it equals the clause after
   normalisation: case, spacing, the punctuation around words, contractions, a leading request of
   its own, and the person's perspective ("I" / "my" = "the user" / "the user's", "we" / "our" =
   "the team" / "the team's", with the verb that follows agreeing). Anything else — a word, a
   number, a negation, a scope dropped or added, another tense — waits for review.
4. **Only requests, and only the person's own words.** The message must be nothing but requests
   (and courtesies such as "ok", "thanks"): a sentence beside them of any kind — a question, a
   supposition, a scope ("For this project."), a source ("Message from Sam."), a retraction, a line
   of prose pasted around it — stamps nothing, since what it does to the request cannot be weighed
   by words. Nor does a message that holds anything pasted or quoted (:func:`clean_message` cuts
   something: a fenced block, ``>`` lines, a tagged document, a long quotation), a line shaped like a
   paste (a mail's headers, a log, a chat export, a speaker's "Name: …", a table, indented code), or
   words saying it is about a paste ("summarise", "the following").
5. **The latest message, not taken back.** Only the person's latest message before the write counts:
   a write made after they said more is not the one they asked for. A message that takes something
   back, mocks or supposes ("just kidding", "/s", "suppose …") stamps nothing.
6. **Plain text.** The statement holds no invisible or control characters and reads the same after
   Unicode NFKC.

Everything the model infers from the conversation, however faithful, waits for review.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from commonkeep.gate import user_turn_words as words

#: The rule's version, recorded in every stamp (``provenance.user_turn.rule``).
RULE = "user_turn/3"
ORIGIN = "user_turn"
TRUST = "direct_user_instruction"
#: The confidence a verified statement carries: the person's own request, checked by code (OmpKeep
#: gives a strongly worded correction of the person 0.90). Over the curator's gate (0.75) and the
#: high-only threshold (0.85); the policy still holds it when detection scores it medium or high.
CONFIDENCE = 0.9

_FILLER = r"(?:(?:" + "|".join(words.FILLERS) + r")\s*[,:!]?\s+)*"
_REQUEST = re.compile(r"^" + _FILLER + r"(?:" + "|".join(words.FORMS) + r")[\s,:\u2014\u2013-]*", re.I)
_FILLER_ONLY = re.compile(r"^(?:(?:" + "|".join(words.FILLERS) + r")\W*)+$", re.I)
_POLITE_START = re.compile(r"^(?:please|pls|bitte|por\s+favor|s'il\s+(?:te|vous)\s+pla[iî]t)\b[\s,:]*", re.I)
#: The hosts' own remember command, typed as a whole message (OMP's extension command).
_COMMAND = re.compile(r"^\s*/commonkeep-remember\s+")
#: "… please." at the end of a clause is part of the request, not of what to remember.
_POLITE_END = re.compile(r"[,\s]+(?:please|pls|thanks|thank\s+you|bitte|danke|merci|s'il\s+(?:te|vous)\s+pla[iî]t|"
                         r"por\s+favor|gracias)\s*([.!]*)$", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?\u3002])[\"'\u201d\u2019)\]]*\s+")
_OPENERS = "\"'`\u201c\u201d\u2018\u2019([{<*_\u00ab\u201e"
_EDGE = _OPENERS + ")]}>.,;:!\u00bb\u3002\u3001"
#: Han, kana and hangul: written without spaces, so each counts as a word of its own when compared.
_CJK = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af])")


def _words(text: str) -> list[str]:
    return _CJK.sub(r" \1 ", text).split()
_MEMORY_CONTEXT = re.compile(r"<memory-context>.*?</memory-context>", re.S | re.I)
_UNSAFE = re.compile(r"[\u0000-\u0008\u000b-\u001f\u007f-\u009f]")
_CONTRACTIONS = (("won't", "will not"), ("can't", "can not"), ("cannot", "can not"), ("shan't", "shall not"),
                 ("n't", " not"), ("i'm", "i am"), ("we're", "we are"), ("i've", "i have"), ("we've", "we have"),
                 ("i'll", "i will"), ("we'll", "we will"), ("i'd", "i would"), ("we'd", "we would"))


@dataclass(frozen=True)
class Support:
    """Why a statement is (not) supported; ``message`` is the index of the supporting message."""

    ok: bool
    reason: str
    message: int | None = None
    digest: str | None = None


def message_text(content: Any) -> str:
    """The text of a host's user message: a string, or the text parts of a multimodal list (the
    shape Hermes and OMP both use); anything else has no words of the person's."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def message_digest(message: str) -> str:
    """sha256 of a user message as the host gave it: recorded in the stamp instead of the text."""
    return hashlib.sha256(message.encode("utf-8", "surrogatepass")).hexdigest()


# -- what the person pasted or cites -------------------------------------------------------------
# It is in their message but is not their word (a web page, a mail, a file): a request planted in
# it must never read as theirs. What is cut becomes a line break, so no clause runs across it.
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)
_QUOTE_LINE = re.compile(r"^[ \t]*>.*$", re.M)
_TAGGED = re.compile(r"<([A-Za-z][\w:.-]*)(?:\s[^<>]*)?>.*?</\1\s*>", re.S)
_QUOTED = re.compile(r"[\"\u201c\u201d\u00ab\u00bb\u201e]([^\"\u201c\u201d\u00ab\u00bb\u201e\n]*)[\"\u201c\u201d\u00ab\u00bb\u201e]")
_CUT = "\n"


def _pasted(match: re.Match[str]) -> str:
    return _CUT if "\n" in match.group(0) or len(match.group(0)) > 200 else match.group(0)


def _quoted(match: re.Match[str]) -> str:
    return _CUT if len(match.group(1).split()) >= 4 else match.group(0)  # a short "make release" stays


def clean_message(message: str) -> str:
    """A user message as the person wrote it: Hermes' recalled ``<memory-context>`` fence removed, and
    what the person pasted or quoted: fenced blocks (`````` ``` `````` / ``~~~``, to the end when
    unclosed), ``>`` quote lines (a mail or a forum post), tagged blocks of several lines or over 200
    characters (``<document>…</document>``), and text of four words or more in double quotes."""
    text = _MEMORY_CONTEXT.sub(_CUT, message)
    text = _FENCE.sub(_CUT, text)
    text = _QUOTE_LINE.sub("", text)
    text = _TAGGED.sub(_pasted, text)
    return _QUOTED.sub(_quoted, text)


# -- the requests in one message -----------------------------------------------------------------
def _plain(text: str) -> str:
    return unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2018", "'")


def _taken_back(text: str) -> bool:
    """The message takes something back, mocks or supposes: nothing in it is a request."""
    if words.REFUSALS.search(text):
        return True
    return any(words.TAKEN_BACK.match(s.strip()) for line in text.splitlines() for s in _SENTENCE_END.split(line))


def _clause(rest: str) -> str | None:
    """The clause a request names (the rest of its sentence), or ``None`` when it asks, supposes or
    says too little."""
    clause = _POLITE_END.sub(r"\1", _POLITE_START.sub("", rest.strip().strip(",;:\u2014\u2013-").strip()))
    if (re.search(r"[?\u061f](?!\w)", clause) or "\u00bf" in clause or words.TAG_QUESTION.search(clause.rstrip(".!"))
            or words.REPORTED_TAIL.search(clause)):
        return None
    first = [w.strip(_EDGE).casefold() for w in _words(clause)[:2]]
    if len(first) < 2:
        return None
    if first[0] in words.NOT_A_STATEMENT and not (first[0] == "do" and first[1] == "not"):
        return None
    if tuple(first) in words.NOT_A_STATEMENT_PAIRS:
        return None
    return clause


def requests(message: str) -> list[str]:
    """The clauses the person explicitly asked to remember in ``message`` (already only what they
    typed), in order. None unless the message is **only** requests (rule 4): every sentence of it a
    request whose clause stands, the clause of a bare request ("Remember:" and the next line), or a
    courtesy ("ok", "thanks"). Anything else beside a request (a question, a supposition, a scope, a
    source, a retraction, a paste) is something the rule cannot weigh, so nothing is read; nor in a
    message that takes something back or holds anything pasted or quoted."""
    if not isinstance(message, str):
        return []
    own = _MEMORY_CONTEXT.sub(_CUT, _plain(message))
    text = clean_message(own)
    if text != own or _taken_back(text):
        return []
    command = _COMMAND.match(text)
    if command is not None:  # the host's remember command: all of its argument is the clause
        clause = _clause(text[command.end():])
        return [clause] if clause is not None else []
    lines = text.split("\n")
    if words.ABOUT_A_PASTE.search(text) or any(_pasted_line(line) for line in lines if line.strip()):
        return []
    found: list[str] = []
    bare = False  # the line before ended in a bare request ("Remember:"): this line is its clause
    for line in lines:
        for sentence in (s for s in _SENTENCE_END.split(line.strip()) if s.strip()):
            if bare:  # a bare request ends its line: this is the next line's first sentence
                bare, rest = False, sentence
            elif (m := _REQUEST.match(sentence)) is not None:
                rest = sentence[m.end():]
                if not rest.strip():
                    bare = True  # nothing can follow a bare request in its line: a sentence ends in . ! ?
                    continue
            elif _FILLER_ONLY.match(sentence.strip(_EDGE + " ")):
                continue  # "Thanks!", "ok."
            else:
                return []  # a sentence that is not a request: the message is more than requests
            clause = _clause(rest)
            if clause is None:
                return []  # a request that asks or supposes: nothing in this message is read
            found.append(clause)
    return [] if bare else found


def _pasted_line(line: str) -> bool:
    """A line of something pasted (``PASTED_LINE``), or a speaker's line that is not a request."""
    own = line.strip()
    return bool(words.PASTED_LINE.match(line)
                or (words.SPEAKER_LINE.match(own) and not _REQUEST.match(own) and not _FILLER_ONLY.match(own)))


# -- the statement against a clause --------------------------------------------------------------
_USER = "\x00user"  # the person speaking of themselves ("I", "my"), or the model of them ("the user")
_TEAM = "\x00team"  # the person speaking for their team ("we", "our"), or the model of it ("the team")
_PERSPECTIVE = {
    ("the", "user"): _USER, ("the", "person"): _USER, ("the", "team"): _TEAM,
    ("the", "user's"): _USER + "'s", ("the", "person's"): _USER + "'s", ("the", "team's"): _TEAM + "'s",
}
_PERSPECTIVE_WORDS = {
    "i": _USER, "me": _USER, "myself": _USER, "user": _USER, "my": _USER + "'s", "mine": _USER + "'s",
    "user's": _USER + "'s", "we": _TEAM, "us": _TEAM, "ourselves": _TEAM, "team": _TEAM, "our": _TEAM + "'s",
    "ours": _TEAM + "'s", "team's": _TEAM + "'s",
}
_VERB_FORMS = {"am": "be", "is": "be", "are": "be", "has": "have", "have": "have", "does": "do", "do": "do",
               "was": "was", "were": "was"}
_ADVERBS = frozenset({"always", "never", "usually", "often", "also", "only", "still", "just", "really", "mostly",
                      "generally", "typically", "sometimes", "rarely", "now", "currently", "all", "both", "not"})


def _agree(verb: str) -> str:
    """A verb after "I" / "we" / "the user" / "the team", in one form: "prefer" = "prefers"."""
    if verb in _VERB_FORMS:
        return _VERB_FORMS[verb]
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return verb[:-2]
    if verb.endswith("s") and not verb.endswith("ss") and len(verb) > 3:
        return verb[:-1]
    return verb


def _tokens(text: str) -> list[str]:
    """A clause or a statement as compared: case, spacing, the punctuation around words,
    contractions and the person's perspective do not count; everything else does."""
    text = _plain(text).casefold()
    for short, long in _CONTRACTIONS:
        text = text.replace(short, long)
    raw = [t for t in (tok.lstrip(_OPENERS).rstrip(_EDGE) for tok in _words(text)) if t]
    out: list[str] = []
    i = 0
    while i < len(raw):
        pair = tuple(raw[i:i + 2])
        if pair in _PERSPECTIVE:
            out.append(_PERSPECTIVE[pair])
            i += 2
        else:
            out.append(_PERSPECTIVE_WORDS.get(raw[i], raw[i]))
            i += 1
    # the verb after a perspective subject agrees with it: "I prefer" = "the user prefers"
    for j, tok in enumerate(out):
        if tok in (_USER, _TEAM):
            k = j + 1
            while k < len(out) and out[k] in _ADVERBS:
                k += 1
            if k < len(out) and not out[k].startswith("\x00"):
                out[k] = _agree(out[k])
    return out


def _statement_tokens(statement: str) -> list[str]:
    """A statement's tokens, its own leading request ("Remember that …") dropped."""
    text = _plain(statement).strip()
    m = _REQUEST.match(text)
    return _tokens(text[m.end():] if m else text)


def same_clause(statement: str, clause: str) -> bool:
    """Whether ``statement`` says ``clause`` nearly verbatim (rule 3)."""
    said = _tokens(clause)
    return len(said) >= 2 and _statement_tokens(statement) == said


def supported(statement: str, messages: Sequence[str]) -> Support:
    """Whether the person asked, in their latest message of ``messages`` (what they typed, oldest
    first), to remember exactly ``statement``. Only the latest counts: a write made after the person
    said something more (took it back, corrected it, changed the subject) is not the one they asked
    for, whatever words they used (rule 5)."""
    if not isinstance(statement, str) or not statement.strip():
        return Support(False, "empty statement")
    if _UNSAFE.search(statement) or any(unicodedata.category(c) == "Cf" for c in statement):
        return Support(False, "the statement holds invisible or control characters")
    if unicodedata.normalize("NFKC", statement) != statement:
        return Support(False, "the statement is not plain text (it changes under Unicode NFKC)")
    latest = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], str)), None)
    if latest is not None and any(same_clause(statement, clause) for clause in requests(messages[latest])):
        return Support(True, "the person asked to remember exactly this", latest, message_digest(messages[latest]))
    if latest is not None and any(any(same_clause(statement, c) for c in requests(m)) for m in messages[:latest]
                                  if isinstance(m, str)):
        return Support(False, "the person asked to remember this, but said more since (only a request in their latest "
                              "message counts)")
    return Support(False, "the person did not ask to remember exactly this (a message that is only an explicit request "
                          "such as \"remember that …\", the same words up to case, punctuation and perspective)")


def stamp(provenance: dict[str, object], *, host: str, stamped_by: str, session_id: str, support: Support,
          **extra: object) -> dict[str, object]:
    """``provenance`` with the ``user_turn`` stamp: what was verified, never the message itself."""
    out = dict(provenance)
    if out.get("origin") and out.get("origin") != ORIGIN:
        out["write_origin"] = out["origin"]
    out.update(stamped_by=stamped_by, origin=ORIGIN)
    out["user_turn"] = {"rule": RULE, "host": host, "session_id": session_id,
                        "message_sha256": support.digest, "message_index": support.message, **extra}
    return out


def stamp_from_hosts(store: object, candidates: list[dict[str, object]]) -> list[str]:
    """The stamping pass ``curate`` runs before proposing: hosts whose candidates are written
    outside commonkeep (OMP: OmpKeep's tools) are verified now against what the host recorded the
    person typing. Returns the ids stamped; a failure stamps nothing (the candidates wait for review)."""
    from commonkeep.plugins import plugin_manager

    stamped, errors = plugin_manager().stamp_candidates(store, candidates)
    if errors:
        import logging

        logging.getLogger("commonkeep").warning("user_turn: a stamping pass failed: %s", "; ".join(errors))
    return stamped
