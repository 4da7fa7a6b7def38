from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["bedside.testing.pytest_plugin"]

# The test tasks named by import path (not registered entry points) must be allowed, as a user would; set in the
# environment (not per test) so Ray workers started by the tests inherit it.
os.environ["BEDSIDE_TASKS"] = "runs_multiturn_task:TASK,runs_ray_task:TASK"


@pytest.fixture
def cache_path(tmp_path: Path) -> Path:
    return tmp_path / "cache.sqlite"


EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "external"


@pytest.fixture
def external() -> Path:
    """``../shared/data/external`` beside the repository; tests that need it skip, saying why, when it is absent."""
    if not EXTERNAL.is_dir():
        pytest.skip(f"external data not found at {EXTERNAL} (clone bedside beside ../shared to run this test)")
    return EXTERNAL
