"""Golden end-to-end run of instruct (MedAlign, seed 001): three scripted models answer three instructions over the
demo cohort's records, a scripted judge grades each answer; a ranking review is built from the run, clinician
labels come in through the review's import and go out through its ``instruct`` export, and the analysis commands
read that file. Every stored score, every report cell and every analysis number is compared with values worked
out by hand below.

Instructions (written here; records from the demo cohort)::

    i1  "Which blood pressure drug was stopped?"  medication information (Retrieve & Summarize), Cardiology
        reference "Lisinopril was stopped in March"; facts [lisinopril], [stopped]
    i2  "What diabetes medicine and dose is prescribed?"  medication information, Cardiology
        reference "Metformin 500 mg twice daily"; facts [metformin], [twice daily]
    i3  "Does the patient have drug allergies?"  determine plan of care (Care Planning), Internal Medicine
        reference "No known drug allergies"; facts [no known drug allergies | nkda]

Answers (words) and what follows from them::

            model A                                model B                          model C
    i1  Lisinopril was stopped in March (5)   Lisinopril was stopped (3)       Lisinopril was started in March (5)
    i2  Unknown (1)                           Metformin 500 mg twice daily (5) Metformin 500 mg (3)
    i3  No known drug allergies (4)           No known drug allergies (4)      Penicillin reaction (2)

    facts recall   A 1, 0, 1     B 1, 1, 1     C 1/2, 1/2, 0
    facts correct  A 1, 0, 1     B 1, 1, 1     C 0, 0, 0
    judge correct  (the scripted judge passes A on i1 and i3, B everywhere, C nowhere): as facts correct
    truncated      0 everywhere (a 65,536-token context holds each demo record)

Report per cell (3 samples; with three values the percentile bootstrap's 2.5% and 97.5% points are the min and
the max: the chance that all three draws are the smallest value is 1/27 > 2.5%)::

    A: facts_recall 2/3 [0, 1], facts_correct 2/3 [0, 1], judge_correct 2/3 [0, 1], words 10/3 [1, 5]
    B: 1 [1, 1] for the three, words 4 [3, 5]
    C: facts_recall 1/3 [0, 1/2], facts_correct 0, judge_correct 0, words 10/3 [2, 5]
    by specialty: Cardiology (i1, i2) A 1/2, B 1, C facts_recall 1/2; Internal Medicine (i3) A 1, B 1, C 0

Clinician labels (Annotator_1; rank 1 = best, ties allowed; Annotator_2 also ranked i1)::

            A            B            C
    i1  1 correct    2 correct    3 incorrect      Annotator_2: A 1, B 3, C 2
    i2  3 incorrect  1 correct    2 incorrect
    i3  1 correct    1 correct    2 incorrect

    correct %: A 2/3, B 1, C 0.   mean rank: A 5/3, B 4/3, C 7/3
    head to head, ties left out: A–B 1 win each (i3 tied) → 1/2, 1/2; A–C 2:1 → 2/3, 1/3; B–C 3:0 → 1, 0
    win rate (mean over opponents): A (1/2 + 2/3)/2 = 7/12, B (1/2 + 1)/2 = 3/4, C (1/3 + 0)/2 = 1/6
    by category: Retrieve & Summarize (i1, i2) A 1/2, B 1, C 0; Care Planning (i3) A 1, B 1, C 0
    by specialty (pooled over models): Cardiology (1/2 + 1 + 0)/3 = 1/2; Internal Medicine (1 + 1 + 0)/3 = 2/3
    point-biserial (correct vs rank, per instruction): i1 x (1,1,0) y (1,2,3): r = −1/sqrt(4/3) = −0.8660;
        i2 x (0,1,0) y (3,1,2): −0.8660; i3 x (1,1,0) y (1,1,2): −1 → mean −0.9107, [−1, −0.8660], n 3;
        by category: Retrieve & Summarize (i1, i2) −0.8660, n 2; Care Planning (i3) −1, n 1
    easy/hard: no instruction correct for every model or for none: mixed 3 of 3

Metrics against the clinicians (Kendall τ-b per instruction, metric score vs −rank)::

    words:  i1 (5,3,5) vs A>B>C: pairs AB concordant, AC tied in the metric, BC discordant → (1−1)/sqrt(2·3) = 0
            i2 (1,5,3) vs B>C>A: 1;  i3 (4,4,2) vs A=B>C: 2/sqrt(2·2) = 1  → mean 2/3, [0, 1], n 3
    rougeL: i1 (1, 0.75, 0.8) vs A>B>C: AB, AC concordant, BC discordant → 1/3;  i2 (0, 1, 0.75): 1;
            i3 (1, 1, 0): 1  → mean 7/9, [1/3, 1], n 3
    inter-rater: i1 only, τ-b((1,2,3), (1,3,2)) = 1/3 → 1/3, n 1
    metric win rates (ties left out): words A 1/2, B 7/12, C 5/12; rougeL A 7/12, B 7/12, C 1/3
    rougeL − words (paired over the 3 instructions: differences 1/3, 0, 0): mean 1/9; the paired bootstrap's
        interval is [0, 1/3] (min and max as above) and its p-value 2 × P(resampled mean ≤ 0) = 2 × (2/3)³ =
        16/27 up to resampling noise; Fisher z is not computed (it needs more than 3 instructions per metric)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.runs import Store
from bedside.tasks.instruct.task import DEMO_RECORDS
from bedside.testing import ScriptedServer
from bedside.testing.scripted_answers import rubric_answer
from golden_support import read_report, run_golden

INSTRUCTIONS = [
    {
        "id": "i1",
        "question": "Which blood pressure drug was stopped?",
        "subcategory": "medication information",
        "submitter_specialty": "Cardiology",
        "person_id": "demo-01",
        "references": [{"annotator": "Annotator_1", "text": "Lisinopril was stopped in March"}],
        "answer_facts": [["lisinopril"], ["stopped"]],
    },
    {
        "id": "i2",
        "question": "What diabetes medicine and dose is prescribed?",
        "subcategory": "medication information",
        "submitter_specialty": "Cardiology",
        "person_id": "demo-02",
        "references": [{"annotator": "Annotator_1", "text": "Metformin 500 mg twice daily"}],
        "answer_facts": [["metformin"], ["twice daily"]],
    },
    {
        "id": "i3",
        "question": "Does the patient have drug allergies?",
        "subcategory": "determine plan of care",
        "submitter_specialty": "Internal Medicine",
        "person_id": "demo-03",
        "references": [{"annotator": "Annotator_1", "text": "No known drug allergies"}],
        "answer_facts": [["no known drug allergies", "nkda"]],
    },
]
QUESTION = {i["id"]: i["question"] for i in INSTRUCTIONS}
ANSWERS = {
    "A": {"i1": "Lisinopril was stopped in March", "i2": "Unknown", "i3": "No known drug allergies"},
    "B": {"i1": "Lisinopril was stopped", "i2": "Metformin 500 mg twice daily", "i3": "No known drug allergies"},
    "C": {"i1": "Lisinopril was started in March", "i2": "Metformin 500 mg", "i3": "Penicillin reaction"},
}
JUDGED_CORRECT = {
    "Lisinopril was stopped in March",
    "Lisinopril was stopped",
    "Metformin 500 mg twice daily",
    "No known drug allergies",
}
# Annotator_1's (rank, correct) per instruction and model.
CLINICIANS = {
    "i1": {"A": (1, True), "B": (2, True), "C": (3, False)},
    "i2": {"A": (3, False), "B": (1, True), "C": (2, False)},
    "i3": {"A": (1, True), "B": (1, True), "C": (2, False)},
}
SECOND_RATER = {"i1": {"A": (1, True), "B": (3, True), "C": (2, False)}}

SCORES: dict[str, dict[str, list[float]]] = {
    "A": {"facts_recall": [1, 0, 1], "facts_correct": [1, 0, 1], "judge_correct": [1, 0, 1], "words": [5, 1, 4]},
    "B": {"facts_recall": [1, 1, 1], "facts_correct": [1, 1, 1], "judge_correct": [1, 1, 1], "words": [3, 5, 4]},
    "C": {
        "facts_recall": [0.5, 0.5, 0],
        "facts_correct": [0, 0, 0],
        "judge_correct": [0, 0, 0],
        "words": [5, 3, 2],
    },
}


def _rules(model: str) -> list[tuple[str, str]]:
    judge = [
        (
            re.escape(f"## AI assistant's response\n{answer}\n"),
            rubric_answer("medalign_correctness", 1.0 if answer in JUDGED_CORRECT else 0.0),
        )
        for answers in ANSWERS.values()
        for answer in answers.values()
    ]
    system = [(re.escape(f'Question: "{QUESTION[i]}"'), answer) for i, answer in ANSWERS[model].items()]
    return judge + system


def _write(folder: Path, name: str, lines: list[dict[str, Any]]) -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("golden-instruct")
    instructions = _write(folder, "instructions.jsonl", INSTRUCTIONS)
    with ScriptedServer(_rules("A")) as a, ScriptedServer(_rules("B")) as b, ScriptedServer(_rules("C")) as c:
        models = {"A": a.model_name("model-a"), "B": b.model_name("model-b"), "C": c.model_name("model-c")}
        config = {
            "name": "golden-instruct",
            "task": "instruct",
            "datasets": {"golden": {"path": str(instructions), "options": {"records": str(DEMO_RECORDS)}}},
            "systems": {
                "budgeted": {"type": "budgeted", "options": {"tokenizer": "chars:4", "context": 65536, "judge": True}}
            },
            "models": {"system": list(models.values()), "judge": [a.model_name("judge")]},
            "scorers": ["facts_recall", "facts_correct", "judge_correct", "truncated", "words"],
        }
        store, run_id, rows = run_golden(folder, config)
    report, markdown = read_report(store, run_id, written_to=folder)
    return {
        "folder": folder,
        "instructions": instructions,
        "store": store,
        "run": run_id,
        "models": {letter: name.split("@")[0] for letter, name in models.items()},  # stored and reported without URL
        "rows": rows,
        "report": report,
        "markdown": markdown,
    }


def _letter(golden: dict[str, Any], model: str) -> str:
    return str(next(letter for letter, name in golden["models"].items() if name == model))


def test_stored_scores(golden: dict[str, Any]) -> None:
    assert len(golden["rows"]) == 9
    for row in golden["rows"]:
        letter = _letter(golden, row.model)
        index = int(row.sample_id[1]) - 1
        assert row.status == "ok"
        assert row.output["text"] == ANSWERS[letter][row.sample_id]
        expected = {name: float(values[index]) for name, values in SCORES[letter].items()}
        assert row.scores == {**expected, "truncated": 0.0}, (letter, row.sample_id)
        assert row.strata["specialty"] == next(
            i["submitter_specialty"] for i in INSTRUCTIONS if i["id"] == row.sample_id
        )


def test_report_cells_and_strata(golden: dict[str, Any]) -> None:
    cells = {_letter(golden, c["model"]): c for c in golden["report"]["cells"]}
    assert sorted(cells) == ["A", "B", "C"]
    for letter, cell in cells.items():
        assert (cell["samples"], cell["ok"], cell["errors"]) == (3, 3, 0)
        summaries = {m["metric"]: m for m in cell["metrics"]}
        expected: dict[str, list[float]] = {**SCORES[letter], "truncated": [0.0, 0.0, 0.0]}
        for name, values in expected.items():
            got = summaries[name]
            assert got["n"] == 3
            assert got["mean"] == pytest.approx(sum(values) / 3), (letter, name)
            assert (got["low"], got["high"]) == (pytest.approx(min(values)), pytest.approx(max(values))), (letter, name)
        specialty = {value: {m["metric"]: m["mean"] for m in ms} for value, ms in cell["strata"]["specialty"].items()}
        recall = SCORES[letter]["facts_recall"]
        assert specialty["Cardiology"]["facts_recall"] == pytest.approx((recall[0] + recall[1]) / 2)
        assert specialty["Internal Medicine"]["facts_recall"] == pytest.approx(recall[2])
        category = {value: {m["metric"]: m["mean"] for m in ms} for value, ms in cell["strata"]["category"].items()}
        assert sorted(category) == ["Care Planning", "Retrieve & Summarize"]


def test_report_task_tables(golden: dict[str, Any]) -> None:
    tables = {t["title"]: t for t in golden["report"]["tables"]}
    systems = tables["Instructions: systems × context length"]
    by_model = {_letter(golden, row[1]): row for row in systems["rows"]}
    prompt_tokens: dict[str, list[int]] = {}
    for row in golden["rows"]:
        # chars:4 counts ceil(characters / 4) per message; no chat-template overhead for this endpoint.
        prompt = row.output["prompts"][0]
        tokens = sum(-(-len(m["content"]) // 4) for m in prompt)
        assert row.output["extra"]["prompt_tokens"] == tokens
        prompt_tokens.setdefault(_letter(golden, row.model), []).append(tokens)
    means = {"A": ("0.667", "0.667", "0.667"), "B": ("1.000", "1.000", "1.000"), "C": ("0.000", "0.000", "0.333")}
    for letter, (facts, judge, recall) in means.items():
        expected_tokens = f"{sum(prompt_tokens[letter]) / 3:.1f}"
        assert by_model[letter] == [
            "budgeted",
            golden["models"][letter],
            "65536",
            "3",
            facts,
            judge,
            recall,
            "0.000",
            expected_tokens,
            "0",
            "paper",
        ]
    category = tables["Facts correct by instruction category"]
    columns = category["columns"]
    assert columns[0] == "category"
    rows = {row[0]: dict(zip(columns[1:], row[1:], strict=True)) for row in category["rows"]}
    # One column per system and model: Retrieve & Summarize (i1, i2) A 1/2, B 1, C 0; Care Planning (i3) 1, 1, 0.
    expected = {"Retrieve & Summarize": ("0.500", "1.000", "0.000"), "Care Planning": ("1.000", "1.000", "0.000")}
    for name, values in expected.items():
        assert [rows[name][f"budgeted / {golden['models'][m]}"] for m in "ABC"] == list(values)


def _labels_through_review(golden: dict[str, Any]) -> Path:
    """A rank review built from the run; the clinicians' labels imported; the instruct export written to a file."""
    pytest.importorskip("argon2")
    from bedside.web import review as rv
    from bedside.web import review_export
    from bedside.web.db import create_web_tables
    from bedside.web.security import add_user

    store = Store(golden["store"])
    try:
        create_web_tables(store.engine)
        add_user(store.engine, "admin", "a long enough password 1", "admin")
        for clinician in ("Annotator_1", "Annotator_2"):  # labels are imported only for existing accounts
            add_user(store.engine, clinician, "a long enough password 1", "annotator")
        spec = rv.ReviewSpec("golden", "rank", ["admin"], per_annotator=10)
        items = rv.items_from_run(store, golden["run"], spec)
        assert sorted(i for i, _, _ in items) == ["golden/i1", "golden/i2", "golden/i3"]
        for _, payload, _ in items:
            # The reviewer sees the instruction and the record itself, never a file path.
            assert str(DEMO_RECORDS) not in payload["context"]
            assert payload["context"].startswith("Instruction:\n")
            assert "Patient record (demo-0" in payload["context"]
            assert "<record>" in payload["context"]
        review_id = rv.create_review(store.engine, spec, items, source="run", created_by="admin")
        lines = []
        for item_id, _, key in items:
            for evaluator, labels in (("Annotator_1", CLINICIANS), ("Annotator_2", SECOND_RATER)):
                if key["sample"] not in labels:
                    continue
                outputs = []
                for cell in key["outputs"]:
                    rank, correct = labels[key["sample"]][_letter(golden, _model_of(golden, cell))]
                    outputs.append({"rank": rank, "correct": correct})
                lines.append(json.dumps({"item": item_id, "annotator": evaluator, "label": {"outputs": outputs}}))
        assert review_export.import_labels(store.engine, review_id, "\n".join(lines), user="admin") == 4
        text, _ = review_export.export_labels(store.engine, review_id, "instruct")
    finally:
        store.close()
    path = Path(golden["folder"]) / "labels.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def _model_of(golden: dict[str, Any], cell: str) -> str:
    return str(next(r.model for r in golden["rows"] if r.cell == cell))


@pytest.fixture(scope="module")
def analysis(golden: dict[str, Any]) -> dict[str, Any]:
    labels = _labels_through_review(golden)
    runner = CliRunner()
    common = ["-i", str(golden["instructions"]), "--records", str(DEMO_RECORDS), "--json"]
    evaluated = runner.invoke(app, ["instruct", "evaluate", str(labels), *common])
    assert evaluated.exit_code == 0, evaluated.output
    agreed = runner.invoke(
        app,
        [
            "instruct",
            "agreement",
            str(labels),
            *common,
            "--metric",
            "words",
            "--metric",
            "rougeL",
            "--comet",
            str(golden["folder"] / "no-comet-checkpoint"),
        ],
    )
    assert agreed.exit_code == 0, agreed.output
    cells = {r.model: r.cell for r in golden["rows"]}
    return {
        "evaluate": json.loads(evaluated.output),
        "agreement": json.loads(agreed.output),
        "cell": {letter: cells[name] for letter, name in golden["models"].items()},
    }


def test_table3_correctness_win_rates_ties_excluded(analysis: dict[str, Any]) -> None:
    data, cell = analysis["evaluate"], analysis["cell"]
    assert data["instructions"] == 3
    rows = {r["model"]: r for r in data["table3"]}
    expected = {"A": (2 / 3, 7 / 12, 5 / 3), "B": (1.0, 3 / 4, 4 / 3), "C": (0.0, 1 / 6, 7 / 3)}
    for letter, (correct, win_rate, mean_rank) in expected.items():
        row = rows[cell[letter]]
        assert row["n"] == 3
        assert row["correct"] == pytest.approx(correct)
        assert row["win_rate"] == pytest.approx(win_rate)
        assert row["mean_rank"] == pytest.approx(mean_rank)
    by_category = data["by_category"]
    assert by_category["rates"]["Retrieve & Summarize"] == {
        cell["A"]: pytest.approx(0.5),
        cell["B"]: pytest.approx(1.0),
        cell["C"]: pytest.approx(0.0),
    }
    assert by_category["rates"]["Care Planning"] == {cell["A"]: 1.0, cell["B"]: 1.0, cell["C"]: 0.0}
    assert data["by_specialty"] == {"Cardiology": pytest.approx(0.5), "Internal Medicine": pytest.approx(2 / 3)}
    biserial = data["point_biserial"]
    r = -1 / (4 / 3) ** 0.5
    assert biserial["n"] == 3
    assert biserial["skipped"] == 0
    assert biserial["per_instruction"] == {"i1": pytest.approx(r), "i2": pytest.approx(r), "i3": pytest.approx(-1.0)}
    assert biserial["mean"] == pytest.approx((2 * r - 1) / 3)
    assert (biserial["low"], biserial["high"]) == (pytest.approx(-1.0), pytest.approx(r))
    by_category = data["point_biserial_by_category"]
    assert sorted(by_category) == ["Care Planning", "Retrieve & Summarize"]
    assert (by_category["Retrieve & Summarize"]["mean"], by_category["Retrieve & Summarize"]["n"]) == (
        pytest.approx(r),
        2,
    )
    assert (by_category["Care Planning"]["mean"], by_category["Care Planning"]["n"]) == (pytest.approx(-1.0), 1)
    assert data["difficulty"] == {"all_correct": [], "none_correct": [], "mixed": 3, "n": 3}


def test_metric_agreement_tau_and_win_rates(analysis: dict[str, Any]) -> None:
    data, cell = analysis["agreement"], analysis["cell"]
    rows = {r["name"]: r for r in data["agreement"]}
    words, rouge, raters = rows["words"], rows["rougeL"], rows["inter-rater"]
    assert words["per_instruction"] == {"i1": pytest.approx(0.0), "i2": pytest.approx(1.0), "i3": pytest.approx(1.0)}
    assert (words["mean"], words["low"], words["high"], words["n"], words["undefined"]) == (
        pytest.approx(2 / 3),
        pytest.approx(0.0),
        pytest.approx(1.0),
        3,
        0,
    )
    assert rouge["per_instruction"] == {"i1": pytest.approx(1 / 3), "i2": pytest.approx(1.0), "i3": pytest.approx(1.0)}
    assert (rouge["mean"], rouge["low"], rouge["high"]) == (
        pytest.approx(7 / 9),
        pytest.approx(1 / 3),
        pytest.approx(1.0),
    )
    assert (raters["mean"], raters["n"]) == (pytest.approx(1 / 3), 1)
    rates = data["win_rates"]
    assert rates["clinicians"] == {
        cell["A"]: pytest.approx(7 / 12),
        cell["B"]: pytest.approx(3 / 4),
        cell["C"]: pytest.approx(1 / 6),
    }
    assert rates["words"] == {cell["A"]: 0.5, cell["B"]: pytest.approx(7 / 12), cell["C"]: pytest.approx(5 / 12)}
    assert rates["rougeL"] == {
        cell["A"]: pytest.approx(7 / 12),
        cell["B"]: pytest.approx(7 / 12),
        cell["C"]: pytest.approx(1 / 3),
    }
    # COMET without a checkpoint: absent with its reason, in neither the τ rows nor the win rates (never zero).
    (absent,) = data["absent"]
    assert absent.startswith("comet")
    assert not any(name.startswith("comet") for name in rates)
    # The two best metrics compared (rougeL 7/9 over words 2/3), paired over the same instructions.
    (comparison,) = data["comparisons"]
    assert (comparison["a"], comparison["b"]) == ("words", "rougeL")
    paired = comparison["paired"]
    assert paired["n"] == 3
    assert paired["difference"] == pytest.approx(1 / 9)
    assert (paired["low"], paired["high"]) == (pytest.approx(0.0), pytest.approx(1 / 3))
    assert paired["p_value"] == pytest.approx(16 / 27, abs=0.03)
    assert comparison["fisher"] is None
