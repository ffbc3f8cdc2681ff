"""``attach_handoff`` and the ``commonkeep-omp`` wrapper, with real child processes (no Hermes needed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from commonkeep_hermes.handoff import attach_handoff, find_real_omp

FACT = "Deploys to staging go through the blue-green switch."
GOAL = "fix the staging deploy"

CHILD = textwrap.dedent("""\
    import json, os, sys
    from pathlib import Path
    snap = os.environ.get("OMPKEEP_HANDOFF")
    out = {
        "argv": sys.argv[1:],
        "env": {k: os.environ.get(k) for k in ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT",
                                               "OMPKEEP_HANDOFF", "OMPKEEP_HANDOFF_FORMAT")},
        "snapshot": Path(snap).read_text() if snap else None,
    }
    Path(os.environ["DUMP"]).write_text(json.dumps(out))
""")


@pytest.fixture
def root_with_record(root: Path) -> Path:
    """A root with one applied record, made the way the librarian does it."""
    from commonkeep.patches.curate import curate
    from commonkeep.patches.patch import apply_patch
    from commonkeep.store.candidates import new_candidate
    from commonkeep.store.core import Store

    Store(root).append_candidate(new_candidate(FACT, evidence_refs=["a.md", "b.md"], confidence=0.9))
    prop = curate(root, role="librarian", min_confidence=0.0, min_evidence=1)
    apply_patch(root, prop.patch["patch_id"], role="librarian", op_ids=[o["op_id"] for o in prop.ops])
    return root


def _child_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
           "DUMP": str(tmp_path / "dump.json"), "LANG": "C.UTF-8"}
    env.update(extra)
    return env


def test_attach_handoff_gives_the_child_the_shared_root_and_a_snapshot(root_with_record: Path, tmp_path: Path) -> None:
    child = tmp_path / "child.py"
    child.write_text(CHILD)
    h = attach_handoff([sys.executable, str(child), "acp"], _child_env(tmp_path), goal=GOAL, root=root_with_record)
    assert h.notice is None, h.notice
    assert h.path is not None and h.path.is_file()
    subprocess.run(h.cmd, env=h.env, check=True, timeout=60)

    seen = json.loads((tmp_path / "dump.json").read_text())
    assert seen["argv"] == ["acp"]
    for var in ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT"):
        assert seen["env"][var] == str(root_with_record.resolve())
    assert seen["env"]["OMPKEEP_HANDOFF"] == str(h.path)
    assert GOAL in seen["snapshot"]
    block = h.prompt_prefix()
    assert block and block[0]["type"] == "text" and block[0]["text"].startswith("<ompkeep-handoff")
    assert "HANDOFF REFERENCE" in block[0]["text"]


def test_wrapper_finds_the_real_omp_and_execs_it_with_the_handoff(root_with_record: Path, tmp_path: Path) -> None:
    wrapper = Path(sys.executable).with_name("commonkeep-omp")
    assert wrapper.is_file(), "commonkeep-omp console script missing: pip install -e . first"
    real_dir, shim_dir = tmp_path / "real", tmp_path / "shim"
    real_dir.mkdir()
    shim_dir.mkdir()
    real = real_dir / "omp"
    real.write_text(f"#!{sys.executable}\n" + CHILD)
    real.chmod(0o755)
    (shim_dir / "omp").symlink_to(wrapper)  # a PATH shim named omp that is the wrapper

    hermes_home = tmp_path / "hermes"
    hermes_home.mkdir()
    (hermes_home / "config.yaml").write_text(f"memory:\n  commonkeep:\n    root: {root_with_record}\n")
    env = _child_env(tmp_path, PATH=f"{shim_dir}{os.pathsep}{real_dir}{os.pathsep}{os.environ.get('PATH', '')}",
                     HERMES_HOME=str(hermes_home), COMMONKEEP_HANDOFF_GOAL=GOAL)
    assert find_real_omp(env, me=str(shim_dir / "omp")) == str(real)
    subprocess.run([str(shim_dir / "omp"), "acp", "--model", "m"], env=env, check=True, timeout=60)

    seen = json.loads((tmp_path / "dump.json").read_text())
    assert seen["argv"] == ["acp", "--model", "m"]
    assert seen["env"]["OMP_MEMORY_ROOT"] == str(root_with_record.resolve())
    assert seen["env"]["OMPKEEP_HANDOFF"] and GOAL in seen["snapshot"]


def test_wrapper_without_a_real_omp_says_what_to_do(tmp_path: Path) -> None:
    wrapper = Path(sys.executable).with_name("commonkeep-omp")
    done = subprocess.run([str(wrapper), "acp"], env={"PATH": str(tmp_path), "HOME": str(tmp_path)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 127
    assert "COMMONKEEP_REAL_OMP" in done.stderr
