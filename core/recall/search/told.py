"""The delta sync told what an edit by the line index wrote (``store/range_edit.py``), instead of
comparing the record file with its last synced version block by block (every block's CRC: a read
of the whole 56 MB file at 100,000 records). ``delta._delta_read`` asks :func:`told` first."""

from __future__ import annotations

import os
import zlib
from array import array
from pathlib import Path

from commonkeep.recall.search.delta import BLOCK_LINES, Read, _block_sizes, _lines


def told(root: Path | str, name: str, fd: int, read: Read, old_stamp: str, old_crcs: array[int], old_lens: array[int],
          old_blocks: array[int]) -> tuple[array[int], array[int], array[int], int, int, int, bytes, int] | None:
    """:func:`_changed` from what this process's edit of the file wrote (``line_index.edit_of``),
    when the file is still exactly as that edit left it (its whole stat) and the state is the
    version the edit started from: the lines it replaced and appended are known, so only the
    blocks holding them are read. ``None`` (the file compared block by block) otherwise, or
    when the edit dropped a line (every later block moves)."""
    from commonkeep.store import line_index

    edit = line_index.edit_of(root, f"memory/{name}")
    if edit is None or line_index.stat_of(os.fstat(fd)) != edit.after:
        return None
    size0, mtime0, ino0 = (int(x) for x in old_stamp.split(":"))
    if (edit.before[2], edit.before[3], edit.before[1]) != (size0, mtime0, ino0) or not edit.lines and not edit.tail:
        return None
    total = sum(old_lens)  # the lines' bytes, newlines left out; kept up to date below (not summed again)
    if any(not new for _, _, new in edit.lines) or total + len(old_lens) != size0:
        return None
    crcs, lens = array("I", old_crcs), array("I", old_lens)
    for i, old_len, new in edit.lines:
        if i >= len(lens) or lens[i] + 1 != old_len or new.count(b"\n") != 1:
            return None
        total += len(new) - 1 - lens[i]
        crcs[i], lens[i] = zlib.crc32(new[:-1]), len(new) - 1
    tail_crcs, tail_lens = _lines(edit.tail)
    first_tail = len(lens)
    crcs += tail_crcs
    lens += tail_lens
    total += sum(tail_lens)
    if total + len(lens) != edit.after[2]:
        return None
    touched = sorted({i for i, _, _ in edit.lines} | set(range(first_tail, len(lens))))
    head, end = touched[0], touched[-1] + 1
    sizes = _block_sizes(lens)
    blocks = array("I", old_blocks[: len(sizes)])
    blocks += array("I", [0] * (len(sizes) - len(blocks)))
    starts = [0]
    for n in sizes[:-1]:
        starts.append(starts[-1] + n)
    for b in sorted({i // BLOCK_LINES for i in touched}):
        data = read(starts[b], sizes[b])
        if len(data) != sizes[b]:
            return None
        blocks[b] = zlib.crc32(data)
    pos = sum(lens[:head]) + head
    stop = pos + sum(lens[head:end]) + end - head
    middle = read(pos, stop - pos)
    if len(middle) != stop - pos or not middle.endswith(b"\n"):
        return None
    old_end = min(end, first_tail) if edit.tail else end
    return crcs, lens, blocks, head, old_end, end, middle, pos
