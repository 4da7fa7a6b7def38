"""The sentence-level fidelity set, the combined checker's regression on its held-out half, and fidelity-eval."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.llm import ChatMessage
from bedside.sim.contradiction import label_combined
from bedside.sim.validation import SENTENCE_SET, FidelityItem, compare, read_fidelity_items, splits_of
from bedside.testing import ScriptedServer
from bedside.text.quantities import normalise_quantities
from page_text import line_with

ITEMS = read_fidelity_items(SENTENCE_SET)
GOLD = {item.sentences[0]: item.labels[0] for item in ITEMS}


def test_the_set_is_large_enough_in_every_kind_and_split_by_patient() -> None:
    labels = [label for item in ITEMS for label in item.labels]
    assert len(labels) >= 250
    assert labels.count("contradicted") >= 50
    assert labels.count("unsupported") >= 50
    assert labels.count("entailed") >= 50
    assert labels.count("non_informative") >= 10
    assert sum(item.style == "dialogue" for item in ITEMS) >= 60
    halves = splits_of(ITEMS)
    assert set(halves) == {"dev", "test", "all"}
    dev_cases = {item.id.rsplit("-", 1)[0] for item in halves["dev"]}
    test_cases = {item.id.rsplit("-", 1)[0] for item in halves["test"]}
    assert dev_cases
    assert test_cases
    assert not dev_cases & test_cases
    for half in ("dev", "test"):
        kept = [item.labels[0] for item in halves[half]]
        assert kept.count("contradicted") >= 25
        assert kept.count("unsupported") >= 25


def _combined(items: Sequence[FidelityItem]) -> dict[str, tuple[str, ...]]:
    predicted: dict[str, tuple[str, ...]] = {}
    for item in items:
        found = label_combined(item.sentences, item.facts, item.clinician_said)
        predicted[item.id] = tuple(f.label for f in found)
    return predicted


def test_the_combined_checker_holds_on_the_held_out_half() -> None:
    """The guard-style regression on the test half (tuning saw only dev; its rules were revised after one test run).
    Measured there: contradicted recall 0.79 (goal 0.8, not met), unsupported precision 0.81 (goal 0.7);
    after the second round (rules revised on dev), contradicted precision 0.81 and unsupported recall 0.72."""
    test = splits_of(ITEMS)["test"]
    result = compare(test, _combined(test))
    contradicted, unsupported = result.per_label["contradicted"], result.per_label["unsupported"]
    assert contradicted["recall"] is not None
    assert contradicted["recall"] >= 0.75
    assert unsupported["precision"] is not None
    assert unsupported["precision"] >= 0.7
    assert contradicted["precision"] is not None
    assert contradicted["precision"] >= 0.75
    assert unsupported["recall"] is not None
    assert unsupported["recall"] >= 0.65
    assert result.per_label["entailed"]["recall"] is not None
    assert result.per_label["entailed"]["recall"] >= 0.8


def test_a_contradiction_names_its_fact_and_an_addition_is_not_one() -> None:
    facts = ["I go home on furosemide 40 mg once a day.", "I also take metoprolol 25 mg twice a day."]
    dose, extra, repeat = label_combined(
        [
            "I take furosemide 80 mg once a day.",
            "I also take spironolactone every morning.",
            "Um, the water pill, the furosemide, that's forty once a day.",
        ],
        facts,
    )
    assert dose.label == "contradicted"
    assert dose.conflict is not None
    assert dose.conflict.kind == "number"
    assert dose.conflict.fact == facts[0]
    assert extra.label == "unsupported"  # a new drug, said to be extra: invented, not contradicting
    assert repeat.label == "entailed"  # "forty" is 40


def test_number_words_become_digits_but_not_pronouns() -> None:
    assert normalise_quantities("the forty, five hundred twice a day") == "the 40, 500 twice a day"
    assert normalise_quantities("thirty-nine degrees, a hundred fifty over ninety-five") == "39 degrees, a 150/95"
    assert normalise_quantities("the blue one") == "the blue one"
    assert normalise_quantities("four times a day") == "four times a day"  # the frequency the rules read in words


def _numbered_sentences(messages: Sequence[ChatMessage]) -> tuple[str, ...]:
    text = messages[-1].content.split("one sentence per line")[1]
    return tuple(m.group(1) for m in re.finditer(r"^\d+\. (.+)$", text.split("Answer with")[0], re.MULTILINE))


def _oracle(messages: Sequence[ChatMessage]) -> str:
    return json.dumps({"labels": [GOLD[sentence] for sentence in _numbered_sentences(messages)]})


def test_fidelity_eval_measures_the_llm_checker_on_an_endpoint(tmp_path: Path) -> None:
    rows = SENTENCE_SET.read_text(encoding="utf-8").splitlines()
    small = tmp_path / "small.jsonl"
    small.write_text("\n".join(rows[:6] + rows[12:18]) + "\n", encoding="utf-8")  # a dev case and a test case
    with ScriptedServer(_oracle) as server:
        result = CliRunner().invoke(
            app,
            ["sim", "fidelity-eval", "-m", server.model_name(), "--set", str(small), "--checkers", "llm",
             "--no-cache", "--json"],
        )  # fmt: skip
        assert server.stats()["requests"] == 12  # one call per patient turn
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (llm,) = data["sets"][0]["checkers"]
    assert llm["checker"] == "llm"
    assert set(llm["splits"]) == {"dev", "test", "all"}
    assert llm["splits"]["all"]["overall"]["n"] == 12
    for split in ("dev", "test", "all"):
        assert llm["splits"][split]["overall"]["accuracy"] == 1.0  # the oracle answers the hand labels
    with ScriptedServer(_oracle) as server:
        text = CliRunner().invoke(
            app, ["sim", "fidelity-eval", "-m", server.model_name(), "--set", str(small), "--checkers", "llm",
                  "--no-cache"],
        )  # fmt: skip
    assert text.exit_code == 0, text.output
    flat = " ".join(text.output.split())
    assert "| test | contradicted | 2 | 2 | 1.000 | 1.000 |" in flat


def test_fidelity_eval_without_a_model_leaves_the_llm_checker_out(tmp_path: Path) -> None:
    rows = SENTENCE_SET.read_text(encoding="utf-8").splitlines()
    small = tmp_path / "small.jsonl"
    small.write_text("\n".join(rows[:12]) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["sim", "fidelity-eval", "--set", str(small), "--json"])
    assert result.exit_code == 0, result.output
    (data,) = json.loads(result.stdout)["sets"]
    assert [c["checker"] for c in data["checkers"]] == ["embedding", "combined"]
    embedding = data["checkers"][0]["splits"]["all"]["per_label"]
    assert embedding["contradicted"]["predicted"] == 0  # it cannot see a contradiction


def test_by_default_each_set_is_measured_and_reported_apart() -> None:
    result = CliRunner().invoke(app, ["sim", "fidelity-eval", "--checkers", "combined"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    for name, sentences in (
        ("bedside's own", 288),
        ("outside-written 2026-11-27", 162),
        ("outside-written 2026-11-28", 160),
        ("outside-written 2026-11-28b", 160),
    ):
        line = line_with(result.output, f"{name}, combined: contradicted precision")
        assert re.search(r"recall \d\.\d{3} \(\d+/\d+\) \[95% CI \d\.\d{3}-\d\.\d{3}\]", line), line
        table = next(t for t in result.output.split("Fidelity checker")[1:] if f"on {name}" in t.splitlines()[0])
        assert sum(int(row.split("|")[3]) for row in table.splitlines() if row.startswith("| all |")) == sentences


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda row: row.update(labels=["maybe"]), r"bad\.jsonl:2: labels: unknown \['maybe'\]"),
        (
            lambda row: row.pop("facts"),
            r"bad\.jsonl:2: missing field 'facts'; each line needs id, facts, sentences and labels",
        ),
        # a bare string was read a character at a time: nine one-letter facts, and a run that exited 0
        (lambda row: row.update(facts="Pneumonia."), r"bad\.jsonl:2: facts: a list of strings, got str"),
        (lambda row: row.update(facts=["I have asthma.", " "]), r"bad\.jsonl:2: facts: an empty text in the list"),
        # a long turn given as one entry: the error counts and shows three, not a 31 KB list of every sentence
        (
            lambda row: row.update(sentences=["My knee hurts. " * 200], labels=["entailed"]),
            r"bad\.jsonl:2: sentences: the file gives 1, bedside's splitter reads the turn as 200: .* and 197 more",
        ),
    ],
)
def test_a_bad_row_is_named_by_file_and_line(tmp_path: Path, change: object, message: str) -> None:
    rows = SENTENCE_SET.read_text(encoding="utf-8").splitlines()
    broken = json.loads(rows[1])
    change(broken)  # type: ignore[operator]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(rows[0] + "\n" + json.dumps(broken) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["sim", "fidelity-eval", "--set", str(bad), "--checkers", "embedding"])
    assert result.exit_code == 1
    assert re.search(message, " ".join(result.output.split()).replace(" ", "")) or re.search(
        message, result.output.replace("\n", "")
    ), result.output


def test_dates_by_name_compare_and_may_the_verb_is_not_a_month() -> None:
    from bedside.text.numbers import calendar_terms

    assert calendar_terms("I had the scan on Tuesday in March.") == {"weekday:tuesday", "month:march"}
    assert calendar_terms("It may hurt, I was told in Sept.") == {"month:september"}
    assert calendar_terms("My appointment is in May.") == {"month:may"}
    facts = ["My surgery is booked for the 4th of June.", "I must not eat after midnight before surgery."]
    (moved,) = label_combined(["My surgery is booked for the 4th of July."], facts)
    assert moved.label == "contradicted"
    assert moved.conflict is not None
    assert moved.conflict.kind == "date"


def test_a_number_is_compared_with_the_fact_about_what_it_counts() -> None:
    facts = [
        "I had a 4 mm kidney stone found on the scan.",
        "I have had 3 attacks of pain this month.",
        "Each attack lasted about 10 minutes.",
    ]
    other_thing, counted = label_combined(
        ["I had a stone five years ago as well.", "I've had about ten attacks this month."], facts
    )
    assert other_thing.label == "unsupported"
    assert counted.label == "contradicted"
    assert counted.conflict is not None
    assert counted.conflict.fact == facts[1]


def test_opposite_states_and_another_job_contradict_and_a_negation_needs_a_shared_subject() -> None:
    facts = [
        "I have had insomnia for three months.",
        "I work as a bus driver.",
        "I was admitted with shortness of breath.",
    ]
    sleep, job, cough = label_combined(
        ["Honestly I've been sleeping like a baby.", "I'm a teacher.", "I've had a dry cough at night."], facts
    )
    assert sleep.label == "contradicted"
    assert sleep.conflict is not None
    assert sleep.conflict.kind == "meaning"
    assert job.label == "contradicted"
    assert cough.label != "contradicted"
    (faithful,) = label_combined(["I can't sleep at night these days."], facts)
    assert faithful.label != "contradicted"
