"""The pre-check's dispatch (``rules.plan``): it searches the rules ``find`` would run, in ``find``'s
order, and ``find`` then starts at the first that matches. It must select every rule that matches a
text (else ``find`` would skip one that claims something), and ``find`` after it must find exactly
what ``find`` alone finds."""

from __future__ import annotations

import random
import string

import pytest

from commonkeep.bench import secrets_templates
from commonkeep.bench.capture import WORKLOADS
from commonkeep.secrets import precheck, rules
from tests.governance.test_secrets_scan import _texts_around_every_rule


def _rare(rng: random.Random) -> list[str]:
    """The shapes the generated texts rarely hold: a wallet key, an FCM server key, an Asana token, a
    token said not to be shared, a password named after its value."""
    def r(chars: str, k: int) -> str:
        return "".join(rng.choice(chars) for _ in range(k))

    hexd, alnum = "0123456789abcdef", string.ascii_letters + string.digits
    return [f"wallet private key: 0x{r(hexd, 64)}", f"fcm AAAA{r(alnum, 7)}:APA91b{r(alnum + '_-', 120)}",
            f"asana 1/{r(string.digits, 13)}:{r(hexd, 32)} ok", f"{r(alnum, 24)} (do not share)",
            f"{r(alnum, 10)} is my new wifi password", f"app -p {r(alnum, 10)} -u admin start"]


def _corpus() -> list[str]:
    rng = random.Random(9)
    texts = _texts_around_every_rule(6000) + [t for _ in range(20) for t in _rare(rng)]
    texts += [text for seed in (1, 2, 11) for _, text, _ in secrets_templates.planted(6, seed)] + secrets_templates.benign(1500, 11)
    for name in ("mixed", "tokens"):
        texts += [text for text, _ in WORKLOADS[name](600, 11)]
    return [t for t in texts if t.isascii()]  # ``plan`` is asked of ASCII text (the pre-check scans the rest whole)


def _matching(text: str) -> list[int]:
    """The rules ``find`` would run on ``text`` whose pattern matches it, in ``find``'s order, worked
    out without ``literals.Wanted`` (each rule's literals looked up one by one)."""
    low = text.lower()
    ci = {n for n in rules._ALL_CI if n in low}
    hexy = rules._HEX32.search(text) is not None
    out = []
    for i, (kind, pattern, needles, fold_case, gate, context) in enumerate(rules._PLAN):
        wanted = kind == "hex_key" or any(n in (low if fold_case else text) for n in needles)
        if not wanted or (kind in ("hex_key", "prefixed_hex_token") and not hexy):
            continue
        if (gate is not None and gate.isdisjoint(ci)) or (context is not None and not context(low)):
            continue
        if pattern.search(text) is not None:
            out.append(i)
    return out


def _selects(text: str, matching: list[int]) -> bool:
    """Does ``plan`` say yes exactly where a rule matches, start ``find`` at the first that matches,
    and leave every one that matches to ``find``?"""
    said = rules.plan(text, text.lower())
    planned = rules._PLANNED
    if planned[0] != text or said != bool(matching):
        return False
    live = planned[1]
    return not matching or (live & -live).bit_length() - 1 == matching[0] and all(live >> i & 1 for i in matching)


@pytest.fixture(scope="module")
def corpus() -> list[tuple[str, list[int]]]:
    return [(t, _matching(t)) for t in _corpus()]


def test_plan_selects_every_rule_that_matches_a_text(corpus: list[tuple[str, list[int]]]) -> None:
    assert sum(1 for _, m in corpus if m) > 2000
    assert [t for t, m in corpus if not _selects(t, m)] == []


def test_every_rule_is_matched_by_the_corpus_so_dropping_one_from_the_plan_fails(
        corpus: list[tuple[str, list[int]]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation by hand: each rule in turn is dropped from what ``plan`` may select (its bit cleared
    from the rules the text's literals want), and the property above must then fail on a text."""
    first: dict[int, str] = {}
    for text, matching in corpus:
        for i in matching:
            first.setdefault(i, text)
    # the rules that cannot match ASCII text: the password words of Japanese, Chinese and Korean, and Russian's
    # "пароль от роутера X" with no verb
    unmatched = [rules._PLAN[i][1].pattern for i in range(len(rules._PLAN)) if i not in first]
    assert len(unmatched) == 2 and {"пароль" in p or "パスワード" in p for p in unmatched} == {True}, unmatched
    present = rules._WANTED.present
    for i, text in first.items():
        monkeypatch.setattr(rules._WANTED, "present", lambda t, low, i=i: (lambda r: (r[0], r[1], r[2] & ~(1 << i)))(present(t, low)))
        assert not _selects(text, _matching(text)), rules._PLAN[i][0]
        monkeypatch.undo()


def test_find_after_plan_finds_what_find_alone_finds(corpus: list[tuple[str, list[int]]]) -> None:
    texts = [t for t, _ in corpus]
    rng = random.Random(4)
    texts = rng.sample(texts, 6000) + [t for t, m in corpus if m]
    for text in texts:
        rules._PLANNED = (None, 0, set(), False, None, None)
        alone = rules.find(text)
        rules.plan(text, text.lower())
        assert rules.find(text) == alone, text


def test_the_pre_check_uses_the_plan_and_stays_exact(corpus: list[tuple[str, list[int]]]) -> None:
    """Where ``plan`` finds no rule that matches (and the text has no card number), the pre-check goes
    on to the runs the shape rules read: it says no only where ``find`` finds nothing."""
    for text, _ in corpus:
        rules._PLANNED = (None, 0, set(), False, None, None)
        if not precheck.needs_scan(text):
            assert rules.find(text) == [], text


def test_one_pass_for_the_lower_cased_literals_and_the_narrowing_gives_what_two_gave(
        corpus: list[tuple[str, list[int]]]) -> None:
    """``literals.Wanted.present`` looks up the rules' lower-cased literals and the patterns' own
    (narrowing) in one automaton once narrowing is worked out: the same literals and rules as the
    two passes it replaced."""
    wanted = rules._WANTED
    for text, _ in corpus[:40]:
        wanted.present(text, text.lower())  # narrowing is worked out after a few asks
    assert wanted._joint is not None and wanted._narrow is not None
    for text, _ in corpus:
        low = text.lower()
        cs, ci, live = wanted.present(text, low)
        want_cs = {n for n in rules._ALL_CS if n in text}
        want_ci = {n for n in rules._ALL_CI if n in low}
        want_live = wanted.always
        for i, n in enumerate(wanted.cs):
            if n in want_cs:
                want_live |= wanted._want_cs[i]
        for i, n in enumerate(wanted.ci):
            if n in want_ci:
                want_live |= wanted._want_ci[i]
        assert (cs, ci, live) == (want_cs, want_ci, want_live & wanted._could_match(low)), text
