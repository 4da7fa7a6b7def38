"""The independent held-out fidelity set: its size per label, its patients, and that it parses as the CLI reads it."""

from __future__ import annotations

import json
from pathlib import Path

from bedside.sim.validation import read_fidelity_items, splits_of
from tool_module import load_tool

ROOT = Path(__file__).resolve().parents[1]
HELDOUT = ROOT / "src" / "bedside" / "sim" / "data" / "fidelity_heldout.jsonl"
ITEMS = read_fidelity_items(HELDOUT)


def test_the_heldout_set_has_enough_sentences_of_every_label() -> None:
    labels = [label for item in ITEMS for label in item.labels]
    assert len(labels) >= 130
    assert labels.count("contradicted") >= 45
    assert labels.count("unsupported") >= 35
    assert labels.count("entailed") >= 35
    assert labels.count("non_informative") >= 10
    assert sum(item.style == "dialogue" for item in ITEMS) * 2 >= len(ITEMS)


def test_the_heldout_set_is_one_split_of_at_least_twelve_patients() -> None:
    assert set(splits_of(ITEMS)) == {"heldout", "all"}
    facts_by_case: dict[str, set[tuple[str, ...]]] = {}
    for item in ITEMS:
        assert len(item.sentences) == 1
        facts_by_case.setdefault(item.id.rsplit("-", 1)[0], set()).add(item.facts)
    assert len(facts_by_case) >= 12
    for facts in facts_by_case.values():
        assert len(facts) == 1
        assert 4 <= len(next(iter(facts))) <= 7
    assert len({item.id for item in ITEMS}) == len(ITEMS)


def test_the_file_is_what_its_generator_writes() -> None:
    module = load_tool("make_fidelity_heldout")
    written = [json.loads(line) for line in HELDOUT.read_text(encoding="utf-8").splitlines()]
    assert written == module.rows()


def test_the_combined_checker_meets_the_goals_on_the_independent_set() -> None:
    """Issue 30's goals, read on the set whose writer never saw the rules (measured once, rules frozen):
    contradicted recall 56/70 = 0.80 and unsupported precision 27/38 = 0.71. Floors, so nothing lowers them."""
    from bedside.sim.contradiction import label_combined
    from bedside.sim.validation import compare

    predicted: dict[str, tuple[str, ...]] = {
        item.id: tuple(found.label for found in label_combined(item.sentences, item.facts, item.clinician_said))
        for item in ITEMS
    }
    result = compare(ITEMS, predicted)
    contradicted, unsupported = result.per_label["contradicted"], result.per_label["unsupported"]
    assert contradicted["recall"] is not None
    assert contradicted["recall"] >= 0.8
    assert unsupported["precision"] is not None
    assert unsupported["precision"] >= 0.7
