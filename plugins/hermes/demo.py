"""The Hermes part of ``commonkeep demo``: a real Hermes turn whose memory write is governed.

``hermes_step(root, workdir, say)`` installs commonkeep into a throwaway Hermes home, lets the
real Hermes Agent (from the host cache, ``python -m tests.hosts.setup``, or ``$COMMONKEEP_HERMES_PYTHON``)
run one turn in which the scripted model calls ``memory``; shows the candidate it became; approves
it as the librarian; and shows the next session's system prompt carrying the record within
Hermes' char limit. The model is the repository's scripted fake server (``tests/fakellm.py``):
a hosted LLM cannot be reached here. Without Hermes the step says so and is skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DRIVER = REPO / "tests" / "hermes" / "driver.py"
DEMO_LIMITS = "memory:\n  memory_char_limit: 300\n  user_char_limit: 200\n  nudge_interval: 50\nagent:\n  environment_probe: false\n"


def find_hermes_python() -> Path | None:
    """``$COMMONKEEP_HERMES_PYTHON``, else the newest Hermes venv in the host cache."""
    explicit = os.environ.get("COMMONKEEP_HERMES_PYTHON")
    if explicit:
        return Path(explicit)
    cache = Path(os.environ.get("COMMONKEEP_HOST_CACHE") or Path.home() / ".cache" / "commonkeep-hosts")
    for version in ("0.19.0", "0.17.0"):
        py = cache / "hermes" / version / "bin" / "python"
        if py.exists():
            return py
    return None


def _drive(python: Path, scenario: str, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    done = subprocess.run([str(python), str(DRIVER), scenario], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=180, stdin=subprocess.DEVNULL)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            result: dict[str, Any] = json.loads(line[len("RESULT "):])
            return result
    raise RuntimeError(f"Hermes run failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")


def hermes_step(root: Path, workdir: Path, say: Callable[[str], None] = print, *,
                python: Path | None = None) -> dict[str, Any]:
    """Run the Hermes part of the loop against ``root``; ``workdir`` holds the throwaway Hermes home."""
    from commonkeep.util.oneline import brief
    from commonkeep_hermes.install import install
    from commonkeep_hermes.settings import HermesProfile

    py = python or find_hermes_python()
    if py is None or not py.exists() or not DRIVER.exists():
        reason = "hermes-agent is not installed (python -m tests.hosts.setup installs it into the host cache)"
        say(f"Hermes: skipped — {reason}")
        return {"skipped": reason}
    home = workdir / "hermes-home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("# demo Hermes profile\n" + DEMO_LIMITS)
    profile = HermesProfile(home)
    done = install(profile, root)
    say(f"Hermes: `commonkeep hermes install` enabled provider + governance plugin in {profile.config_path}")
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN")) and not k.startswith("HERMES_")}
    env.update(HOME=str(workdir), HERMES_HOME=str(home), COMMONKEEP_TEST_ROOT=str(root),
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    say("Hermes: the model is a scripted fake OpenAI-compatible server on 127.0.0.1 (no hosted LLM here)")
    try:
        run = _drive(py, "write", env, workdir)
        inbox = [c for c in _inbox(root) if (c.get("provenance") or {}).get("agent") == "hermes"
                 and (c.get("provenance") or {}).get("tool_call_id")]  # written by this Hermes run
        for c in inbox:
            prov = c["provenance"]
            say(f"Hermes: memory({prov['target']}) -> candidate {c['id']} (session {prov.get('session_id')}, "
                f"turn …{str(prov.get('turn_id'))[-8:]}, call {prov.get('tool_call_id')}): {brief(c['text'], 60)}")
        say(f"Hermes: the model was told {brief(json.loads(run['tool_messages'][0])['message'], 60)!r}; "
            f"MEMORY.md unchanged: {run['after'] == run['before']}")
        approved = _approve(root, [c for c in inbox if c.get("status") == "new"])
        say(f"librarian: approved {len(approved)} Hermes candidates; after_apply re-rendered MEMORY.md / USER.md")
        nxt = _drive(py, "prompt", env, workdir)
    except (RuntimeError, subprocess.TimeoutExpired, KeyError, ValueError) as exc:
        say(f"Hermes: failed — {exc}")
        return {"error": str(exc)}
    header = next((ln for ln in nxt["system"].splitlines() if ln.startswith("MEMORY (your personal notes)")), "")
    say(f"Hermes: next session's system prompt: {header}")
    return {"installed": done, "candidates": [c["id"] for c in inbox], "approved": approved, "header": header}


def _inbox(root: Path) -> list[dict[str, Any]]:
    from commonkeep.store.core import Store

    return Store(root, warn=False).candidates()


def _approve(root: Path, cands: list[dict[str, Any]]) -> list[str]:
    from commonkeep.reviews.review import approve

    ids = [str(c["id"]) for c in cands]
    if ids:
        approve(str(root), ids, role="librarian", ratify=True)
    return ids
