"""Classification metrics for a task whose answer is a label: the label read from the answer, accuracy, per-label
and macro/micro F1 and the confusion matrix, through a YAML task on the scripted server (issue 46 item 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.metrics.classification import (
    check_extract_rule,
    exact_match,
    extract_label,
    normalise_label,
    summarise_labels,
)
from bedside.runs import load_config
from bedside.testing import ScriptedServer

LABELS = ["emergency", "urgent", "routine"]


def test_labels_are_read_from_the_answer_by_the_chosen_rule() -> None:
    assert normalise_label("  **Urgent.** ") == "urgent"
    assert extract_label("Urgent.\nBecause the fever is high.") == "urgent"
    assert extract_label("I think it is urgent, not routine.", "whole", LABELS) is None  # two labels: unreadable
    assert extract_label("Triage: URGENT", "first_line", LABELS) == "urgent"
    assert extract_label("Reasoning first.\nLABEL: routine", r"regex:label:\s*(\w+)", LABELS) == "routine"
    assert extract_label("no idea", "first_line", LABELS) is None
    assert extract_label("", "first_line") is None
    with pytest.raises(ValueError, match=r"extract 'regex:\(': the pattern does not compile"):
        check_extract_rule("regex:(")
    with pytest.raises(ValueError, match="choose first_line, whole or regex:PATTERN"):
        check_extract_rule("last_line")


def test_exact_match_normalises_case_spaces_and_edge_punctuation() -> None:
    assert exact_match("  Yes. ", ["yes"]) == 1.0
    assert exact_match("yes, definitely", ["yes"]) == 0.0
    assert exact_match("yes", []) is None


def test_summary_figures_match_their_definitions() -> None:
    pairs: list[tuple[str, str | None]] = [
        ("emergency", "emergency"),
        ("emergency", "urgent"),
        ("urgent", "urgent"),
        ("routine", "routine"),
        ("routine", None),
    ]
    found = summarise_labels(pairs, LABELS)
    assert found.n == 5
    assert found.accuracy == pytest.approx(3 / 5)
    assert found.unreadable == 1
    by_label = {s.label: s for s in found.per_label}
    assert (by_label["urgent"].precision, by_label["urgent"].recall) == (0.5, 1.0)
    assert by_label["emergency"].f1 == pytest.approx(2 * 1.0 * 0.5 / 1.5)
    assert by_label["routine"].support == 2
    assert found.macro_f1 == pytest.approx((2 / 3 + 2 / 3 + 2 / 3) / 3)
    assert found.micro_f1 == pytest.approx(2 * (3 / 4) * (3 / 5) / (3 / 4 + 3 / 5))  # the unreadable: a miss only
    assert found.confusion == ((1, 1, 0, 0), (0, 1, 0, 0), (0, 0, 1, 1))
    # a subset that holds one of the task's labels: the others are no evidence, not F1 0 (a newcomer's sweep read
    # 0.333 for a model right on 4 of 4 emergency cases)
    subset = summarise_labels([("emergency", "emergency")] * 4, LABELS)
    assert subset.macro_f1 == 1.0
    assert len(subset.per_label) == 3  # every label of the task still has its row


def test_a_yaml_triage_task_reports_accuracy_f1_and_the_confusion_matrix(tmp_path: Path) -> None:
    cases = [
        ("c1", "Crushing chest pain for an hour", "emergency"),
        ("c2", "Fever of 39.5 and a stiff neck", "emergency"),
        ("c3", "Painful urination since yesterday", "urgent"),
        ("c4", "Refill of my allergy spray", "routine"),
        ("c5", "Question about my last bill", "routine"),
    ]
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": i, "message": m, "label": label}) + "\n" for i, m, label in cases), encoding="utf-8"
    )
    (tmp_path / "triage.j2").write_text("Triage this portal message: {{ message }}\n", encoding="utf-8")
    task = {
        "name": "triage",
        "dataset": {"path": "cases.jsonl", "columns": {"id": "id", "message": "message", "reference": "label"}},
        "prompts": {"triage": "triage.j2"},
        "metrics": ["exact_match"],
        "classification": {"labels": LABELS, "extract": "first_line"},
    }
    (tmp_path / "triage.yaml").write_text(yaml.safe_dump(task), encoding="utf-8")
    rules = [
        (r"chest pain", "EMERGENCY\nCall 911."),
        (r"stiff neck", "Urgent."),  # wrong: an emergency
        (r"urination", "urgent"),
        (r"allergy spray", "Routine"),
        (r"bill", "I cannot tell."),  # unreadable
    ]
    runner = CliRunner()
    store = str(tmp_path / "runs.sqlite")
    with ScriptedServer(rules) as server:
        config = {
            "name": "triage-run",
            "task": str(tmp_path / "triage.yaml"),
            "datasets": {"cases": {}},
            "systems": {"triage": {"type": "triage"}},
            "models": {"system": server.model_name("triager")},
            "store": store,
        }
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        ran = runner.invoke(app, ["run", str(path), "--no-cache"])
    assert ran.exit_code == 0, ran.output
    run = load_config(path).run_id
    report = json.loads(runner.invoke(app, ["report", run, "--store", store, "--json"]).stdout)
    (cell,) = report["cells"]
    means = {m["metric"]: m["mean"] for m in cell["metrics"]}
    assert means["accuracy"] == pytest.approx(3 / 5)
    assert means["exact_match"] == pytest.approx(2 / 5)  # "EMERGENCY\nCall 911." and "Urgent." are not exact
    tables = {t["title"]: t for t in report["tables"]}
    (overall,) = tables["Classification"]["rows"]
    assert overall[1:] == ["5", "0.600", "0.667", "0.667", "1"]
    assert tables["Confusion matrix"]["columns"] == ["cell", "gold", "emergency", "urgent", "routine", "(unreadable)"]
    assert [row[1:] for row in tables["Confusion matrix"]["rows"]] == [
        ["emergency", "1", "1", "0", "0"],
        ["urgent", "0", "1", "0", "0"],
        ["routine", "0", "0", "1", "1"],
    ]
    bad = dict(task, classification={"extract": "regex:("})
    (tmp_path / "triage.yaml").write_text(yaml.safe_dump(bad), encoding="utf-8")
    checked = runner.invoke(app, ["config", "check", str(path)])
    assert checked.exit_code == 1
    assert "classification.extract" in checked.output
    assert "the pattern does not compile" in checked.output
