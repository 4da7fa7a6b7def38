"""DischargeSim on the shared engine, against the scripted server: schedules, who sees what, documents, exam,
judges, failures, replay, and a whole run with its tables."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bedside.judges import load_rubric
from bedside.llm import ROLES, ChatMessage, Model, RetriesExhaustedError, Role, get_model
from bedside.llm.scripted_server import ScriptedServer
from bedside.runs.config import DatasetConfig
from bedside.runs.task import Output, Sample, SampleContext
from bedside.tasks.discharge.cases import DischargeCase
from bedside.tasks.discharge.documents import Checklist, ChecklistMedicine, reference_checklist
from bedside.tasks.discharge.judging import JUDGES
from bedside.tasks.discharge.profiles import ProfileError, profiles
from bedside.tasks.discharge.readers import CaseFormatError, read_cases
from bedside.tasks.discharge.schedules import STAGE_IDS
from bedside.tasks.discharge.scoring import checklist_points, drug_coverage
from bedside.tasks.discharge.task import TASK

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "external" / "michaels6060_DischargeSim" / "data"

NOTE = """Chief Complaint:
shortness of breath

History of Present Illness:
Cough and fever for three days.

Brief Hospital Course:
Treated for pneumonia with IV ceftriaxone, improved.

Discharge Medications:
1. Amoxicillin 875 mg twice a day for 5 days

Discharge Condition:
Alert, ambulatory.

Discharge Instructions:
Return if fever over 101 F.

Followup Instructions:
Dr. Lee in one week."""

CASE: dict[str, Any] = {
    "id": "t1",
    "demographics": {"age": 70, "sex": "female"},
    "note": NOTE,
    "structure": {
        "history_and_course": {
            "chief_complaint": "shortness of breath",
            "history_of_present_illness": "Cough and fever for three days.",
            "past_medical_history": "high blood pressure",
            "social_history": "lives alone",
            "hospital_course": "Treated for pneumonia with IV ceftriaxone, improved.",
        },
        "tests_and_treatments": {"tests": [{"name": "chest x-ray", "result": "left lower lobe opacity"}],
                                 "treatments": ["IV ceftriaxone"]},
        "diagnoses_and_medications": {
            "primary_diagnoses": ["community-acquired pneumonia"],
            "medications": [
                {"name": "amoxicillin", "dose": "875 mg", "frequency": "twice a day", "times": ["morning", "evening"],
                 "reason": "pneumonia", "instructions": "with food, for 5 days", "status": "new"},
                {"name": "lisinopril", "dose": "10 mg", "frequency": "once a day", "times": ["morning"],
                 "reason": "blood pressure"},
            ],
        },
        "follow_up_and_return": {
            "follow_up": [{"with_whom": "Dr. Lee", "when": "in one week", "reason": "check the lungs"}],
            "return_precautions": ["fever over 101 F"],
            "activity": ["walk a little every day"],
        },
    },
    "questions": [
        {"id": "q1", "question": "Which antibiotic do you take at home?", "answer": "Amoxicillin",
         "distractor": "Ceftriaxone", "irrelevant": "Chest x-ray", "category": "medication_after_discharge"},
        {"id": "q2", "question": "When should you come back?", "answer": "Fever over 101 F",
         "distractor": "Any cough at all", "irrelevant": "Lives alone", "category": "return_precautions"},
    ],
    "reference_summary": {
        "discharge_medications": "Amoxicillin twice a day for five days; keep taking lisinopril.",
        "discharge_diagnosis": {"primary": "Pneumonia"},
        "discharge_condition": {"mental_status": "clear", "level_of_consciousness": "alert",
                                "activity_status": "walks on her own"},
        "discharge_instructions": "Come back if the fever goes above 101.",
        "followup_instructions": "See Dr. Lee next week.",
    },
}  # fmt: skip

CHECKLIST = {
    "diagnosis": "pneumonia",
    "tests_and_treatments": ["chest x-ray"],
    "warning_signs": ["fever over 101"],
    "medicines": [
        {"name": "Amoxicillin", "dose": "875mg", "reason": "lung infection", "how_to_take": "with food",
         "times": ["morning", "evening"]},
    ],
    "activities": [],
    "diet": [],
    "appointments": [{"with_whom": "Dr. Lee", "when": "next week", "reason": "lungs"}],
    "pending_tests": [],
}  # fmt: skip
REFERENCE_SCHEMA_CHECKLIST = {
    "Diagnosis": "pneumonia",
    "Exercises": "short walks",
    "Food": "",
    "Activites or Food to Avoid": "smoking",
    "Medicines": {
        "Morning": {"Medicine 1": {"Name": "Amoxicillin", "Dosage": "875mg", "Reason": "lung infection",
                                   "How to take": "with food"}},
        "Afternoon": {},
        "Evening": {"Medicine 1": {"Name": "amoxicillin", "Dosage": "875mg", "Reason": "lung infection",
                                   "How to take": "with food"}},
    },
}  # fmt: skip
SUMMARY = {
    "discharge_medications": "Ceftriaxone as needed",
    "discharge_diagnosis": {"primary": "pneumonia", "secondary": ""},
    "discharge_condition": {"mental_status": "clear", "level_of_consciousness": "alert", "activity_status": "walks"},
    "discharge_instructions": "Come back for any cough at all.",
    "followup_instructions": "See Dr. Lee next week.",
}


class Script:
    """The scripted server's brain for a whole discharge sample; records what each party was sent."""

    def __init__(
        self,
        *,
        signal_at: dict[str, int] | None = None,
        finish: bool = True,
        bad_checklist: bool = False,
        bad_judge: bool = False,
    ):
        self.signal_at = signal_at or {}  # stage -> signal NEXT STAGE on the n-th doctor message of that stage
        self.finish = finish
        self.bad_checklist = bad_checklist
        self.bad_judge = bad_judge
        self.fail_doctor_at: int | None = None
        self.doctor_calls = 0
        self.sent: dict[str, list[str]] = {}

    def __call__(self, messages: Sequence[ChatMessage]) -> str:
        system = messages[0].content if messages[0].role == "system" else ""
        everything = "\n".join(m.content for m in messages)
        kind = self.kind(system)
        self.sent.setdefault(kind, []).append(everything)
        return str(getattr(self, kind)(messages, system))

    @staticmethod
    def kind(system: str) -> str:
        for marker, kind in (
            ("hospital doctor talking with a patient", "doctor"),
            ("You are a patient in the hospital", "patient"),
            ("take-home checklist", "checklist"),
            ("discharge summary in", "summary"),
            ("patient who has just left the hospital", "exam"),
            ("check a patient's discharge checklist", "checklist_judge"),
            ("audit a simulated patient", "fidelity"),
            ("structured data", "parse"),
        ):
            if marker in system:
                return kind
        return "judge"

    def doctor(self, messages: Sequence[ChatMessage], system: str) -> str:
        self.doctor_calls += 1
        if self.fail_doctor_at is not None and self.doctor_calls >= self.fail_doctor_at:
            raise RuntimeError("scripted failure")
        if "Bring the conversation to a close" in system:
            return "Goodbye and take care. FINISHED SIMULATION" if self.finish else "Goodbye."
        stage = next(s for s, words in STAGE_WORDS.items() if words in system)
        n = sum(m.content.count(f"[{stage}]") for m in messages[1:]) + 1  # chat turns or the reference's blob
        signal = " NEXT STAGE" if self.signal_at.get(stage) == n else ""
        return f"[{stage}] Let us talk about this, amoxicillin twice a day.{signal}"

    def patient(self, messages: Sequence[ChatMessage], system: str) -> str:
        return "Patient: Okay, I understand. Doctor: and then the patient writes the doctor's lines"

    def checklist(self, messages: Sequence[ChatMessage], system: str) -> str:
        if self.bad_checklist:
            return "not json at all"
        return json.dumps(REFERENCE_SCHEMA_CHECKLIST if "grouped by the time of day" in system else CHECKLIST)

    def summary(self, messages: Sequence[ChatMessage], system: str) -> str:
        return json.dumps(SUMMARY)

    def exam(self, messages: Sequence[ChatMessage], system: str) -> str:
        text = messages[-1].content
        material = text.split("## Question")[0]
        for letter, option in re.findall(r"^([ABC])\. (.*)$", text, re.MULTILINE):
            if option.lower() in material.lower():
                return json.dumps({"answer": letter})
        return json.dumps({"answer": "A"})

    def checklist_judge(self, messages: Sequence[ChatMessage], system: str) -> str:
        n = len(re.findall(r"^\d+\. Area:", messages[-1].content, re.MULTILINE))
        return json.dumps({"consistent": [True] * n})

    def fidelity(self, messages: Sequence[ChatMessage], system: str) -> str:
        part = messages[-1].content.split("one sentence per line")[1]
        n = len(re.findall(r"^\d+\. ", part, re.MULTILINE))
        return json.dumps({"labels": ["non_informative"] * n})

    def parse(self, messages: Sequence[ChatMessage], system: str) -> str:
        return json.dumps(CASE["structure"])

    def judge(self, messages: Sequence[ChatMessage], system: str) -> str:
        if self.bad_judge:
            return "The doctor was very kind and explained everything"
        for rubric_id in JUDGES.values():
            rubric = load_rubric(rubric_id)
            if all(f'"{c.name}"' in system for c in rubric.criteria):
                evidence = {
                    "quote": {"quote": "Okay", "supports": True},
                    "snippet": {"snippet": "N/A", "addresses": False, "issue": "omitted"},
                    "pair": {"summary_span": "See Dr. Lee next week.", "reference_span": "N/A", "match": False,
                             "issue": "hallucinated"},
                }[rubric.evidence_kind]  # fmt: skip
                return json.dumps(
                    {
                        c.name: {
                            "score": 3.0 + i / 10,
                            "justification": "The doctor covered this point in a clear and specific way for her.",
                            "evidence": [evidence],
                        }
                        for i, c in enumerate(rubric.criteria)
                    }
                )
        raise AssertionError(f"no rubric matches: {system[:200]}")


STAGE_WORDS = {
    "diagnosis": "what they were diagnosed with",
    "tests_treatments": "tests and treatments they had",
    "return_indicators": "warning signs mean",
    "medications": "every one of the medicines",
    "post_discharge": "care to continue at home",
    "follow_up": "whether, when and with whom",
}


def sample(profile: dict[str, str] | None = None, case: dict[str, Any] | None = None) -> Sample:
    return Sample(id="t1/x", inputs={"case": case or CASE, "profile": profile or {"emotion": "anxious"}})


def simulate(
    server: ScriptedServer, options: dict[str, Any], *, cache: Path | None = None, the_sample: Sample | None = None
) -> tuple[Output, SampleContext]:
    async def main() -> tuple[Output, SampleContext]:
        models: dict[Role, Model] = {
            role: get_model(server.model_name(role), role=role, cache=cache, max_retries=0) for role in ROLES
        }
        context = SampleContext(models, {}, "0", 0)
        try:
            return await TASK.systems["dischargesim"](the_sample or sample(), options, context), context
        finally:
            for model in models.values():
                await model.aclose()

    return asyncio.run(main())


def doctor_stages(output: Output) -> list[str | None]:
    return [t.stage for t in output.transcript or [] if t.role == "clinician"]


def runs_of(stages: Sequence[str | None]) -> list[tuple[str | None, int]]:
    out: list[tuple[str | None, int]] = []
    for stage in stages:
        if out and out[-1][0] == stage:
            out[-1] = (stage, out[-1][1] + 1)
        else:
            out.append((stage, 1))
    return out


LIGHT = {"exam": [], "judges": [], "fidelity": False, "documents": False}


def test_paper_schedule_caps_five_leaves_medications_open_and_closes_at_the_hard_limit() -> None:
    script = Script()
    with ScriptedServer(rules=script) as server:
        output, _ = simulate(server, {"schedule": "paper", **LIGHT})
    assert runs_of(doctor_stages(output)) == [
        ("diagnosis", 5), ("tests_treatments", 5), ("return_indicators", 5), ("medications", 34), ("closing", 1),
    ]  # fmt: skip
    assert output.extra["termination"] == "hard_limit"
    last = output.trace[-1]  # type: ignore[index]
    assert last["decision"] == {"advance": False, "source": "limit", "forced": True, "to_stage": "closing"}
    assert output.extra["doctor_messages"] == 50


def test_paper_schedule_with_a_medication_signal_runs_every_stage_in_order() -> None:
    script = Script(signal_at={"medications": 3, "diagnosis": 2})
    with ScriptedServer(rules=script) as server:
        output, _ = simulate(server, {"schedule": "paper", **LIGHT})
    assert runs_of(doctor_stages(output)) == [
        ("diagnosis", 2), ("tests_treatments", 5), ("return_indicators", 5), ("medications", 3),
        ("post_discharge", 5), ("follow_up", 5), ("closing", 1),
    ]  # fmt: skip
    assert output.extra["termination"] == "completed"
    sources = [e["decision"]["source"] for e in output.trace or [] if e["stage_before"] != e.get("stage")]
    assert sources == ["agent", "cap", "cap", "agent", "cap", "cap"]


@pytest.mark.parametrize(
    ("signal_at", "expected"),
    [
        ({}, [4, 5, 5, 10, 5, 5]),
        # a stage entered by NEXT STAGE gets one message fewer than by the cap: medications 9 instead of 10
        ({"return_indicators": 2}, [4, 5, 2, 9, 5, 5]),
        ({"return_indicators": 2, "medications": 3, "post_discharge": 1}, [4, 5, 2, 3, 1, 4]),
    ],
)
def test_reference_schedule_replays_the_code_counter(signal_at: dict[str, int], expected: list[int]) -> None:
    script = Script(signal_at=signal_at)
    with ScriptedServer(rules=script) as server:
        output, _ = simulate(server, {"schedule": "reference", **LIGHT})
    got = runs_of(doctor_stages(output))
    assert [stage for stage, _ in got] == [*STAGE_IDS, "closing"]
    assert [count for _, count in got[:-1]] == expected
    assert got[-1] == ("closing", 1)
    assert output.extra["termination"] == "completed"


def test_reference_closing_repeats_until_the_hard_limit_without_the_finish_token() -> None:
    with ScriptedServer(rules=Script(finish=False)) as server:
        output, _ = simulate(server, {"schedule": "reference", **LIGHT})
    assert output.extra["termination"] == "hard_limit"
    assert runs_of(doctor_stages(output))[-1] == ("closing", 50 - 34)


def test_control_tokens_and_masked_fields_never_reach_the_patient() -> None:
    script = Script(signal_at={s: 1 for s in STAGE_IDS})
    with ScriptedServer(rules=script) as server:
        output, _ = simulate(server, {"schedule": "paper", **LIGHT})
    patient_prompts = script.sent["patient"]
    assert patient_prompts
    for prompt in patient_prompts:
        for hidden in ("NEXT STAGE", "FINISHED SIMULATION", "lisinopril", "chest x-ray", "Dr. Lee", "ceftriaxone"):
            assert hidden.lower() not in prompt.lower()
        assert "community-acquired pneumonia" in prompt  # the diagnosis name is what it was told
    assert all("NEXT STAGE" not in t.content and "FINISHED" not in t.content for t in output.transcript or [])
    assert any("NEXT STAGE" in e.get("raw", "") for e in output.trace or [])  # kept in the trace
    # a patient reply that went on to write the doctor's lines is cut there
    patient_turns = [t.content for t in output.transcript or [] if t.role == "patient"]
    assert patient_turns[0] == "Okay, I understand."


def test_the_whole_sample_documents_exam_judges_and_fidelity() -> None:
    script = Script(signal_at={s: 1 for s in STAGE_IDS})
    with ScriptedServer(rules=script) as server:
        output, context = simulate(server, {"schedule": "paper"})
    extra = output.extra
    assert extra["errors"] == {}
    # setting A reads the dialogue (which says amoxicillin), B the summary (which says ceftriaxone and any cough)
    assert extra["exam"]["dialogue"]["chosen"]["q1"] == extra["exam"]["dialogue"]["key"]["q1"]
    assert extra["exam"]["summary"]["chosen"]["q1"] != extra["exam"]["summary"]["key"]["q1"]
    assert TASK.score("exam_acc_summary", sample(), output) == 0.0
    # the exam-taker never sees the case: no note, no diagnosis label; but it keeps its profile
    for prompt in script.sent["exam"]:
        assert "community-acquired pneumonia" not in prompt
        assert "Brief Hospital Course" not in prompt
        assert "worry aloud" in prompt
    none_prompts = [p for p in script.sent["exam"] if "## Your conversation" not in p and "## Your discharge" not in p]
    assert len(none_prompts) == 2
    # judges: groups and criteria reach the scorers
    assert TASK.score("ld", sample(), output) == pytest.approx(3.1)
    assert TASK.score("hcc", sample(), output) == pytest.approx(3.35)
    assert TASK.score("coverage_irh", sample(), output) == pytest.approx(3.0)
    assert TASK.score("strategy_avg", sample(), output) == pytest.approx(3.25)
    assert TASK.score("summary_b_avg", sample(), output) == pytest.approx(3.15)
    # judges see Doctor:/Patient: lines without control tokens or stage labels, and the full note
    for prompt in script.sent["judge"][:3]:
        assert "Doctor: [diagnosis]" in prompt
        assert "NEXT STAGE" not in prompt
        assert "Followup Instructions" in prompt
    assert TASK.score("ahrq_acc", sample(), output) == pytest.approx(extra["ahrq"]["correct"] / extra["ahrq"]["total"])
    assert TASK.score("drug_coverage", sample(), output) == 0.5  # amoxicillin said, lisinopril never
    assert TASK.score("fidelity_unsupported", sample(), output) is None  # nothing informative said
    assert 0.0 < (TASK.score("rougeL", sample(), output) or 0.0) < 1.0
    assert set(context.usage) == {"system", "patient", "judge"}  # the case had a structure: no helper call


def test_a_malformed_checklist_is_re_asked_then_recorded_as_the_steps_error() -> None:
    script = Script(signal_at={s: 1 for s in STAGE_IDS}, bad_checklist=True)
    with ScriptedServer(rules=script) as server:
        output, _ = simulate(server, {"schedule": "paper", "judges": [], "fidelity": False, "exam": ["summary"]})
        checklist_bodies = [b for b in server.recent if "take-home checklist" in b["messages"][0]["content"]]
    assert len(script.sent["checklist"]) == 3  # first answer and two re-asks
    assert {b["max_tokens"] for b in checklist_bodies} == {1500}  # documents get room beyond a turn's budget
    assert "StructuredOutputError" in output.extra["errors"]["checklist"]
    assert "not valid JSON" in output.extra["errors"]["checklist"]
    assert output.extra["skipped"]["ahrq_acc"] == "skipped: there is no checklist"
    assert TASK.score("ahrq_acc", sample(), output) is None
    assert output.extra["summary"] is not None  # the summary still gets written without a checklist


def test_max_repairs_and_exam_questions_bound_the_documents_and_the_exam() -> None:
    script = Script(signal_at={s: 1 for s in STAGE_IDS}, bad_checklist=True)
    options = {"schedule": "paper", "judges": [], "fidelity": False, "max_repairs": 0, "exam_questions": 1}
    with ScriptedServer(rules=script) as server:
        output, _ = simulate(server, options)
    assert len(CASE["questions"]) == 2
    assert len(script.sent["checklist"]) == 1  # no re-ask: the first malformed answer is the step's error
    assert "no valid Checklist after 1 attempt;" in output.extra["errors"]["checklist"]
    assert len(script.sent["exam"]) == 3  # the first question, once in each setting
    assert {setting: exam["total"] for setting, exam in output.extra["exam"].items()} == dict.fromkeys(
        ("dialogue", "summary", "none"), 1
    )
    assert list(output.extra["exam"]["dialogue"]["key"]) == [CASE["questions"][0]["id"]]


@pytest.mark.parametrize(("judge_max_repairs", "asked"), [(None, 3), (0, 1), (1, 2)])
def test_judge_max_repairs_bounds_the_re_asks_of_a_malformed_judgement(
    judge_max_repairs: int | None, asked: int
) -> None:
    script = Script(signal_at={s: 1 for s in STAGE_IDS}, bad_judge=True)
    options: dict[str, Any] = {"schedule": "paper", "judges": ["conversation"], "fidelity": False, "exam": []}
    if judge_max_repairs is not None:
        options["judge_max_repairs"] = judge_max_repairs
    with ScriptedServer(rules=script) as server:
        output, _ = simulate(server, options)
    assert len(script.sent["judge"]) == asked  # the first answer and its re-asks, none more
    assert output.extra["errors"]["judge_conversation"].startswith("JudgeError: ")
    assert output.extra["judgements"] == {}


def test_an_unparsed_note_is_parsed_by_the_helper_role() -> None:
    unparsed = {k: v for k, v in CASE.items() if k != "structure"}
    script = Script(signal_at={s: 1 for s in STAGE_IDS})
    with ScriptedServer(rules=script) as server:
        output, context = simulate(server, LIGHT, the_sample=sample(case=unparsed))
    assert context.usage["helper"].calls == 1
    assert output.extra["parsed_structure"]["diagnoses_and_medications"]["primary_diagnoses"] == [
        "community-acquired pneumonia"
    ]


def test_a_resumed_conversation_makes_no_new_call(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    script = Script(signal_at={s: 2 for s in STAGE_IDS})
    with ScriptedServer(rules=script) as server:
        full, _ = simulate(server, LIGHT, cache=tmp_path / "full.sqlite")
        total = server.stats()["requests"]
        server.reset()
        script.fail_doctor_at, script.doctor_calls = 7, 0
        with pytest.raises(RetriesExhaustedError, match="HTTP 500"):
            simulate(server, LIGHT, cache=cache)
        before = server.stats()["requests"]
        server.reset()
        script.fail_doctor_at = None
        resumed, _ = simulate(server, LIGHT, cache=cache)
        assert server.stats()["requests"] == total - (before - 1)  # the failed request was never answered
        server.reset()
        again, context = simulate(server, LIGHT, cache=cache)
        assert server.stats()["requests"] == 0
    assert resumed.transcript == full.transcript == again.transcript
    assert context.usage["system"].cache_hits == context.usage["system"].calls


def test_checklist_points_align_medicines_by_name_and_compare_dose_and_times() -> None:
    case = DischargeCase.model_validate(CASE)
    reference = reference_checklist(case.parsed())
    predicted = Checklist.model_validate(CHECKLIST).model_copy(
        update={
            "medicines": [
                ChecklistMedicine(name="Amoxicillin-clavulanate", dose="875 mg", reason="x", how_to_take="",
                                  times=["morning"]),
                ChecklistMedicine(name="Aspirin", dose="81 mg", reason="heart", how_to_take="", times=["morning"]),
            ]
        }
    )  # fmt: skip
    points, extra = checklist_points(predicted, reference)
    medicine = {(p.area, p.reference.split(":")[0]): p.correct for p in points if p.area.startswith("medicine:")}
    assert medicine[("medicine:present", "amoxicillin")] is True
    assert medicine[("medicine:dose", "amoxicillin")] is True  # 875 mg = 875 mg
    assert medicine[("medicine:times", "amoxicillin")] is False  # morning only, not morning and evening
    assert medicine[("medicine:present", "lisinopril")] is False
    assert extra == ["Aspirin"]
    judged = [p for p in points if p.how == "judged"]
    assert {p.area for p in judged} >= {"diagnosis", "warning_signs", "appointments", "medicine:reason"}
    assert next(p for p in points if p.area == "activities_and_diet").predicted is None  # scores 0 without a call


def test_drug_coverage_counts_names_the_doctor_said() -> None:
    from bedside.runs.task import Turn

    turns = [
        Turn(role="clinician", content="Take Amoxicillin twice daily."),
        Turn(role="patient", content="lisinopril?"),
    ]
    assert drug_coverage(["amoxicillin", "lisinopril"], turns) == 0.5
    assert drug_coverage([], turns) is None


def test_profiles_one_at_a_time_grid_and_errors() -> None:
    assert len(profiles("one_at_a_time")) == 8
    assert len(profiles("grid")) == 18
    assert profiles("none") == [{}]
    assert profiles("emotion") == [{"emotion": "neutral"}, {"emotion": "anxious"}, {"emotion": "deflective"}]
    with pytest.raises(ProfileError, match="literacy has no level 'medium'"):
        profiles([{"literacy": "medium"}])
    with pytest.raises(ProfileError, match="unknown dimension 'age'"):
        profiles([{"age": "old"}])


def test_loading_crosses_cases_with_profiles_and_sets_strata(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    samples = TASK.load("mine", DatasetConfig(path=str(path)))
    assert [s.id for s in samples][:2] == ["t1/literacy=low", "t1/literacy=high"]
    assert samples[0].strata == {
        "literacy": "low", "education": "unspecified", "emotion": "unspecified", "profile": "literacy=low",
    }  # fmt: skip


def test_bad_case_files_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(CASE) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(CaseFormatError, match=r"cases.jsonl:2: not valid JSON"):
        read_cases(path)
    broken = {**CASE, "questions": [{**CASE["questions"][0], "distractor": "Amoxicillin"}]}
    path.write_text(json.dumps(broken) + "\n", encoding="utf-8")
    with pytest.raises(CaseFormatError, match=r"cases.jsonl:1: not a discharge case: .*options must differ"):
        read_cases(path)


@pytest.mark.skipif(not EXTERNAL.is_dir(), reason="../shared/data/external/michaels6060_DischargeSim is absent")
def test_the_release_osce_format_reads_with_its_notes() -> None:
    (case,) = read_cases(EXTERNAL / "OSCE-format.jsonl")
    assert case.structure is None  # the OSCE record has no medicines or follow-up: the note gets parsed
    assert case.note.startswith("Name:")
    assert "\\n" not in case.note  # decoded JSON strings, not the reference code's literal escapes
    assert case.demographics.sex == "male"


def test_judge_expert_agreement_excludes_ties_and_compares_each_expert() -> None:
    from bedside.tasks.discharge.agreement import PreferenceLabel, agreement, judge_preference

    scores = {
        ("s1", "A"): {"ld": 4.0, "hcc": 4.0, "coverage_avg": 4.0, "strategy_avg": 4.0},
        ("s1", "B"): {"ld": 2.0, "hcc": 2.0, "coverage_avg": 2.0, "strategy_avg": 2.0},
        ("s2", "A"): {"ld": 2.0, "hcc": 2.0, "coverage_avg": 2.0, "strategy_avg": 2.0},
        ("s2", "B"): {"ld": 3.0, "hcc": 3.0, "coverage_avg": 3.0, "strategy_avg": 3.0},
        ("s3", "A"): {"ld": 3.0, "hcc": 3.0, "coverage_avg": 3.0, "strategy_avg": 3.0},
        ("s3", "B"): {"ld": 3.0, "hcc": 3.0, "coverage_avg": 3.0, "strategy_avg": 3.0},
    }
    assert judge_preference(scores[("s1", "A")], scores[("s1", "B")], "overall") == "a"
    assert judge_preference(scores[("s3", "A")], scores[("s3", "B")], "overall") == "tie"
    assert judge_preference({"ld": None}, scores[("s1", "B")], "ld") is None

    def label(sample: str, expert: str, prefers: str) -> PreferenceLabel:
        return PreferenceLabel.model_validate(
            {"sample": sample, "a": "A", "b": "B", "criterion": "overall", "expert": expert, "prefers": prefers}
        )

    labels = [
        label("s1", "nurse", "a"), label("s2", "nurse", "b"), label("s3", "nurse", "a"),
        label("s1", "doctor", "a"), label("s2", "doctor", "a"), label("s3", "doctor", "a"),
    ]  # fmt: skip
    (report,) = agreement(labels, scores)
    pairs = {(p.first, p.second): p for p in report.pairs}
    experts = pairs[("doctor", "nurse")]
    assert experts.n == 3
    assert experts.percent == pytest.approx(2 / 3)
    nurse = pairs[("judge", "nurse")]
    assert (nurse.n, nurse.ties, nurse.percent, nurse.kappa) == (2, 1, 1.0, 1.0)
    doctor = pairs[("judge", "doctor")]
    assert (doctor.n, doctor.percent) == (2, 0.5)
    assert doctor.rho is None  # the doctor always chose a: no variation to correlate


def write_run(tmp_path: Path, server: ScriptedServer) -> Path:
    import yaml

    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    config = {
        "name": "discharge-test",
        "task": "discharge",
        "datasets": {"mine": {"path": str(cases), "options": {"profiles": "literacy"}}},
        "systems": {"sim": {"type": "dischargesim", "options": {"schedule": "demo"}}},
        "models": {
            "system": [server.model_name("doc-1.5b"), server.model_name("doc-7b")],
            "patient": server.model_name("patient"),
            "judge": server.model_name("judge"),
        },
        "concurrency": 4,
        "store": str(tmp_path / "store.sqlite"),
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_a_run_stores_conversations_and_reports_the_papers_tables(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bedside.cli import app
    from bedside.runs import Store, execute, load_config
    from bedside.runs.report import build_report, html_page

    script = Script()
    with ScriptedServer(rules=script) as server:
        config = load_config(write_run(tmp_path, server))
        summary = asyncio.run(execute(config, cache=False))
    assert summary.errors == 0
    store = Store(config.store)
    try:
        rows = store.results(config.run_id)
        report = build_report(store, config.run_id)
    finally:
        store.close()
    assert len(rows) == 4  # 1 case x 2 literacy levels x 2 doctor models
    row = rows[0]
    assert row.strata["literacy"] in ("low", "high")
    assert row.output is not None
    assert [t["stage"] for t in row.output["transcript"] if t["role"] == "clinician"][:2] == [
        "diagnosis",
        "tests_treatments",
    ]
    assert row.scores["ld"] == pytest.approx(3.1)
    assert row.usage["judge"]["calls"] >= 5
    titles = [t.title for t in report.tables]
    assert any(t.startswith("DischargeSim Table 1") for t in titles)
    assert any(t.startswith("DischargeSim Table 2") for t in titles)
    assert any(t.startswith("Profile sensitivity") for t in titles)
    assert any(t.startswith("Comprehension exam") for t in titles)
    table_one = next(t for t in report.tables if t.title.startswith("DischargeSim Table 1"))
    assert table_one.rows[0][1] == "3.10"  # L&D
    sensitivity = next(t for t in report.tables if t.title.startswith("Profile sensitivity"))
    assert sensitivity.rows[0][1] == "HL2 vs HL1"
    assert sensitivity.rows[0][2].startswith("+0.000")  # the scripted judge scores both levels alike
    # ... and drawn, one plot per cell (doctor model), in the HTML report only
    assert [title for title, _ in report.task_plots if title.startswith("Profile sensitivity")] == [
        f"Profile sensitivity: {c}" for c in sorted({r.cell for r in rows})
    ]
    # two doctor models: the health-literacy variability figure is drawn; the size figures need sized names
    assert "Cross-model variability, health literacy (Fig. 7 shape)" in dict(report.task_plots)
    assert any(p.title.startswith("Model size") for p in report.absent_plots)
    assert all(base64.b64decode(png).startswith(b"\x89PNG") for _, png in report.task_plots)
    assert "Task plots" in html_page(report)

    labels = tmp_path / "labels.jsonl"
    cells = sorted({r.cell for r in rows})
    labels.write_text(
        "".join(
            json.dumps({"sample": s, "a": cells[0], "b": cells[1], "criterion": "overall", "expert": e, "prefers": p})
            + "\n"
            for s, e, p in (("t1/literacy=low", "nurse", "a"), ("t1/literacy=high", "nurse", "b"))
        ),
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        app, ["discharge", "agreement", config.run_id, "--labels", str(labels), "--store", config.store, "--json"]
    )
    assert result.exit_code == 0, result.output
    (overall,) = json.loads(result.output)
    judge_vs_nurse = next(p for p in overall["pairs"] if p["first"] == "judge")
    assert judge_vs_nurse["ties"] == 2  # identical scripted doctors: every judge preference is a tie
    bad = CliRunner().invoke(app, ["discharge", "agreement", "nope", "--labels", str(labels), "--store", config.store])
    assert bad.exit_code == 1
    assert "no run 'nope'" in bad.output


def test_parse_command_writes_parsed_cases(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bedside.cli import app

    cases = tmp_path / "notes.jsonl"
    cases.write_text(json.dumps({k: v for k, v in CASE.items() if k != "structure"}) + "\n", encoding="utf-8")
    output = tmp_path / "parsed.jsonl"
    with ScriptedServer(rules=Script()) as server:
        result = CliRunner().invoke(
            app, ["discharge", "parse", str(cases), "-o", str(output), "-m", server.model_name("helper"), "--no-cache"]
        )
    assert result.exit_code == 0, result.output
    (parsed,) = read_cases(output)
    assert parsed.parsed().diagnoses_and_medications.primary_diagnoses == ["community-acquired pneumonia"]
    again = CliRunner().invoke(app, ["discharge", "parse", str(cases), "-o", str(output), "--no-cache"])
    assert again.exit_code == 1
    assert "exists" in again.output


def test_bad_labels_name_the_file_and_line(tmp_path: Path) -> None:
    from bedside.tasks.discharge.agreement import LabelsError, read_labels

    path = tmp_path / "labels.jsonl"
    good = {"sample": "s", "a": "A", "b": "B", "criterion": "overall", "expert": "nurse", "prefers": "a"}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "prefers": "both"}) + "\n", encoding="utf-8")
    with pytest.raises(LabelsError, match=r"labels.jsonl:2: prefers"):
        read_labels(path)
    path.write_text("", encoding="utf-8")
    with pytest.raises(LabelsError, match="no data: the file is empty"):
        read_labels(path)


SHORT_SUMMARY = {
    "discharge_medications": "Furosemide 40 mg daily.",
    "discharge_diagnosis": {"primary": "Heart failure"},
    "discharge_condition": {},
    "discharge_instructions": "Weigh yourself daily.",
    "followup_instructions": "Cardiology in two weeks.",
}


def test_bleurt_is_absent_not_zero_without_a_local_checkpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from bedside.runs import Output, Sample
    from bedside.tasks.discharge.task import BLEURT_CHECKPOINT_ENV, TASK

    summary = SHORT_SUMMARY
    sample = Sample(id="s", inputs={"case": {"reference_summary": summary}})
    output = Output(text="", extra={"summary": summary})
    assert "bleurt" in TASK.scorers
    monkeypatch.delenv(BLEURT_CHECKPOINT_ENV, raising=False)
    assert TASK.score("bleurt", sample, output) is None
    monkeypatch.setenv(BLEURT_CHECKPOINT_ENV, str(tmp_path / "no-such-checkpoint"))
    assert TASK.score("bleurt", sample, output) is None
    assert TASK.score("rougeL", sample, output) == pytest.approx(1.0)  # the other summary metrics still run


def test_umls_f1_runs_on_the_users_quickumls_index_and_is_absent_without_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import bedside.metrics
    from bedside.metrics import Concept, MetricUnavailableError
    from bedside.runs import Output, Sample
    from bedside.tasks.discharge import task as discharge_task
    from bedside.tasks.discharge.task import TASK, UMLS_INDEX_ENV

    summary = SHORT_SUMMARY
    reference = {**summary, "discharge_medications": "Metoprolol 25 mg twice a day."}
    sample = Sample(id="s", inputs={"case": {"reference_summary": reference}})
    output = Output(text="", extra={"summary": summary})
    discharge_task._umls_extractor.cache_clear()
    monkeypatch.delenv(UMLS_INDEX_ENV, raising=False)
    assert TASK.score("concept_f1_umls", sample, output) is None  # no index named: absent

    opened: list[str] = []

    class FakeQuickUMLS:  # stands in for a licensed index: CUIs for three terms
        name = "umls"

        def __init__(self, index: str) -> None:
            if not Path(index).is_dir():
                raise MetricUnavailableError(f"concept_f1[umls] unavailable: QuickUMLS index {index} does not exist")
            opened.append(index)

        def extract(self, text: str) -> list[Concept]:
            cuis = {"heart failure": "C0018801", "furosemide": "C0016860", "metoprolol": "C0025859"}
            return [Concept(f"UMLS:{cui}", term, term) for term, cui in cuis.items() if term in text.lower()]

    monkeypatch.setattr(bedside.metrics, "QuickUMLSExtractor", FakeQuickUMLS)
    monkeypatch.setenv(UMLS_INDEX_ENV, str(tmp_path / "missing"))
    assert TASK.score("concept_f1_umls", sample, output) is None  # a missing index: absent, never zero
    monkeypatch.setenv(UMLS_INDEX_ENV, str(tmp_path))
    # summary {heart failure, furosemide} vs reference {heart failure, metoprolol}: P = R = 1/2
    assert TASK.score("concept_f1_umls", sample, output) == pytest.approx(0.5)
    assert TASK.score("concept_f1_umls", sample, output) == pytest.approx(0.5)
    assert opened == [str(tmp_path)]  # the index is loaded once
    discharge_task._umls_extractor.cache_clear()


def test_the_reference_codes_checklist_schema_is_scored_in_bedsides_shape() -> None:
    script = Script(signal_at={s: 1 for s in STAGE_IDS})
    with ScriptedServer(rules=script) as server:
        output, _ = simulate(server, {"schedule": "paper", "checklist_schema": "reference"})
    extra = output.extra
    assert extra["errors"] == {}
    assert extra["checklist_schema"] == "reference"
    assert extra["checklist_as_written"]["Activites or Food to Avoid"] == "smoking"  # kept as the model wrote it
    (medicine,) = extra["checklist"]["medicines"]  # the morning and evening entries, merged by drug name
    assert medicine["times"] == ["morning", "evening"]
    assert extra["checklist"]["activities"] == ["short walks", "Avoid: smoking"]
    assert extra["checklist"]["warning_signs"] == []  # an area that schema cannot hold
    assert "grouped by the time of day" in script.sent["checklist"][0]
    assert 0.0 <= (TASK.score("ahrq_acc", sample(), output) or 0.0) < 1.0  # the missing areas count as misses
    with (
        ScriptedServer(rules=Script(signal_at={s: 1 for s in STAGE_IDS})) as server,
        pytest.raises(ValueError, match="checklist_schema must be bedside or reference"),
    ):
        simulate(server, {"schedule": "paper", "checklist_schema": "repo"})


def test_the_papers_table_shapes_spell_out_every_abbreviated_column() -> None:
    from bedside.tasks.discharge.judging import (
        COVERAGE_CRITERIA,
        STRATEGY_CRITERIA,
        SUMMARY_A_CRITERIA,
        SUMMARY_B_CRITERIA,
    )
    from bedside.tasks.discharge.tables import table_one, table_two

    one, two = table_one({}), table_two({})
    for table, codes in (
        (one, ["L&D", "HCC", *COVERAGE_CRITERIA, *STRATEGY_CRITERIA]),
        (two, [*SUMMARY_A_CRITERIA, *SUMMARY_B_CRITERIA]),
    ):
        for code in codes:
            assert code in table.columns
            assert f"{code} = " in table.note, (table.title, code)


def test_the_reference_schedule_hides_what_the_cut_note_hides_and_sends_temperature_0_05(tmp_path: Path) -> None:
    """The reference code shows the doctor the note cut before "Discharge Condition" and generates both agents'
    turns at temperature 0.05 with 200 tokens; the structure bedside also shows must not hand back what the cut
    hid (warning signs, home care, follow-up, the medicines' patient instructions). Read from the stored prompts
    and the requests the server received."""
    import yaml

    from bedside.runs import Store, execute, load_config

    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    hidden = ("Warning signs to return", "Activity and home care", "Follow-up:", "fever over 101 F", "Dr. Lee",
              "walk a little every day", "with food, for 5 days")  # fmt: skip
    prompts: dict[str, str] = {}
    for schedule in ("reference", "paper"):
        with ScriptedServer(rules=Script()) as server:
            config_path = tmp_path / f"{schedule}.yaml"
            config_path.write_text(
                yaml.safe_dump(
                    {
                        "name": f"discharge-{schedule}",
                        "task": "discharge",
                        "datasets": {"mine": {"path": str(cases), "options": {"profiles": "none"}}},
                        "systems": {"sim": {"type": "dischargesim",
                                            "options": {"schedule": schedule, "max_doctor_messages": 2, **LIGHT}}},
                        "models": {"system": server.model_name("doc"), "patient": server.model_name("patient")},
                        "settings": {"system": {"temperature": 0.7}},
                        "scorers": ["doctor_messages"],
                        "store": str(tmp_path / f"{schedule}.sqlite"),
                    }
                ),
                encoding="utf-8",
            )  # fmt: skip
            config = load_config(config_path)
            assert asyncio.run(execute(config, cache=False)).errors == 0
            turns = [b for b in server.recent if "hospital doctor" in b["messages"][0]["content"]]
            patient_turns = [b for b in server.recent if "You are a patient" in b["messages"][0]["content"]]
        store = Store(config.store)
        try:
            (row,) = store.results(config.run_id)
        finally:
            store.close()
        assert row.output is not None
        doctor = [p for p in row.output["prompts"] if "hospital doctor" in p[0]["content"]]
        prompts[schedule] = doctor[0][0]["content"]
        if schedule == "reference":
            assert {b["temperature"] for b in turns + patient_turns} == {0.05}  # over the run's 0.7
            assert {b["max_tokens"] for b in turns + patient_turns} == {200}
        else:
            assert {b["temperature"] for b in turns} == {0.7}
    assert "Discharge Condition" not in prompts["reference"]
    assert [h for h in hidden if h in prompts["reference"]] == []
    assert [h for h in hidden if h not in prompts["paper"]] == []  # the paper's doctor sees everything
    assert "amoxicillin 875 mg, twice a day, for pneumonia" in prompts["reference"]  # the medicines stay
