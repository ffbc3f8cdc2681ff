"""When the maintained provider scanner is called (``provider.worth_scanning``): for a run of 12+
letters and digits, mixed, that no person chose as a name, unless the run lies inside a structure
public by design (``public.strong_spans``: a hash after its algorithm, an SSH or PEM public key, a data
URI's bytes, a JSON Web Key's public numbers, a content id, a ULID, a value named for a hash, a key's id
or fingerprint, an id header's one-token value, the browser-side keys, a JWT's header alone) or the whole
string is one UUID.
Those structures are most of a token-heavy capture mix; the scanner costs a capture more than the rest
of the scan, and it finds nothing in them."""

from __future__ import annotations

import base64
import re

import pytest

from commonkeep.secrets import provider, public, redact_obj

_PNG = base64.b64encode(bytes(range(200, 256)) * 2).decode()  # bytes that are not text
PUBLIC = {
    "yarn integrity": ('  resolved "https://registry.yarnpkg.com/zod/-/zod-3.22.4.tgz"\n'
                       "  integrity sha512-Co0G0Q/RMpfAjJH4ZBRYvNc3WX9xHp898fM+jC+7tLcJYNQTIRDfD06+bZE7rv3XY3Z8mfnBczNnESHGpuGW5A=="),
    "go.sum": "golang.org/x/text v0.14.0 h1:ScX5w1eTa3QqT8oi6+ziP7dTV1S2+ALU0bI+0zXKWiQ=",
    "SRI": '<script src="/app.js" integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC"></script>',
    "ssh public key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINWQEz+LNhGDTAP+lZIvl6UU3kdTr6TTY+nHVfn3/11k= mallory@laptop",
    "known_hosts": "|1|j4KQGhWymX71tHsHxdF3CXu9Flk=|K5CfAcfFTqMQJ24CjYxSfq19cNM= ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
    "certificate": ("-----BEGIN CERTIFICATE-----\nMIIDFUFo7TKUuIcQ9uTgZg3XpeMxBN34U8CkJrZsKNv37X7cTFEYYA9E/Hgma5IF\n"
                    "Y+viIo7K9CkelTX8mZWaF1r64lb=\n-----END CERTIFICATE-----"),
    "JWK": '{"kty":"RSA","e":"AQAB","n":"2yOnKPSPJSDgv4IaMS7MNNf6J13ExqB9sMbL4QpWvzQk"}',
    "data URI": f"background: url(data:image/png;base64,{_PNG})",
    "IPFS CID": "pinned QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG to the gateway",
    "ULID": "order 01ARZ3NDEKTSV4RRFFQ69G5FAV shipped",
    "session UUID": "3f2c1a9e-8b7d-4c6e-9f01-23456789abcd",
    "named hash": "distributionSha256Sum=ca5f975f00b63c65440fa06aa6af17b39bdc378b71be3e4a7cea9beaed13f203",
    "request id": "X-Request-ID: 58fa0246-6713-4325-9ab9-f4cf17c64587",
    "key id": '{"kid":"WSLeQGKBxaXrBEQBdsRlpSBWuSg","alg":"RS256"}',
    "thumbprint": "x5t#S256: osR12-HCjDmeQQMbT5uh0JymC9IfwDkTlPxzNRzEC4E",
    "site key": '<div class="g-recaptcha" data-sitekey="6L97VJ8vJV-LKCE9a36FnW18aAqmSxmRrbUYzy2A"></div>',
    "publishable key": "STRIPE_PUBLISHABLE_KEY=pk_live_DQiz8gZPG49TJNsBIP6kHWYc",
    "named public key": "minisign public key RWQF2BnziP+V1tk/wWQQWymVQw7kcNGDubME2wKP4zZUlmqmTux7y2I",
    "JWT header alone": "the header eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 decodes to JSON",
}
TOKEN = "ghp_" + "aB3dE5fG7hI9jK1lM2nO4pQ6rS8tU0vW2xY4"  # generated, GitHub's shape


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_a_run_inside_a_structure_public_by_design_does_not_call_the_scanner(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = PUBLIC[name]
    assert not provider._worth_scanning(text)
    with monkeypatch.context() as m:  # a run of the structure, not known as public, would be scanned
        m.setattr(public, "strong_spans", lambda text: [])
        m.setattr(provider, "_ONLY_UUID", re.compile("(?!)"))
        assert provider._worth_scanning(text)
    # ... and a run beside it, outside it, is
    assert provider._worth_scanning(f"{text}\nthe deploy token is {TOKEN}")
    assert provider._worth_scanning(f"{text} and q8ZtR3vLx2WmN7kP")


def test_what_is_not_public_by_design_is_still_scanned() -> None:
    # a certificate's block without its end line reaches to the end of the text: not known whole
    assert provider._worth_scanning("-----BEGIN CERTIFICATE-----\nMIIDFUFo7TKUuIcQ9uTgZg3XpeMxBN34U8CkJrZsKNv37X7c")
    # a data URI of readable text may carry anything
    readable = base64.b64encode(b"api_key=q8ZtR3vLx2WmN7kPa9sD").decode()
    assert provider._worth_scanning(f"url(data:text/plain;base64,{readable})")
    # a JWK's private member, a UUID with words around it, a URL's path and query values
    assert provider._worth_scanning('{"kty":"oct","k":"GawgguFyGrWKav7AX4VKUg"}')
    assert provider._worth_scanning("the heroku key is 3f2c1a9e-8b7d-4c6e-9f01-23456789abcd")
    assert provider._worth_scanning("https://api.example.com/v1/items?code=q8ZtR3vLx2WmN7kP")
    assert provider._worth_scanning("sha512 of the release is in q8ZtR3vLx2WmN7kP")  # no hash after the algorithm
    # a name that only starts with a hash's word, an id header's line that goes on, an object's id (a Resend
    # key is ``re_…``), a path's hex segment (a PagerDuty integration key is a URL's path)
    assert provider._worth_scanning("summary_token: q8ZtR3vLx2WmN7kPa9sD")
    assert provider._worth_scanning("sumo_api_key = q8ZtR3vLx2WmN7kPa9sD")
    assert provider._worth_scanning("X-Request-ID: 58fa0246 and then q8ZtR3vLx2WmN7kPa9sD")
    assert provider._worth_scanning("RESEND=re_q8ZtR3vLx2WmN7kPa9sD")
    assert provider._worth_scanning("https://events.pagerduty.com/integration/9f8e7d6c5b4a39281706f5e4d3c2b1a0/enqueue")


def test_strong_spans_are_only_whole_structures() -> None:
    text = PUBLIC["yarn integrity"]
    spans = public.strong_spans(text)
    assert spans and all(text[s:e].startswith(("sha512-", "Co0G0Q")) for s, e in spans)
    assert public.strong_spans("https://registry.npmjs.org/zod/-/zod-3.22.4.tgz") == []  # URLs are not


def test_a_capture_of_public_structures_calls_the_scanner_once_a_token_our_rules_left_is_beside_them(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    real = provider._scan_here

    def scan_here(text: str) -> tuple[provider.Hit, ...]:
        asked.append(text)
        return real(text)

    monkeypatch.setattr(provider, "_scan_here", scan_here)
    cand = {"text": PUBLIC["yarn integrity"], "tags": ["deps"], "evidence_refs": ["yarn.lock"],
            "provenance": {"session_id": PUBLIC["session UUID"]}}
    found: list[str] = []
    assert redact_obj(cand, found) == cand and not found
    assert asked == []
    cand["tags"] = ["deps", "Xk9mQpL2vB7zTq1a"]  # random, too short for our rules of shape: the provider rules read it
    redact_obj(cand, [])
    assert len(asked) == 1 and "Xk9mQpL2vB7zTq1a" in asked[0]
    # a token one of our rules of place took is not looked for again: the provider rules read what ours left
    cand["tags"] = ["deps", f"the deploy token is {TOKEN}"]
    found = []
    out = redact_obj(cand, found)
    assert len(asked) == 1 and TOKEN not in str(out) and found == ["github_token"]
    # ... but one a rule of shape took, they read whole, and name it if they know it
    cand["tags"] = ["deps", "postman PMAK-0123456789abcdef01234567-0123456789abcdef0123456789abcdef01"]
    out = redact_obj(cand, found := [])
    assert len(asked) == 2 and "PMAK-" in asked[1] and "PMAK-" not in str(out)


def test_the_pre_check_s_spans_and_the_strong_spans_alone_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """``strong_spans`` takes what the pre-check worked out for the same text (``public._both``), or
    searches alone: the same spans either way."""
    from commonkeep.bench.capture import WORKLOADS

    texts = list(PUBLIC.values()) + [text for name in ("mixed", "tokens") for text, _ in WORKLOADS[name](600, 6)]
    for text in texts:
        monkeypatch.setattr(public, "_LAST", ("", (), ()))
        alone = sorted(public.strong_spans(text))
        assert sorted(public._both(text)[1]) == alone, text
        public.spans(text)
        assert sorted(public.strong_spans(text)) == alone, text
