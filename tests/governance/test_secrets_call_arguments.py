"""A value's place in code or in a sentence ends before the marks that follow it: a call's argument
that names a value (``Source(auth=auth)``, ``Error(code=INTERNAL_ERROR, …)``) is no secret, and a
secret's comma or closing parenthesis stays in the text (session 20: 689 of the 6,594 real lines
the redactor changed were such arguments, ``HTTPBasicCredentials(username=username, password=password)``
among them)."""

from __future__ import annotations

import pytest

from commonkeep.secrets import redact


@pytest.mark.parametrize("text", [
    "GitHubSource(auth=auth, extra_taps=extra_taps),",
    "SkillsShSource(auth=auth),",
    "return HTTPBasicCredentials(username=username, password=password)",
    "raise MCPError(code=INTERNAL_ERROR, message=\"Client callback returned an invalid result\")",
    "Client(api_key=settings.API_KEY, retries=3)",
    "self._client = MemoryClient(api_key=self._api_key)",
    "return _db_unavailable_error(rid, code=5017)",
    "f(sig=sig, expr=expr_str)",
    "Client(token=os.environ.get(\"T\"), x=1)",
    "def create(cls, markdown: Markdown, token: Token) -> Heading:",
])
def test_a_call_s_argument_that_names_a_value_is_kept(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize(("text", "after"), [
    ("Client(api_key=abc123XYZ789qq)", "Client(api_key=[REDACTED:connection_string])"),
    ("connect(password=Hunter2xQ!, host=h)", "connect(password=[REDACTED:connection_string], host=h)"),
    ("token=abc123XYZ789qq, then restart", "token=[REDACTED:connection_string], then restart"),
    ("Пароль від wifi nG7#qpL2zz, the router is fine", "Пароль від wifi [REDACTED:secret_in_prose], the router is fine"),
    ("AccountKey=abc123XYZ789qq+/==;EndpointSuffix=core.windows.net",
     "AccountKey=[REDACTED:connection_string];EndpointSuffix=core.windows.net"),
])
def test_a_secret_s_comma_or_parenthesis_stays_in_the_text(text: str, after: str) -> None:
    assert redact(text).text == after


@pytest.mark.parametrize("text", [
    "smtp.starttls(); smtp.login(user, '7nsckG4V&bhK')",
    'client.login(username, "7nsckG4V&bhK")',
    "self.login(self.user, '7nsckG4V&bhK')",
    "  password: !!str 7nsckG4V&bhK",
    "Basic auth is bob / 7nsckG4V&bhK",
])
def test_a_password_after_a_user_s_name_a_yaml_cast_or_basic_auth(text: str) -> None:
    """A login call whose user is a variable (``smtp.login(user, 'X')``), YAML's ``!!str`` cast before
    the value, "Basic auth is bob / X" (a third probe of session 20)."""
    found = redact(text)
    assert found.findings and "7nsckG4V&bhK" not in found.text, found.text


@pytest.mark.parametrize("text", ["show_login(self, 'Please sign in')", "login(request, user)", "basic auth: see docs / wiki"])
def test_a_call_whose_first_argument_is_no_user_is_kept(text: str) -> None:
    assert redact(text).text == text
