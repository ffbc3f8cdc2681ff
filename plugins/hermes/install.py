"""``commonkeep hermes install | uninstall | status`` for one Hermes home (profile).

install (idempotent — a second run changes nothing and says so):

1. backs up ``config.yaml`` once (``$HERMES_HOME/commonkeep/backups/config.yaml.orig``) and edits
   it line by line, keeping comments: ``memory.provider: commonkeep``, ``memory.write_approval:
   true`` (Hermes' own gate as a fallback if the governance plugin ever fails to load),
   ``memory.commonkeep.root: <shared root>`` (plus ``auto_curate`` / ``role`` when asked; other
   keys of that block stay) and ``commonkeep-governance`` in ``plugins.enabled``
   (contracts/hermes-host.md §10.2);
2. writes the provider shim folder ``$HERMES_HOME/plugins/commonkeep/`` that Hermes 0.17–0.19
   needs to find an out-of-tree provider (§6.4);
3. imports the existing ``§`` entries of MEMORY.md / USER.md as candidates (once) and renders the
   first projection;
4. notes the Hermes home in ``<root>/runtime/hermes-homes.json`` so ``commonkeep apply`` refreshes
   its files after every patch.

uninstall restores the config: byte for byte from the backup when nobody edited it since, else
by undoing exactly the values install changed. The shim folder goes; the memory files stay.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from commonkeep_hermes import yamledit
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
    try:
        return yaml.safe_load(text or "{}") or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"config.yaml is not valid YAML ({getattr(exc, 'problem', None) or exc}{where}); nothing was changed",
                          hint="fix the file, or restore a backup from commonkeep/backups/ in the Hermes home") from exc


def edit_config(text: str, root: Path, auto_curate: str | None = None, role: str | None = None) -> str:
    """The config text with commonkeep enabled; raises ``ConfigError`` (a ``ValueError``) if the
    edit did not take or the file's layout is not one we can edit line by line.

    ``auto_curate`` / ``role`` set ``memory.commonkeep.auto_curate`` / ``.role`` when given; other
    keys already in the ``memory.commonkeep`` block (set by an earlier install or by hand) stay.
    """
    before = _parse(text)
    for key in ("memory", "plugins"):
        value = before.get(key) if isinstance(before, dict) else None
        if value is not None and not isinstance(value, dict):
            raise ConfigError(f"config.yaml: {key}: is {value!r}, not a mapping; install leaves the file alone",
                              hint=f"make {key}: a mapping (or remove it), then run `commonkeep hermes install` again")
    if auto_curate is not None and auto_curate not in AUTO_CURATE_POLICIES:
        raise ConfigError(f"--auto-curate {auto_curate!r}: use one of {', '.join(AUTO_CURATE_POLICIES)}")
    if role is not None and not role.strip():
        raise ConfigError("--role is empty; name the role Hermes acts as (the writer role to auto-curate)")
    old_block = yamledit.get(before, f"memory.{CONFIG_BLOCK}") if isinstance(before, dict) else None
    block: dict[str, Any] = dict(old_block) if isinstance(old_block, dict) else {}
    block["root"] = str(root)
    if auto_curate is not None:
        block[AUTO_CURATE_KEY] = auto_curate
    if role is not None:
        block[ROLE_KEY] = role.strip()
    new = yamledit.set_child(text, "memory", "provider", PROVIDER_NAME)
    new = yamledit.set_child(new, "memory", "write_approval", True)
    new = yamledit.set_block(new, "memory", CONFIG_BLOCK, block)
    new = yamledit.add_list_item(new, "plugins", "enabled", PLUGIN_KEY)
    try:
        data = yaml.safe_load(new) or {}
    except yaml.YAMLError as exc:
        raise ConfigError("config.yaml has a layout install cannot edit line by line; nothing was changed",
                          hint="set memory.provider: commonkeep and add commonkeep-governance to plugins.enabled by hand") from exc
    for dotted, value in wanted_settings(root, auto_curate, role.strip() if role else None).items():
        if yamledit.get(data, dotted) != value:
            raise ConfigError(f"could not set {dotted} in config.yaml (unusual layout); set it by hand")
    if PLUGIN_KEY not in yamledit.list_items(data, "plugins", "enabled"):
        raise ConfigError("could not add commonkeep-governance to plugins.enabled; add it by hand")
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


def install(profile: HermesProfile, root: Path, auto_curate: str | None = None,
            role: str | None = None) -> dict[str, Any]:
    """Enable commonkeep for this Hermes home; returns what was done (``changed`` lists it).

    ``auto_curate`` (``off`` | ``propose`` | ``high-only``) and ``role`` set
    ``memory.commonkeep.auto_curate`` / ``memory.commonkeep.role``; ``None`` keeps what is there.
    """
    from commonkeep.store.layout import ensure_layout
    from commonkeep_hermes.hermesfiles import refresh

    ensure_layout(root)
    changed: list[str] = []
    state = _load_state(profile)
    cfg = profile.config_path
    original = cfg.read_bytes() if cfg.exists() else b""
    backup = profile.state_dir / "backups" / "config.yaml.orig"
    new_text = edit_config(original.decode("utf-8"), root, auto_curate, role)  # a file we cannot edit stops install here
    if not state.get("installed"):
        data = _parse(original.decode("utf-8"))
        backup.parent.mkdir(parents=True, exist_ok=True)
        backup.write_bytes(original)
        state = {
            "installed": True,
            "config_existed": cfg.exists(),
            "backup": str(backup),
            "before": {k: yamledit.get(data, k) for k in ("memory.provider", "memory.write_approval")},
            "had_plugin": PLUGIN_KEY in yamledit.list_items(data, "plugins", "enabled"),
            "had_block": yamledit.get(data, f"memory.{CONFIG_BLOCK}") is not None,
        }
        changed.append(f"backed up {cfg} to {backup}" if cfg.exists()
                       else f"no {cfg} yet: created it (uninstall removes it)")
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
    report = refresh(profile, root, reason="install")
    if report["captured"]:
        changed.append(f"imported {len(report['captured'])} existing entries as candidates")
    for target, info in report["targets"].items():
        if info["changed"]:
            changed.append(f"rendered {TARGET_FILES[target]} ({info['entries']} entries, "
                           f"{info['chars']}/{info['limit']} chars)")
    changed.extend(dashboard_plugin(profile, present=True))
    _set_registered(root, profile.home, True)
    profile.state_dir.mkdir(parents=True, exist_ok=True)
    _write(_state_path(profile), json.dumps(state, indent=2) + "\n")
    return {"hermes_home": str(profile.home), "root": str(root), "changed": changed,
            "captured": report["captured"]}


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
    return {"hermes_home": str(profile.home), "changed": changed}


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
    before = state.get("before") or {}
    for dotted in ("memory.provider", "memory.write_approval"):
        key = dotted.split(".")[1]
        prior = before.get(dotted)
        text = yamledit.remove_child(text, "memory", key) if prior is None else \
            yamledit.set_child(text, "memory", key, prior)
    if not state.get("had_block"):
        text = yamledit.remove_child(text, "memory", CONFIG_BLOCK)
    if not state.get("had_plugin"):
        text = yamledit.remove_list_item(text, "plugins", "enabled", PLUGIN_KEY)
    return text


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
    """The root OMP uses: the one baked into our installed OMP extension (unless an explicit
    root variable overrides it, as the extension lets it), else the resolution rules."""
    from commonkeep.store.root import resolve_root

    choice = resolve_root()
    if choice.rule.startswith("$"):
        return choice.path, choice.rule
    try:
        from commonkeep_omp.install import EXTENSION_FILE, agent_dir, read_installed
    except ImportError:
        return choice.path, choice.rule
    ext = agent_dir() / "extensions" / EXTENSION_FILE
    info = read_installed(ext)
    baked = (info.get("config") or {}).get("root") if info.get("exists") else None
    if baked:
        return Path(baked), f"baked into {ext}"
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
        "provider": yamledit.get(data, "memory.provider") == PROVIDER_NAME,
        "plugin_enabled": PLUGIN_KEY in yamledit.list_items(data, "plugins", "enabled"),
        "write_approval": bool(yamledit.get(data, "memory.write_approval")),
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
