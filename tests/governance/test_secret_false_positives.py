"""Benign text the secret gate destroyed (found while mutation-testing it, issue 28), and what
keeps the fix honest: random tokens of the same lengths and alphabets still go.

Names from code are built of dictionary words, acronyms and short numbers
(``identifier.identifier``); the high-entropy rule took those of many case changes and digits for
random tokens. Now a run that splits into such parts stays, and a random token, which splits into
pieces no dictionary holds, goes as before.
"""

from __future__ import annotations

import base64
import json
import random
import string

import pytest

from commonkeep.secrets import redact
from commonkeep.secrets.identifier import identifier
from commonkeep.store.candidates import new_candidate

# the six the mutation run found, then names of other shapes: Java/C#/Go/Rust/Python classes and
# functions, AWS/GCP resource types, HTTP header names, versioned classes (each destroyed before)
IDENTIFIERS = [
    "HTTPSConnectionPoolV2", "MySQLReplicaForEUWest", "getHTTPResponseCodeFromURL",
    "IAMRoleForEC2InstanceV2", "OAuth2PKCEFlowForSPAs", "TLSv13CipherSuiteAES256",
    "parseJSONWebKeySetFromURI", "SHA256WithRSAEncryptionOID", "UTF8JsonReaderForAPIv3",
    "AES256GcmCipherForTLS13", "Vec3FloatBufferForGPU2", "UserIDsFromSAMLAssertionV2",
    "Base64UrlEncoderForJWTv2", "Md5HashComputeForS3Etag", "AWSIAMRoleARNForEKSNodes2",
    "getJSONFromHTTPResponseV2", "EKSNodeGroupForGPUv2", "DNSRecordSetForELBv2", "readUTF8StringFromIOBuf",
    "ECSTaskDefForARM64v3", "RSAOAEPKeyWrapForKMSv2", "TCPKeepAliveForNLBv2", "HMACSHA256SignerV4Impl",
    "SQLServerCDCJobForETL2", "URLSessionTaskForIOS16", "JWTAuthGuardForAPIv2", "VPCEndpointForS3InEU1",
    "CSVRowToJSONMapperV3", "X509CRLEntryForOCSPv2", "IDPMetadataForSAML20", "TOTPCodeForMFAv2Login",
    "gRPCStubForTLSv12Conn", "ToJSONBytesForUTF8v2", "HTTPAdapterForS3v4Sig", "X-Amz-Meta-SHA256-V2",
    "AWS::IAM::OIDCProviderForEKSv2", "Sec-WebSocket-Key-V13-Hdr", "IHTTPClientFactoryForDIv2",
    "IPv6CIDRBlockForVPCv2",
    # a part no list holds beside three words (a library prefix, a word the vocabulary lacks)
    "wxGridCellFloatRendererV2", "GetDistGainFromSoundLevel3", "SandboxWidgetForIOS17View",
]
ALNUM = string.ascii_letters + string.digits
# words a provider puts before the random part of a token (``sk_live_…`` without its ``sk_``)
FRAGMENTS = ("Live", "live_", "Test", "test_", "Prod", "Secret", "Token", "Key")


def _random_tokens() -> list[str]:
    """Tokens of 20 to 40 characters: mixed-case letters and digits, ``secrets.token_urlsafe``-like
    and standard base64 of random bytes, and a word fragment glued to a random rest (seeded)."""
    rng = random.Random(20261203)
    out = ["".join(rng.choice(ALNUM) for _ in range(rng.randint(20, 40))) for _ in range(12)]
    out += [base64.urlsafe_b64encode(rng.randbytes(rng.randint(15, 30))).decode().rstrip("=") for _ in range(8)]
    out += [base64.b64encode(rng.randbytes(rng.randint(15, 29))).decode() for _ in range(6)]
    out += [rng.choice(FRAGMENTS) + "".join(rng.choice(ALNUM) for _ in range(rng.randint(16, 32))) for _ in range(8)]
    return out


@pytest.mark.parametrize("name", IDENTIFIERS)
def test_an_identifier_in_prose_is_kept(name: str) -> None:
    text = f"the pool is configured in {name} since the last release"
    assert redact(text).text == text


@pytest.mark.parametrize("token", _random_tokens())
def test_a_random_token_of_the_same_lengths_and_alphabets_still_goes(token: str) -> None:
    out = redact(f"the value {token} is set")
    assert (out.text, out.findings) == ("the value [REDACTED:high_entropy] is set", ["high_entropy"])


def test_no_random_token_of_forty_thousand_reads_as_an_identifier() -> None:
    rng = random.Random(7)
    tokens = ["".join(rng.choice(ALNUM) for _ in range(rng.randint(20, 40))) for _ in range(20_000)]
    tokens += [base64.urlsafe_b64encode(rng.randbytes(rng.randint(15, 30))).decode().rstrip("=") for _ in range(20_000)]
    assert [t for t in tokens if identifier(t)] == []


@pytest.mark.parametrize("token,name", [
    ("ConnectionPoolV2024Beta", True),    # a number of four digits
    ("ConnectionPoolV20245Beta", False),  # ... not five
    ("HTTPConnectionPoolV2", True),       # two words of three letters or more
    ("HTTPSPoolV2XML", False),            # ... not one
    ("kTableReaderV2", True),             # a one-letter prefix, first only
    ("Table2qReader", False),             # ... a letter alone elsewhere is the one unknown part
    ("Table2q3Reader", False),            # ... even before a number
    ("TLSv13CipherSuite", True),          # ``v`` before a number
    ("TLSq13CipherSuite", False),         # ... not another letter
    ("QZXReaderTableV2", True),           # one unknown all-caps run of three letters, beside two words
    ("QZXWReaderTableV2", False),         # ... not of four
    ("QZReaderTableKQ", False),           # ... not two of them
    ("wxGridCellFloat", True),            # an unknown lower-case part beside three words
    ("wxGridCell", False),                # ... not beside two
    ("EUsReaderTable", True),             # an acronym's plural
    ("ECDHsTableReader", True),
    ("TableOpsReader", True),             # a word of three letters ending in ``s`` is a word
    ("Md5HashTable", True),               # a two-letter acronym written as a word
    ("TableVecsReader", True),            # a plural of a three-letter word
    ("TablexReader", False),              # a word with a letter glued on is not a plural
    ("TablexerReaderV2", False),          # ... nor an ``-er`` form
    ("QxxsTableReader", False),           # a doubled letter before a suffix still needs the word
    ("TablebsReaderV2", False),
    ("ReplicaForEUWESTTableV2", True),    # acronyms and words run together in capitals
    ("ReplicaForAWSEUTableV2", True),
    ("ReplicaForAWSBIGTableV2", True),    # ... a three-letter word among them
    ("TableReader+ForWidget", False),     # not a character of a name
])
def test_a_name_is_read_at_each_edge_of_the_rule(token: str, name: bool) -> None:
    assert identifier(token) is name


# A run of letters without a digit that is no name (its capitals are no acronyms) goes at six case
# changes and stays at five: ``AWSIAMRoleARNForEKSNodes`` guarded that edge until it read as a name.
@pytest.mark.parametrize("token,goes", [("QZXJRoleWKQForPLMNodes", False), ("QZXJRoleWKQForPLMNodesVB", True)])
def test_a_run_without_a_digit_that_is_no_name_goes_at_six_case_changes(token: str, goes: bool) -> None:
    want = "the value [REDACTED:high_entropy] is set" if goes else f"the value {token} is set"
    assert redact(f"the value {token} is set").text == want


def test_two_tags_of_a_word_and_a_number_are_kept() -> None:
    found: list[str] = []
    cand = new_candidate("The build image moved to the new base.", tags=["python3", "ubuntu2204"], findings=found)
    assert (cand["tags"], found) == (["python3", "ubuntu2204"], [])


@pytest.mark.parametrize("name", IDENTIFIERS)
def test_an_identifier_as_a_tag_or_an_evidence_ref_is_kept(name: str) -> None:
    found: list[str] = []
    cand = new_candidate("The pool settings moved to the new module.", tags=[name], evidence_refs=[f"src/{name}.java"],
                         findings=found)
    assert (cand["tags"], cand["evidence_refs"], found) == ([name], [f"src/{name}.java"], [])


@pytest.mark.parametrize("token", _random_tokens())
def test_a_random_token_as_a_tag_still_goes(token: str) -> None:
    found: list[str] = []
    cand = new_candidate("The pool settings moved to the new module.", tags=[token], findings=found)
    assert token not in json.dumps(cand)
    assert cand["tags"][0].startswith("[REDACTED:") and found
