"""Readers for the gold data the seed papers' authors describe, on synthetic files written here in those layouts:
DischargeSim's MIMIC-IV discharge notes with category-labelled exam questions, and MedAgent's case CSV. Bad files
are errors naming the file, the line and the column."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from bedside.inputs import InputError
from bedside.runs.config import DatasetConfig
from bedside.tasks.discharge.readers import CaseFormatError, category_of, read_mimic_cases
from bedside.tasks.discharge.task import TASK as DISCHARGE
from bedside.tasks.sensemaking.readers import read_medagent_csv
from bedside.tasks.sensemaking.task import TASK as SENSEMAKING

NOTE_A = """Name:  ___  Unit No:   ___
Sex:   F
Service: MEDICINE
Chief Complaint:
shortness of breath
Discharge Diagnosis:
Community-acquired pneumonia
Discharge Medications:
1. Amoxicillin 1 g PO TID for 5 days
Discharge Condition:
Mental Status: Clear and coherent.
"""
NOTE_B = "Sex:   M\nChief Complaint:\nchest pain\nDischarge Diagnosis:\nNSTEMI\n"
NOTE_C = "Sex:   F\nChief Complaint:\nfall\n"  # no questions: not a case

QUESTION_HEADER = ["note_id", "question", "answer", "distractor", "irrelevant", "category"]


def _csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _notes(tmp_path: Path) -> Path:
    header = ["note_id", "subject_id", "hadm_id", "note_type", "note_seq", "charttime", "storetime", "text"]
    rows = [
        ["10000032-DS-21", "10000032", "22595853", "DS", "21", "2180-05-07 00:00:00", "", NOTE_A],
        ["10000084-DS-17", "10000084", "23052089", "DS", "17", "2160-11-25 00:00:00", "", NOTE_B],
        ["10000099-DS-2", "10000099", "21111111", "DS", "2", "2150-01-01 00:00:00", "", NOTE_C],
    ]
    return _csv(tmp_path / "discharge.csv", header, rows)


def _questions(tmp_path: Path, rows: list[list[str]] | None = None, header: list[str] | None = None) -> Path:
    rows = rows or [
        [
            "10000084-DS-17",
            "Why were you admitted?",
            "A heart attack",
            "A broken rib",
            "Sex: M",
            "Diagnosis during hospital stay",
        ],
        [
            "10000032-DS-21",
            "How long do you take amoxicillin?",
            "5 days",
            "5 weeks",
            "MEDICINE",
            "Medication after discharge",
        ],
        ["10000032-DS-21", "What was your diagnosis?", "Pneumonia", "Asthma", "Unit No", "diagnosis_at_discharge"],
        [
            "10000032-DS-21",
            "Which test was done?",
            "Chest X-ray",
            "Head CT",
            "Service",
            "Procedure(interventions/tests) during hospital stay",
        ],
    ]
    return _csv(tmp_path / "questions.csv", header or QUESTION_HEADER, rows)


def test_mimic_notes_with_labelled_questions(tmp_path: Path) -> None:
    cases = read_mimic_cases(_notes(tmp_path), _questions(tmp_path))
    assert [c.id for c in cases] == ["10000084-DS-17", "10000032-DS-21"]  # the questions' order; no-question note out
    pneumonia = cases[1]
    assert pneumonia.note == NOTE_A.strip()  # a quoted note spanning lines is read whole
    assert pneumonia.demographics.sex == "female"  # from the note's Sex: line without patients.csv
    assert [q.category for q in pneumonia.questions] == [
        "medication_after_discharge",
        "diagnosis_at_discharge",
        "tests_treatments_in_stay",
    ]
    assert [q.id for q in pneumonia.questions] == ["q1", "q2", "q3"]
    assert pneumonia.structure is None  # parsed by the helper role at run time
    assert cases[0].demographics.sex == "male"


def test_guideline_categories_in_any_spelling() -> None:
    assert category_of("Procedure(follow up/tests/interventions) after discharge") == "care_after_discharge"
    assert category_of("procedure follow-up tests interventions after discharge") == "care_after_discharge"
    assert category_of("MEDICATION DURING HOSPITAL STAY") == "medication_in_stay"
    assert category_of("return_precautions") == "return_precautions"
    assert category_of("discharge diet") is None


def test_patients_and_reference_summaries(tmp_path: Path) -> None:
    patients = _csv(
        tmp_path / "patients.csv",
        ["subject_id", "gender", "anchor_age", "anchor_year", "anchor_year_group", "dod"],
        [["10000032", "F", "52", "2180", "2014 - 2016", ""], ["10000084", "M", "72", "2160", "2017 - 2019", ""]],
    )
    summary = {
        "discharge_medications": "Amoxicillin 1 g three times a day for 5 days",
        "discharge_diagnosis": {"primary": "Community-acquired pneumonia"},
        "discharge_condition": {"mental_status": "Clear and coherent"},
        "discharge_instructions": "Finish the antibiotic.",
        "followup_instructions": "See your doctor in one week.",
    }
    summaries = tmp_path / "summaries.jsonl"
    summaries.write_text(json.dumps({"note_id": "10000032-DS-21", "reference_summary": summary}) + "\n")
    cases = read_mimic_cases(_notes(tmp_path), _questions(tmp_path), patients=patients, summaries=summaries)
    assert (cases[1].demographics.age, cases[1].demographics.sex) == (52, "female")
    assert (cases[0].demographics.age, cases[0].demographics.sex) == (72, "male")
    assert cases[1].reference_summary is not None
    assert cases[1].reference_summary.discharge_diagnosis.primary == "Community-acquired pneumonia"
    assert cases[0].reference_summary is None


def test_column_map(tmp_path: Path) -> None:
    header = ["hadm_note", "question", "answer", "distractor", "irrelevant", "label"]
    questions = _questions(tmp_path, header=header)
    cases = read_mimic_cases(
        _notes(tmp_path), questions, columns={"questions": {"note_id": "hadm_note", "category": "label"}}
    )
    assert len(cases) == 2


@pytest.mark.parametrize(
    ("header", "rows", "where"),
    [
        (
            ["note_id", "question", "answer", "distractor", "category"],
            None,
            "questions.csv:1: the questions file has no column 'irrelevant'",
        ),
        (
            None,
            [["10000032-DS-21", "Q?", "a", "b", "c", "Discharge diet"]],
            "questions.csv:2: field category: unknown category 'Discharge diet'",
        ),
        (
            None,
            [["10000032-DS-21", "Q?", "a", "", "c", "diagnosis_in_stay"]],
            "questions.csv:2: field distractor: empty",
        ),
        (
            None,
            [["10000032-DS-21", "Q?", "a", "A ", "c", "diagnosis_in_stay"]],
            "questions.csv:2: question q1: the three options must differ",
        ),
        (
            None,
            [
                ["10000032-DS-21", "Q?", "a", "b", "c", "diagnosis_in_stay"],
                ["nope", "Q?", "a", "b", "c", "diagnosis_in_stay"],
            ],
            "questions.csv:3: field note_id: questions for note nope but",
        ),
    ],
)
def test_bad_question_files_name_file_line_and_column(
    tmp_path: Path, header: list[str] | None, rows: list[list[str]] | None, where: str
) -> None:
    questions = (
        _questions(tmp_path, rows=rows, header=header)
        if header is None
        else _csv(tmp_path / "questions.csv", header, [["10000032-DS-21", "Q?", "a", "b", "diagnosis_in_stay"]])
    )
    with pytest.raises(CaseFormatError) as caught:
        read_mimic_cases(_notes(tmp_path), questions)
    assert where in str(caught.value)


def test_bad_notes_file_names_the_column(tmp_path: Path) -> None:
    notes = _csv(tmp_path / "discharge.csv", ["note_id", "subject_id", "body"], [["10000032-DS-21", "1", NOTE_A]])
    with pytest.raises(
        CaseFormatError,
        match=r"discharge.csv:1: the notes file has no column 'text' \(for text\); "
        r"its columns are note_id, subject_id, body",
    ):
        read_mimic_cases(notes, _questions(tmp_path))
    notes = _csv(tmp_path / "discharge.csv", ["note_id", "text"], [["x", "a"], ["10000084-DS-17", " "]])
    with pytest.raises(CaseFormatError, match=r"discharge.csv:3: field text: empty note"):
        read_mimic_cases(
            notes, _questions(tmp_path, rows=[["10000084-DS-17", "Q?", "a", "b", "c", "diagnosis_in_stay"]])
        )


def test_discharge_dataset_format_mimic(tmp_path: Path) -> None:
    config = DatasetConfig(
        path=str(_notes(tmp_path)),
        options={"format": "mimic", "questions": str(_questions(tmp_path)), "profiles": "one_at_a_time"},
    )
    samples = DISCHARGE.load("gold", config)
    assert len(samples) == 2 * 8  # two notes with questions × the paper's 8 one-dimension conditions
    assert samples[0].inputs["case"]["questions"][0]["category"] == "diagnosis_in_stay"
    with pytest.raises(ValueError, match=r"format mimic needs a path to the notes CSV and options\.questions"):
        DISCHARGE.load("gold", DatasetConfig(path=str(_notes(tmp_path)), options={"format": "mimic"}))


MEDAGENT_HEADER = ["id", "clinical_case_study", "mental_health_classification"]
VIGNETTE = (
    "A 34-year-old woman comes to the physician because of low mood for 3 months. She sleeps poorly and has lost "
    "interest in her hobbies. Temperature is 37 C, pulse 78/min."
)


def test_medagent_csv_keeps_yes_rows(tmp_path: Path) -> None:
    path = _csv(
        tmp_path / "cases.csv",
        MEDAGENT_HEADER,
        [
            ["17", VIGNETTE, "Yes"],
            ["18", "A 60-year-old man with a hip fracture.", "No"],
            ["23", VIGNETTE + "\nNew line.", " yes "],
        ],
    )
    cases = read_medagent_csv(path)
    assert [c.id for c in cases] == ["medqa-17", "medqa-23"]
    assert cases[0].vignette == VIGNETTE
    assert cases[0].facts is None  # decomposed by the helper role at run time
    assert cases[0].diagnosis is None  # derived at run time and marked unreviewed
    assert cases[1].vignette is not None
    assert cases[1].vignette.endswith("New line.")


@pytest.mark.parametrize(
    ("header", "rows", "where"),
    [
        (
            ["id", "case", "mental_health_classification"],
            [["1", VIGNETTE, "Yes"]],
            "cases.csv:1: the MedAgent case CSV has no column 'clinical_case_study' (for vignette); "
            "its columns are id, case, mental_health_classification",
        ),
        (
            MEDAGENT_HEADER,
            [["1", VIGNETTE, "Yes"], ["2", VIGNETTE, "maybe"]],
            "cases.csv:3: field mental_health_classification: expected Yes or No, not 'maybe'",
        ),
        (MEDAGENT_HEADER, [["1", "", "Yes"]], "cases.csv:2: field clinical_case_study: empty on a row marked Yes"),
        (
            MEDAGENT_HEADER,
            [["1", VIGNETTE, "Yes"], ["1", VIGNETTE, "Yes"]],
            "cases.csv:3: field id: case id '1' already on line 2",
        ),
    ],
)
def test_bad_medagent_csv_names_file_line_and_column(
    tmp_path: Path, header: list[str], rows: list[list[str]], where: str
) -> None:
    with pytest.raises(InputError) as caught:
        read_medagent_csv(_csv(tmp_path / "cases.csv", header, rows))
    assert where in str(caught.value)


def test_sensemaking_dataset_format_medagent_csv(tmp_path: Path) -> None:
    path = _csv(tmp_path / "cases.csv", ["case_id", "text", "mh"], [["5", VIGNETTE, "Yes"], ["6", VIGNETTE, "No"]])
    options = {
        "format": "medagent_csv",
        "columns": {"id": "case_id", "vignette": "text", "classification": "mh"},
        "personas": "all",
    }
    samples = SENSEMAKING.load("cases", DatasetConfig(path=str(path), options=options))
    assert len(samples) == 10  # one case × the paper's 5 traits × 2 literacy levels
    assert samples[0].inputs["case"]["vignette"] == VIGNETTE


def test_discharge_paper_config_runs_on_the_gold_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`bedside run configs/papers/002-discharge.yaml` with the gold set in the MIMIC layout and the models --set
    to a scripted endpoint: the note is parsed by the helper, the paper schedule runs, the exam is scored by
    category from the CSV's labels, and the report holds Table 1 and Table 2."""
    import asyncio

    from bedside.llm.scripted_server import ScriptedServer
    from bedside.runs import Store, execute, load_config
    from bedside.runs.report import build_report
    from test_discharge import Script  # the scripted discharge endpoint shared with the discharge tests

    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    questions = _questions(
        tmp_path,
        rows=[
            ["10000032-DS-21", "Which antibiotic?", "Amoxicillin", "Azithromycin", "Sex", "Medication after discharge"],
            ["10000032-DS-21", "What was found?", "Pneumonia", "Asthma", "Service", "Diagnosis in discharge"],
        ],
    )
    script = Script(signal_at={"medications": 2})
    with ScriptedServer(rules=script) as server:
        overrides = [
            f"models.system={server.model_name('Qwen2.5-7B-Instruct')}",
            *(f"models.{role}={server.model_name(role)}" for role in ("patient", "judge", "helper")),
            f"datasets.gold={{path: {_notes(tmp_path)}, options: {{format: mimic, questions: {questions}, "
            "profiles: literacy}}",
            f"store={tmp_path / 'store.sqlite'}",
        ]
        config = load_config("configs/papers/002-discharge.yaml", overrides)
        summary = asyncio.run(execute(config, cache=False))
    assert summary.errors == 0
    assert "parse" in script.sent  # the MIMIC note had no structure: the helper parsed it
    store = Store(config.store)
    try:
        rows = store.results(config.run_id)
        report = build_report(store, config.run_id)
    finally:
        store.close()
    assert [r.sample_id for r in rows] == ["10000032-DS-21/literacy=high", "10000032-DS-21/literacy=low"]
    exam = rows[0].output["extra"]["exam"]["dialogue"] if rows[0].output else {}
    assert set(exam["by_category"]) == {"medication_after_discharge", "diagnosis_at_discharge"}
    titles = [t.title for t in report.tables]
    assert any(t.startswith("DischargeSim Table 1") for t in titles)
    assert any(t.startswith("DischargeSim Table 2") for t in titles)


def test_sensemaking_paper_config_runs_on_the_case_csv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`bedside run configs/papers/004-sensemaking.yaml` on a MedAgent case CSV against a scripted endpoint: the
    vignette is prepared by the helper, both sensemakers converse, and the HTML report draws Figures 4 and 5."""
    import asyncio

    from bedside.llm.scripted_server import ScriptedServer
    from bedside.runs import Store, execute, load_config
    from bedside.runs.report import build_report, html_page
    from bedside.testing.scripted_answers import SensemakingScript

    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    cases = _csv(tmp_path / "cases.csv", MEDAGENT_HEADER, [["17", VIGNETTE, "Yes"], ["18", VIGNETTE, "No"]])
    script = SensemakingScript(stays={"gathering": 1})
    with ScriptedServer(rules=script) as server:
        overrides = [
            f"models.system=[{server.model_name('o1')}, {server.model_name('r1')}]",
            *(f"models.{role}={server.model_name(role)}" for role in ("patient", "judge", "helper")),
            f"datasets.cases={{path: {cases}, options: {{format: medagent_csv, personas: [neuroticism-basic]}}}}",
            f"store={tmp_path / 'store.sqlite'}",
        ]
        config = load_config("configs/papers/004-sensemaking.yaml", overrides)
        summary = asyncio.run(execute(config, cache=False))
    assert summary.errors == 0
    store = Store(config.store)
    try:
        rows = store.results(config.run_id)
        report = build_report(store, config.run_id)
    finally:
        store.close()
    assert sorted(r.sample_id for r in rows) == ["medqa-17/neuroticism-basic"] * 2
    page = html_page(report)
    assert 'alt="MedAgent Figure 4: HBM metrics and flow by model (mean, 95% CI)"' in page
    assert 'alt="MedAgent Figure 5: diagnostic accuracy by model (mean, 95% CI)"' in page
