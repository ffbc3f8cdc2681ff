"""The rules' net (``secrets/rule_net.py``): one Hyperscan pass that names the rules whose pattern
could match a text, so ``rules.plan`` searches only those. It must never leave out a rule whose
pattern matches (``plan`` would skip it and the pre-check let the secret through, or ``find`` start
after it), and with the net built the pre-check and the redactor answer as they
do without it."""

from __future__ import annotations

import os
import re
import sys
import threading

import pytest

from commonkeep.secrets import _redact_uncached, compiled, precheck, rule_net, rules
from commonkeep.secrets.lazy import lazy
from commonkeep.secrets.spans import mask
from tests.governance.test_secrets_plan import _corpus


@pytest.fixture
def net() -> object:
    """The net for the rules, built here if this process has none (the mutation run forgets it before each test)."""
    if not rule_net.ready(rules._PLAN):
        assert rule_net.build(rules._PLAN)
    return rule_net._STATE["net"]


# a claimed span masked out joins a match the text as written does not hold: ``find`` asks the net again of the
# masked text, and it must name every rule that matches it
JOINED = ["x=1 -w O&9{smbclient //h/s -U u%ymf(xe,s5/,tjt$N30asS`:agGge,$tF",
          ";6cb99081d9ecb3cb00497ea5f42014026 token58544136:AAeAsm2Dgtuj5oiJpWGSoM1MdUDoR8nH4I5b.M5s"]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """The plan's corpus (texts around every rule, the planted secrets, benign texts, both capture
    workloads) and each text as ``find``'s later rules see it: what the earlier rules claimed
    masked out (a mask can join a match)."""
    out = _corpus()[::2]
    masked = []
    for text in out:
        spans = rules.find(text)
        if spans:
            masked.append(mask(text, spans[:1]))
            masked.append(mask(text, spans))
    return out + masked + JOINED


def _missed(texts: list[str]) -> list[tuple[str, str]]:
    missed = []
    for text in texts:
        bits = rule_net.possible(text, rules._PLAN)
        assert bits is not None, repr(text)
        missed += [(kind, text) for i, (kind, pattern, *_) in enumerate(rules._PLAN) if not bits >> i & 1 and pattern.search(text)]
    return missed


def test_every_rule_whose_pattern_matches_a_text_is_in_the_net(net: object, texts: list[str]) -> None:
    assert len(texts) > 5000
    assert _missed(texts) == []
    assert rule_net._STATE["net"].always == 0  # every pattern is in the engine: none is run on every text
    # and it narrows: on most texts most rules are ruled out without a search
    ruled_out = sum(len(rules._PLAN) - bin(rule_net.possible(t, rules._PLAN) or 0).count("1") for t in texts)
    assert ruled_out > 0.9 * len(rules._PLAN) * len(texts)


def test_with_the_net_the_redactor_answers_as_without_it_and_the_pre_check_stays_exact(
        net: object, texts: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The same redaction of every text; the pre-check says no only where ``find`` finds nothing, and
    it lets hardly more through than without the net (where the old wide net said no and a rule's
    pattern matched all the same, the net says maybe: ``find`` then keeps the public id it matched)."""
    with_net = [(precheck.needs_scan(t), _redact_uncached(t)) for t in texts]
    assert sum(1 for scan, _ in with_net if scan) > 1000
    assert [t for t, (scan, (_, kinds)) in zip(texts, with_net, strict=True) if kinds and not scan] == []
    assert [t for t in texts if not precheck.needs_scan(t) and rules.find(t)] == []
    monkeypatch.setenv(rule_net.OFF, "0")  # no net built in the background while it is away
    built = rule_net._STATE.pop("net")
    try:
        assert rule_net.possible(texts[0], rules._PLAN) is None
        without = [(precheck.needs_scan(t), _redact_uncached(t)) for t in texts]
    finally:
        rule_net._STATE["net"] = built
    assert [r for _, r in with_net] == [r for _, r in without]
    assert sum(a for a, _ in with_net) <= 1.02 * sum(a for a, _ in without)


def test_a_text_the_two_engines_read_differently_gets_no_answer(net: object) -> None:
    """Python's ``\\s`` matches ``\\x1c``-``\\x1f`` and its case folding outside ASCII differs: such a
    text is searched rule by rule, as before the net."""
    assert rule_net.possible("password: hunter2hunter2\n\tok\r", rules._PLAN) is not None
    assert rule_net.possible("masked \x00\x00\x00 work", rules._PLAN) is not None
    for odd in ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x7f", "é", "\u2028", "\uff50"):
        assert rule_net.possible(f"password{odd}hunter2hunter2", rules._PLAN) is None, repr(odd)
    # the value after a password flag across a separator Python reads as a space
    for text in ("sshpass -p\x1cHunter2Hunter2x ssh h", "the password is\x1fHunter2Hunter2x", "Bearer\x1dabcdefABCDEF0123456789xyz"):
        assert rules.find(text) and precheck.needs_scan(text), repr(text)
    # a list of rules the net was not built for (a test's own) is not answered for
    assert rule_net.possible("password: hunter2hunter2", list(rules._PLAN)) is None


def test_each_pattern_is_widened_never_narrowed_for_the_engine() -> None:
    expr = rule_net._expression
    assert expr(lazy(r"(?:^|\n|>\s?)AUTH\s+\S{6}$")) == (r"(?:^|\n|>\s?)AUTH\s+\S{6}$", 0)  # anchors kept
    assert expr(lazy(r"(?:^|\n|>\s?)AUTH\s+\S{6}$"), anchors=False) == (r"(?:|\n|>\s?)AUTH\s+\S{6}", 0)  # ... or dropped
    assert expr(lazy(r"\Apw=\S+\Z")) == (r"pw=\S+", 0)
    assert expr(lazy(r"[^\n$^]{,4}x")) == (r"[^\n$^]{0,4}x", 0)  # Python's {,n} is {0,n}; a class keeps its ^ and $
    assert expr(lazy(r"[\w.-]{1,64}:[^\s]{4,200}")) == (r"[\w.-]{1,}:[^\s]{4,}", 0)  # wide repeats left open
    assert expr(lazy(r"\d{4,8}")) == (r"\d{4,8}", 0)
    assert expr(lazy(r"\\\^x")) == (r"\\\^x", 0)  # escaped: kept
    assert expr(lazy(r"[]^]x$")) == (r"[]^]x$", 0) and expr(lazy(r"[^]^]x^"), anchors=False) == (r"[^]^]x", 0)  # a "]" first in a class is a letter
    assert expr(lazy(r"(?i)parola(?:m|sı)?")) == (r"(?i)parola(?:m|s(?:I|i))?", 0)  # Python folds ı to i
    assert expr(lazy(r"[sı]+")) is None  # inside a class (perhaps negated): always run
    # the net reads ASCII text alone: a letter outside it matches nothing there, and leaves a class
    assert expr(lazy(r"(?i)contrase[ñn]a|mật khẩu")) == (r"(?i)contrase[n]a|m\xfft kh\xffu", 0)
    assert expr(lazy(r"[\"'“«]?(?P<v>[^\s\"'”»]{4,})")) == (r"[\"']?(?P<v>[^\s\"']{4,})", 0)
    assert expr(lazy(r"[“«]x[^”»]")) == (r"\xffx[\x00-\xff]", 0)  # left empty: nothing, or (negated) anything
    assert expr(lazy(r"[\w.'’-]+[-–—]")) == (r"[\w.'\-]+[\-]", 0)  # a "-" stays a letter (escaped: nothing makes it a range)
    assert expr(lazy(r"[’^a]x")) == (r"[\^a]x", 0)  # a "^" first now is escaped: it does not negate the class
    assert expr(lazy(r"[’]]x")) == (r"\xff]x", 0) and expr(lazy(r"[’\]]x")) == (r"[\]]x", 0)
    assert expr(lazy(r"[ -ÿ]")) is None and expr(lazy(r"[а-яa]")) == (r"[a]", 0)  # a range from ASCII out of it: always run
    assert expr(lazy(r"\u0041")) is None and expr(lazy(r"\N{EN DASH}")) is None
    assert expr(lazy(r"a b", re.VERBOSE)) is None
    assert expr(lazy(r"key", re.IGNORECASE)) == ("key", re.IGNORECASE)


def test_the_net_keeps_the_anchors_the_engine_takes_and_drops_those_it_refuses(net: object) -> None:
    """A rule anchored at a line's start (a config line) is not named for a text where its word stands
    mid-line; a pattern with an anchor inside it (after what it matches), which the engine refuses, is
    compiled without its anchors, not run on every text."""
    import hyperscan

    anchored = [i for i, (kind, pattern, *_) in enumerate(rules._PLAN) if pattern.flags & re.MULTILINE and "^[ \\t]*" in pattern.pattern]
    assert anchored
    inline = "the docs say: use password = hunter2hunter2x in the example, then restart"
    at_start = "password = hunter2hunter2x"
    bits_inline, bits_start = rule_net.possible(inline, rules._PLAN), rule_net.possible(at_start, rules._PLAN)
    assert bits_inline is not None and bits_start is not None
    assert any(bits_start >> i & 1 and not bits_inline >> i & 1 for i in anchored)
    refused = [i for i, (_, pattern, *_) in enumerate(rules._PLAN)
               if rule_net._expression(pattern) != rule_net._expression(pattern, anchors=False)
               and rule_net._compiled(hyperscan, [rule_net._expression(pattern)[0].encode()], [i],  # type: ignore[index]
                                      [hyperscan.HS_FLAG_PREFILTER | (hyperscan.HS_FLAG_MULTILINE if pattern.flags & re.M else 0)]) is None]
    assert refused and rule_net._STATE["net"].always == 0


def test_a_class_written_for_ascii_text_matches_every_ascii_character_the_class_did() -> None:
    """Random classes of ASCII and other letters, ranges, escapes, a "^", "-" and "]" anywhere: on every
    ASCII character, the class written for the net (read by Python here) matches wherever the class did."""
    import random
    import warnings

    from commonkeep.secrets import lazy as lazy_module

    rng = random.Random(21)
    made = len(lazy_module.MADE)  # the classes made here are taken out again: a later build compiles every lazy pattern
    members = ["a", "Z", "0", "-", "^", "]", "\\]", "\\w", "\\s", "\\x41", "a-f", "’", "ñ", "«", "é-ë", "—", "\\-", ".", "_"]
    checked = 0
    for _ in range(3000):
        body = "".join(rng.choice(members) for _ in range(rng.randint(1, 5)))
        source_class = "[" + ("^" if rng.random() < 0.3 else "") + body + "]"
        with warnings.catch_warnings():  # "[a--]": Python warns of a set difference to come, and reads it as now
            warnings.simplefilter("ignore", FutureWarning)
            try:
                original = re.compile(source_class)
            except re.error:
                continue
            written = rule_net._expression(lazy(source_class))
            if written is None:
                continue
            narrowed = re.compile(written[0])
        for code in range(128):
            if original.fullmatch(chr(code)):
                assert narrowed.fullmatch(chr(code)), (source_class, written[0], chr(code))
        checked += 1
    del lazy_module.MADE[made:]
    assert checked > 1500


def test_the_net_is_built_in_the_background_only_for_a_process_that_asks_many_times(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rule_net, "_STATE", {"asked": 0})
    monkeypatch.delenv(rule_net.OFF, raising=False)
    clock = [1000.0]
    monkeypatch.setattr(compiled.time, "monotonic", lambda: clock[0])
    for _ in range(3 * rule_net.AFTER):  # many texts within a second: a short command never pays for it
        assert rule_net.possible("password: hunter2hunter2", rules._PLAN) is None
    assert "thread" not in rule_net._STATE
    monkeypatch.setattr(rule_net, "_STATE", {"asked": 0})
    for _ in range(rule_net.AFTER - 1):
        clock[0] += 0.1
        assert rule_net.possible("password: hunter2hunter2", rules._PLAN) is None
    assert "thread" not in rule_net._STATE  # a second and more, but too few texts
    fresh = lazy("(?i)compiled by the build, not by its first search")
    assert rule_net.possible("password: hunter2hunter2", rules._PLAN) is None
    rule_net.wait(60)
    assert rule_net.ready(rules._PLAN)
    # a process that builds the net goes on scanning: the lazy patterns were compiled by the build too
    assert fresh._rx is not None and all(getattr(p, "_rx", True) is not None for _, p, *_ in rules._PLAN)  # type: ignore[attr-defined]
    bits = rule_net.possible("password: hunter2hunter2", rules._PLAN)
    assert bits and any(bits >> i & 1 for i, (kind, *_) in enumerate(rules._PLAN) if kind == "password_assignment")
    thread = rule_net._STATE["thread"]
    assert thread.name == "commonkeep-rule-net" and thread.daemon  # named in a stack dump; never holds the process open
    net = rule_net._STATE["net"]
    net.scan("x")
    scratch = net._local.scratch
    net.scan("y")
    assert net._local.scratch is scratch  # one scratch space per thread, made once
    for _ in range(rule_net.AFTER):  # built once
        rule_net.possible("x", rules._PLAN)
    assert rule_net._STATE["thread"] is thread


def test_turned_off_or_without_the_engine_the_python_path_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rule_net, "_STATE", {"asked": 0})
    monkeypatch.setenv(rule_net.OFF, "0")
    for _ in range(2 * rule_net.AFTER):
        assert rule_net.possible("password: hunter2hunter2", rules._PLAN) is None
    assert "thread" not in rule_net._STATE
    monkeypatch.setitem(sys.modules, "hyperscan", None)  # not installed
    assert rule_net.build(rules._PLAN) is False and not rule_net.ready(rules._PLAN)
    assert precheck.needs_scan("password: hunter2hunter2") and not precheck.needs_scan("the service restarts nightly")


def test_threads_scan_with_their_own_scratch(net: object, texts: list[str]) -> None:
    sample = texts[:400]
    expected = [rule_net.possible(t, rules._PLAN) for t in sample]
    results: dict[int, list[int | None]] = {}

    def run(k: int) -> None:
        results[k] = [rule_net.possible(t, rules._PLAN) for t in sample]

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(results[k] == expected for k in range(4))


def test_a_pattern_s_own_flags_are_the_engine_s_and_one_it_cannot_take_is_always_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rule_net, "_STATE", {"asked": 0})
    plan = [("a", lazy(r"secret\s+word", re.IGNORECASE)), ("b", lazy(r"^pin:\s\d+$", re.MULTILINE)),
            ("c", lazy(r"begin.+end", re.DOTALL)), ("d", lazy(r"\u0041BC")), ("e", lazy(r"(?i)(?<![\w-])--token=\S{4,64}")),
            ("f", lazy(r"clave:\s*ñ?\d{3}")), ("g", lazy(r"left.right")), ("h", lazy(r"\N{BULLET}"))]
    compiled = []
    real = rule_net._compiled
    monkeypatch.setattr(rule_net, "_compiled", lambda *a: compiled.append(a) or real(*a))
    assert rule_net.build(plan)
    assert len(compiled) == 2  # the pattern with anchors tried alone (the engine takes them), then every pattern at once

    def names(text: str) -> str:
        bits = rule_net.possible(text, plan)
        assert bits is not None
        return "".join(kind for i, (kind, _) in enumerate(plan) if bits >> i & 1)

    assert names("nothing here") == "dh"  # \u, \N: Python's own escapes, searched on every text
    assert names("a SECRET  Word") == "adh"
    assert names("x\npin: 1234\ny") == "bdh"
    assert names("x pin: 1234\ny") == "dh" and names("x\npin: 1234 more") == "dh"  # its anchors kept: at a line's start and end
    assert names("BEGIN\n...\nEND") == "dh" and names("begin\n...\nend") == "cdh"
    assert names("run --TOKEN=abcdefgh") == "deh" and names("x --token=" + "a" * 100) == "deh"
    assert names("clave: 123") == "dfh"  # ñ? is one optional letter (UTF-8), not an optional byte after a required one
    assert names("left right") == "dgh" and names("left\nright") == "dh"
    assert [kind for kind, pattern in plan if pattern.search("a SECRET  Word\npin: 12\nbegin\nend --token=abcd clave: 123 leftxright")] == [
        "a", "b", "c", "e", "f", "g"]
    # a pattern the engine refuses is tried alone and always run, the others still in the net
    compiled.clear()
    monkeypatch.setattr(rule_net, "_STATE", {"asked": 0})
    refused = [*plan, ("i", lazy(r"x{40000}"))]  # a repeat Python takes and the engine does not
    assert refused[-1][1].search("x" * 40000)
    assert rule_net.build(refused)
    assert len(compiled) == 1 + 1 + (len(refused) - 2) + 1  # b alone; all at once; each alone (but d and h, always run); the rest
    bits = rule_net.possible("nothing here", refused)
    assert bits is not None and "".join(kind for i, (kind, _) in enumerate(refused) if bits >> i & 1) == "dhi"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_child_forked_while_the_net_is_being_built_builds_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rule_net, "_STATE", {"asked": rule_net.AFTER, "first": 0.0, "building": rules._PLAN,
                                             "thread": threading.Thread(target=lambda: None)})
    monkeypatch.delenv(rule_net.OFF, raising=False)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no thread builds its net, so it starts one when asked
        try:
            rule_net.possible("x", rules._PLAN)
            rule_net.wait(60)
            os.write(write, b"1" if rule_net.ready(rules._PLAN) else b"0")
        finally:
            os._exit(0)
    os.close(write)
    assert os.read(read, 1) == b"1"
    os.waitpid(pid, 0)
    assert not rule_net.ready(rules._PLAN)  # this process's own state is its own
