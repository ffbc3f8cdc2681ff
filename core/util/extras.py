"""How to install an optional extra (``mcp``, ``web``, ``embed``) in a way that works here.

commonkeep is installed from a checkout (``pip install -e .``), not from a package index, so
``pip install 'commonkeep[mcp]'`` fails for a newcomer. The hint names this interpreter's pip and
either the checkout this code runs from, or the extra's own requirements.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path


def install_hint(extra: str) -> str:
    """The command that installs ``extra`` for the ``commonkeep`` being run."""
    import commonkeep

    pip = f"{shlex.quote(sys.executable)} -m pip install"
    checkout = Path(commonkeep.__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").is_file():  # an editable install: the checkout is right here
        return f"{pip} -e {shlex.quote(f'{checkout}[{extra}]')}"
    return f"{pip} {' '.join(shlex.quote(r) for r in extra_requirements(extra)) or shlex.quote(f'commonkeep[{extra}]')}"


def extra_requirements(extra: str) -> list[str]:
    """The requirements the installed commonkeep declares for ``extra`` (``[]`` when unknown)."""
    from importlib import metadata

    try:
        declared = metadata.requires("commonkeep") or []
    except metadata.PackageNotFoundError:
        return []
    out = []
    for line in declared:
        spec, _, marker = line.partition(";")
        if f'extra == "{extra}"' in marker.replace("'", '"'):
            out.append(spec.strip())
    return out
