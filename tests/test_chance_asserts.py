"""No test asserts a short string against a whole page or command output (issue 49).

Pages and outputs hold values drawn at random or from the test's own temporary paths: CSRF and session tokens
(fixed in tests by ``conftest.py``, but a page may still show a run id), run ids hashed from configs that name
``tmp_path``, item tokens, cache keys, durations and clock times. A two-character string sits somewhere in a
43-character token about one run in a hundred, so a test that "C1" is not in the page fails by chance, and a
test that "ab" is in an output can pass by chance. Such a test reads the element or line that holds the answer instead
(``tests/page_text.py``). This check walks every test's asserts; it fails on the shapes that chance can decide.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).parent

WHOLE = re.compile(r"^(html|page|body|text|out|output|stdout|stderr|shown|printed|md|markdown|report|line|content)$")
"""The last name of an expression that holds a whole page, a whole output or a whole exported line."""

TEXT_CALLS = {"str", "read_text", "join", "lower", "upper", "strip", "casefold", "decode", "get_text"}
"""Calls whose result is the whole text of what they are given."""


def chance_can_hold(needle: str) -> bool:
    """Whether a random value could contain ``needle``: short hex (ids, hashes, tokens), short numbers with their
    separators (durations, times, sizes), or up to three token characters (URL-safe base64)."""
    return bool(
        re.fullmatch(r"[0-9a-f]{1,6}", needle)
        or re.fullmatch(r"[0-9.:/,-]{1,6}", needle)
        or re.fullmatch(r"[A-Za-z0-9_-]{1,3}", needle)
    )


def whole_text(node: ast.expr) -> bool:
    """Whether ``node`` reads as a whole page or output (``html``, ``page.text``, ``result.output``,
    ``str(error)``, ``path.read_text()``, ``" ".join(...)``)."""
    if isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        return name in TEXT_CALLS
    if isinstance(node, ast.Attribute):
        return bool(WHOLE.match(node.attr))
    if isinstance(node, ast.Name):
        return bool(WHOLE.match(node.id.rsplit("_", 1)[-1]) or WHOLE.match(node.id.split("_", 1)[0]))
    return False


def chance_asserts(source: str, filename: str) -> list[str]:
    """``file:line: 'needle' in expression`` for each assert in ``source`` that chance can decide."""
    found = []
    for statement in ast.walk(ast.parse(source, filename)):
        if not isinstance(statement, ast.Assert):
            continue
        for node in ast.walk(statement.test):
            if not isinstance(node, ast.Compare) or not isinstance(node.left, ast.Constant):
                continue
            needle = node.left.value
            for op, right in zip(node.ops, node.comparators, strict=True):
                if (
                    isinstance(op, ast.In | ast.NotIn)
                    and isinstance(needle, str)
                    and chance_can_hold(needle)
                    and whole_text(right)
                ):
                    found.append(f"{filename}:{node.lineno}: {needle!r} in {ast.unparse(right)}")
    return found


def test_no_short_string_is_asserted_against_a_whole_page_or_output() -> None:
    found = [hit for path in sorted(TESTS.glob("*.py")) for hit in chance_asserts(path.read_text(), path.name)]
    assert not found, "read the element or line that holds the answer (tests/page_text.py):\n" + "\n".join(found)


def test_the_check_catches_the_shapes_chance_decides() -> None:
    bad = """
def test_page(html, result, error, page):
    assert 'C1' not in html
    assert 'd_z' in result.stdout
    assert '1.000' not in result.output
    assert ':1' in str(error)
    assert 'ab' in page.text.lower()
"""
    assert len(chance_asserts(bad, "bad.py")) == 5
    fine = """
def test_page(html, labels, row, stats):
    assert "no dated events" in html          # long enough that no token holds it
    assert "C1" in labels                     # a list of labels, not a page
    assert "<td>C1</td>" in html              # markup cannot be in a token
    assert "401" not in stats["answers"]      # a dict of statuses
    if "T" in html:                           # not an assertion
        pass
"""
    assert chance_asserts(fine, "fine.py") == []


def test_pages_render_with_fixed_tokens_and_review_ids() -> None:
    """``conftest.py`` fixes the web app's tokens and review ids per test, so whole-page text is deterministic."""
    from bedside.web import review, security

    assert [security.new_token(), security.new_token(24)] == ["tok0001" + "_" * 25, "tok0002" + "_" * 17]
    assert review.new_review_id("any") == "rv-test0001"


@pytest.mark.real_tokens
def test_outside_tests_the_tokens_are_random() -> None:
    from bedside.web import review, security

    tokens = {security.new_token() for _ in range(200)}
    assert len(tokens) == 200
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{43}", token) for token in tokens)
    assert re.fullmatch(r"rv-[0-9a-f]{10}", review.new_review_id("a"))


def test_property_tests_draw_the_same_examples_every_run() -> None:
    """The conftest's Hypothesis profile: a new random example or a stalled draw on a loaded machine must not fail
    a landing (a ``@given`` test without its own settings once failed its 1 s draw limit at load 28)."""
    from hypothesis import HealthCheck, settings

    profile = settings.default
    assert profile is not None
    assert profile.derandomize
    assert profile.deadline is None
    assert profile.database is None
    assert HealthCheck.too_slow in profile.suppress_health_check
