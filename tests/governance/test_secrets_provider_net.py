"""The provider scanner's net (``secrets/provider_net.py``): Kingfisher's own patterns in one
Hyperscan prefilter pass, so a text none of them could match is not sent to Kingfisher. It must
never say "nothing" where Kingfisher would find something (a provider's token would be stored as
written), in the text or in the base64 Kingfisher decodes from it; and it must spare Kingfisher
the public data of a token-heavy text, or it is only a cost."""

from __future__ import annotations

import base64
import re
import threading
import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commonkeep.bench import secrets_templates
from commonkeep.secrets import provider, provider_net

pytestmark = pytest.mark.skipif(not provider.available(), reason="Kingfisher is not installed")


@pytest.fixture(scope="module")
def kingfisher() -> Any:
    """Kingfisher's rules as this process loaded them."""
    assert provider._scanner() is not None
    return provider._STATE["rules"]


@pytest.fixture
def rules(kingfisher: Any) -> Any:
    """The rules, with the net built from them here if this process has none (the mutation run forgets it
    before each test)."""
    if not provider_net.ready(kingfisher):
        assert provider_net.build(kingfisher)
    return kingfisher


def _kingfisher(text: str) -> list[str]:
    """What Kingfisher itself finds in ``text`` as the provider layer hands it over (its rule ids)."""
    return [f.rule_id for f in provider._scanner().scan(provider._TRAILING.sub(lambda m: " " * len(m.group(0)), text))]


def _nothing(text: str, rules: Any) -> bool:
    return provider_net.finds_nothing(provider._TRAILING.sub(lambda m: " " * len(m.group(0)), text), rules)


_POSIX = {"alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "digit": "0-9", "lower": "a-z", "upper": "A-Z", "xdigit": "0-9A-Fa-f",
          "space": r"\s", "word": r"\w"}


def _python(pattern: str) -> re.Pattern[str]:
    """A Kingfisher (Rust) pattern as a Python one that matches no more than it, for Hypothesis to
    draw matches from: ``\\z`` is ``\\Z``; a flag set mid-pattern (Python refuses it) is scoped to
    the rest of its group, up to the next ``|`` (narrower where Rust carries it on); a POSIX class
    (``[[:alnum:]]``, which Python reads as the letters of its name) is written out."""
    for name, members in _POSIX.items():
        pattern = pattern.replace(f"[:{name}:]", members)
    out: list[str] = []
    open_flags = [0]  # per open group: the flag groups opened inside it, to close at its end
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(r"\Z" if pattern[i : i + 2] == r"\z" else pattern[i : i + 2])
            i += 2
            continue
        if ch == "[":  # a class, as written
            j = i + 1 + pattern.startswith("^", i + 1)
            j += pattern.startswith("]", j)
            while j < len(pattern) and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            out.append(pattern[i : j + 1])
            i = j + 1
            continue
        flag = re.match(r"\(\?([a-zA-Z-]+)\)", pattern[i:])
        if flag and i > 0:
            out.append(f"(?{flag.group(1)}:")
            open_flags[-1] += 1
            i += flag.end()
            continue
        if ch == "(":
            open_flags.append(0)
        elif ch == ")":
            out.append(")" * open_flags.pop())
        elif ch == "|":
            out.append(")" * open_flags[-1])
            open_flags[-1] = 0
        out.append(ch)
        i += 1
    out.append(")" * open_flags.pop())
    with warnings.catch_warnings():  # "[[" in a class: Rust's nested sets read as text by Python (a FutureWarning)
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile("".join(out))


@pytest.fixture(scope="module")
def patterns(kingfisher: Any) -> dict[str, re.Pattern[str]]:
    out = {meta["id"]: _python(kingfisher.detail(meta["id"])["detection_regex"]) for meta in kingfisher.metadata()}
    assert len(out) > 400
    return out


_ASCII = st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.sampled_from("\t\n")
_WRAPS = {
    "as drawn": lambda s: s,
    "in a sentence": lambda s: f"note: {s} (see the runbook).",
    "base64": lambda s: "blob " + base64.b64encode(s.encode()).decode(),
    "url-safe base64": lambda s: "v=" + base64.urlsafe_b64encode(s.encode()).decode() + ";",
    "base64 of base64": lambda s: base64.b64encode(base64.b64encode(s.encode())).decode(),
}


@settings(max_examples=400, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_whatever_kingfisher_finds_the_net_sends_to_it(data: st.DataObject, rules: Any,
                                                        patterns: dict[str, re.Pattern[str]]) -> None:
    """A match of any of Kingfisher's patterns, drawn from the pattern itself: the net lets it
    through whatever Kingfisher makes of it; handed over as the provider layer does, in a sentence, in base64 (both alphabets) and in
    base64 of base64, wherever Kingfisher finds something the net lets it through."""
    rule = data.draw(st.sampled_from(sorted(patterns)), label="rule")
    drawn = data.draw(st.from_regex(patterns[rule], fullmatch=True, alphabet=_ASCII), label="match")
    assert not provider_net.finds_nothing(drawn, rules), (rule, drawn)
    for name, wrap in _WRAPS.items():
        text = wrap(drawn)
        if _nothing(text, rules):
            assert _kingfisher(text) == [], (rule, name, text)


def test_every_planted_secret_kingfisher_finds_goes_to_it(rules: Any) -> None:
    """The bench's planted secrets (every kind, in their places) and the same in base64: where
    Kingfisher finds something, the net never says nothing."""
    texts = [text for _, text, _ in secrets_templates.planted(3, 7)]
    texts += ["blob " + base64.b64encode(t.encode()).decode() for t in texts]
    found = [t for t in texts if _kingfisher(t)]
    assert len(found) > 50
    assert [t for t in found if _nothing(t, rules)] == []


def test_the_net_spares_kingfisher_the_public_data_of_a_token_heavy_text(rules: Any,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Lockfile lines, SRI and ``go.sum`` hashes, public keys, ids in URLs: Kingfisher finds nothing
    in them, and the net says so for most, so the provider layer does not ask it."""
    texts = [t for t in secrets_templates.benign(1500, 3) if provider._worth_scanning(t)]
    assert len(texts) > 150
    assert [t for t in texts if _nothing(t, rules) and _kingfisher(t)] == []
    spared = [t for t in texts if _nothing(t, rules)]
    assert len(spared) > 0.8 * len(texts)
    asked: list[str] = []
    real = provider._STATE["scanner"]

    class Spy:
        def scan(self, text: str) -> Any:
            asked.append(text)
            return real.scan(text)

    monkeypatch.setitem(provider._STATE, "scanner", Spy())
    assert [provider._scan_here(t) for t in spared[:50]] == [()] * 50
    assert asked == []
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4b"
    assert provider._scan_here(f"use {token} for the bot") and len(asked) == 1


def test_base64_is_read_as_kingfisher_reads_it(rules: Any) -> None:
    """A token in a base64 run of 32 bytes or more (a multiple of 4) is found by Kingfisher and let
    through by the net; bytes outside ASCII, which Kingfisher does not scan, are not read either."""
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4b"
    for text in (base64.b64encode(f"token: {token}".encode()).decode(),
                 base64.urlsafe_b64encode(f"x>>{token}??".encode()).decode()):
        assert _kingfisher(text), text
        assert not _nothing(text, rules), text
    short = base64.b64encode(b"xapp-2-0-1-00000000000").decode()  # 30 letters and "==": 32 in all, read
    assert len(short) == 32 and short.endswith("==")
    assert _kingfisher(f"blob {short}") and not _nothing(f"blob {short}", rules)
    # base64 in base64: this Kingfisher does not read it, the net lets it through all the same
    assert not _nothing(base64.b64encode(base64.b64encode(token.encode())).decode(), rules)
    noise = base64.b64encode(bytes(range(128, 176))).decode()  # decodes to bytes outside ASCII
    assert _kingfisher(noise) == [] and _nothing(f"sha: {noise}", rules)
    # every run is read, not only the first: a token after a hash and after a harmless text
    prose = base64.b64encode(b"just some public text, nothing more to it").decode()
    hidden = base64.b64encode(f"token: {token}".encode()).decode()
    for text in (f"sha: {noise} then {hidden}", f"note {prose} and {hidden}"):
        assert _kingfisher(text) and not _nothing(text, rules), text
    # what decodes to harmless ASCII (either alphabet) is read and spared; a run Kingfisher does not decode
    # (not a multiple of 4 long) is not read
    safe = base64.urlsafe_b64encode(b"??>>public text with no token in it at all").decode()
    assert "_" in safe or "-" in safe
    for text in (f"data:text/plain;base64,{prose}", f"v={safe};", f"id {prose.rstrip('=')[:-1]}x"):
        assert _kingfisher(text) == [] and _nothing(text, rules), text


def test_a_text_the_engines_read_differently_is_sent_to_kingfisher(rules: Any) -> None:
    plain = "the build id is 7Hq2ZpVx9LmR4tYw and it is public"
    assert _nothing(plain, rules)
    for odd in ("\x0b", "\x0c", "\x1c", "\x7f", "é", "\u2028", "К"):
        assert not _nothing(plain.replace(" and ", f" {odd} "), rules), repr(odd)


def test_no_net_for_a_kingfisher_it_was_not_checked_against_or_when_turned_off(
        rules: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another version may decode or read a pattern otherwise: the net is not built, every text goes
    to Kingfisher. ``COMMONKEEP_PROVIDER_NET=0``: never built."""
    text = "the build id is 7Hq2ZpVx9LmR4tYw and it is public"
    monkeypatch.setattr(provider_net, "_STATE", {"asked": 0})
    monkeypatch.setattr(provider_net, "VERIFIED", ("0.1",))
    assert not provider_net.verified() and not provider_net.build(rules)
    assert not provider_net.finds_nothing(text, rules)
    monkeypatch.undo()
    monkeypatch.setattr(provider_net, "_STATE", {"asked": 0})
    monkeypatch.setenv(provider_net.OFF, "0")
    provider_net._STATE.update(asked=100, first=0.0)
    assert not provider_net.finds_nothing(text, rules) and "building" not in provider_net._STATE


def test_a_process_that_goes_on_scanning_builds_the_net_once_in_the_background(
        rules: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "the build id is 7Hq2ZpVx9LmR4tYw and it is public"
    monkeypatch.setattr(provider_net, "_STATE", {"asked": 0})
    monkeypatch.delenv(provider_net.OFF, raising=False)
    for _ in range(provider_net.AFTER):
        assert not provider_net.finds_nothing(text, rules)
    assert "building" not in provider_net._STATE  # many texts, but within a second: a short command
    provider_net._STATE["first"] -= provider_net.AFTER_SECONDS
    assert not provider_net.finds_nothing(text, rules)
    assert provider_net._STATE["building"] is rules
    for thread in threading.enumerate():
        if thread.name == "commonkeep-provider-net":
            thread.join(30)
    assert provider_net.ready(rules) and provider_net.finds_nothing(text, rules)
    assert not provider_net.ready(object())  # another rules object: another net
