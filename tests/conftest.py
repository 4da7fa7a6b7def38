from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

pytest_plugins = ["bedside.testing.pytest_plugin"]

# Property tests draw the same examples on every run (derandomize): a new random example must not fail a landing
# by chance. No time limit per example or on drawing them (a loaded CI machine stalls both), and no example
# database, so a run does not replay a failure found elsewhere. A test's own @settings overrides what it names.
settings.register_profile(
    "bedside",
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("bedside")

# The test tasks named by import path (not registered entry points) must be allowed, as a user would; set in the
# environment (not per test) so Ray workers started by the tests inherit it.
os.environ["BEDSIDE_TASKS"] = "runs_multiturn_task:TASK,runs_ray_task:TASK"


@pytest.fixture(autouse=True)
def _own_default_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's default response cache is its own: a model is cached by its name, not its URL, so scripted
    servers with different answers under one model name must not share answers across tests (or with the user's
    ~/.cache). A test that sets BEDSIDE_CACHE itself still wins."""
    monkeypatch.setenv("BEDSIDE_CACHE", str(tmp_path / "default-cache.sqlite"))


@pytest.fixture(autouse=True)
def _fixed_tokens_and_ids(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages render with fixed tokens and review ids (a per-test sequence: ``tok0001…``, ``rv-test0001``), so no
    page text a test reads is decided by chance: a random CSRF token once held "C1" and failed an assertion that
    a page named no "C1" criterion. A test of the real generators opts out with ``@pytest.mark.real_tokens``."""
    if request.node.get_closest_marker("real_tokens"):
        return
    from bedside.web import review, security

    tokens = itertools.count(1)
    reviews = itertools.count(1)
    monkeypatch.setattr(security, "new_token", lambda nbytes=32: f"tok{next(tokens):04d}" + "_" * max(0, nbytes - 7))
    monkeypatch.setattr(review, "new_review_id", lambda name: f"rv-test{next(reviews):04d}")


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
