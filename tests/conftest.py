from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["bedside.testing.pytest_plugin"]

# The test tasks named by import path (not registered entry points) must be allowed, as a user would; set in the
# environment (not per test) so Ray workers started by the tests inherit it.
os.environ["BEDSIDE_TASKS"] = "runs_multiturn_task:TASK,runs_ray_task:TASK"


@pytest.fixture(autouse=True)
def _own_default_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's default response cache is its own: a model is cached by its name, not its URL, so scripted
    servers with different answers under one model name must not share answers across tests (or with the user's
    ~/.cache). A test that sets BEDSIDE_CACHE itself still wins."""
    monkeypatch.setenv("BEDSIDE_CACHE", str(tmp_path / "default-cache.sqlite"))


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
