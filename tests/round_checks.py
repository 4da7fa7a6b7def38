"""The tests each round of issue 45 writes for what it taught the rules, made once.

A round's test file lists its own sentences (guard pairs reversed and paraphrased, patient sentences contradicted
and not) and takes its tests from here, so the assertions are the same in every round and a file holds only what
is its own::

    test_guard_rejects, test_guard_keeps = guard_round_tests(REVERSED, PARAPHRASES)
    test_checker_catches, test_checker_clears = fidelity_round_tests(CONTRADICTED, NOT_CONTRADICTED)

Pytest collects the returned functions under the names they are bound to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from bedside.sim.contradiction import label_combined
from bedside.tasks.drafting.guard import default_guard

GuardPair = tuple[str, str]
PatientCase = tuple[list[str], str, str]


def guard_round_tests(
    reversed_pairs: Sequence[GuardPair], paraphrases: Sequence[GuardPair]
) -> tuple[Callable[[str, str], None], Callable[[str, str], None]]:
    """Two parametrised tests: the guard calls each reversed pair a conflict, and no paraphrase one."""

    @pytest.mark.parametrize(("reference", "candidate"), reversed_pairs)
    def rejects(reference: str, candidate: str) -> None:
        assert default_guard().read(reference, candidate).verdict == "conflict"

    @pytest.mark.parametrize(("reference", "candidate"), paraphrases)
    def keeps(reference: str, candidate: str) -> None:
        assert default_guard().read(reference, candidate).verdict != "conflict"

    return rejects, keeps


def fidelity_round_tests(
    contradicted: Sequence[PatientCase], not_contradicted: Sequence[PatientCase]
) -> tuple[Callable[[list[str], str, str], None], Callable[[list[str], str, str], None]]:
    """Two parametrised tests: the combined checker labels each (facts, question, sentence) of the first list
    contradicted, and none of the second."""

    @pytest.mark.parametrize(("facts", "asked", "sentence"), contradicted)
    def catches(facts: list[str], asked: str, sentence: str) -> None:
        (label,) = label_combined([sentence], facts, [asked])
        assert label.label == "contradicted", label

    @pytest.mark.parametrize(("facts", "asked", "sentence"), not_contradicted)
    def clears(facts: list[str], asked: str, sentence: str) -> None:
        (label,) = label_combined([sentence], facts, [asked])
        assert label.label != "contradicted", label

    return catches, clears
