"""pytest fixtures for projects built on bedside. Enable with ``pytest_plugins = ["bedside.testing.pytest_plugin"]``.

``scripted_server`` starts a :class:`~bedside.testing.ScriptedServer` on 127.0.0.1 for one test; configure it
per test with ``@pytest.mark.scripted_server(rules=..., latency_ms=..., faults=...)``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bedside.llm.scripted_server import ScriptedServer


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "scripted_server(**kwargs): options for the scripted_server fixture (see ScriptedServer)"
    )


@pytest.fixture
def scripted_server(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    marker = request.node.get_closest_marker("scripted_server")
    options = dict(marker.kwargs) if marker else {}
    options.setdefault("host", "127.0.0.1")
    with ScriptedServer(**options) as server:
        yield server
