"""The Memory tab in Hermes' web dashboard (contracts/hermes-host.md §7).

``commonkeep hermes install`` copies ``manifest.json`` and ``index.js`` into
``$HERMES_HOME/plugins/commonkeep-governance/dashboard/`` and writes a one-line ``plugin_api.py``
there that imports :mod:`commonkeep_hermes.dashboard.api` by absolute name (Hermes imports that
file without package context). The tab shows the same review queue as ``commonkeep serve`` and
decides through the same functions (:mod:`commonkeep.web.actions`), on the root Hermes uses.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

#: The dashboard plugin's name: the key of the general plugin, which install already puts in
#: ``plugins.enabled`` (Hermes serves a user dashboard plugin only when its name is enabled).
NAME = "commonkeep-governance"
HERE = Path(__file__).parent
FILES = ("manifest.json", "index.js")
API_SHIM = (
    '"""commonkeep\'s Memory tab API (written by `commonkeep hermes install`; removed by uninstall)."""\n'
    "from commonkeep_hermes.dashboard.api import router  # noqa: F401\n"
)


def install_files(plugins_dir: Path) -> list[str]:
    """Write the dashboard plugin under ``plugins_dir``; returns the files written (changed ones only)."""
    target = plugins_dir / NAME / "dashboard"
    target.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, body in [*((f, (HERE / f).read_text(encoding="utf-8")) for f in FILES), ("plugin_api.py", API_SHIM)]:
        path = target / name
        if not path.exists() or path.read_text(encoding="utf-8") != body:
            path.write_text(body, encoding="utf-8")
            changed.append(str(path))
    return changed


def remove_files(plugins_dir: Path) -> str | None:
    """Remove the dashboard plugin folder; returns it when it was there."""
    import shutil

    folder = plugins_dir / NAME
    if not (folder / "dashboard").is_dir():
        return None
    shutil.rmtree(folder / "dashboard")
    with contextlib.suppress(OSError):
        folder.rmdir()  # only when nothing else lives there
    return str(folder)
