"""Checks of a root's files as files, for ``commonkeep doctor``: links that lead outside the
root, who else can read memory, and previous generations of rewritten files still held open.

Each check returns doctor findings (``code``, ``severity``, ``message`` and ``file``).
"""

from __future__ import annotations

import os
import stat
from typing import Any

from commonkeep.store.layout import Layout

Finding = dict[str, Any]
# Folders whose files hold what the agents remember (or copies of it).
PRIVATE = ("memory", "inbox", "daily", "patches", "quarantine", "sessions", "reports", "runtime", "rendered", "search")


def _inside(target: str, real_root: str) -> bool:
    return target == real_root or target.startswith(real_root + os.sep)


def link_findings(lay: Layout) -> list[Finding]:
    """Every symlink in the root: an error when it leads outside (commonkeep refuses the root
    while a folder does, and never writes through a linked file), a note when it stays inside."""
    out: list[Finding] = []
    base = os.fspath(lay.root)
    real = os.path.realpath(base)
    for folder, dirs, files in os.walk(base):
        for name in (*dirs, *files):
            p = os.path.join(folder, name)
            if not os.path.islink(p):
                continue
            rel = os.path.relpath(p, base)
            target = os.path.realpath(p)
            kind = "folder" if os.path.isdir(p) else "file"
            if _inside(target, real):
                out.append({"code": "linked_inside_root", "severity": "info",
                            "message": f"{rel} is a symlinked {kind} to {target}, inside the root (allowed)", "file": rel})
            else:
                what = ("every command refuses this root until it is a real folder again" if kind == "folder"
                        else "commonkeep refuses to write through it")
                out.append({"code": "linked_outside_root", "severity": "error",
                            "message": f"{rel} is a symlinked {kind} to {target}, outside the root: {what}; "
                                       f"move the content back into {p}", "file": rel})
    return out


def mode_findings(lay: Layout) -> list[Finding]:
    """Warn when group or others can read memory: the root lets them in and files let them read."""
    try:
        root_mode = os.stat(lay.root).st_mode
    except OSError:
        return []
    classes = [(who, enter, read) for who, enter, read in (("group", stat.S_IXGRP, stat.S_IRGRP), ("others", stat.S_IXOTH, stat.S_IROTH))
               if root_mode & enter]
    if not classes:
        return []
    readable: dict[str, list[str]] = {who: [] for who, _, _ in classes}
    for top in PRIVATE:
        for folder, _dirs, files in os.walk(lay.root / top):
            for name in files:
                p = os.path.join(folder, name)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if not stat.S_ISREG(st.st_mode):
                    continue
                for who, _enter, read in classes:
                    if st.st_mode & read:
                        readable[who].append(os.path.relpath(p, lay.root))
    out: list[Finding] = []
    for who, files in readable.items():
        if files:
            shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
            out.append({"code": "memory_readable_by_others", "severity": "warning",
                        "message": f"{who} can read {len(files)} memory file(s) (the root is {stat.filemode(root_mode)}): {shown}; "
                                   f"make it owner-only with `chmod 700 {lay.root}` (and `chmod -R go-rwx {lay.root}`)",
                        "file": "."})
    return out


def generation_findings(lay: Layout) -> list[Finding]:
    """Previous generations of rewritten files another program still holds open."""
    out: list[Finding] = []
    for folder, _dirs, files in os.walk(lay.root):
        for name in files:
            if ".tmp-gen-" in name and name.startswith("."):
                rel = os.path.relpath(os.path.join(folder, name), lay.root)
                out.append({"code": "previous_generation", "severity": "info",
                            "message": f"{rel} is the file as it was before a rewrite, kept because another program "
                                       "(OMP) may still append to it; what it appends is carried over on the next read. "
                                       "Do not delete it", "file": rel})
    return out


def root_findings(lay: Layout) -> list[Finding]:
    return [*link_findings(lay), *mode_findings(lay), *generation_findings(lay)]
