"""Round-trip edits of Hermes' ``config.yaml`` with ruamel.yaml (the parser Hermes itself uses).

ruamel.yaml keeps comments, key order, quoting and flow style on a round trip, so the installer
changes only what it sets: ``memory.<key>`` values, the ``memory.commonkeep`` block and one item of
``plugins.enabled``. Two things ruamel does not keep by itself are kept here: the file's
indentation (guessed from the text: mapping indent and the offset of ``- `` under its key) and its
line endings (CRLF stays CRLF). A flow mapping we add keys to (``memory: {}``) becomes a block
mapping, so the result stays readable.

Any text that is not YAML, or a top-level value that is not a mapping, is a :class:`ConfigError`
naming the line and column; nothing is written then.
"""

from __future__ import annotations

import io
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scalarstring import SingleQuotedScalarString

from commonkeep_hermes.settings import ConfigError


def _guess_indent(text: str) -> tuple[int, int]:
    """(mapping indent, offset of ``- `` under its parent key) of a block-style YAML text."""
    mapping, offset = None, None
    parent = 0
    for line in text.splitlines():
        body = line.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        indent = len(line) - len(body)
        if body.startswith("- "):
            if offset is None and indent >= parent:
                offset = indent - parent
            continue
        if mapping is None and indent > 0:
            mapping = indent
        parent = indent
    return mapping or 2, offset or 0


def _scalar(value: Any) -> Any:
    """A string that a YAML 1.1 reader (PyYAML, which Hermes also uses) would read as something
    else (``off`` as false, ``1.0`` as a float) is written quoted."""
    import yaml

    if isinstance(value, str) and not isinstance(value, SingleQuotedScalarString):
        try:
            same = yaml.safe_load(value) == value
        except yaml.YAMLError:
            same = False
        if not same:
            return SingleQuotedScalarString(value)
    return value


def _yaml(text: str) -> YAML:
    mapping, offset = _guess_indent(text)
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 100_000  # never re-wrap a long value
    y.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    return y


def _where(exc: YAMLError) -> str:
    mark = exc.problem_mark if isinstance(exc, MarkedYAMLError) else None
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""


class ConfigDoc:
    """One ``config.yaml`` loaded for editing; :meth:`text` gives it back with the edits."""

    def __init__(self, text: str) -> None:
        self.crlf = "\r\n" in text
        self.source = text.replace("\r\n", "\n") if self.crlf else text
        self._yaml = _yaml(self.source)
        try:
            data = self._yaml.load(self.source) if self.source.strip() else None
        except YAMLError as exc:
            problem = getattr(exc, "problem", None) or exc
            raise ConfigError(f"config.yaml is not valid YAML ({problem}{_where(exc)}); nothing was changed",
                              hint="fix the file, or restore a backup from commonkeep/backups/ in the Hermes home") from exc
        if data is None:
            data = CommentedMap()
        if not isinstance(data, CommentedMap):
            raise ConfigError(f"config.yaml is a {type(data).__name__}, not a mapping; install leaves the file alone",
                              hint="Hermes expects a mapping of settings at the top of config.yaml")
        self.data: CommentedMap = data

    # -- reading --------------------------------------------------------------------------------
    def get(self, dotted: str) -> Any:
        return get(self.data, dotted)

    def section(self, name: str, *, create: bool) -> CommentedMap | None:
        """The top-level mapping ``name`` (block style once we add to it); refuses a non-mapping."""
        value = self.data.get(name)
        if value is None:
            if not create:
                return None
            value = CommentedMap()
            self.data[name] = value
        if not isinstance(value, dict):
            raise ConfigError(f"config.yaml: {name}: is {value!r}, not a mapping; install leaves the file alone",
                              hint=f"make {name}: a mapping (or remove it), then run `commonkeep hermes install` again")
        return value  # type: ignore[return-value]

    # -- editing --------------------------------------------------------------------------------
    def set(self, section: str, key: str, value: Any) -> None:
        sec = self.section(section, create=True)
        assert sec is not None
        if sec.fa.flow_style():
            sec.fa.set_block_style()
        if isinstance(value, dict) and not isinstance(value, CommentedMap):
            old = sec.get(key)
            block = old if isinstance(old, CommentedMap) else CommentedMap()
            for k in [k for k in block if k not in value]:
                del block[k]
            for k, v in value.items():
                block[k] = _scalar(v)
            if block.fa.flow_style():
                block.fa.set_block_style()
            value = block
        sec[key] = _scalar(value)

    def remove(self, section: str, key: str) -> None:
        sec = self.section(section, create=False)
        if sec is not None and key in sec:
            del sec[key]

    def remove_section_if_empty(self, section: str) -> None:
        sec = self.data.get(section)
        if isinstance(sec, dict) and not sec:
            del self.data[section]

    def add_to_list(self, section: str, key: str, item: str) -> None:
        sec = self.section(section, create=True)
        assert sec is not None
        current = sec.get(key)
        if current is None:
            current = CommentedSeq()
            sec[key] = current
        if not isinstance(current, list):
            raise ConfigError(f"config.yaml: {section}.{key} is {current!r}, not a list; add {item} to it by hand")
        if item not in current:
            current.append(item)

    def remove_from_list(self, section: str, key: str, item: str) -> None:
        sec = self.section(section, create=False)
        current = sec.get(key) if sec is not None else None
        if isinstance(current, list):
            while item in current:
                current.remove(item)

    def text(self) -> str:
        if not self.data:
            return ""
        out = io.StringIO()
        self._yaml.dump(self.data, out)
        text = out.getvalue()
        return text.replace("\n", "\r\n") if self.crlf else text


def get(data: Any, dotted: str) -> Any:
    """``data["a"]["b"]`` for ``"a.b"``; ``None`` when any step is missing or not a mapping."""
    cur: Any = data
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def list_items(data: Any, section: str, key: str) -> list[Any]:
    value = get(data, f"{section}.{key}")
    return list(value) if isinstance(value, list) else []
