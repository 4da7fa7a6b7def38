"""``python -m bedside.cli``: the same command as ``bedside``."""

from bedside.cli import main

main()
