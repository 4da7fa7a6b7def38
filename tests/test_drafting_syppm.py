"""The SyPPM reader: column map over guessed defaults, the missing-column error, chart assembly, multi-reply rows."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.runs.config import DatasetConfig
from bedside.tasks.drafting.readers import read_cases
from bedside.tasks.drafting.syppm import SECTION_TITLES, SyPPMError, assemble_chart, read_syppm
from bedside.tasks.drafting.systems import reply_pool
from bedside.tasks.drafting.task import _load

SHIPPED = (
    Path(__file__).resolve().parents[1] / "src" / "bedside" / "tasks" / "drafting" / "data" / "syppm_synthetic.csv"
)


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_shipped_fixture_assembles_the_four_sections_and_reads_every_reply() -> None:
    cases = {c.id: c for c in read_cases(SHIPPED, layout="syppm")}
    assert list(cases) == ["syn-001", "syn-002", "syn-003", "syn-004"]
    assert cases["syn-003"].chart_summary == (
        "Demographics:\n66-year-old woman\n\n"
        "Full Active Problem List:\nHypothyroidism\nOsteoporosis\n\n"
        "Recent Encounters:\nNone\n\n"  # an empty section still shows its heading
        "Medications:\nlevothyroxine 75 mcg tablet, once daily\nalendronate 70 mg tablet, weekly\n"
    )
    chart = cases["syn-001"].chart_summary or ""
    assert [chart.index(f"{title}:\n") for title in SECTION_TITLES.values()] == sorted(
        chart.index(f"{title}:\n") for title in SECTION_TITLES.values()
    )
    # The IAA rows: the primary reply plus the three expert replies; a repeated primary reply is kept once.
    assert [r.clinician_id for r in cases["syn-001"].references] == ["clinician", "expert_1", "expert_2", "expert_3"]
    assert [r.clinician_id for r in cases["syn-002"].references] == ["clinician", "expert_2", "expert_3"]
    assert [r.clinician_id for r in cases["syn-003"].references] == ["clinician"]
    assert cases["syn-004"].references[0].text.startswith("Sorry to hear about your knee.")


def test_column_map_with_a_one_column_chart_and_more_experts(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "release.csv",
        [
            {
                "sample": "7",
                "patient_message": "Is my rash contagious?",
                "ehr": "Demographics:\n40-year-old man",
                "pcp_response": "It is not contagious.",
                "pcp": "dr_a",
                "exp_a": "No, it does not spread.",
                "exp_b": "",
                "exp_c": "Not contagious; keep it dry.",
                "exp_d": "Please send a photo.",
            }
        ],
    )
    columns = {
        "id": "sample",
        "message": "patient_message",
        "chart_summary": "ehr",
        "reference": "pcp_response",
        "clinician_id": "pcp",
        "expert.1": "exp_a",
        "expert.2": "exp_b",
        "expert.3": "exp_c",
        "expert.4": "exp_d",
    }
    (case,) = read_syppm(path, columns)
    assert case.id == "7"
    assert case.message == "Is my rash contagious?"
    assert case.chart_summary == "Demographics:\n40-year-old man"
    assert [r.clinician_id for r in case.references] == ["dr_a", "expert_1", "expert_3", "expert_4"]


def test_missing_column_error_names_it_lists_the_files_columns_and_says_how_to_map(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "release.csv",
        [{"id": "1", "message": "Hello", "chart_summary": "x", "doctor_reply": "Hi"}],
    )
    with pytest.raises(SyPPMError) as caught:
        read_syppm(path)
    text = str(caught.value)
    assert "no column 'response' (for reference)" in text
    assert "its columns are id, message, chart_summary, doctor_reply" in text
    assert "options.columns" in text
    assert "--column FIELD=COLUMN" in text
    assert "bedside's guess" in text
    assert read_syppm(path, {"reference": "doctor_reply"})[0].references[0].text == "Hi"
    # A column named explicitly must exist even when its field is optional.
    with pytest.raises(SyPPMError, match=r"no column 'second' \(for expert\.1\)"):
        read_syppm(path, {"reference": "doctor_reply", "expert.1": "second"})
    with pytest.raises(SyPPMError, match=r"unknown field\(s\) colour"):
        read_syppm(path, {"colour": "x"})


def test_no_chart_column_and_missing_sections_is_an_error_naming_them(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "release.csv",
        [{"id": "1", "message": "Hello", "response": "Hi", "demographics": "50 F", "medications": "none"}],
    )
    with pytest.raises(SyPPMError) as caught:
        read_syppm(path)
    text = str(caught.value)
    assert "no column 'chart_summary' (for chart_summary)" in text
    assert "'problem_list' (for problems)" in text
    assert "'recent_encounters' (for encounters)" in text
    assert "'demographics'" not in text.split("its columns are")[0]
    cases = read_syppm(path, {"problems": "demographics", "encounters": "medications"})
    assert cases[0].chart_summary == assemble_chart(
        {"demographics": "50 F", "problems": "50 F", "encounters": "none", "medications": "none"}
    )


def test_jsonl_long_layout_rows_sharing_an_id_are_one_case(tmp_path: Path) -> None:
    sections = {"demographics": "70 M", "problem_list": ["COPD", "Gout"], "recent_encounters": [], "medications": []}
    rows = [
        {
            "id": "a",
            "message": "Short of breath.",
            **sections,
            "response": "Please come in today.",
            "clinician_id": "p",
        },
        {"id": "a", "message": "Short of breath.", **sections, "response": "Go to urgent care.", "clinician_id": "e"},
        {"id": "a", "message": "Short of breath.", **sections, "response": "Come in today.", "clinician_id": "e"},
    ]
    path = tmp_path / "release.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (case,) = read_syppm(path)
    assert [r.clinician_id for r in case.references] == ["p", "e", "e_2"]
    assert "Full Active Problem List:\nCOPD\nGout\n\nRecent Encounters:\nNone" in (case.chart_summary or "")
    rows[2]["message"] = "Something else."
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(SyPPMError, match="two different messages"):
        read_syppm(path)


def test_dataset_option_and_cli_read_syppm(tmp_path: Path) -> None:
    samples = _load("syppm", DatasetConfig(path=str(SHIPPED), options={"format": "syppm"}))
    assert [len(s.references) for s in samples] == [4, 3, 1, 1]
    assert samples[0].inputs["chart_summary"].startswith("Demographics:\n58-year-old woman")
    with pytest.raises(ValueError, match="not one of auto, syppm"):
        read_cases(SHIPPED, layout="release")

    renamed = tmp_path / "renamed.csv"
    with SHIPPED.open(encoding="utf-8", newline="") as handle:
        rows = [{("reply" if k == "response" else k): v for k, v in row.items()} for row in csv.DictReader(handle)]
    write_csv(renamed, rows)
    output = tmp_path / "sft.jsonl"
    args = ["drafting", "export-sft", "--cases", str(renamed), "--cases-format", "syppm", "-o", str(output)]
    failed = CliRunner().invoke(app, args)
    assert failed.exit_code != 0
    assert "no column 'response' (for reference)" in failed.output
    done = CliRunner().invoke(app, [*args, "--column", "reference=reply"])
    assert done.exit_code == 0, done.output
    assert len(output.read_text(encoding="utf-8").splitlines()) == 9  # one chat per reply


def test_rag_pool_reads_syppm_with_its_column_map(tmp_path: Path) -> None:
    assert len(reply_pool({"pool": str(SHIPPED), "pool_format": "syppm"})) == 9  # every reply, experts included
    assert len(reply_pool({"pool": str(SHIPPED), "pool_format": "syppm"}, clinician="expert_2")) == 2
    with pytest.raises(SyPPMError, match="no column 'reply'"):
        reply_pool({"pool": str(SHIPPED), "pool_format": "syppm", "pool_columns": {"reference": "reply"}})


def test_a_row_with_an_empty_reply_is_counted_and_named(tmp_path: Path) -> None:
    # issue 48's audit: one blank reply among others was dropped silently ("wrote 1 chats", exit 0)
    with SHIPPED.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows[1]["response"] = "  "
    blank = tmp_path / "blank.csv"
    write_csv(blank, rows)
    output = tmp_path / "sft.jsonl"
    args = ["drafting", "export-sft", "--cases", str(blank), "--cases-format", "syppm", "-o", str(output)]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert re.search(r"blank\.csv: 1 row\(s\) with no reply in column 'response' \(line \d+\)", said), said
