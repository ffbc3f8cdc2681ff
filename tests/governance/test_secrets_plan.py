"""The pre-check's dispatch (``rules.plan``): it runs the rules ``find`` would run, in ``find``'s order,
until one claims something, and ``find`` then goes on from there. It must say yes exactly where a rule
claims something (else the pre-check could let a secret through), leave every later rule to ``find``,
and ``find`` after it must find exactly what ``find`` alone finds."""

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
    token said not to be shared, a password named after its value, a backup's password."""
    def r(chars: str, k: int) -> str:
        return "".join(rng.choice(chars) for _ in range(k))

    hexd, alnum = "0123456789abcdef", string.ascii_letters + string.digits
    return [f"wallet private key: 0x{r(hexd, 64)}", f"fcm AAAA{r(alnum, 7)}:APA91b{r(alnum + '_-', 120)}",
            f"asana 1/{r(string.digits, 13)}:{r(hexd, 32)} ok", f"{r(alnum, 24)} (do not share)",
            f"{r(alnum, 10)} is my new wifi password", f"app -p {r(alnum, 10)} -u admin start",
            f"the backup is encrypted with {r(alnum, 10)}#7"]


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


def _first_claim(text: str, matching: list[int]) -> int | None:
    """The first of the rules that match ``text`` to claim something in it (``_Pass._claims``, a rule's
    values judged as ``find`` judges them): before it nothing is masked, so each reads the text as written."""
    for i in matching:
        kind, pattern, *_ = rules._PLAN[i]
        if rules._Pass(text, text.lower(), None)._claims(kind, pattern):
            return i
    return None


def _selects(text: str, matching: list[int]) -> bool:
    """Does ``plan`` say yes exactly where a rule claims something, stop after the first that does (its
    spans, and only its, kept for ``find``) and leave every later rule that matches to ``find``? Where
    none claims, it leaves ``find`` no rule to run and nothing claimed."""
    said = rules.plan(text, text.lower())
    planned, first = rules._PLANNED, _first_claim(text, matching)
    state = planned[2]
    if planned[0] != text or state is None or said != (first is not None):
        return False
    if first is None:
        return state.live == 0 and state.spans == []
    kind = rules._PLAN[first][0]
    return bool(state.spans) and {k for *_, k in state.spans} == {kind} and all(state.live >> i & 1 for i in matching if i > first)


@pytest.fixture(scope="module")
def corpus() -> list[tuple[str, list[int]]]:
    return [(t, _matching(t)) for t in _corpus()]


def test_plan_says_yes_exactly_where_a_rule_claims_something(corpus: list[tuple[str, list[int]]]) -> None:
    claims = [t for t, m in corpus if _first_claim(t, m) is not None]
    assert len(claims) > 2000
    # texts where a rule matches but keeps nothing ("the password is in the vault"): ``plan`` says no, and
    # the pre-check goes on to the runs, as for a text no rule matches
    assert sum(1 for t, m in corpus if m and _first_claim(t, m) is None) > 300
    assert [t for t, m in corpus if not _selects(t, m)] == []


def test_every_rule_is_matched_by_the_corpus_so_dropping_one_from_the_plan_fails(
        corpus: list[tuple[str, list[int]]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation by hand: each rule in turn is dropped from what ``plan`` may select (its bit cleared
    from the rules the text's literals want), and the property above must then fail on a text: one
    where the rule claims first, else one where it matches after the first rule that claims."""
    first: dict[int, str] = {}
    later: dict[int, str] = {}
    for text, matching in corpus:
        claimer = _first_claim(text, matching)
        if claimer is not None:
            first.setdefault(claimer, text)
            for i in matching:
                if i > claimer:
                    later.setdefault(i, text)
    chosen = later | first
    # the rules that cannot match ASCII text: the password words of Japanese, Chinese and Korean, and Russian's
    # "пароль от роутера X" with no verb
    unmatched = [rules._PLAN[i][1].pattern for i in range(len(rules._PLAN)) if i not in chosen]
    assert len(unmatched) == 2 and {"пароль" in p or "パスワード" in p for p in unmatched} == {True}, unmatched
    present = rules._WANTED.present
    for i, text in chosen.items():
        monkeypatch.setattr(rules._WANTED, "present", lambda t, low, i=i: (lambda r: (r[0], r[1], r[2] & ~(1 << i)))(present(t, low)))
        assert not _selects(text, _matching(text)), rules._PLAN[i][0]
        monkeypatch.undo()


def test_find_after_plan_finds_what_find_alone_finds(corpus: list[tuple[str, list[int]]]) -> None:
    texts = [t for t, _ in corpus]
    rng = random.Random(4)
    texts = rng.sample(texts, 6000) + [t for t, m in corpus if m]
    for text in texts:
        rules._PLANNED = (None, None, None)
        alone = rules.find(text)
        rules.plan(text, text.lower())
        assert rules.find(text) == alone, text


def test_the_pre_check_uses_the_plan_and_stays_exact(corpus: list[tuple[str, list[int]]]) -> None:
    """Where ``plan`` finds no rule that matches (and the text has no card number), the pre-check goes
    on to the runs the shape rules read: it says no only where ``find`` finds nothing."""
    for text, _ in corpus:
        rules._PLANNED = (None, None, None)
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
