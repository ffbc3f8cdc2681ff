"""``python -m commonkeep.dossier``: the Dossier CLI (see ``commonkeep.dossier.cli``)."""

from __future__ import annotations

from commonkeep.dossier.cli import main

raise SystemExit(main())
