"""Install, remove and inspect the commonkeep OMP extension (``commonkeep omp install|uninstall|status``).

The extension source ships as package data (``commonkeep_omp/commonkeep.ts``). Installing copies
it to ``<agent dir>/extensions/commonkeep.ts`` (agent dir: ``$PI_CODING_AGENT_DIR`` or
``~/.omp/agent``, contracts/omp-host.md §2.2) with the shared root and the argv of this
commonkeep baked into its ``CONFIG`` block: the extension needs no config file, no PATH entry
and no environment variable to find either. The installed copy carries a first line
``// commonkeep-generated sha256=<hash>`` over the rest, so a later install or uninstall can tell
our untouched file from one a person edited.

Optionally (``--env``) a managed block in ``<agent dir>/.env`` sets ``OMP_MEMORY_ROOT``,
``OMPKEEP_ROOT`` and ``PI_MEMORY_ROOT`` too (§4.1: read before any extension, but loses to a
value in the launch environment). Once written, every later install keeps the block on the
installed root (with or without ``--env``), since a stale block would win over the baked root.
A key the user already set outside the block is left alone, and reported only when a real OMP
session would then use another root (``roots.resolve`` computes what OMP resolves).

Never clobbers: a file that is not our untouched copy is moved to
``<name>.commonkeep-backup-<stamp>`` before it is replaced or removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep_omp.roots import ROOT_VARS, home_of, resolve

EXTENSION_FILE = "commonkeep.ts"
__all__ = ["ROOT_VARS"]
ENV_BEGIN = "# >>> commonkeep (managed by `commonkeep omp install`; `commonkeep omp uninstall` removes it)"
ENV_END = "# <<< commonkeep"
_HEADER = re.compile(r"^// commonkeep-generated sha256=([0-9a-f]{64})[^\n]*\n")
_CONFIG_BLOCK = re.compile(r"^// commonkeep:config-begin.*?^// commonkeep:config-end\n", re.S | re.M)
_CONFIG_LINE = re.compile(r"^const CONFIG[^=]*= (\{.*\});$", re.M)
_CONFIG_TYPE = "{ root: string; commonkeep: string[]; version: string }"


def agent_dir(env: Mapping[str, str] | None = None) -> Path:
    """OMP's agent dir: ``$PI_CODING_AGENT_DIR`` or ``$HOME/.omp/agent``."""
    env = os.environ if env is None else env
    override = env.get("PI_CODING_AGENT_DIR")
    if override:
        return Path(override).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".omp" / "agent"


def extension_source() -> str:
    """The extension as shipped in the package (unconfigured)."""
    return resources.files("commonkeep_omp").joinpath(EXTENSION_FILE).read_text(encoding="utf-8")


def commonkeep_argv() -> list[str]:
    """How the extension runs this commonkeep: the console script beside this Python, else ``-m``."""
    script = Path(sys.executable).parent / "commonkeep"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "commonkeep.cli"]


def _version() -> str:
    from commonkeep import __version__

    return str(__version__)


def render_extension(root: Path, argv: list[str] | None = None) -> str:
    """The extension text with ``root`` and ``argv`` baked in, headed by its content hash."""
    config = {"root": str(root), "commonkeep": argv or commonkeep_argv(), "version": _version()}
    block = (
        "// commonkeep:config-begin — written by `commonkeep omp install`; re-run it to change these.\n"
        f"const CONFIG: {_CONFIG_TYPE} = {json.dumps(config, ensure_ascii=False)};\n"
        "// commonkeep:config-end\n"
    )
    source = extension_source()
    if not _CONFIG_BLOCK.search(source):
        raise BadInput(f"the packaged {EXTENSION_FILE} has no commonkeep:config block; reinstall commonkeep")
    body = _CONFIG_BLOCK.sub(lambda _m: block, source, count=1)
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    return f"// commonkeep-generated sha256={digest} — edits are kept as a backup on reinstall\n{body}"


def _read(path: Path) -> str:
    """A file a person may have edited: bytes that are not UTF-8 read as U+FFFD, never a crash
    (such a file is then simply "not our untouched copy" and is kept as a backup)."""
    return path.read_bytes().decode("utf-8", errors="replace")


def _read_env(path: Path) -> str:
    """``.env`` as text; one that is not UTF-8 is left alone (we would rewrite it), with a clear error."""
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        from commonkeep.errors import BadInput

        raise BadInput(f"{path} is not UTF-8 text (byte {exc.start}); commonkeep leaves it alone",
                       hint="fix its encoding, or run without --env and set OMP_MEMORY_ROOT yourself") from exc


def read_installed(path: Path) -> dict[str, Any]:
    """What an installed extension file says about itself: ours?, untouched?, baked config."""
    try:
        text = _read(path)
    except FileNotFoundError:
        return {"exists": False}
    except OSError as exc:
        return {"exists": True, "error": str(exc)}
    info: dict[str, Any] = {"exists": True, "ours": False, "untouched": False, "config": None}
    head = _HEADER.match(text)
    if head:
        body = text[head.end() :]
        info["ours"] = True
        info["untouched"] = hashlib.sha256(body.encode("utf-8")).hexdigest() == head.group(1)
    line = _CONFIG_LINE.search(text)
    if line:
        try:
            info["config"] = json.loads(line.group(1))
        except ValueError:
            info["config"] = None
    return info


def _backup(path: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    target = path.with_name(f"{path.name}.commonkeep-backup-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.commonkeep-backup-{stamp}-{n}")
    shutil.copy2(path, target)
    return target


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


@dataclass
class Outcome:
    """What an install/uninstall did, for the CLI to print."""

    extension: Path
    env_file: Path
    actions: list[str] = field(default_factory=list)
    backups: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "extension": str(self.extension),
            "env_file": str(self.env_file),
            "actions": self.actions,
            "backups": [str(p) for p in self.backups],
            "warnings": self.warnings,
        }


def _split_env(text: str) -> tuple[list[str], list[str] | None]:
    """Lines outside our managed block, and the block's lines (``None`` when absent)."""
    outside: list[str] = []
    block: list[str] | None = None
    inside = False
    for line in text.splitlines():
        if line.strip() == ENV_BEGIN:
            inside, block = True, []
        elif inside and line.strip() == ENV_END:
            inside = False
        elif inside:
            assert block is not None
            block.append(line)
        else:
            outside.append(line)
    return outside, block


def _env_keys(lines: list[str]) -> dict[str, str]:
    keys: dict[str, str] = {}
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or "=" not in stripped:
            continue
        key, _, value = stripped.removeprefix("export ").partition("=")
        keys[key.strip()] = value.strip().strip("'\"")
    return keys


def _install_env(env_file: Path, root: Path, out: Outcome) -> None:
    text = _read_env(env_file) if env_file.exists() else ""
    outside, block = _split_env(text)
    user = _env_keys(outside)
    before = _env_keys(block or [])
    lines = [f"{var}={root}" for var in ROOT_VARS if var not in user]  # the user's own lines stay theirs
    new_block = [ENV_BEGIN, *lines, ENV_END] if lines else []
    body = "\n".join(outside).rstrip("\n")
    new_text = (body + "\n\n" if body else "") + ("\n".join(new_block) + "\n" if new_block else "")
    if new_text == text:
        out.actions.append(f"{env_file}: already up to date")
        return
    if env_file.exists() and block is None and text.strip():
        out.backups.append(_backup(env_file))
    _write_atomic(env_file, new_text)
    stale = sorted({v for v in before.values() if v != str(root)})
    was = f"; it set {', '.join(stale)} before" if block is not None and stale else ""
    out.actions.append(f"{env_file}: {'wrote' if lines else 'removed'} the commonkeep block ({', '.join(lines) or 'no keys'}){was}")


def _check_resolution(agent: Path, root: Path, out: Outcome) -> None:
    """Warn when the ``.env`` files make a real OMP session use another root than ``root``."""
    seen = resolve(str(root), agent=agent, home=home_of())
    if seen.root and seen.root != str(root):
        out.warnings.append(f"OMP sessions will use {seen.root} ({seen.rule}), not {root}: edit or remove that line "
                            "to share this root")
    elif seen.split():
        out.warnings.append(f"OMP sessions use {root}, but {'; '.join(seen.split())}: upstream pi-persistent-intelligence "
                            "reads PI_MEMORY_ROOT and would use another memory; edit or remove that line")


def install(
    root: Path, *, agent: Path | None = None, write_env: bool = False, argv: list[str] | None = None
) -> Outcome:
    """Install (or update) the extension with ``root`` baked in; optionally the ``.env`` block."""
    root = Path(root).expanduser().resolve()
    agent = agent or agent_dir()
    ext = agent / "extensions" / EXTENSION_FILE
    out = Outcome(extension=ext, env_file=agent / ".env")
    text = render_extension(root, argv)
    info = read_installed(ext)
    if info["exists"] and _read(ext) == text:
        out.actions.append(f"{ext}: already installed for root {root}")
    else:
        if info["exists"] and not info.get("untouched"):
            out.backups.append(_backup(ext))
            out.warnings.append(f"{ext} was not our untouched copy; kept it as {out.backups[-1]}")
        _write_atomic(ext, text)
        out.actions.append(f"{ext}: {'updated' if info['exists'] else 'installed'} (root {root})")
    has_block = out.env_file.exists() and _split_env(_read_env(out.env_file))[1] is not None
    if write_env or has_block:  # a block left on an old root would win over the new baked root
        _install_env(out.env_file, root, out)
    _configure_curators(root, out)
    _check_resolution(agent, root, out)
    return out


def _configure_curators(root: Path, out: Outcome) -> None:
    """``config.json`` of the root: OmpKeep's own session-end curation off, commonkeep's on (issue 22).

    OmpKeep curates the shared inbox at every OMP session end and trusts what each candidate
    claims; with ``curator.autoCurate: "off"`` it applies nothing, and the extension runs
    commonkeep's policy (``commonkeep.autoCurate``) at session end instead.
    """
    from commonkeep.errors import BadInput
    from commonkeep.store.curators import configure_curators
    from commonkeep.store.layout import DIR_MODE

    root.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    try:
        done = configure_curators(root)
    except BadInput as exc:
        out.warnings.append(f"{exc}: OmpKeep's own session-end curation may apply candidates commonkeep holds for a person")
        return
    cfg = root / "config.json"
    out.actions.append(f"{cfg}: " + ("OmpKeep's session-end curation off (curator.autoCurate \"off\"), commonkeep's "
                                     f"commonkeep.autoCurate \"{done['commonkeep']['autoCurate']}\"" if done["changed"]
                                     else "curation already configured"))


def backups(agent: Path) -> list[Path]:
    """The ``*.commonkeep-backup-*`` copies install and uninstall left in the agent dir."""
    ext_dir = agent / "extensions"
    found = [*ext_dir.glob(f"{EXTENSION_FILE}.commonkeep-backup-*")] if ext_dir.is_dir() else []
    return sorted([*found, *agent.glob(".env.commonkeep-backup-*")])


def uninstall(*, agent: Path | None = None, remove_backups: bool = False) -> Outcome:
    """Remove the extension (backing it up if edited) and our ``.env`` block; user lines stay.

    The memory root is never touched (Hermes may share it), and the outcome says so. Backups
    made by earlier installs are listed and kept unless ``remove_backups``; a backup made by
    this very uninstall (an edited extension) is always kept.
    """
    agent = agent or agent_dir()
    ext = agent / "extensions" / EXTENSION_FILE
    out = Outcome(extension=ext, env_file=agent / ".env")
    earlier = backups(agent)
    info = read_installed(ext)
    root = (info.get("config") or {}).get("root") if info.get("exists") else None
    if not info["exists"]:
        out.actions.append(f"{ext}: not installed")
    else:
        if not info.get("untouched"):
            out.backups.append(_backup(ext))
            out.warnings.append(f"{ext} had been edited; kept it as {out.backups[-1]}")
        ext.unlink()
        out.actions.append(f"{ext}: removed")
    if out.env_file.exists():
        text = _read_env(out.env_file)
        outside, block = _split_env(text)
        if block is not None:
            body = "\n".join(outside).rstrip("\n")
            _write_atomic(out.env_file, body + "\n" if body else "")
            out.actions.append(f"{out.env_file}: removed the commonkeep block")
    if root:
        out.actions.append(f"memory root {root} is kept, with everything in it (Hermes may share it); "
                           "delete it yourself if you no longer want that memory")
    if earlier and remove_backups:
        for path in earlier:
            path.unlink(missing_ok=True)
        out.actions.append(f"removed {len(earlier)} backup(s) of earlier installs: {', '.join(p.name for p in earlier)}")
    elif earlier:
        out.actions.append(f"kept {len(earlier)} backup(s) of earlier installs ({', '.join(str(p) for p in earlier)}); "
                           "`commonkeep omp uninstall --remove-backups` deletes them")
    return out


def status(*, agent: Path | None = None, root: Path | None = None) -> dict[str, Any]:
    """What is installed and where; ``ok`` is true when the extension is ours, untouched and
    (if ``root`` is given) baked with that root, and no ``.env`` line contradicts it."""
    agent = agent or agent_dir()
    ext = agent / "extensions" / EXTENSION_FILE
    env_file = agent / ".env"
    info = read_installed(ext)
    problems: list[str] = []
    baked = (info.get("config") or {}).get("root") if info.get("exists") else None
    if not info.get("exists"):
        problems.append(f"extension not installed at {ext} (run `commonkeep omp install`)")
    elif not info.get("ours"):
        problems.append(f"{ext} exists but was not written by commonkeep")
    elif not info.get("untouched"):
        problems.append(f"{ext} was edited after install (re-run `commonkeep omp install`; the edit is kept as a backup)")
    if root is not None and baked and Path(baked) != Path(root).expanduser().resolve():
        problems.append(f"extension is baked with root {baked}, not {Path(root).expanduser().resolve()}")
    env_state: dict[str, Any] = {"path": str(env_file), "exists": env_file.exists(), "managed": {}, "user": {}}
    stale_block = False
    if env_file.exists():
        outside, block = _split_env(_read_env(env_file))
        env_state["managed"] = _env_keys(block or [])
        env_state["user"] = {k: v for k, v in _env_keys(outside).items() if k in ROOT_VARS}
        target = baked or (str(root) if root else None)
        for key, value in env_state["managed"].items():
            if target and Path(value).expanduser().resolve() != Path(target):
                stale_block = True
                problems.append(f"{env_file}: the commonkeep block sets {key}={value}, not the extension's root {target}; "
                                "re-run `commonkeep omp install` to update it")
    launch = {var: os.environ[var] for var in ROOT_VARS if os.environ.get(var)}
    target = baked or (str(root) if root else None)
    for var, value in launch.items():
        if target and Path(value).expanduser().resolve() != Path(target):
            problems.append(f"${var}={value} in this environment overrides the shared root {target} for OMP started from here")
    seen = resolve(target, agent=agent, home=home_of(), launch={})  # the files alone; the launch env is above
    if stale_block:
        pass  # said above, with the fix
    elif target and seen.root and seen.root != str(Path(target).expanduser().resolve()):
        problems.append(f"a real OMP session uses {seen.root} ({seen.rule}), not {target}")
    elif target:
        problems.extend(f"{s} differs from {target}: upstream pi-persistent-intelligence would use it" for s in seen.split())
    return {
        "ok": not problems,
        "resolved_root": seen.root,
        "resolved_rule": seen.rule,
        "agent_dir": str(agent),
        "extension": {"path": str(ext), **info},
        "root": baked,
        "env_file": env_state,
        "launch_env": launch,
        "problems": problems,
    }
