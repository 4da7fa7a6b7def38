"""Read a page's answer where it is, not anywhere in the page.

Whether a short string is in a whole page can be decided by a random token, a run id or a hash elsewhere on the
page (issue 49: a CSRF token held the "C1" a test asserted absent). Tests select the element that holds the
answer, or the line of command output that does, and assert on its text. ``tests/test_chance_asserts.py`` keeps
the suite to this.
"""

from __future__ import annotations

from bs4 import BeautifulSoup


def element_texts(html: str, selector: str) -> list[str]:
    """The visible text of each element matching the CSS ``selector``, whitespace collapsed."""
    soup = BeautifulSoup(html, "html.parser")
    return [" ".join(found.get_text(" ").split()) for found in soup.select(selector)]


def element_text(html: str, selector: str) -> str:
    """The visible text of the elements matching ``selector``, joined; fails when none matches, so an assertion
    that something is absent cannot pass on a page that lacks the element altogether."""
    found = element_texts(html, selector)
    assert found, f"no element matches {selector!r}"
    return " | ".join(found)


def field_names(html: str, selector: str = "form") -> set[str]:
    """The names of the inputs, selects and text areas inside the forms matching ``selector``."""
    soup = BeautifulSoup(html, "html.parser")
    forms = soup.select(selector)
    assert forms, f"no element matches {selector!r}"
    return {str(field["name"]) for form in forms for field in form.select("[name]")}


def line_with(output: str, start: str) -> str:
    """The one line of command output that starts with ``start`` (after indentation and table borders)."""
    found = [line for line in output.splitlines() if line.strip().strip("│|┃ ").startswith(start)]
    assert len(found) == 1, f"{len(found)} lines start with {start!r} in:\n{output}"
    return found[0]
