"""Running bedside's async code from synchronous entry points (the CLI, benchmarks, scripts)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion on uvloop where it is installed, else on asyncio's own loop.

    uvloop is a core dependency on Linux and macOS: at 100 requests in flight it cuts the client's CPU per
    model call by about a third, which is the difference between meeting and missing the throughput goal in
    ``bench/llm_overhead.py`` (see ARCHITECTURE.md). Library code never requires it.
    """
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)
