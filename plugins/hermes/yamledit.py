"""Small line-level edits of Hermes' ``config.yaml`` that keep the user's comments and layout.

PyYAML would drop every comment on a round trip, and ruamel.yaml is not a commonkeep
dependency. The installer only ever touches three places — ``memory.<key>`` scalars, a
``memory.commonkeep`` block and the ``plugins.enabled`` list — so these functions edit just
those lines and leave every other byte alone. The caller re-parses the result and checks the
values (``verify``), so an exotic layout fails loudly instead of being mangled.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

_KEY = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z0-9_.\-]+)\s*:(?P<rest>.*)$")


def _is_content(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _section(lines: list[str], name: str) -> tuple[int, int] | None:
    """``(header index, end index)`` of a top-level mapping section, or ``None``."""
    for i, line in enumerate(lines):
        m = _KEY.match(line)
        if m and not m["indent"] and m["key"] == name:
            end = i + 1
            while end < len(lines) and (not _is_content(lines[end]) or _indent(lines[end]) > 0 or
                                        lines[end].lstrip().startswith("- ")):
                end += 1
            # trailing blank/comment lines belong to whatever follows
            while end > i + 1 and not _is_content(lines[end - 1]):
                end -= 1
            return i, end
    return None


def _child_indent(lines: list[str], start: int, end: int) -> int:
    for line in lines[start + 1:end]:
        if _is_content(line) and not line.lstrip().startswith("- "):
            return _indent(line)
    return 2


def _child(lines: list[str], start: int, end: int, key: str) -> int | None:
    indent = _child_indent(lines, start, end)
    for i in range(start + 1, end):
        m = _KEY.match(lines[i])
        if m and len(m["indent"]) == indent and m["key"] == key:
            return i
    return None


def _child_end(lines: list[str], idx: int, end: int) -> int:
    """End of a child key's own block (its nested lines)."""
    base = _indent(lines[idx])
    j = idx + 1
    while j < end and (not _is_content(lines[j]) or _indent(lines[j]) > base or
                       (_indent(lines[j]) == base and lines[j].lstrip().startswith("- "))):
        j += 1
    while j > idx + 1 and not _is_content(lines[j - 1]):
        j -= 1
    return j


def _split_comment(rest: str) -> tuple[str, str]:
    m = re.search(r"\s+#.*$", rest)
    return (rest[:m.start()], rest[m.start():]) if m else (rest, "")


def _lines(text: str) -> list[str]:
    return text.splitlines()


def _join(lines: list[str], original: str) -> str:
    out = "\n".join(lines)
    return out + "\n" if (original.endswith("\n") or not original) and out else out


def set_child(text: str, section: str, key: str, value: Any) -> str:
    """Set ``section.key`` to a scalar (or flow) ``value``; adds the section/key if missing."""
    rendered = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    if rendered.endswith("\n...") or rendered.endswith("..."):
        rendered = rendered.replace("\n...", "").removesuffix("...").strip()
    lines = _lines(text)
    sec = _section(lines, section)
    if sec is None:
        prefix = lines + ([""] if lines and lines[-1].strip() else [])
        return _join(prefix + [f"{section}:", f"  {key}: {rendered}"], text or "\n")
    start, end = sec
    idx = _child(lines, start, end, key)
    indent = " " * _child_indent(lines, start, end)
    if idx is None:
        lines.insert(start + 1, f"{indent}{key}: {rendered}")
    else:
        m = _KEY.match(lines[idx])
        assert m is not None
        _, comment = _split_comment(m["rest"])
        stop = _child_end(lines, idx, end)
        lines[idx:stop] = [f"{indent}{key}: {rendered}{comment}"]
    return _join(lines, text)


def remove_child(text: str, section: str, key: str) -> str:
    """Remove ``section.key`` (and its nested block); the section stays even if empty."""
    lines = _lines(text)
    sec = _section(lines, section)
    if sec is None:
        return text
    start, end = sec
    idx = _child(lines, start, end, key)
    if idx is None:
        return text
    del lines[idx:_child_end(lines, idx, end)]
    return _join(lines, text)


def set_block(text: str, section: str, key: str, mapping: dict[str, Any]) -> str:
    """Set ``section.key`` to a small block mapping (replacing an existing one)."""
    lines = _lines(text)
    sec = _section(lines, section)
    if sec is None:
        text = set_child(text, section, key, None)
        lines = _lines(text)
        sec = _section(lines, section)
        assert sec is not None
    start, end = sec
    indent = " " * _child_indent(lines, start, end)
    body = yaml.safe_dump(mapping, default_flow_style=False, sort_keys=False, width=10_000).splitlines()
    block = [f"{indent}{key}:"] + [f"{indent}  {ln}" for ln in body]
    idx = _child(lines, start, end, key)
    if idx is None:
        lines[end:end] = block
    else:
        lines[idx:_child_end(lines, idx, end)] = block
    return _join(lines, text)


def list_items(data: dict[str, Any], section: str, key: str) -> list[Any]:
    sec = data.get(section)
    value = sec.get(key) if isinstance(sec, dict) else None
    return list(value) if isinstance(value, list) else []


def add_list_item(text: str, section: str, key: str, item: str) -> str:
    """Append ``item`` to the list ``section.key`` (keeping its flow or block style)."""
    current = list_items(yaml.safe_load(text) or {}, section, key)
    if item in current:
        return text
    lines = _lines(text)
    sec = _section(lines, section)
    idx = _child(lines, *sec, key) if sec else None
    if sec is None or idx is None:
        return set_child(text, section, key, [*current, item])
    m = _KEY.match(lines[idx])
    assert m is not None
    value, comment = _split_comment(m["rest"])
    if value.strip():  # flow style (or a scalar): rewrite the one line
        return set_child(text, section, key, [*current, item])
    # block style: add an item after the last one, with the same indentation
    stop = _child_end(lines, idx, sec[1])
    items = [i for i in range(idx + 1, stop) if lines[i].lstrip().startswith("- ")]
    item_indent = " " * (_indent(lines[items[-1]]) if items else _indent(lines[idx]) + 2)
    lines.insert((items[-1] + 1) if items else idx + 1, f"{item_indent}- {item}")
    return _join(lines, text)


def remove_list_item(text: str, section: str, key: str, item: str) -> str:
    """Remove ``item`` from the list ``section.key``."""
    current = list_items(yaml.safe_load(text) or {}, section, key)
    if item not in current:
        return text
    lines = _lines(text)
    sec = _section(lines, section)
    idx = _child(lines, *sec, key) if sec else None
    if sec is None or idx is None:
        return text
    m = _KEY.match(lines[idx])
    assert m is not None
    value, _ = _split_comment(m["rest"])
    if value.strip():
        return set_child(text, section, key, [x for x in current if x != item])
    stop = _child_end(lines, idx, sec[1])
    for i in range(idx + 1, stop):
        s = lines[i].strip()
        if s.startswith("- ") and yaml.safe_load(s[2:].split(" #")[0]) == item:
            del lines[i]
            break
    return _join(lines, text)


def get(data: dict[str, Any], dotted: str) -> Any:
    cur: Any = data
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur
