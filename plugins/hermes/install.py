"""``commonkeep hermes install | uninstall | status`` for one Hermes home (profile).

install (idempotent — a second run changes nothing and says so):

1. backs up ``config.yaml`` once (``$HERMES_HOME/commonkeep/backups/config.yaml.orig``) and edits
   it with ruamel.yaml (``configyaml``), keeping comments, flow style, indentation, line endings
   and the file's mode: ``memory.provider: commonkeep`` (warning, with the way back, when it
   replaces another provider such as ``mem0``), ``memory.write_approval:
   true`` (Hermes' own gate as a fallback if the governance plugin ever fails to load),
   ``memory.commonkeep.root: <shared root>`` (plus ``auto_curate`` / ``role`` when asked; other
   keys of that block stay) and ``commonkeep-governance`` in ``plugins.enabled``
   (contracts/hermes-host.md §10.2);
2. writes the provider shim folder ``$HERMES_HOME/plugins/commonkeep/`` that Hermes 0.17–0.19
   needs to find an out-of-tree provider (§6.4);
3. at the first install, imports the existing ``§`` entries of MEMORY.md / USER.md as records
   through one audited patch (``importing``; secrets redacted, entries the poisoning score holds
   stay candidates for review) and renders the first projection from the store;
4. notes the Hermes home in ``<root>/runtime/hermes-homes.json`` so ``commonkeep apply`` refreshes
   its files after every patch.

uninstall restores the config: byte for byte from the backup when nobody edited it since, else
by undoing exactly the values install changed. The shim folder goes, and so do the folders
install created (``plugins/``, ``commonkeep/``) once nothing else is left in them; the memory
files and the backups of the user's own files stay.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from commonkeep_hermes.configyaml import ConfigDoc, get, list_items
from commonkeep_hermes.settings import (
    AUTO_CURATE_KEY,
    AUTO_CURATE_POLICIES,
    CONFIG_BLOCK,
    PLUGIN_KEY,
    PROVIDER_NAME,
    ROLE_KEY,
    TARGET_FILES,
    ConfigError,
    HermesProfile,
)

SHIM_INIT = '''"""commonkeep memory provider shim, written by `commonkeep hermes install`.

Hermes finds out-of-tree memory providers only as folders whose __init__.py mentions
MemoryProvider; the code lives in the installed commonkeep package.
"""

from commonkeep_hermes.provider import CommonkeepProvider, register  # noqa: F401
'''
SHIM_MANIFEST = "name: commonkeep\ndescription: Governed shared memory (commonkeep) as a Hermes memory provider\n"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _state_path(profile: HermesProfile) -> Path:
    return profile.state_dir / "install.json"


def _load_state(profile: HermesProfile) -> dict[str, Any]:
    try:
        data = json.loads(_state_path(profile).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, text: str) -> None:
    from commonkeep_hermes.hermesfiles import atomic_write

    atomic_write(path, text)


def wanted_settings(root: Path, auto_curate: str | None = None, role: str | None = None) -> dict[str, Any]:
    wanted: dict[str, Any] = {
        "memory.provider": PROVIDER_NAME,
        "memory.write_approval": True,
        f"memory.{CONFIG_BLOCK}.root": str(root),
    }
    if auto_curate is not None:
        wanted[f"memory.{CONFIG_BLOCK}.{AUTO_CURATE_KEY}"] = auto_curate
    if role is not None:
        wanted[f"memory.{CONFIG_BLOCK}.{ROLE_KEY}"] = role
    return wanted


def _parse(text: str) -> Any:
    """``config.yaml`` text as data; a file that is not YAML is a ``ConfigError`` naming line and column."""
    return ConfigDoc(text).data


def edit_config(text: str, root: Path, auto_curate: str | None = None, role: str | None = None) -> str:
    """The config text with commonkeep enabled; raises ``ConfigError`` (a ``ValueError``) if the
    file is not YAML, ``memory``/``plugins`` are not mappings, or the edit did not take.

    ``auto_curate`` / ``role`` set ``memory.commonkeep.auto_curate`` / ``.role`` when given; other
    keys already in the ``memory.commonkeep`` block (set by an earlier install or by hand) stay.
    """
    doc = ConfigDoc(text)
    for key in ("memory", "plugins"):
        doc.section(key, create=False)  # refuses a value that is not a mapping
    if auto_curate is not None and auto_curate not in AUTO_CURATE_POLICIES:
        raise ConfigError(f"--auto-curate {auto_curate!r}: use one of {', '.join(AUTO_CURATE_POLICIES)}")
    if role is not None and not role.strip():
        raise ConfigError("--role is empty; name the role Hermes acts as (the writer role to auto-curate)")
    old_block = doc.get(f"memory.{CONFIG_BLOCK}")
    block: dict[str, Any] = dict(old_block) if isinstance(old_block, dict) else {}
    block["root"] = str(root)
    if auto_curate is not None:
        block[AUTO_CURATE_KEY] = auto_curate
    if role is not None:
        block[ROLE_KEY] = role.strip()
    wanted = wanted_settings(root, auto_curate, role.strip() if role else None)
    if all(doc.get(k) == v for k, v in wanted.items()) and PLUGIN_KEY in list_items(doc.data, "plugins", "enabled"):
        return text  # already set: not a byte changes
    doc.set("memory", "provider", PROVIDER_NAME)
    doc.set("memory", "write_approval", True)
    doc.set("memory", CONFIG_BLOCK, block)
    doc.add_to_list("plugins", "enabled", PLUGIN_KEY)
    new = doc.text()
    data = ConfigDoc(new).data  # what Hermes will read back
    for dotted, value in wanted.items():
        if get(data, dotted) != value:
            raise ConfigError(f"could not set {dotted} in config.yaml (unusual layout); nothing was changed",
                              hint="set it by hand")
    if PLUGIN_KEY not in list_items(data, "plugins", "enabled"):
        raise ConfigError("could not add commonkeep-governance to plugins.enabled; nothing was changed",
                          hint="add it by hand")
    return new


def _registry(root: Path) -> Path:
    return root / "runtime" / "hermes-homes.json"


def registered_homes(root: Path) -> list[Path]:
    try:
        data = json.loads(_registry(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [Path(p) for p in data if isinstance(p, str)] if isinstance(data, list) else []


def _set_registered(root: Path, home: Path, present: bool) -> None:
    homes = [str(p) for p in registered_homes(root)]
    want = str(home.resolve())
    new = sorted(set(homes) | {want}) if present else [h for h in homes if h != want]
    if new != homes:
        _write(_registry(root), json.dumps(new, indent=2) + "\n")


def hermes_missing(profile: HermesProfile) -> str | None:
    """Why Hermes looks not installed for this home (no Hermes home folder and no ``hermes`` on
    PATH), or ``None``. Hermes creates its home on first run; a missing one is usually a typo in
    ``--hermes-home`` / ``--profile`` or a machine without Hermes."""
    import shutil

    if profile.home.is_dir() or shutil.which("hermes"):
        return None
    return f"Hermes is not installed here: no Hermes home at {profile.home} and no `hermes` on PATH"


def install(profile: HermesProfile, root: Path, auto_curate: str | None = None,
            role: str | None = None) -> dict[str, Any]:
    """Enable commonkeep for this Hermes home; returns what was done (``changed`` lists it).

    ``auto_curate`` (``off`` | ``propose`` | ``high-only``) and ``role`` set
    ``memory.commonkeep.auto_curate`` / ``memory.commonkeep.role``; ``None`` keeps what is there.
    The CLI first refuses a home where Hermes is not installed (:func:`hermes_missing`).
    """
    from commonkeep.gate.agent_shell import refuse_inside_agent
    from commonkeep.store.layout import ensure_layout
    from commonkeep_hermes.hermesfiles import load_sidecar, refresh
    from commonkeep_hermes.importing import ImportResult, import_existing

    if not load_sidecar(profile):  # this install imports Hermes' own files, stamped: refused before any change
        refuse_inside_agent("`commonkeep hermes install` importing Hermes' MEMORY.md / USER.md")
    ensure_layout(root)
    changed: list[str] = []
    warnings: list[str] = []
    state = _load_state(profile)
    cfg = profile.config_path
    original = cfg.read_bytes() if cfg.exists() else b""
    backup = profile.state_dir / "backups" / "config.yaml.orig"
    new_text = edit_config(_decode(cfg, original), root, auto_curate, role)  # a file we cannot edit stops install here
    if not state.get("installed"):
        data = _parse(_decode(cfg, original))
        # what install creates, so uninstall can remove it again once it is empty
        created = [str(p) for p in (profile.home / "plugins", profile.state_dir, profile.memories_dir, profile.home)
                   if not p.exists()]  # the home last: it is removed only once the others are gone
        # MEMORY.md / USER.md that install renders into a home that had none: uninstall removes them
        # again unless someone edited them since (then they are the user's)
        created_files = [str(profile.memory_file(t)) for t in TARGET_FILES if not profile.memory_file(t).exists()]
        created_keys = [k for k in ("memory", "plugins", "plugins.enabled") if get(data, k) is None]
        backup.parent.mkdir(parents=True, exist_ok=True)
        backup.write_bytes(original)
        state = {
            "installed": True,
            "config_existed": cfg.exists(),
            "backup": str(backup),
            "before": {k: get(data, k) for k in ("memory.provider", "memory.write_approval")},
            "had_plugin": PLUGIN_KEY in list_items(data, "plugins", "enabled"),
            "had_block": get(data, f"memory.{CONFIG_BLOCK}") is not None,
            "created": created,
            "created_files": created_files,
            "created_keys": created_keys,
        }
        changed.append(f"backed up {cfg} to {backup}" if cfg.exists()
                       else f"no {cfg} yet: created it (uninstall removes it)")
    other = (state.get("before") or {}).get("memory.provider")
    if isinstance(other, str) and other.strip() and other != PROVIDER_NAME:
        warnings.append(f"memory.provider was {other!r}: Hermes runs one memory provider at a time, so commonkeep "
                        f"replaces it. To go back: `commonkeep hermes uninstall` (restores provider: {other}), or set "
                        f"memory.provider: {other} in {cfg}")
    if new_text.encode() != original:
        profile.home.mkdir(parents=True, exist_ok=True)
        _write(cfg, new_text)
        changed.append(f"enabled provider {PROVIDER_NAME} and plugin {PLUGIN_KEY} in {cfg}")
        for key, value in ((AUTO_CURATE_KEY, auto_curate), (ROLE_KEY, role)):
            if value is not None:
                changed.append(f"set memory.{CONFIG_BLOCK}.{key}: {value.strip()}")
    state["config_sha256"] = _sha(new_text.encode())
    for name, body in (("__init__.py", SHIM_INIT), ("plugin.yaml", SHIM_MANIFEST)):
        path = profile.shim_dir / name
        if not path.exists() or path.read_text(encoding="utf-8") != body:
            _write(path, body)
            changed.append(f"wrote provider shim {path}")
    imported = import_existing(profile, root) if not load_sidecar(profile) else ImportResult()
    changed.extend(imported.lines())
    report = refresh(profile, root, reason="install")
    if report["captured"]:
        changed.append(f"captured {len(report['captured'])} hand-edited entries as candidates")
    for target, info in report["targets"].items():
        if info["changed"]:
            changed.append(f"rendered {TARGET_FILES[target]} ({info['entries']} entries, "
                           f"{info['chars']}/{info['limit']} chars)")
    changed.extend(dashboard_plugin(profile, present=True))
    _set_registered(root, profile.home, True)
    profile.state_dir.mkdir(parents=True, exist_ok=True)
    _write(_state_path(profile), json.dumps(state, indent=2) + "\n")
    return {"hermes_home": str(profile.home), "root": str(root), "changed": changed, "warnings": warnings,
            "captured": report["captured"], "imported": imported.imported, "import_patch": imported.patch_id,
            "held_for_review": imported.held}


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text (byte {exc.start}); nothing was changed",
                          hint="save it as UTF-8, then run `commonkeep hermes install` again") from exc


def uninstall(profile: HermesProfile) -> dict[str, Any]:
    """Undo ``install`` for this Hermes home; returns what was done."""
    import shutil

    state = _load_state(profile)
    changed: list[str] = []
    cfg = profile.config_path
    if state.get("installed"):
        current = cfg.read_bytes() if cfg.exists() else b""
        backup = Path(str(state.get("backup", "")))
        if _sha(current) == state.get("config_sha256") and backup.is_file():
            if state.get("config_existed"):
                cfg.write_bytes(backup.read_bytes())
                changed.append(f"restored {cfg} from {backup}")
            else:
                cfg.unlink(missing_ok=True)
                changed.append(f"removed {cfg} (install created it; there was none before)")
        elif cfg.exists():
            text = _undo_edits(current.decode("utf-8"), state)
            if text.encode() != current:
                _write(cfg, text)
                changed.append(f"removed commonkeep settings from {cfg} (edited since install; kept your edits)")
        try:
            root, _ = HermesProfile(profile.home).shared_root()
            _set_registered(root, profile.home, False)
        except Exception:
            pass
    changed.extend(dashboard_plugin(profile, present=False))
    if profile.shim_dir.exists():
        shutil.rmtree(profile.shim_dir)
        changed.append(f"removed provider shim {profile.shim_dir}")
    if _state_path(profile).exists():
        _state_path(profile).unlink()
    changed.extend(_remove_created(profile, state))
    return {"hermes_home": str(profile.home), "changed": changed}


def _remove_created(profile: HermesProfile, state: dict[str, Any]) -> list[str]:
    """Remove commonkeep's bookkeeping, then the folders install created once they are empty.

    Kept: backups of the user's own MEMORY.md / USER.md (``commonkeep/backups/``), handoffs, and
    anything else someone put there; such a folder stays and is named.
    """
    from commonkeep_hermes.hermesfiles import sidecar_path

    state_dir = profile.state_dir
    out = _remove_rendered(profile, state)
    for path in (sidecar_path(profile), sidecar_path(profile).with_suffix(".json.lock"),
                 state_dir / "backups" / "config.yaml.orig"):
        path.unlink(missing_ok=True)
    for folder in map(Path, state.get("created") or []):
        if not folder.is_dir():
            continue
        for sub in sorted((p for p in folder.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
            if not any(sub.iterdir()):
                sub.rmdir()
        if any(folder.iterdir()):
            out.append(f"kept {folder} (install created it; it still holds {', '.join(sorted(p.name for p in folder.iterdir()))})")
        else:
            folder.rmdir()
            out.append(f"removed {folder} (install created it; it was empty)")
    return out


def _remove_rendered(profile: HermesProfile, state: dict[str, Any]) -> list[str]:
    """Remove the MEMORY.md / USER.md install created (there were none before), but only while
    they hold exactly the last render (a projection of the store, which keeps every fact); a file
    edited since is the user's and stays. Files that existed before install always stay. Hermes'
    ``.lock`` files go with a file removed from a ``memories/`` folder install created."""
    from commonkeep_hermes.hermesfiles import load_sidecar

    sidecar = load_sidecar(profile)
    created = set(state.get("created_files") or [])
    made_folder = str(profile.memories_dir) in (state.get("created") or [])
    out: list[str] = []
    for target in TARGET_FILES:
        path = profile.memory_file(target)
        if str(path) in created and path.is_file():
            last = (sidecar.get(target) or {}).get("sha256")
            if hashlib.sha256(path.read_bytes()).hexdigest() == last:
                path.unlink()
                out.append(f"removed {path} (install rendered it; there was none before)")
            else:
                out.append(f"kept {path} (edited since commonkeep rendered it)")
        if made_folder and not path.exists():
            path.with_suffix(path.suffix + ".lock").unlink(missing_ok=True)
    return out


def dashboard_plugin(profile: HermesProfile, *, present: bool) -> list[str]:
    """Install or remove the Memory tab of Hermes' web dashboard (``commonkeep_hermes.dashboard``)."""
    from commonkeep_hermes.dashboard import NAME, install_files, remove_files

    plugins_dir = profile.home / "plugins"
    if present:
        written = install_files(plugins_dir)
        return [f"installed the dashboard Memory tab ({NAME}) in {plugins_dir / NAME}"] if written else []
    gone = remove_files(plugins_dir)
    return [f"removed the dashboard Memory tab {gone}"] if gone else []


def _undo_edits(text: str, state: dict[str, Any]) -> str:
    doc = ConfigDoc(text)
    before = state.get("before") or {}
    for dotted in ("memory.provider", "memory.write_approval"):
        key = dotted.split(".")[1]
        prior = before.get(dotted)
        if prior is None:
            doc.remove("memory", key)
        else:
            doc.set("memory", key, prior)
    if not state.get("had_block"):
        doc.remove("memory", CONFIG_BLOCK)
    if not state.get("had_plugin"):
        doc.remove_from_list("plugins", "enabled", PLUGIN_KEY)
    created = state.get("created_keys") or []
    if "plugins.enabled" in created and doc.get("plugins.enabled") == []:
        doc.remove("plugins", "enabled")
    for section in ("plugins", "memory"):
        if section in created:
            doc.remove_section_if_empty(section)
    return doc.text()


def hermes_sees_commonkeep() -> tuple[str | None, bool | None]:
    """The ``hermes`` on PATH and whether its interpreter can import commonkeep (``None``: no hermes)."""
    import shutil
    import subprocess

    exe = shutil.which("hermes")
    if not exe:
        return None, None
    try:
        first = Path(exe).read_text(encoding="utf-8", errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return exe, None
    if not first.startswith("#!"):
        return exe, None
    interpreter = first[2:].strip().split()[0]
    try:
        done = subprocess.run([interpreter, "-c", "import commonkeep_hermes.governance"], capture_output=True,
                              timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return exe, False
    return exe, done.returncode == 0


def omp_root_in_use() -> tuple[Path, str]:
    """The root an OMP session started from here uses, computed as OMP resolves it (launch
    environment, then the ``.env`` files, then the root baked into our extension:
    ``commonkeep_omp.roots``), else the resolution rules."""
    import os

    from commonkeep.store.root import resolve_root

    choice = resolve_root()
    try:
        from commonkeep_omp.install import EXTENSION_FILE, agent_dir, read_installed
        from commonkeep_omp.roots import home_of, resolve
    except ImportError:
        return choice.path, choice.rule
    ext = agent_dir() / "extensions" / EXTENSION_FILE
    info = read_installed(ext)
    baked = (info.get("config") or {}).get("root") if info.get("exists") else None
    seen = resolve(baked, agent=agent_dir(), home=home_of(), launch=os.environ)
    if seen.root:
        return Path(seen.root), (f"baked into {ext}" if seen.rule.startswith("the root baked") else seen.rule)
    return choice.path, choice.rule


def status(profile: HermesProfile) -> dict[str, Any]:
    """What is enabled, which root Hermes and OMP use, what is pending."""
    from commonkeep_hermes.hermesfiles import load_sidecar

    data = profile.load_config()
    root, rule = profile.shared_root()
    omp_root, omp_rule = omp_root_in_use()
    pending = 0
    hermes_pending = 0
    try:
        from commonkeep.store.core import Store

        for cand in Store(root, warn=False).candidates(status="new"):
            pending += 1
            prov = cand.get("provenance")
            if isinstance(prov, dict) and prov.get("agent") == "hermes":
                hermes_pending += 1
    except Exception:
        pass
    sidecar = load_sidecar(profile)
    hermes_exe, importable = hermes_sees_commonkeep()
    return {
        "hermes": hermes_exe,
        "hermes_imports_commonkeep": importable,
        "hermes_home": str(profile.home),
        "installed": bool(_load_state(profile).get("installed")),
        "provider": get(data, "memory.provider") == PROVIDER_NAME,
        "plugin_enabled": PLUGIN_KEY in list_items(data, "plugins", "enabled"),
        "write_approval": bool(get(data, "memory.write_approval")),
        "shim": (profile.shim_dir / "__init__.py").is_file(),
        "hermes_root": str(root),
        "hermes_root_rule": rule,
        "omp_root": str(omp_root),
        "omp_root_rule": omp_rule,
        "same_root": Path(root).resolve() == Path(omp_root).resolve(),
        "pending_candidates": pending,
        "pending_from_hermes": hermes_pending,
        "projection": {t: {k: sidecar.get(t, {}).get(k) for k in ("chars", "limit")} for t in TARGET_FILES},
        "limits": profile.char_limits(),
        "auto_curate": _auto_curate_setting(profile),
        "role": profile.configured_role(),
    }


def _auto_curate_setting(profile: HermesProfile) -> str:
    try:
        return profile.auto_curate_policy()
    except ConfigError as exc:
        return f"invalid ({exc})"
