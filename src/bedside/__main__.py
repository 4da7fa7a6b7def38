"""``python -m bedside``: the same command as ``bedside`` (a newcomer without the entry point on PATH tries this)."""

from bedside.cli import main

main()
