"""What a newcomer meets first (issue 27): `scripts/test --hosts` on a machine without npm names what
is missing and how to get it, with no traceback and nothing installed (the fast tier needs no npm)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_host_tier_without_npm_says_what_is_missing_and_installs_nothing(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    real_python = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    (bin_dir / "python3").symlink_to(real_python)
    for tool in ("bash", "dirname", "git", "env"):
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    venv = tmp_path / "venv"
    out = subprocess.run(["bash", str(REPO / "scripts" / "test"), "--hosts", "-k", "nothing"], capture_output=True, text=True,
                         timeout=120, env={"PATH": str(bin_dir), "HOME": str(tmp_path), "COMMONKEEP_VENV": str(venv)})
    assert out.returncode == 2, out.stderr
    assert "scripts/test: cannot run the tests yet; missing:" in out.stderr
    assert "Node.js 20+ with npm" in out.stderr and "apt-get install -y nodejs npm" in out.stderr
    assert "Python 3.11" not in out.stderr and "git:" not in out.stderr  # only what is missing
    assert "Traceback" not in out.stderr and not venv.exists()
