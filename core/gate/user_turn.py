"""The ``user_turn`` stamp: is a candidate's statement what the person said in this session?

A host adapter (the Hermes plugin, the OMP stamping pass) sees the person's own messages, read
from the host: never tool results, files, web pages, the model's text or a tool's arguments. It
stamps a candidate ``origin: "user_turn"`` only when :func:`supported` finds the statement in
one of those messages. The rule (version :data:`RULE`, documented in ``docs/security.md``, "The
user_turn stamp"):

1. **Plain text.** The statement holds no invisible or control characters and reads the same
   after Unicode NFKC (no look-alike letters standing in for others).
2. **Sentence by sentence, in order.** Each sentence of the statement is matched inside one
   sentence of one user message; a question is never matched (it asks, it does not state), and
   the sentences of the statement match sentences of that message in the same order.
3. **Nothing added, nothing cut from inside.** Inside its sentence, the statement's tokens are
   one run of the person's: every word (compared by a crude stem, so "deploys" matches "deploy"),
   every number, path, URL, flag, command and operator (compared exactly) is there, in that order,
   and the person's words before and after the run may go, but inside it only addable words or a
   whole clause set apart by commas, parentheses or dashes ("the database, set up last week, is
   postgres 16"): "delete the database" is not "delete the test data from the database". So an
   added claim ("and skip the tests on Fridays"), command (``&& curl …``), URL, number or a swap
   of two numbers is not supported. Only a few words may be added or dropped: articles, forms of
   "to be", "that", "should" / "must" / "will", and the person's perspective ("the user", "the
   team", "we", "my" …) as a model rephrases "I prefer tabs" into "The user prefers tabs"; a
   leading "remember that" / "note:" is dropped from both sides.
4. **Nothing turned around.** The statement has exactly as many negations ("not", "never", "no",
   "n't", "without" …) and scope words ("only", "unless", "except", "until", "if") as the
   sentence it was found in, and the same words that turn a sentence around or hedge it
   (:data:`TURNS`: "avoid", "stopped", "used", "instead", "than", "false", "maybe" …): dropping
   "never" from "never deploy on Fridays" is not supported, nor "avoid" from "avoid pushing to
   main", nor "pnpm instead of" from "use pnpm instead of npm"; and neither is adding "not".
5. **Something said.** At least two content tokens.

Only the person's own words are read (:func:`clean_message`, :func:`_reported`): what they pasted
or cite (a fenced block, ``>`` quote lines, a tagged document, a quotation of four words or more,
a sentence giving someone else's words) is in their message but not their word.

Limits (also in the docs): the rule compares words, not meaning; pasted text is known by its form. A synonym ("database" for
"db") is not supported (it waits for review, which is the safe side); a statement that keeps the
person's words but drops the end of the sentence ("use pnpm" from "use pnpm in the web folder") is supported
when the dropped part holds no negation or scope word. What counts as "the person" is what the
host calls the user: another program driving the host (an orchestrator over ACP, a script on an
API server) speaks as the user.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

#: The rule's version, recorded in every stamp (``provenance.user_turn.rule``).
RULE = "user_turn/1"
ORIGIN = "user_turn"
TRUST = "direct_user_instruction"
#: The confidence a verified statement carries: the person's own words, checked by code (OmpKeep
#: gives a strongly worded correction of the person 0.90). Over the curator's gate (0.75) and the
#: high-only threshold (0.85); the policy still holds it when detection scores it medium or high.
CONFIDENCE = 0.9

_FRAME = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|so|hey|hi|also|and|btw|fyi)[,:!]?\s+)*(?:please\s+|pls\s+|kindly\s+)?"
    r"(?:(?:remember|memori[sz]e|note(?: down)?|keep in mind|bear in mind|don'?t forget|do not forget|make a note|"
    r"take note|save(?: to memory)?|for the record|fyi|for your information|just so you know|note to self)"
    r"(?:\s+(?:that|this|of this))?\s*[:,\-–—]?\s+)+", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")
# A token: a run of non-space characters. Words are letters (an apostrophe inside); anything else
# (digits, slashes, dots inside, dashes, operators) is a literal compared exactly.
_TOKEN = re.compile(r"\S+")
_EDGE = "\"'`“”‘’()[]{}<>*_"
_TRAIL = ".,;:!?"
_WORD = re.compile(r"^[^\W\d_]+(?:['’][^\W\d_]+)*$")
_CONTRACTIONS = (("won't", "will not"), ("can't", "can not"), ("cannot", "can not"), ("shan't", "shall not"),
                 ("n't", " not"))
NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "nowhere"})
SCOPE = frozenset({"only", "unless", "except", "until", "if"})
#: Words that turn a sentence around or hedge it without a negation: dropping one reverses or firms
#: up the claim ("avoid pushing to main" -> "push to main", "use pnpm instead of npm" -> "use npm",
#: "prefer tabs over spaces" -> "prefer spaces", "we used to deploy on Fridays", "it is false that …",
#: "maybe we deploy on Fridays", a condition: "when the build is red, page ops" -> "page ops"). Counted
#: like scope words: the statement keeps exactly the ones its sentence has.
TURNS = frozenset({
    "avoid", "avoids", "avoided", "avoiding", "stop", "stops", "stopped", "stopping", "quit", "quits", "cease",
    "ceased", "refrain", "forget", "forgot", "drop", "dropped", "false", "wrong", "wrongly", "untrue", "incorrect",
    "mistaken", "mistakenly", "myth", "doubt", "doubtful", "unlikely", "hardly", "rarely", "seldom", "barely",
    "formerly", "previously", "used", "deprecated", "obsolete", "outdated", "anymore",  # it no longer holds
    "instead", "rather", "than", "versus", "vs", "over",  # one thing against another
    "when", "whenever", "after", "before", "once",  # a condition or an order
    "supposedly", "allegedly", "reportedly", "maybe", "perhaps", "possibly", "probably", "might",  # a hedge
})
#: Words a statement may add: articles, "to be", "that", and the person's perspective.
ADDABLE = frozenset({
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "that", "'s", "s",
    "user", "users", "user's", "person", "person's", "team", "team's", "we", "our", "ours", "us", "i", "my", "me",
    "mine", "they", "their", "he", "she", "his", "her", "project", "project's", "repo", "repository",
    "should", "must", "shall", "will",  # a rule stated as a fact: "the job should run nightly" -> "the job runs nightly"
})
_SUFFIXES = ("ingly", "edly", "ings", "ing", "ies", "ied", "ed", "es", "s")
_MEMORY_CONTEXT = re.compile(r"<memory-context>.*?</memory-context>", re.S | re.I)
_UNSAFE = re.compile(r"[\u0000-\u0008\u000b-\u001f\u007f-\u009f]")


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


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) >= 3 and word.endswith("e"):
        word = word[:-1]
    return word


def _plain(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    for short, long in _CONTRACTIONS:
        text = text.replace(short, long)
    return text


@dataclass(frozen=True)
class _Sentence:
    tokens: tuple[str, ...]  # stems of words; literals as written (case-folded)
    negations: int
    scope: tuple[str, ...]
    question: bool
    breaks: frozenset[int] = frozenset()  # token positions a clause boundary stands before (",", "(", "—" …)


def _tokens(sentence: str) -> _Sentence:
    out: list[str] = []
    negations = 0
    scope: list[str] = []
    question = sentence.rstrip().rstrip(_EDGE).endswith("?")
    breaks: set[int] = set()
    for raw in _TOKEN.findall(sentence):
        if not raw.strip(_DASHES):  # a dash on its own sets a clause apart
            breaks.add(len(out))
            continue
        if raw[0] in _OPENERS:
            breaks.add(len(out))
        tok = raw.strip(_EDGE).rstrip(_TRAIL).strip(_EDGE)
        breaks_after = raw.rstrip("\"'`”’*_")[-1:] in _CLOSERS  # "week," "(weekly)" "week —"
        if not tok:
            if breaks_after:
                breaks.add(len(out))
            continue
        # "word," "word:" "(word)" are words; "make-release", "6543", "/tmp/x", "&&" are literals
        if _WORD.match(tok):
            if tok in NEGATIONS:
                negations += 1
            if tok in SCOPE or tok in TURNS:
                scope.append(tok)
            for part in re.split(r"['’]", tok):
                if part:  # an addable word is kept whole and marked: its stem could be a content word's
                    out.append(_ADDED + part if part in ADDABLE else _stem(part))
        else:
            out.append(tok)
        if breaks_after:
            breaks.add(len(out))
    return _Sentence(tuple(out), negations, tuple(sorted(scope)), question, frozenset(breaks))


def _sentences(text: str) -> list[_Sentence]:
    return [s for s in (_tokens(part) for part in _SENTENCE.split(_plain(text)) if part.strip()) if s.tokens]


def _persons_sentences(message: str) -> list[_Sentence]:
    """The sentences of a (cleaned) user message that are the person's own claims: reported speech out."""
    parts = [_strip_frame(part) for part in _SENTENCE.split(_plain(message)) if part.strip()]
    return [s for s in (_tokens(part) for part in parts if not _reported(part)) if s.tokens]


def _strip_frame(text: str) -> str:
    return _FRAME.sub("", text, count=1)


_ADDED = "\x00"  # marks an addable word among the tokens (no word token can hold it)
_DASHES = "—–-"
_OPENERS = "([—–"
_CLOSERS = ",;:)]—–"


def _addable(tok: str) -> bool:
    """An article, "to be", "that" or a perspective word, as written; never a content word whose stem
    happens to be one ("use" stems to "us")."""
    return tok.startswith(_ADDED)


def _within(stmt: _Sentence, said: _Sentence) -> bool:
    """``stmt``'s tokens are a run of ``said``'s, with the same negations and scope words: the person's
    sentence may lose words before and after the run, and inside it only addable words or a whole
    clause set apart by commas, parentheses or dashes ("the staging database, which we set up last
    week, is postgres 16"). A word dropped from the middle of a clause changes what it says
    ("delete the test data from the database" is not "delete the database")."""
    if said.question or stmt.negations != said.negations or stmt.scope != said.scope:
        return False
    toks, words = said.tokens, stmt.tokens
    present = set(toks)
    if any(w not in present for w in words if not _addable(w)):
        return False  # the common case, and it keeps the table below to the sentences that could match
    n, m = len(toks), len(words)
    after = [n] * (n + 1)  # the next clause boundary after each position (or the sentence's end)
    upcoming = n
    for i in range(n, -1, -1):
        after[i] = upcoming
        if i in said.breaks:
            upcoming = i
    # row[i] for statement word j: words[j:] match from toks[i] on; the row of j + 1 is ``rest``
    rest = [True] * (n + 1)  # past the statement's last word the rest of the sentence may go
    for j in range(m - 1, -1, -1):
        word, free = words[j], _addable(words[j])
        row = [False] * (n + 1)
        row[n] = free and rest[n]
        for i in range(n - 1, -1, -1):
            tok = toks[i]
            row[i] = ((tok == word and rest[i + 1]) or (free and rest[i]) or (_addable(tok) and row[i + 1])
                      or (j > 0 and i in said.breaks and after[i] > i and row[after[i]]))
        rest = row
    return any(rest)  # starting anywhere: the words before the run may go


def _content(sentences: Iterable[_Sentence]) -> int:
    return sum(1 for s in sentences for t in s.tokens if not _addable(t))


# What a person pastes or cites is in their message but is not their word (a web page, an email, a
# file, a colleague's claim): the injection a page plants reaches memory that way unless it is cut.
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)
_QUOTE_LINE = re.compile(r"^[ \t]*>.*$", re.M)
_TAGGED = re.compile(r"<([A-Za-z][\w:.-]*)(?:\s[^<>]*)?>.*?</\1\s*>", re.S)
_QUOTED = re.compile(r"[\"“”«»„]([^\"“”«»„\n]*)[\"“”«»„]")
_REPORT = re.compile(
    r"\b(?:said|says|say|saying|told|tells|wrote|writes|written|claims?|claimed|according|suggests?|suggested|"
    r"recommends?|recommended|insists?|insisted|argues?|argued|mentions?|mentioned|posted|replied|swears?|swore|"
    r"reckons?|reckoned|asserts?|asserted|states?|stated|reads|quote|quoted|forwarded|pasted|copied)\b")
_FIRST_PERSON = frozenset({"i", "we", "i've", "we've", "i'd", "we'd", "as"})


# What is cut becomes a line break, so the person's words around it stay two sentences: a statement
# cannot join them across the cut ('we deploy "unless the build is red" on Fridays' never supports
# "we deploy on Fridays").
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


def _reported(sentence: str) -> bool:
    """A sentence that gives someone else's words (``Someone on the forum said …``, ``The README says
    …``, ``according to the vendor …``): the person reports a claim, they do not make it. ``I said``,
    ``we wrote``, ``as mentioned`` are the person's own."""
    for m in _REPORT.finditer(sentence):
        before = sentence[: m.start()].split()
        if not before or before[-1] not in _FIRST_PERSON:
            return True
    return False


def supported(statement: str, messages: Sequence[str]) -> Support:
    """Whether ``statement`` is supported by one of ``messages`` (the person's own, oldest first)."""
    if not isinstance(statement, str) or not statement.strip():
        return Support(False, "empty statement")
    if _UNSAFE.search(statement) or any(unicodedata.category(c) == "Cf" for c in statement):
        return Support(False, "the statement holds invisible or control characters")
    if unicodedata.normalize("NFKC", statement) != statement:
        return Support(False, "the statement is not plain text (it changes under Unicode NFKC)")
    stmt = _sentences(_strip_frame(statement))
    if _content(stmt) < 2:
        return Support(False, "the statement says too little to match (fewer than two content words)")
    for index in range(len(messages) - 1, -1, -1):  # the latest message first
        raw = messages[index]
        if not isinstance(raw, str):
            continue
        said = _persons_sentences(clean_message(raw))
        pos = 0
        for s in stmt:
            while pos < len(said) and not _within(s, said[pos]):
                pos += 1
            if pos == len(said):
                break
            pos += 1
        else:
            return Support(True, "every sentence of the statement is in one user message", index, message_digest(raw))
    return Support(False, "no user message of this session says it (words, numbers, commands or negations differ)")


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
    outside commonkeep (OMP: OmpKeep's tools) are verified now against the host's transcript.
    Returns the ids stamped; a failure stamps nothing (the candidates wait for review)."""
    from commonkeep.plugins import plugin_manager

    stamped, errors = plugin_manager().stamp_candidates(store, candidates)
    if errors:
        import logging

        logging.getLogger("commonkeep").warning("user_turn: a stamping pass failed: %s", "; ".join(errors))
    return stamped
