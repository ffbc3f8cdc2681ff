"""The secret rules' literal look-ups done in one Aho-Corasick pass give exactly what the
substring tests they replace gave (``rules._present``, ``public._gates``), on the generated
corpora (every kind planted, the benign public data), the benchmark's texts and generated ones."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from commonkeep.bench import secrets_templates
from commonkeep.bench.capture import WORKLOADS
from commonkeep.secrets import public, rules


def _texts() -> list[str]:
    texts = [text for _, text, _ in secrets_templates.planted(2, 5)] + secrets_templates.benign(600, 5)
    for name in ("mixed", "tokens"):
        texts += [text for text, _ in WORKLOADS[name](300, 5)]
    return texts + [t.upper() for t in texts] + [t.lower() for t in texts]


def _want_present(text: str) -> tuple[set[str], set[str], int]:
    low = text.lower()
    cs = {n for n in rules._ALL_CS if n in text}
    ci = {n for n in rules._ALL_CI if n in low}
    live = 0
    for i, (kind, _, needles, fold_case, _, _) in enumerate(rules._PLAN):
        if kind == "hex_key" or not needles.isdisjoint(ci if fold_case else cs):
            live |= 1 << i
    return cs, ci, live


def _want_gates(text: str) -> int:
    low = text.lower()
    return sum(1 << i for i, (literals, _, _) in enumerate(public._GATED) if any(w in low for w in literals))


def _same(text: str) -> None:
    assert rules._present(text, text.lower()) == _want_present(text), text
    assert public._gates(text.lower()) == _want_gates(text), text


def test_the_corpora() -> None:
    for text in _texts():
        _same(text)


_PIECES = sorted(set(rules._ALL_CS) | set(rules._ALL_CI) | {w for literals, _, _ in public._GATED for w in literals})


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=5)), max_size=12), st.sampled_from(["", " ", "=", "\n"]))
def test_generated_texts(pieces: list[str], sep: str) -> None:
    _same(sep.join(pieces))
