"""Plain-text helpers shared by the extractor, the query and the grounding filter.

Sentences are the unit of evidence: every fact carries the sentence it came from, and the query
returns sentences, never paraphrases. Splitting is deliberately simple and predictable.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Abbreviations that end with a dot but do not end a sentence.
_ABBREVIATIONS = frozenset(
    ["e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "prof", "inc", "ltd", "co", "no", "fig", "approx", "st", "jr", "sr", "dept", "est"]
)
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'”’)\]]?\s+(?=[\"'“‘(\[]?[A-Z0-9ΦΑ-Ω])")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+|\d{1,2}\.\s+|[A-Z][\w &/-]{0,60}:\s*$)")
_WORD = re.compile(r"\w+(?:[-'.,]\w+)*", re.UNICODE)
_SPACE = re.compile(r"\s+")
# one line per message in an exported room transcript (contracts/roundtable.md §7.5)
_TRANSCRIPT_LINE = re.compile(r"^\[\d{4}-\d{2}-\d{2}T[^\]]*\]\s+\S+#\d+:\s")

STOPWORDS = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "even", "ever", "every", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "upon", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "afterward", "afterwards", "based", "known", "please", "yet", "us", "let", "lets"]
)


@dataclass(frozen=True)
class Sentence:
    """One sentence of a source: its text, position, and the heading it sits under."""

    ordinal: int
    text: str
    section: str


def collapse(text: str) -> str:
    """Collapse runs of whitespace into single spaces and strip the ends."""
    return _SPACE.sub(" ", text).strip()


def normalise(text: str) -> str:
    """Text for comparisons: NFKC, curly quotes straightened, whitespace collapsed, casefolded."""
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    return collapse(text).casefold()


def words(text: str) -> list[str]:
    """Word tokens, keeping identifiers like ``Tartarus-v3``, ``K-12`` and ``4,850,000`` whole."""
    return [w.strip(".,") for w in _WORD.findall(text) if w.strip(".,")]


def stem(word: str) -> str:
    """A light suffix stripper, enough for query/sentence overlap (policies ~ policy)."""
    w = word.casefold()
    if not w.isalpha() or len(w) <= 4:
        return w
    for suffix, keep in (("ies", "y"), ("ions", ""), ("ion", ""), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            return w[: -len(suffix)] + keep
    return w


def content_terms(text: str) -> list[str]:
    """Stemmed, casefolded content words (no stopwords, no one-letter words)."""
    out = []
    for w in words(text):
        low = w.casefold()
        if low in STOPWORDS or (len(low) < 2 and not low.isdigit()):
            continue
        out.append(stem(low))
    return out


def _split_block(block: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(block):
        head = block[start : m.start()].rstrip()
        last = head.split()[-1] if head.split() else ""
        if last.rstrip(".").casefold() in _ABBREVIATIONS or re.fullmatch(r"[A-Z]\.", last):
            continue
        pieces.append(block[start : m.end()].strip())
        start = m.end()
    pieces.append(block[start:].strip())
    return [p for p in pieces if p]


def split_sentences(text: str) -> list[Sentence]:
    """Split a document into sentences, remembering the heading each one sits under.

    Lines are kept apart when they are headings, list items or separated by a blank line;
    inside a paragraph, sentences end at ``.``, ``!`` or ``?`` followed by a capital or digit.
    """
    out: list[Sentence] = []
    section = ""
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            block = collapse(" ".join(paragraph))
            for piece in _split_block(block):
                out.append(Sentence(len(out), piece, section))
            paragraph.clear()

    for raw_line in text.splitlines():
        line = raw_line.strip()
        if not line:
            flush()
            continue
        if _TRANSCRIPT_LINE.match(line):
            flush()  # a new message starts a new block even without a blank line
            paragraph.append(line)
            continue
        if line.startswith(("- ", "* ", "• ")):
            flush()
            paragraph.append(line[2:])
            flush()
            continue
        if _HEADING.match(line) and len(line) <= 80 and not line.rstrip().endswith((".", "?", "!")):
            flush()
            section = collapse(line.lstrip("#").strip())
            out.append(Sentence(len(out), section, section))
            continue
        paragraph.append(line)
    flush()
    return out


def slugify(name: str) -> str:
    """A file-name-safe slug: lowercase word characters joined by hyphens, at most 80 chars."""
    text = unicodedata.normalize("NFKC", name).casefold()
    slug = re.sub(r"[^\w]+", "-", text, flags=re.UNICODE).strip("-_")
    slug = slug[:80].strip("-_")
    return slug or "untitled"
