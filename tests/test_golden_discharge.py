"""Golden end-to-end run of DischargeSim (seed 002): a scripted run whose every stored score and every cell of
every report table is worked out by hand below, read back from the **store** and the **report** (`bedside report
--json` and the Markdown file), never from the scorer functions.

The run
-------
Two cases (g1, g2) that differ only in the chief complaint ("chest pain at rest" / "chest pain on exertion"), no
profile (``profiles: none``), schedule ``demo`` (one doctor message per stage, then the closing one), the default
scorers, two doctor models: ``doc-a`` and ``doc-b``, each on its own scripted server (a rule cannot see the model
name, so the server tells them apart). Patient, judge: ``doc-a``'s server. 2 cases × 2 cells = 4 samples.

The case (both): diagnosis "angina"; one test "ECG: normal", no treatment; one medicine aspirin 81 mg, morning,
for "heart"; one appointment "clinic, in one week, for check-up"; one warning sign "chest pain"; one activity
"walk daily"; two questions, q1 (medication_after_discharge) "aspirin" vs distractor "warfarin" vs irrelevant
"a parking ticket", q2 (care_after_discharge) "clinic" vs "the emergency room" vs "a bus timetable".
Reference summary: medications "aspirin daily", primary "angina", secondary "" (rendered "none"), condition
"clear" / "alert" / "walking", instructions "rest", follow-up "clinic".

The rules
---------
- Doctor: every message says "I am Dr. Ay." (``doc-a``) or "I am Dr. Bee." (``doc-b``) and "Take aspirin each
  morning"; ``doc-a`` always adds "See the clinic next week", ``doc-b`` only when its prompt shows "exertion"
  (case g2). Each content message ends with NEXT STAGE, the closing one with FINISHED SIMULATION. So every
  conversation has 7 doctor messages (6 stages + closing, each stage's cap of 1 also met) and 6 patient replies
  "I will take my medicine." (the patient never answers the closing message).
- Checklist: ``doc-a`` writes the complete correct checklist; ``doc-b`` writes diagnosis "angina", no tests, no
  warning signs, aspirin "100 mg" in the evening for "heart", no activity, the clinic appointment.
- Summary: ``doc-a`` writes the reference summary exactly; ``doc-b`` writes it with "aspirin weekly".
- Checklist judge: every judged point is consistent. Fidelity judge: every patient sentence "entailed".
- Rubric judges: the fixed per-criterion scores in ``SCORES`` for ``doc-a``'s material, each 1.0 lower when the
  prompt shows ``doc-b`` ("Dr. Bee" in the conversation, or "weekly" in the summary J4 reads alone).
- Exam: the taker picks the option whose text appears in its material; with none there, the irrelevant option.

Worked by hand (per sample, equal for g1 and g2 unless said; cell means over the two cases)
----------------------------------------------------------------------------------------
- J1 (doc-a): L&D = mean(4.0, 3.5, 3.0) = 3.50; HCC = mean(4.5, 3.5) = 4.00. doc-b: 2.50, 3.00.
- J2 coverage (doc-a), columns IRH MED DX PDT TDS FU = return_indications 2.0, medications 4.5, diagnosis 4.0,
  post_discharge_care 3.0, hospital_course 3.5, follow_up 2.5; avg = 19.5 / 6 = 3.25. doc-b: each − 1, avg 2.25.
- J3 strategy (doc-a), FR GI PI DM EBC RE = 3.0, 2.5, 4.5, 2.0, 3.5, 5.0; avg = 20.5 / 6 = 3.4167 -> "3.42".
  doc-b: 2.0, 1.5, 3.5, 1.0, 2.5, 4.0; avg = 14.5 / 6 = 2.4167 -> "2.42".
- J4 (doc-a) FL CO INF PER = 4.5, 4.0, 3.0, 2.5, avg 14 / 4 = 3.50; doc-b 3.5, 3.0, 2.0, 1.5, avg 2.50.
- J5 (doc-a) SC FAC REL CON = 3.5, 5.0, 4.0, 4.5, avg 17 / 4 = 4.25; doc-b 2.5, 4.0, 3.0, 3.5, avg 3.25.
- AHRQ: the case-derived reference has 9 points: diagnosis, "ECG: normal", "chest pain", "walk daily", the
  appointment, and aspirin's present / dose / times / reason. doc-a: all 9 -> 1.0 ("100.0"). doc-b: diagnosis
  (judged yes), tests empty (no), warning signs empty (no), activities empty (no), appointment (judged yes),
  aspirin present (yes), dose 100 vs 81 (no), times evening vs morning (no), reason (judged yes): 4 / 9 = 0.4444
  -> "44.4".
- ROUGE-L F1 (rouge-score tokens: lower case, letters and digits) of the rendered summary against the rendered
  reference summary, 28 tokens: "discharge medications aspirin daily" (4) + "discharge diagnosis primary angina
  secondary none" (6) + "discharge condition mental status clear level of consciousness alert activity status
  walking" (12) + "discharge instructions rest" (3) + "followup instructions clinic" (3). doc-a: identical,
  1.0 -> "1.00". doc-b: one token differs ("weekly"), LCS 27 of 28 both ways, F1 = 27/28 = 0.9643 -> "0.96".
  (Before issue 29's fix no rougeL was stored: the generic scorer ran first and found no ``sample.references``.)
- concept_f1 (MeSH): doc-a's summary is the reference, doc-b's differs by "daily" -> "weekly", which names no MeSH
  concept: the two concept sets are equal, 1.0 -> "1.00" in both cells. UMLS-F and BLEURT: no index and no
  checkpoint here, absent -> "-".
- Exam A (dialogue): doc-a names aspirin and the clinic: 2/2 = 1.0 per case -> "100.0". doc-b names the clinic only
  for g2: g1 1/2, g2 2/2, mean 0.75 -> "75.0". Exam B (summary): both summaries say "aspirin" and "clinic": 1.0.
  None: the irrelevant option, 0.0.
- Exam table (pooled over questions; categories in the task's order, care before medication): doc-a dialogue all
  4/4 "100.0 (4)", care_after_discharge "100.0 (2)", medication_after_discharge "100.0 (2)"; doc-b dialogue
  "75.0 (4)", care "50.0 (2)" (g1's q2 wrong), medication "100.0 (2)";
  summary rows "100.0" throughout; none rows "0.0" throughout.
- drug_coverage 1.0 (aspirin named), doctor_messages 7, completed 1.0.
- Fidelity: 6 patient sentences per conversation, all informative and entailed: unsupported 0.0, contradicted 0.0;
  the table pools 12 sentences per cell.
- Conversations table: n 2, ended "completed 2", doctor msgs "7.00", every stage reached by 100%, drug cov. "1.00".
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bedside.judges import load_rubric
from bedside.llm import ChatMessage
from bedside.llm.scripted_server import ScriptedServer
from bedside.tasks.discharge.judging import JUDGES
from golden_support import read_report, run_golden

SCORES: dict[str, dict[str, float]] = {  # doc-a's scores; doc-b's are each 1.0 lower
    "discharge_conversation": {
        "linguistic_clarity": 4.0,
        "coherence": 3.5,
        "non_repetition": 3.0,
        "personalization_empathy": 4.5,
        "interaction_appropriateness": 3.5,
    },
    "discharge_content_coverage": {
        "return_indications": 2.0,
        "medications": 4.5,
        "diagnosis": 4.0,
        "post_discharge_care": 3.0,
        "hospital_course": 3.5,
        "follow_up": 2.5,
    },
    "discharge_strategy": {
        "fostering_relationship": 3.0,
        "gathering_information": 2.5,
        "providing_information": 4.5,
        "decision_making": 2.0,
        "enabling_behaviour_change": 3.5,
        "responding_to_emotions": 5.0,
    },
    "discharge_summary_a": {"fluency": 4.5, "coherence": 4.0, "informativeness": 3.0, "personalisation": 2.5},
    "discharge_summary_b": {"semantic_coverage": 3.5, "factuality": 5.0, "relevance": 4.0, "consistency": 4.5},
}

STRUCTURE = {
    "history_and_course": {
        "chief_complaint": "chest pain at rest",
        "history_of_present_illness": "Pressure in the chest for two hours.",
        "past_medical_history": "none",
        "social_history": "lives with family",
        "hospital_course": "Observed overnight; the pain settled.",
    },
    "tests_and_treatments": {"tests": [{"name": "ECG", "result": "normal"}], "treatments": []},
    "diagnoses_and_medications": {
        "primary_diagnoses": ["angina"],
        "medications": [
            {"name": "aspirin", "dose": "81 mg", "frequency": "once a day", "times": ["morning"], "reason": "heart"}
        ],
    },
    "follow_up_and_return": {
        "follow_up": [{"with_whom": "clinic", "when": "in one week", "reason": "check-up"}],
        "return_precautions": ["chest pain"],
        "activity": ["walk daily"],
    },
}
REFERENCE_SUMMARY = {
    "discharge_medications": "aspirin daily",
    "discharge_diagnosis": {"primary": "angina", "secondary": ""},
    "discharge_condition": {"mental_status": "clear", "level_of_consciousness": "alert", "activity_status": "walking"},
    "discharge_instructions": "rest",
    "followup_instructions": "clinic",
}
QUESTIONS = [
    {"id": "q1", "question": "Which medicine do you take for your heart?", "answer": "aspirin",
     "distractor": "warfarin", "irrelevant": "a parking ticket", "category": "medication_after_discharge"},
    {"id": "q2", "question": "Where do you go for your check-up?", "answer": "clinic",
     "distractor": "the emergency room", "irrelevant": "a bus timetable", "category": "care_after_discharge"},
]  # fmt: skip
IRRELEVANT = {q["irrelevant"] for q in QUESTIONS}
NOTE = (
    "Chief Complaint:\n{complaint}\n\nHistory of Present Illness:\nPressure in the chest for two hours.\n\n"
    "Discharge Medications:\n1. Aspirin 81 mg daily\n\nDischarge Condition:\nStable.\n\n"
    "Discharge Instructions:\nReturn for chest pain. Walk daily.\n\nFollowup Instructions:\nClinic in one week."
)


def case(case_id: str, complaint: str) -> dict[str, Any]:
    structure = json.loads(json.dumps(STRUCTURE))
    structure["history_and_course"]["chief_complaint"] = complaint
    return {
        "id": case_id,
        "demographics": {"age": 60, "sex": "male"},
        "note": NOTE.format(complaint=complaint),
        "structure": structure,
        "questions": QUESTIONS,
        "reference_summary": REFERENCE_SUMMARY,
    }


CHECKLIST_A = {
    "diagnosis": "angina",
    "tests_and_treatments": ["ECG: normal"],
    "warning_signs": ["chest pain"],
    "medicines": [{"name": "aspirin", "dose": "81 mg", "reason": "heart", "how_to_take": "with water",
                   "times": ["morning"]}],
    "activities": ["walk daily"],
    "diet": [],
    "appointments": [{"with_whom": "clinic", "when": "in one week", "reason": "check-up"}],
    "pending_tests": [],
}  # fmt: skip
CHECKLIST_B = {
    **CHECKLIST_A,
    "tests_and_treatments": [],
    "warning_signs": [],
    "medicines": [{"name": "aspirin", "dose": "100 mg", "reason": "heart", "how_to_take": "with water",
                   "times": ["evening"]}],
    "activities": [],
}  # fmt: skip


class Rules:
    """The scripted server's rules for one doctor model (``doctor`` = "a" or "b"); patient, exam and judges are
    the same on both servers and only ever asked on ``doc-a``'s."""

    def __init__(self, doctor: str) -> None:
        self.doctor = doctor

    def __call__(self, messages: Sequence[ChatMessage]) -> str:
        system = messages[0].content if messages[0].role == "system" else ""
        user = messages[-1].content
        if "hospital doctor talking with a patient" in system:
            name = "Dr. Ay" if self.doctor == "a" else "Dr. Bee"
            if "Bring the conversation to a close" in system:
                return f"I am {name}. Goodbye. FINISHED SIMULATION"
            clinic = " See the clinic next week." if self.doctor == "a" or "exertion" in system else ""
            return f"I am {name}. Take aspirin each morning.{clinic} NEXT STAGE"
        if "You are a patient in the hospital" in system:
            return "I will take my medicine."
        if "take-home checklist" in system:
            return json.dumps(CHECKLIST_A if self.doctor == "a" else CHECKLIST_B)
        if "discharge summary in" in system:
            medicines = "aspirin daily" if self.doctor == "a" else "aspirin weekly"
            return json.dumps({**REFERENCE_SUMMARY, "discharge_medications": medicines})
        if "patient who has just left the hospital" in system:
            material = user.split("## Question")[0].lower()
            options = re.findall(r"^([ABC])\. (.*)$", user, re.MULTILINE)
            chosen = next((letter for letter, text in options if text.lower() in material), None)
            chosen = chosen or next(letter for letter, text in options if text in IRRELEVANT)
            return json.dumps({"answer": chosen})
        if "check a patient's discharge checklist" in system:
            return json.dumps({"consistent": [True] * len(re.findall(r"^\d+\. Area:", user, re.MULTILINE))})
        if "audit a simulated patient" in system:
            part = user.split("one sentence per line")[1]
            return json.dumps({"labels": ["entailed"] * len(re.findall(r"^\d+\. ", part, re.MULTILINE))})
        return self.judge(system, user)

    @staticmethod
    def judge(system: str, user: str) -> str:
        lower = 1.0 if ("Dr. Bee" in user or "weekly" in user) else 0.0
        for rubric_id in JUDGES.values():
            rubric = load_rubric(rubric_id)
            if all(f'"{c.name}"' in system for c in rubric.criteria):
                evidence = {
                    "quote": {"quote": "aspirin", "supports": True},
                    "snippet": {"snippet": "N/A", "addresses": False, "issue": "omitted"},
                    "pair": {"summary_span": "clinic", "reference_span": "N/A", "match": False,
                             "issue": "hallucinated"},
                }[rubric.evidence_kind]  # fmt: skip
                return json.dumps(
                    {
                        c.name: {
                            "score": SCORES[rubric_id][c.name] - lower,
                            "justification": "The doctor covered this point in a clear and specific way for him.",
                            "evidence": [evidence],
                        }
                        for c in rubric.criteria
                    }
                )
        raise AssertionError(f"no rule for this call: {system[:200]}")


CASES = (("g1", "chest pain at rest"), ("g2", "chest pain on exertion"))


def _run(tmp_path: Path) -> tuple[str, str, list[Any], str, str]:
    """Run the golden config through `bedside run`; (cell a, cell b, stored rows, store path, run id)."""
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(case(i, c)) + "\n" for i, c in CASES), encoding="utf-8")
    with ScriptedServer(rules=Rules("a")) as server_a, ScriptedServer(rules=Rules("b")) as server_b:
        config = {
            "name": "golden-discharge",
            "task": "discharge",
            "datasets": {"golden": {"path": str(cases), "options": {"profiles": "none"}}},
            "systems": {"sim": {"type": "dischargesim", "options": {"schedule": "demo"}}},
            "models": {
                "system": [server_a.model_name("doc-a"), server_b.model_name("doc-b")],
                "patient": server_a.model_name("patient"),
                "judge": server_a.model_name("judge"),
            },
            "concurrency": 2,
        }
        store, run_id, rows = run_golden(tmp_path, config)
    cells = sorted({r.cell for r in rows})
    cell_a = next(c for c in cells if "doc-a" in c)
    cell_b = next(c for c in cells if "doc-b" in c)
    return cell_a, cell_b, rows, store, run_id


GoldenRun = tuple[str, str, list[Any], str, str]


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> GoldenRun:
    return _run(tmp_path_factory.mktemp("golden-discharge"))


@pytest.fixture(scope="module")
def reported(golden: GoldenRun) -> tuple[dict[str, Any], str]:
    """`bedside report --json`, and the Markdown file `bedside report` writes (built by the same function; its
    HTML twin draws 37 plots, minutes on a loaded CPU)."""
    _, _, _, store, run_id = golden
    return read_report(store, run_id)


A_SCORES = {
    "ld": 3.5, "hcc": 4.0,
    "coverage_irh": 2.0, "coverage_med": 4.5, "coverage_dx": 4.0, "coverage_pdt": 3.0, "coverage_tds": 3.5,
    "coverage_fu": 2.5, "coverage_avg": 3.25,
    "strategy_fr": 3.0, "strategy_gi": 2.5, "strategy_pi": 4.5, "strategy_dm": 2.0, "strategy_ebc": 3.5,
    "strategy_re": 5.0, "strategy_avg": 20.5 / 6,
    "summary_a_fl": 4.5, "summary_a_co": 4.0, "summary_a_inf": 3.0, "summary_a_per": 2.5, "summary_a_avg": 3.5,
    "summary_b_sc": 3.5, "summary_b_fac": 5.0, "summary_b_rel": 4.0, "summary_b_con": 4.5, "summary_b_avg": 4.25,
}  # fmt: skip
B_SCORES = {name: value - 1.0 for name, value in A_SCORES.items()}
COMMON = {
    "exam_acc_summary": 1.0, "exam_acc_none": 0.0, "rougeL_a": 1.0, "concept_f1": 1.0, "drug_coverage": 1.0,
    "doctor_messages": 7.0, "completed": 1.0, "fidelity_unsupported": 0.0, "fidelity_contradicted": 0.0,
}  # fmt: skip


def test_stored_scores_are_the_hand_worked_values(golden: GoldenRun) -> None:
    cell_a, cell_b, rows, _, _ = golden
    assert len(rows) == 4
    assert all(r.status == "ok" for r in rows)
    by = {(r.cell, r.sample_id.split("/")[0]): r.scores for r in rows}
    # rougeL from the task's scorer (summary vs reference summary), not the generic one (no references: absent)
    assert by[(cell_a, "g1")]["rougeL"] == pytest.approx(1.0)
    assert by[(cell_b, "g1")]["rougeL"] == pytest.approx(27 / 28)
    assert by[(cell_b, "g2")]["rougeL"] == pytest.approx(27 / 28)
    for case_id in ("g1", "g2"):
        a, b = by[(cell_a, case_id)], by[(cell_b, case_id)]
        for name, value in A_SCORES.items():
            assert a[name] == pytest.approx(value), (name, case_id)
            assert b[name] == pytest.approx(B_SCORES[name]), (name, case_id)
        assert a["ahrq_acc"] == pytest.approx(1.0)
        assert b["ahrq_acc"] == pytest.approx(4 / 9)
        assert a["exam_acc_dialogue"] == 1.0
        assert b["exam_acc_dialogue"] == (0.5 if case_id == "g1" else 1.0)
        for scores in (a, b):
            for name in ("exam_acc_summary", "exam_acc_none", "concept_f1", "drug_coverage", "doctor_messages"):
                assert scores[name] == pytest.approx(COMMON[name]), name
            for name in ("completed", "fidelity_unsupported", "fidelity_contradicted"):
                assert scores[name] == COMMON[name], name
    # every default scorer is stored; the J4/J5 per-criterion ones are defaults now
    assert "summary_a_fl" in rows[0].scores
    assert "summary_b_con" in rows[0].scores


def _table(report: dict[str, Any], prefix: str) -> dict[str, Any]:
    return next(t for t in report["tables"] if t["title"].startswith(prefix))


def _md_rows(markdown: str, title_prefix: str) -> list[list[str]]:
    """The rows of a Markdown table under the heading that starts with ``title_prefix``."""
    part = markdown.split(f"## {title_prefix}", 1)[1]
    lines = [line for line in part.splitlines()[1:] if line.startswith("|")]
    table = []
    for line in lines:
        if line.startswith("|---"):
            continue
        table.append([c.strip() for c in line.strip().strip("|").split("|")])
        if len(table) > 1 and not part.split(line, 1)[1].lstrip("\n").startswith("|"):
            break
    return table


def test_table_one_and_two_cells_are_the_hand_worked_values(
    golden: GoldenRun, reported: tuple[dict[str, Any], str]
) -> None:
    cell_a, cell_b = golden[:2]
    report, markdown = reported
    one = _table(report, "DischargeSim Table 1")
    assert one["columns"] == ["cell", "L&D", "HCC", "IRH", "MED", "DX", "PDT", "TDS", "FU", "avg",
                              "FR", "GI", "PI", "DM", "EBC", "RE", "avg", "Exam A %", "AHRQ %"]  # fmt: skip
    expected_one = {
        cell_a: ["3.50", "4.00", "2.00", "4.50", "4.00", "3.00", "3.50", "2.50", "3.25",
                 "3.00", "2.50", "4.50", "2.00", "3.50", "5.00", "3.42", "100.0", "100.0"],
        cell_b: ["2.50", "3.00", "1.00", "3.50", "3.00", "2.00", "2.50", "1.50", "2.25",
                 "2.00", "1.50", "3.50", "1.00", "2.50", "4.00", "2.42", "75.0", "44.4"],
    }  # fmt: skip
    assert {row[0]: row[1:] for row in one["rows"]} == expected_one

    two = _table(report, "DischargeSim Table 2")
    assert two["columns"] == ["cell", "ROUGE-L", "BLEURT", "UMLS-F", "concept F1", "FL", "CO", "INF", "PER", "avg",
                              "SC", "FAC", "REL", "CON", "avg", "Exam B %"]  # fmt: skip
    expected_two = {
        cell_a: ["1.00", "-", "-", "1.00", "4.50", "4.00", "3.00", "2.50", "3.50",
                 "3.50", "5.00", "4.00", "4.50", "4.25", "100.0"],
        cell_b: ["0.96", "-", "-", "1.00", "3.50", "3.00", "2.00", "1.50", "2.50",
                 "2.50", "4.00", "3.00", "3.50", "3.25", "100.0"],
    }  # fmt: skip
    assert {row[0]: row[1:] for row in two["rows"]} == expected_two

    # the Markdown report prints the same cells
    for title, expected in (("DischargeSim Table 1", expected_one), ("DischargeSim Table 2", expected_two)):
        rows = _md_rows(markdown, title)
        assert {row[0]: row[1:] for row in rows[1:]} == expected


def test_the_other_tables_and_the_methods_note(golden: GoldenRun, reported: tuple[dict[str, Any], str]) -> None:
    cell_a, cell_b = golden[:2]
    report, markdown = reported
    exam = _table(report, "Comprehension exam")
    assert exam["columns"] == [
        "cell", "setting", "all", "care_after_discharge", "medication_after_discharge", "unparsed",
    ]  # fmt: skip
    assert exam["rows"] == [
        [cell_a, "dialogue", "100.0 (4)", "100.0 (2)", "100.0 (2)", "0"],
        [cell_a, "summary", "100.0 (4)", "100.0 (2)", "100.0 (2)", "0"],
        [cell_a, "none", "0.0 (4)", "0.0 (2)", "0.0 (2)", "0"],
        [cell_b, "dialogue", "75.0 (4)", "50.0 (2)", "100.0 (2)", "0"],
        [cell_b, "summary", "100.0 (4)", "100.0 (2)", "100.0 (2)", "0"],
        [cell_b, "none", "0.0 (4)", "0.0 (2)", "0.0 (2)", "0"],
    ]
    assert exam["note"].endswith("Unparsed answers: none.")
    conversations = _table(report, "Conversations")
    reached = ["100"] * 7
    assert conversations["rows"] == [
        [cell_a, "2", "completed 2", "7.00", *reached, "1.00"],
        [cell_b, "2", "completed 2", "7.00", *reached, "1.00"],
    ]
    fidelity = _table(report, "Simulator fidelity")
    assert [row[2:] for row in fidelity["rows"]] == [["12", "12", "0.0", "0.0"]] * len(fidelity["rows"])
    assert {row[0] for row in fidelity["rows"]} == {cell_a, cell_b}
    assert not any(t["title"].startswith("Failed and skipped") for t in report["tables"])  # nothing failed

    # the per-cell means with their intervals: the same numbers (8 decimals, no rounding by a table)
    means = {c["cell"]: {m["metric"]: m for m in c["metrics"]} for c in report["cells"]}
    assert means[cell_b]["rougeL"]["mean"] == pytest.approx(27 / 28)
    assert means[cell_b]["rougeL"]["n"] == 2
    assert means[cell_b]["exam_acc_dialogue"]["mean"] == pytest.approx(0.75)

    methods = report["methods"]
    assert (
        "rougeL: discharge (the task's own, over bedside's generic one), ROUGE-L F1 (rouge-score, no stemming) of "
        "the written summary (rendered) against the case's reference summary; higher is better"
    ) in methods
    assert "## Methods: scorers" in markdown
    assert "- rougeL: discharge (the task's own, over bedside's generic one)" in markdown


GARBAGE = "I feel fine, thank you."  # names no option: no letter, no option's text


class GarbageExamRules(Rules):
    """``doc-a``'s rules, except that the exam-taker answers garbage (after every re-ask): to every question when
    it reads the conversation (setting A), to the medication question only when it reads the summary (B)."""

    def __call__(self, messages: Sequence[ChatMessage]) -> str:
        system = messages[0].content if messages[0].role == "system" else ""
        if "patient who has just left the hospital" in system:
            asked = next(m.content for m in messages if m.role == "user")  # the question, also on a re-ask
            if "## Your conversation with the doctor" in asked:
                return GARBAGE
            if "## Your discharge summary" in asked and "Which medicine" in asked:
                return GARBAGE
        return super().__call__(messages)


@pytest.fixture(scope="module")
def garbage_exam(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[Any], dict[str, Any], str]:
    """The golden cases run with ``doc-a`` only, its exam-taker answering garbage; (cell, rows, report, Markdown)."""
    folder = tmp_path_factory.mktemp("golden-discharge-garbage")
    cases = folder / "cases.jsonl"
    cases.write_text("".join(json.dumps(case(i, c)) + "\n" for i, c in CASES), encoding="utf-8")
    with ScriptedServer(rules=GarbageExamRules("a")) as server:
        config = {
            "name": "golden-discharge-garbage-exam",
            "task": "discharge",
            "datasets": {"golden": {"path": str(cases), "options": {"profiles": "none"}}},
            "systems": {"sim": {"type": "dischargesim", "options": {"schedule": "demo", "judges": ["conversation"]}}},
            "models": {m: server.model_name("doc-a") for m in ("system", "patient", "judge")},
        }
        # The exam, the task's headline metric, scores nothing: the run fails as a run with errors does.
        store, run_id, rows = run_golden(folder, config, unscored=["exam_acc_dialogue"])
    report, markdown = read_report(store, run_id)
    return rows[0].cell, rows, report, markdown


def test_an_exam_with_no_readable_answer_is_absent_with_its_count(
    garbage_exam: tuple[str, list[Any], dict[str, Any], str],
) -> None:
    """Issue 35: a failed exam shows absent with a count, never 0.0, from the store through the report.

    Worked by hand: setting A, both cases: q1 and q2 unparsed -> no accuracy (None), stored as the step's failure;
    the exam table's dialogue row "-" in every column, unparsed 4 (2 questions x 2 cases); Table 1's Exam A % "-".
    Setting B: q1 unparsed, q2 ("clinic", in the summary) right -> 1/1 = 1.0 per case (the unparsed answer is left
    out, not scored wrong: 0.5 would be the old rule); the row "100.0 (2)" overall and for care_after_discharge,
    "-" for medication_after_discharge (its only question unparsed in both cases), unparsed 2. Setting none: the
    irrelevant option, read and wrong: a measured 0.0, unparsed 0.
    """
    cell, rows, report, markdown = garbage_exam
    assert len(rows) == 2
    assert all(r.status == "ok" for r in rows)
    for row in rows:
        assert row.scores.get("exam_acc_dialogue") is None
        assert row.scores["exam_acc_summary"] == 1.0
        assert row.scores["exam_acc_none"] == 0.0
        extra = row.output["extra"]
        dialogue = extra["exam"]["dialogue"]
        assert dialogue["accuracy"] is None
        assert sorted(dialogue["unparsed"]) == ["q1", "q2"]
        assert extra["exam"]["summary"]["unparsed"] == ["q1"]
        assert extra["errors"]["exam_dialogue"] == "all 2 exam answers unparsed (no option named)"
        assert "exam_summary" not in extra["errors"]

    means = {m["metric"]: m for m in next(c for c in report["cells"] if c["cell"] == cell)["metrics"]}
    assert "exam_acc_dialogue" not in means  # no sample has a value: no mean, no 0.0
    assert (means["exam_acc_summary"]["mean"], means["exam_acc_summary"]["n"]) == (1.0, 2)

    exam = _table(report, "Comprehension exam")
    assert exam["rows"] == [
        [cell, "dialogue", "-", "-", "-", "4"],
        [cell, "summary", "100.0 (2)", "100.0 (2)", "-", "2"],
        [cell, "none", "0.0 (4)", "0.0 (2)", "0.0 (2)", "0"],
    ]
    assert exam["note"].endswith(f"Unparsed answers: {cell}/dialogue: 4 of 4; {cell}/summary: 2 of 4.")
    one, two = _table(report, "DischargeSim Table 1"), _table(report, "DischargeSim Table 2")
    assert one["rows"][0][one["columns"].index("Exam A %")] == "-"
    assert two["rows"][0][two["columns"].index("Exam B %")] == "100.0"
    assert one["note"].endswith(f"{cell}: 4 of 4, 2 exam(s) absent.")
    assert two["note"].endswith(f"{cell}: 2 of 4, 0 exam(s) absent.")
    failed = _table(report, "Failed and skipped steps")
    assert [cell, "exam_dialogue", "2", "0", "all 2 exam answers unparsed (no option named)"] in failed["rows"]

    md_exam = {tuple(r[:2]): r[2:] for r in _md_rows(markdown, "Comprehension exam")[1:]}
    assert md_exam[(cell, "dialogue")] == ["-", "-", "-", "4"]
    assert md_exam[(cell, "summary")] == ["100.0 (2)", "100.0 (2)", "-", "2"]
    assert "0.0 %" not in markdown
