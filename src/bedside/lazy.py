"""Package names imported when first used (PEP 562), so importing a package for one submodule stays cheap: the
CLI must not load SQLAlchemy, numpy and the runner to print its help (issue 46: "each command takes 10-45 s to
start on a busy machine")."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: each name in ``where`` comes from the submodule named beside it,
    imported on first use and then kept in the package."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


__all__ = ["lazy_names"]
