"""``python -m bedside``: the same CLI as the ``bedside`` command, for environments without its entry point."""

from bedside.cli import app

if __name__ == "__main__":
    app(prog_name="bedside")
