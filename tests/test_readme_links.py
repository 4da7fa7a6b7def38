"""The README and ARCHITECTURE.md link into docs/ and the tree: every relative link must name a file or folder
that exists, so moving a page cannot leave the quickstart pointing nowhere. (The pages under docs/ are checked by
the site build, `make docs`, which fails on a broken link or anchor.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")


def relative_links(text: str) -> list[str]:
    """Targets of Markdown links that point into the repository (not web addresses, not same-page anchors)."""
    targets = []
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        targets.append(target.split("#", 1)[0])
    return targets


def test_the_link_finder_keeps_only_paths_into_the_tree() -> None:
    text = "[a](docs/a.md) [b](https://x.org) [c](#here) [d](docs/b.md#part) [e](mailto:x@y.z)"
    assert relative_links(text) == ["docs/a.md", "docs/b.md"]


@pytest.mark.parametrize("page", ["README.md", "ARCHITECTURE.md"])
def test_every_relative_link_names_something_that_exists(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    missing = [target for target in relative_links(text) if not (ROOT / target).exists()]
    assert not missing, f"{page} links to paths that do not exist: {missing}"


def test_the_readme_quickstart_names_the_demos_store() -> None:
    """The demo writes where `bedside ls`, `report` and `serve` read by default, and the README says so."""
    import inspect

    from bedside.cli.app import DEFAULT_STORE
    from bedside.cli.demo import demo

    store_default = inspect.signature(demo).parameters["store"].default
    assert store_default == DEFAULT_STORE
    quickstart = (ROOT / "README.md").read_text(encoding="utf-8").split("## Documentation", 1)[0]
    assert DEFAULT_STORE in quickstart
