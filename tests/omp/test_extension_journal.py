"""The OMP extension and the Python core speak one stamp journal: what ``commonkeep.ts`` records
(``recordTyped``: its key made on first use, ``0600``, its MAC computed in TypeScript) verifies in
``commonkeep.gate.stamps``, and a key the core made signs what the extension writes; its tool
guard (``toolRefusal``) gives the verdicts of ``commonkeep.gate.tool_guard``. Run by Bun (the runtime
OMP ships), without starting OMP."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from commonkeep.gate import stamps
from tests.hosts import omp as omp_host

pytestmark = pytest.mark.omp
EXTENSION = Path(__file__).resolve().parents[2] / "plugins" / "omp" / "commonkeep.ts"


def _bun(tmp_path: Path, script: str, **env: str) -> dict[str, object]:
    omp_host.require_omp()
    path = tmp_path / "probe.ts"
    path.write_text(f'import {{ recordTyped, toolRefusal }} from "{EXTENSION}";\n{script}\n', encoding="utf-8")
    full = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
            "COMMONKEEP_STAMPS_DIR": str(stamps.state_dir()), **env}
    done = subprocess.run([str(omp_host.bin_dir() / "bun"), str(path)], capture_output=True, text=True, timeout=120,
                          env=full, cwd=tmp_path, check=True)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_what_the_extension_records_as_typed_verifies_in_python(tmp_path: Path) -> None:
    said = "Remember that we deploy with make release — «vite» 🚀."
    got = _bun(tmp_path, f"recordTyped('s-1', {json.dumps(said)}); console.log(JSON.stringify({{mark: process.env.COMMONKEEP_AGENT_HOST}}));")
    assert str(got["mark"]).startswith("omp:")
    book = stamps.book()
    assert book.forged == [] and book.problem is None
    assert book.was_typed("omp", "s-1", said) and not book.was_typed("omp", "s-2", said)
    assert stamps.key_path().stat().st_mode & 0o777 == 0o600 and stamps.state_dir().stat().st_mode & 0o777 == 0o700


def test_the_extension_signs_with_the_key_the_core_made_and_keeps_an_outer_mark(tmp_path: Path) -> None:
    stamps.load_key(create=True)
    key = stamps.key_path().read_bytes()
    got = _bun(tmp_path, "recordTyped('s-9', 'x y z'); console.log(JSON.stringify({mark: process.env.COMMONKEEP_AGENT_HOST}));",
               COMMONKEEP_AGENT_HOST="hermes:1:2")
    assert got["mark"] == "hermes:1:2"  # omp started by Hermes' terminal stays inside Hermes
    assert stamps.key_path().read_bytes() == key and stamps.book().was_typed("omp", "s-9", "x y z")


def test_the_extension_refuses_a_private_key_it_cannot_trust(tmp_path: Path) -> None:
    stamps.load_key(create=True)
    stamps.key_path().chmod(0o644)
    _bun(tmp_path, "recordTyped('s-3', 'x y z'); console.log('{}');")
    assert not stamps.journal_path().exists() or "s-3" not in stamps.journal_path().read_text()


@pytest.mark.parametrize(("tool", "args", "refused"), [
    ("write", {"path": "{root}/inbox/captured.jsonl", "content": "x"}, True),
    ("edit", {"path": "{root}/config.json", "edits": []}, True),
    ("edit", {"input": "*** Begin Patch\n*** Update File: {root}/config.json\n*** End Patch"}, True),
    ("write", {"path": "{home}/.omp/agent/sessions/x/s.jsonl", "content": "x"}, True),
    ("write", {"path": "{home}/.omp/agent/extensions/evil.ts", "content": "x"}, True),
    ("read", {"path": "{state}/stamps.key"}, True),
    ("read", {"path": "{root}/inbox/captured.jsonl"}, False),
    ("bash", {"command": "echo x >> {root}/inbox/captured.jsonl"}, True),
    ("bash", {"command": "env -u COMMONKEEP_AGENT_HOST commonkeep review --approve x"}, True),
    ("bash", {"command": "ls", "env": {"COMMONKEEP_AGENT_HOST": ""}}, True),
    ("bash", {"command": "commonkeep write --root {root} 'x y z'"}, False),
    ("write", {"path": "{cwd}/notes.md", "content": "x"}, False),
])
def test_the_extensions_tool_guard(tmp_path: Path, tool: str, args: dict[str, object], refused: bool) -> None:
    root = tmp_path / "root"
    (root / "inbox").mkdir(parents=True)
    where = {"root": str(root), "home": str(tmp_path / "home"), "state": str(stamps.state_dir()), "cwd": str(tmp_path)}
    filled = json.loads(json.dumps(args).replace("{root}", where["root"]).replace("{home}", where["home"])
                        .replace("{state}", where["state"]).replace("{cwd}", where["cwd"]))
    got = _bun(tmp_path, f"console.log(JSON.stringify({{why: toolRefusal({json.dumps(tool)}, {json.dumps(filled)}, "
                         f"{json.dumps(str(tmp_path))})}}));", OMP_MEMORY_ROOT=str(root))
    assert (got["why"] is not None) is refused, got


def test_the_extension_takes_the_kernels_mark_no_tool_can_shed(tmp_path: Path) -> None:
    """Wave 36: OMP's hard limit of file locks is lowered as the extension loads; a tool that clears the
    variable, detaches with ``setsid`` and tries to raise the limit back is still inside an agent."""
    import sys

    from commonkeep.gate import agent_shell

    probe = (f"{sys.executable} -c 'from commonkeep.gate import agent_shell as a; print(a.inside_agent())'")
    tool = (f"prlimit --pid $$ --locks=unlimited:unlimited 2>/dev/null; "
            f"env -u COMMONKEEP_AGENT_HOST setsid -w {probe}")
    script = ('import { spawnSync } from "node:child_process";\n'
              "void recordTyped;\n"  # an import only named is dropped by the transpiler: the module must load
              f"const r = spawnSync('sh', ['-c', {json.dumps(tool)}]);\n"
              "console.log(JSON.stringify({seen: String(r.stdout).trim(), err: String(r.stderr)}));")
    got = _bun(tmp_path, script, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    assert got["seen"] == agent_shell.KERNEL, got
    off = _bun(tmp_path, script, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), COMMONKEEP_KERNEL_MARK="off")
    assert off["seen"] == "None", off  # the switch the host alone reads as it loads (the test suite)
