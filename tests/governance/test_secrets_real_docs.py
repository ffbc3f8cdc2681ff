"""Text from real code and its documentation is kept (issue 37: "ordinary English is rewritten for
good"). Each kept text below is the shape of a sentence the redactor changed in the docstrings of
Python's standard library or of the packages installed beside commonkeep (60 of 22,008 standard
library sentences changed before, 5 after; the 5 left are example credentials), written here
afresh; beside each class, a secret in the same place that must still go."""

from __future__ import annotations

import pytest

from commonkeep.secrets import redact

KEPT = [
    # words offered as a choice after "password"
    "Utilities to get a password and/or the current user name.",
    # a description of the field, not its value
    "- password: The password for the authentication.",
    "Arguments: - user: username to authenticate with - password: password to authenticate with",
    "auth: Authentication to use for the handshake request.",
    # a grammar's bracketed name (ABNF)
    "token = [CFWS] 1*ttext [CFWS]",
    # a path and a constant in capitals
    "Codec generated from 'MAPPINGS/VENDORS/MICSFT/WINDOWS/CP1253.TXT' with gencodec.py.",
    "Raised on SSL_ERROR_WANT_X509_LOOKUP or SSL_ERROR_SYSCALL.",
    # the digits of a decimal fraction
    "The exact value in decimal is 0.1000000000000000055511151231257827021181583404541015625.",
    # the name of a secret given to a flag, and the shell's working folder
    "Fails if a bare `--secrets HF_TOKEN` is not set locally.",
    "old_env = self.update_environment(PWD='/tmp')",
    # placeholders that name the secret, and code in the value's place
    'api.create_webhook(secret="my-secret", token="my_token")',
    'client = Client(api_key="your-replicate-api-key")',
    "def push(token: Optional[Union[str, bool]] = None) -> None:",
    "Output(token=TokenElement(id=1425, text='100'))",
]

STILL_REDACTED = [
    ("the password is Xk9#mP2$vL and/or", "Xk9#mP2$vL"),
    ("- password: Xk9#mP2$vL", "Xk9#mP2$vL"),
    ("auth: Zq8rT3xLm", "Zq8rT3xLm"),
    ("token = Zq8rT3xLm9Kp", "Zq8rT3xLm9Kp"),
    ("NRAK-7PQX1Z9H3JKLQ8W2M5N4R6T0Y", "7PQX1Z9H3JKLQ8W2M5N4R6T0Y"),
    ("license key R8XK2-VLM9Z-PT4WY-C7NBJ-3HFD6", "R8XK2-VLM9Z"),
    ("see /srv/MAPPINGS/X7QPLKZ2M9RT4WVB8NC3QQ7W/keys.txt", "X7QPLKZ2M9RT4WVB8NC3QQ7W"),
    ("signing key 4f3a9c2e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39", "4f3a9c2e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39"),
    ("value 10.4f3a9c2e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a394f3a9c2e8b", "4f3a9c2e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39"),  # hex after a point
    ("--secrets hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"),
    ("MYSQL_PWD=S3cr3t!x9 mysql -u root", "S3cr3t!x9"),
    ('password="Summer_Secret_2024"', "Summer_Secret_2024"),
    ("password=Hunter2(!)x", "Hunter2"),
    ('secret="correct-horse-battery-staple"', "correct-horse-battery-staple"),
]


@pytest.mark.parametrize("text", KEPT)
def test_documentation_is_kept(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize(("text", "secret"), STILL_REDACTED)
def test_a_secret_in_the_same_place_still_goes(text: str, secret: str) -> None:
    assert secret not in redact(text).text
