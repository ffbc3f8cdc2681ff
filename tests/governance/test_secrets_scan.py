"""doctor's secret scan: per JSON string, windows on long lines, and the same answers as the
full-line redactor on everything it reports."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest

from commonkeep.secrets import _ANY, _needs_scan
from commonkeep.secrets.rules import find
from commonkeep.secrets.scan import WINDOW, scan_file

TOKEN = "ghp_" + "".join(random.Random(7).choice(string.ascii_letters + string.digits) for _ in range(36))


# what the rules start from: flags, clauses, config lines, key armour, provider prefixes, words
ANCHORS = ["sshpass -p ", " --token ", "IDENTIFIED BY ", "machine h login u password ", "-----BEGIN X KEY-----", "requirepass ",
           "AGE-SECRET-KEY-1", "$apr1$", "pass:", "://", "EyJ", "aIzA", "SK-", "Sg.", "XOX", "-----BEGIN", "Bearer", "BASIC", "HF_",
           "glpat-", "GLRT-", "ghp_", "GHS_", "github_pat_", "Pass", "PWD", "Kennwort", "senha", "Credential", "KEY", "key=",
           "token: ", "-u ", "--user=", " -p ", " -w ", "mysql -p", "smbclient //h/s -U u%", "net use \\\\h /user:", "AUTH ",
           "{SSHA}", '"d": "', "://u:", "@h", "Pwd=", "sig=", "SharedAccessSignature=", "x-api-key: ", "Authorization: ",
           "PASSWORD '", "0x", "auth=", "_authToken=", "account ", "default ", "a:5432:db:u:", " 7z a -p", "keytool -storepass ",
           "docker login -u u -p ", "ssh-keygen -N ", "openssl enc -k ", "htpasswd -b f u ", "private_key = ", "PrivateKey = ",
           "pass word is ", "mot de passe est ", ":AA", "AKIA", "code=", "sas=", "rpcauth=", "bindpw ", "x-goog-signature=",
           # named.py: other operators and names, markup, quoted prose, codes
           " := ", "=> ", " <- ", "password%3D", "_PASS=", "smtp.pwd: ", "ENV DB_PASS ", "\nset -x API_TOKEN ", "<password>",
           "</password>", "<DbPass>", "key=\"ApiKey\" value=\"", "name: DB_PASS\n  value: ", "<input type=password value='",
           "passphrase is '", "pass word to \"", "PIN is ", "pin: ", "recovery codes: ", "door code is "]


def _texts_around_every_rule(n: int) -> list[str]:
    """Random texts built around every rule's anchors and generated tokens, and every planted
    secret of the corpus with pieces of it."""
    from commonkeep.bench import secrets_corpus as corpus

    rng = random.Random(3)
    alpha = string.ascii_letters + string.digits + "+/_=-.:@ '\"\n$%{}()`;,&?"
    hexd, alnum = "0123456789abcdef", string.ascii_letters + string.digits

    def r(chars: str, k: int) -> str:
        return "".join(rng.choice(chars) for _ in range(k))

    tokens = [lambda: "SK" + r(hexd, 32), lambda: "0x" + r(hexd, 64), lambda: "sk_live_" + r(alnum, 24), lambda: "x_" + r(hexd, 32),
              lambda: "ASIA" + r(string.ascii_uppercase + string.digits, 16), lambda: r(hexd, 48), lambda: "key " + r(hexd, 32),
              lambda: r(hexd, 32) + " token", lambda: "b3BlbnNzaC1rZXktdjE" + r(alnum, 30), lambda: r(alnum, 40),
              lambda: "6" + r(string.digits, 8) + ":AA" + r(alnum, 32)]
    texts = []
    for _ in range(n):
        s = "".join(rng.choice(alpha) for _ in range(rng.randint(1, 60)))
        for _ in range(rng.randint(0, 3)):
            at = rng.randint(0, len(s))
            s = s[:at] + (rng.choice(ANCHORS) if rng.random() < 0.7 else rng.choice(tokens)()) + s[at:]
        texts.append(s)
    for item in corpus.planted(len(corpus.MAKERS) * 3, seed=5):
        for f in item.fields:
            texts += [f, *(f[i : i + size] for size in (16, 32, 64) for i in range(0, max(1, len(f) - size), 7))]
    return texts


def test_the_pre_check_never_skips_a_text_the_rules_would_change() -> None:
    """``_needs_scan`` (``precheck.py``) says no only where ``find`` finds nothing."""
    found = [s for s in _texts_around_every_rule(30000) if find(s)]
    assert len(found) > 5000  # the texts do hold what the rules find
    assert [s for s in found if not _needs_scan(s)] == []
    assert not _needs_scan("The billing service on port 8080 restarts nightly; logs in /var/log/billing/billing.log")
    assert _ANY.search("The key insight: deploys are idempotent") and not _needs_scan("The key insight: deploys are idempotent")


def test_the_rules_contexts_never_change_what_find_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule skipped where its cheap context regex finds nothing (``structure.CONTEXTS``) would
    have found nothing there either: the same spans with every context dropped."""
    from commonkeep.secrets import rules

    texts = _texts_around_every_rule(15000)
    # a claimed span is masked before the next rule runs, and the mask can join a match the text
    # as written does not hold (a flag's value across a claimed span, a flag after a claimed key)
    body = "b3BlbnNzaC1rZXktdjE" + "".join(random.Random(1).choice(string.ascii_letters) for _ in range(40))
    texts += ["x=1 -w O&9{smbclient //h/s -U u%ymf(xe,s5/,tjt$N30asS`:agGge,$tF", f"'{body}j-a bm$N7hldocker login -u u -p \ntM"]
    with_contexts = [find(s) for s in texts]
    assert sum(1 for p in rules._PLAN if p[5] is not None) >= 15
    monkeypatch.setattr(rules, "_PLAN", [(*p[:5], None) for p in rules._PLAN])
    assert [find(s) for s in texts] == with_contexts


def test_find_skips_its_rules_of_shape_only_where_they_would_claim_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """``find`` runs its rules of shape (bare hex, encoded runs, seed phrases, ``high_entropy``) only
    where what the rules of place left holds a run one could want (``runs.shape_runs``): the same
    spans as with them always run, on texts where both kinds claim something."""
    from commonkeep.bench import secrets_templates
    from commonkeep.secrets import rules

    rng = random.Random(11)
    alnum = string.ascii_letters + string.digits
    texts = _texts_around_every_rule(12000) + secrets_templates.benign(1500, 3)
    texts += [f"password={''.join(rng.choice(alnum) for _ in range(12))} and then {''.join(rng.choice(alnum) for _ in range(k))}"
              for k in (16, 20, 24, 40, 64) for _ in range(20)]
    skipped = [find(s) for s in texts]
    assert sum(1 for s in texts if not rules.shape_runs(s)) > 3000  # the skip is taken
    assert sum(1 for spans in skipped if any(kind == "high_entropy" for *_, kind in spans)) > 100
    monkeypatch.setattr(rules, "shape_runs", lambda work: True)
    assert [find(s) for s in texts] == skipped


def test_a_text_outside_ascii_with_nothing_disguised_is_scanned_once_with_the_answer_of_two() -> None:
    """A text outside ASCII is scanned folded (look-alike letters read as ASCII) and as written, and
    the spans merged; where folding changes nothing (accents, another script's own words) the two
    scans are one scan: the same redaction as the two merged, on planted secrets in many languages,
    benign texts and random texts around every rule with letters outside ASCII put in."""
    from commonkeep import secrets
    from commonkeep.bench import secrets_templates
    from commonkeep.secrets import provider
    from commonkeep.secrets.fold import fold_map, to_original

    def two_scans(text: str) -> tuple[str, tuple[str, ...]]:
        folded, origin = fold_map(text)
        found = [(*to_original(origin, s, e, len(text)), kind)
                 for s, e, kind in find(folded, known=provider.provider_values(folded))] + find(text)
        spans: list[tuple[int, int, str]] = []
        for o_s, o_e, kind in sorted(found, key=lambda sp: (sp[0], -sp[1])):
            if spans and o_s < spans[-1][1]:
                if o_e > spans[-1][1]:
                    spans[-1] = (spans[-1][0], o_e, spans[-1][2])
                continue
            spans.append((o_s, o_e, kind))
        return secrets._replaced(text, spans)

    rng = random.Random(5)
    accents = "éèüöäßñçøåłśžčğışı’«»“”–—"
    texts = [t for _, t, _ in secrets_templates.planted(4, 8)] + secrets_templates.benign(1500, 8)
    for t in _texts_around_every_rule(3000):
        at = rng.randint(0, len(t))
        texts.append(t[:at] + rng.choice(accents) + t[at:])
    outside = [t for t in texts if not t.isascii() and fold_map(t)[0] == t]
    assert len(outside) > 2500 and sum(1 for t in outside if secrets._redact_uncached(t)[1]) > 500
    assert [t for t in outside if secrets._redact_uncached(t) != two_scans(t)] == []


def test_jsonl_strings_are_scanned_as_decoded_and_field_names_do_not_count(tmp_path: Path) -> None:
    f = tmp_path / "captured.jsonl"
    rows = [{"id": f"cap_{i}", "text": f"Use port {5000 + i} for staging.", "normalized_key": "use-port"} for i in range(50)]
    rows[10] = {"id": "cap_x", "text": f"the token is {TOKEN}"}
    rows[20] = {"id": "cap_y", "text": "token " + TOKEN.replace("A", "\u0410")}  # Cyrillic A, \\u-escaped on disk
    f.write_text("\n".join(json.dumps(r, ensure_ascii=True) for r in rows) + "\nnot json " + TOKEN + "\n", encoding="utf-8")
    assert [n for n, _ in scan_file(f)] == [11, 21, 51]


def test_a_secret_deep_in_a_very_long_line_is_found_and_the_line_is_scanned_in_windows(tmp_path: Path) -> None:
    f = tmp_path / "notes.md"
    for at in (WINDOW - 10, 3 * WINDOW + 7, 10):  # across a window edge, deep inside, at the start
        f.write_text("x " * (2 * WINDOW) + "\n" + "y" * at + " " + TOKEN + " " + "z " * WINDOW + "\n", encoding="utf-8")
        found = list(scan_file(f))
        assert [n for n, _ in found] == [2] and "github_token" in found[0][1], at
