from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["bedside.testing.pytest_plugin"]


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
