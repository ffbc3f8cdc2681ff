"""Is a run of token characters a name from code (``HTTPSConnectionPoolV2``), not a random token?

An identifier is built of parts a person chose: it splits at its case changes, digits and
``_``/``-``/``.`` into dictionary words (``Connection``, ``get``), acronyms (``HTTPS``, ``IAM``,
``SPAs``) and short numbers (``V2``, ``AES256``, ``v13``). A random token splits into pieces no
dictionary holds (``Xq``, ``bNz``, ``Rkw``). ``identifier`` says yes only when every part but one
at most is one of those and two of them at least are words of three letters or more, so a random
token passes only when its lower-case pieces happen to be words and its capitals acronyms
(``randomness.looks_random`` asks it last; of 1,000,000 seeded random tokens of 20 to 40 letters and
digits none passed, of 1,000,000 URL-safe base64 ones one: ``docs/security.md``).

The words are the whole words of the WordPiece vocabulary shipped with commonkeep for semantic
search (``commonkeep/recall/search/data/minilm-tokenizer.json``, 21,000 lower-case words of English
text, names and abbreviations), read once when first needed, and the short list below of words that
code spells and prose seldom does (``auth``, ``config``, ``json``).
"""

from __future__ import annotations

import re
from functools import lru_cache

# words of code that the vocabulary lacks (each also written ``Auth``, ``Json``, ``Impl``): the most
# common parts of the identifiers in a Python environment's installed packages that it does not
# hold, less Python's own names, and the names of cloud, protocol and data formats
CODE_WORDS = frozenset((
    "auth", "oauth", "config", "configs", "conf", "util", "utils", "repo", "repos", "impl", "async", "json",
    "yaml", "toml", "xml", "html", "css", "url", "urls", "uri", "uris", "http", "https", "grpc", "rpc",
    "tcp", "udp", "dns", "tls", "ssl", "ssh", "jwt", "jwks", "oidc", "saml", "ldap", "smtp", "imap", "amqp",
    "mqtt", "sql", "nosql", "postgres", "mysql", "mongo", "redis", "kafka", "aws", "gcp", "azure", "iam",
    "arn", "vpc", "eks", "ecs", "ecr", "rds", "sqs", "sns", "kms", "gcs", "lambda", "dto", "dao", "etag",
    "gcm", "str", "ptr", "vec", "enum", "bool", "int", "uint", "char", "args", "kwargs", "param", "params",
    "ctx", "req", "resp", "res", "msg", "err", "errs", "cfg", "env", "envs", "dir", "dirs", "src", "dst",
    "tmp", "temp", "buf", "len", "idx", "num", "init", "mgr", "svc", "api", "apis", "sdk", "cli", "gui",
    "uuid", "guid", "sha", "hmac", "rsa", "aes", "ecdsa", "dev", "prod", "ops", "devops", "webhook",
    "webhooks", "middleware", "runtime", "namespace", "metadata", "localhost", "hostname", "username",
    "admin", "backend", "frontend", "endpoint", "endpoints", "await", "mutex", "cron", "jsonb", "regex",
    "bytes", "nullable", "readonly", "kube", "kubectl", "npm", "pip", "cpu", "gpu", "ram", "ssd", "ids",
    "dict", "func", "obj", "attr", "attrs", "iter", "iterable", "iterator", "parse", "parser", "parsed",
    "parsing", "encode", "encoder", "decode", "decoder", "codec", "codecs", "debug", "delete", "timeout",
    "timeouts", "callback", "callbacks", "filename", "filenames", "filesystem", "keyword", "keywords",
    "boolean", "cached", "caching", "lookup", "lookups", "identifier", "identifiers", "timestamp",
    "timezone", "datetime", "whitespace", "newline", "wrapper", "wrappers", "decorator", "serialize",
    "serializer", "serializable", "serialization", "deserialize", "deserializer", "initialize",
    "initializer", "normalize", "normalized", "validate", "validator", "validated", "constructor",
    "subclass", "subclasses", "descriptor", "deprecated", "overridden", "override", "overrides", "recursive",
    "recursion", "mutable", "immutable", "placeholder", "delimiter", "separator", "separators", "shutdown",
    "workaround", "wildcard", "hashable", "awaitable", "coroutine", "plugin", "plugins", "schema", "schemas",
    "formatter", "logger", "exec", "eval", "const", "struct", "stdin", "stdout", "stderr", "stdlib",
    "submodule", "mixin", "getter", "setter", "teardown", "scalar", "charset", "multiline", "substring",
    "instantiate", "retry", "retries", "retried", "proc", "cmd", "exc", "fmt", "ext", "misc", "orig", "prev",
    "pos", "addr", "seq", "desc", "diff", "perf", "std", "cwd", "pkg", "lib", "txt", "eof", "max", "min",
    "abs", "dest", "cur", "rel", "mem", "ref", "refs", "ttl", "uid", "gid", "pid", "tid", "rgb", "nan",
    "login", "logout", "signin", "signup", "conn", "sig", "stub", "amz", "goog", "hdr", "hdrs", "arg", "cert",
    "certs", "widget", "widgets", "sandbox", "redirect", "emit", "disable", "mismatch", "insecure", "infra",
    "resolver", "elem", "avg",
))
# two-letter words an identifier spells out (``IsReady``, ``ById``, ``ForEUWest``, ``Io``, ``Db``)
SHORT_WORDS = frozenset((
    "an", "as", "at", "be", "by", "do", "go", "if", "in", "is", "it", "me", "my", "no", "of", "on", "or",
    "so", "to", "up", "us", "we", "id", "io", "os", "db", "ui", "ux", "ok", "ip",
))
# acronyms an all-caps run may be built of, run together or not (``AWSIAM``; an all-caps word of the
# vocabulary counts too: ``EUWEST``); one run of two or three letters that none of them makes is allowed
ACRONYMS = frozenset((
    "http", "https", "json", "yaml", "toml", "html", "xhtml", "uuid", "guid", "oauth", "saml", "ldap",
    "smtp", "imap", "amqp", "mqtt", "grpc", "rest", "cors", "csrf", "xsrf", "cidr", "hmac", "ecdsa", "ecdh",
    "jwks", "oidc", "ntlm", "totp", "hotp", "fido", "wasm", "cuda", "nvme", "rbac", "abac", "ascii", "unix",
    "posix", "linq", "crud", "repl", "mime", "quic", "sftp", "ospf", "icmp", "tcp", "udp", "dns", "tls",
    "ssl", "ssh", "jwt", "aws", "gcp", "iam", "arn", "vpc", "eks", "ecs", "ecr", "rds", "sqs", "sns", "kms",
    "gke", "gce", "sdk", "cli", "api", "ui", "os", "db", "ip", "io", "id", "pkce", "spa", "sso", "mfa",
    "utf", "jvm", "jdk", "jre", "orm", "etl", "ide", "lsp", "ast", "dsl", "csv", "tsv", "xml", "pdf", "png",
    "jpeg", "svg", "url", "uri", "urn", "sql", "cpu", "gpu", "ram", "ssd", "nfs", "smb", "acl", "rsa", "aes",
    "sha", "md", "eu", "us", "ap", "ca", "uk", "ec", "oaep", "ocsp", "jws", "jwe", "csr", "crl", "pem",
    "der", "pkcs", "alb", "elb", "nlb", "cdn", "waf", "iot", "llm", "cdc",
))

_PART = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[vx][0-9])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_PIECE = re.compile(r"[^_.-]+")
_SUFFIXES = ("s", "es", "ed", "ing", "er", "ers")


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """The whole lower-case words (three letters or more) of the shipped WordPiece vocabulary."""
    try:  # imported here: a process that redacts nothing needs neither (~8 ms of imports)
        from importlib import resources

        import orjson

        raw = (resources.files("commonkeep.recall.search.data") / "minilm-tokenizer.json").read_bytes()
        vocab = orjson.loads(raw)["model"]["vocab"]
    except (ModuleNotFoundError, FileNotFoundError, OSError, ValueError, KeyError, TypeError):
        return CODE_WORDS
    return CODE_WORDS | {w for w in vocab if len(w) >= 3 and w.isascii() and w.isalpha() and w.islower()}


def _word(low: str) -> bool:
    """A dictionary word of three letters or more, or one with a plural or verb ending."""
    words = vocabulary()
    if low in words:
        return True
    for s in _SUFFIXES:
        stem = low[: -len(s)]
        if low.endswith(s) and len(stem) >= 3 and (stem in words or (stem[-1] == stem[-2] and stem[:-1] in words)):
            return True  # ``Replicas``, ``Mapper`` (``map``)
    return False


def _acronyms(run: str) -> bool:
    """All-caps letters that are known acronyms or words, alone or run together (``AWSIAM``, ``EUWEST``)."""
    low = run.lower()
    ok = [True, True] + [False] * (len(low) - 1)  # ok[i]: low[:i] splits (a leading letter alone: ``IHTTPClient``)
    for i in range(2, len(low) + 1):
        ok[i] = any(ok[j] and (low[j:i] in ACRONYMS or (i - j >= 3 and low[j:i] in vocabulary()))
                    for j in range(max(0, i - 10), i - 1))
    return ok[-1]


def identifier(token: str) -> bool:
    """Is ``token`` built of words, acronyms and short numbers: two words of 3+ letters at least,
    and one part at most that no list holds (an all-caps run of two or three letters, ``ORC``; or,
    beside three words, a word of its own, ``gsnXYFillColors``)?"""
    words = 0
    unknown = ""
    for piece in _PIECE.findall(token):
        if not piece.isascii() or not piece.isalnum():
            return False
        parts = _PART.findall(piece)
        for i, part in enumerate(parts):
            nxt = parts[i + 1] if i + 1 < len(parts) else ""
            if part.isdigit():
                if len(part) > 4:
                    return False
                continue
            if part.isupper() or (len(part) >= 3 and part[-1] == "s" and part[:-1].isupper()):  # ``SPAs``
                run = part.rstrip("s")
                known = len(run) == 1 or _acronyms(run)
                if not known and len(run) > 3:
                    return False
            elif len(part) >= 3:
                known = _word(part.lower())
                words += known
            elif len(part) == 2:
                known = part.lower() in SHORT_WORDS or part.lower() in ACRONYMS
            else:  # one letter: ``v2``, ``x64``, or a prefix (``iOS``, ``kMaxRetries``)
                known = (part in "vx" and nxt.isdigit()) or (i == 0 and part.islower())
            if not known:
                if unknown:
                    return False
                unknown = part
    return words >= 3 or (words >= 2 and (not unknown or unknown.isupper()))


def upper_name(core: str) -> bool:
    """A constant's or a file's name in capitals (``SSL_ERROR_WANT_X509_LOOKUP``), not a key: three
    parts or more between ``_`` or ``-``, none over 12 characters, half of them words (letters
    with a vowel). A key in capitals has a long random part (``NRAK-`` and 27 characters)."""
    parts = [p for p in re.split(r"[_-]+", core) if p]
    words = sum(1 for p in parts if p.isalpha() and 2 <= len(p) <= 12 and re.search("[AEIOUY]", p))
    return len(parts) >= 3 and max(map(len, parts)) <= 12 and 2 * words >= len(parts)


# a value that only names a secret: the word itself ("- password: password to log in with"), a
# bracketed name ("token = [CFWS]", "<your password>"), or a description that uses the word
# ("password: The password for the authentication")
_SELF_NAMED = re.compile(r"(?i)(?:password|passwd|passphrase|pwd|secret|token|api[_ -]?key|key|credentials?)")
_BRACKETED = re.compile(r"\[[A-Za-z_ -]*\]|<[A-Za-z_ -]*>")
_DESCRIBES = frozenset({"password", "passphrase", "passwd", "secret", "token", "credentials"})


_PATH = re.compile(r"(?:/|\./|~/)[\w./-]*")  # ``PWD='/tmp'``: the shell's working folder, a path
# a YAML tag that fetches the value from elsewhere (``password: !secret mqtt_password`` in Home Assistant,
# ``!vault |`` in Ansible, CloudFormation's ``!Ref``, ``!env_var``), not the value
_YAML_TAG = re.compile(r"(?i)!(?:secret|vault|env_var|env|ref|sub|getatt|importvalue|include|include_dir_\w+|sops|ssm|"
                       r"aws_secretsmanager|lookup|input|var|encrypted/pkcs1-oaep)")
# a documentation placeholder: words joined by ``-`` or ``_`` that name the secret (``my_token``,
# ``your-replicate-api-key``, ``my-secret``)
_NAMED_WORDS = re.compile(r"(?i)[a-z]+(?:[_-][a-z]+)*")
_SECRET_PARTS = frozenset({"token", "secret", "key", "password", "passwd", "pwd", "apikey", "passphrase"})
# code in the value's place: a call (``TokenElement(id=1425,``) or a type (``Optional[Union[str,``)
_CODE = re.compile(r"[A-Za-z_][\w.]*\((?:\)|[A-Za-z_]\w*=)"
                   r"|(?:Optional|Union|List|Dict|Tuple|Set|Sequence|Mapping|Callable|Literal|Annotated|list|dict|tuple|set|type)\[")


def names_itself(value: str) -> bool:
    """Whether a value found in a secret's place only names one (the comment above), or is a path."""
    v = value.strip().strip("\"'`").rstrip(".,;:!?")
    if _SELF_NAMED.fullmatch(v) or _BRACKETED.fullmatch(v) or _PATH.fullmatch(v) or _CODE.match(v) or _YAML_TAG.fullmatch(v):
        return True
    if _NAMED_WORDS.fullmatch(v) and not _SECRET_PARTS.isdisjoint(re.split(r"[_-]", v.lower())):
        return True
    words = v.lower().split()
    return len(words) >= 3 and not _DESCRIBES.isdisjoint(w.strip(".,;:!?()") for w in words)
