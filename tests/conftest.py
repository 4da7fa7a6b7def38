from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["bedside.testing.pytest_plugin"]


@pytest.fixture
def cache_path(tmp_path: Path) -> Path:
    return tmp_path / "cache.sqlite"
