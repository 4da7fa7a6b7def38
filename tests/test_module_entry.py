"""``python -m bedside`` runs the CLI, as ``python -m bedside.cli`` and the ``bedside`` entry point do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def test_python_dash_m_bedside_is_the_cli() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, "-m", "bedside", "--version"], capture_output=True, text=True, env=env, timeout=600
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), "the version should be printed"
