"""bedside: build, simulate and evaluate LLM systems that talk to patients, grounded in their records."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("bedside")
except PackageNotFoundError:  # pragma: no cover - running from a source tree that is not installed
    __version__ = "0.0.0"

__all__ = ["__version__"]
