"""MedAgent + MultiSenseEval on the shared engine: the sensemaker's state machine on both paths, the patient's
Algorithm 1, case preparation, readers, judges, fidelity, replay, and a whole run with its tables."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bedside.inputs import InputError
from bedside.judges import load_rubric
from bedside.llm import ROLES, ChatMessage, Model, RetriesExhaustedError, Role, StructuredOutputError, get_model
from bedside.llm.scripted_server import ScriptedServer
from bedside.runs.config import DatasetConfig
from bedside.runs.task import Output, Sample, SampleContext, Turn
from bedside.sim import Knowledge
from bedside.sim.fidelity import check_fidelity
from bedside.tasks.sensemaking.cases import is_vital_fact, split_vitals
from bedside.tasks.sensemaking.personas import Persona, persona_cross, select_personas
from bedside.tasks.sensemaking.readers import read_cases, read_mediq
from bedside.tasks.sensemaking.task import TASK, fidelity_rate
from bedside.testing.scripted_answers import SensemakingScript

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "external" / "mediq"
LIGHT = {"judges": [], "fidelity": False}
PATHS = ("reference", "efficient")


def sample(persona: str = "neuroticism-basic", case: dict[str, Any] | None = None) -> Sample:
    samples = TASK.load("synthetic", DatasetConfig(options={"personas": [persona], "cases": 1}))
    if case is None:
        return samples[0]
    return Sample(id=f"{case['id']}/{persona}", inputs={"case": case, "persona": persona})


def simulate(
    script: SensemakingScript,
    options: dict[str, Any],
    *,
    the_sample: Sample | None = None,
    server: ScriptedServer | None = None,
    cache: Path | None = None,
) -> tuple[Output, SampleContext]:
    async def main() -> tuple[Output, SampleContext]:
        if server is None:
            models: dict[Role, Model] = {r: get_model("scripted/x", role=r, options={"rules": script}) for r in ROLES}
        else:
            models = {r: get_model(server.model_name(r), role=r, cache=cache, max_retries=0) for r in ROLES}
        context = SampleContext(models, {}, "0", 0)
        try:
            return await TASK.systems["medagent"](the_sample or sample(), options, context), context
        finally:
            for model in models.values():
                await model.aclose()

    return asyncio.run(main())


def sensemaker_stages(output: Output) -> list[str | None]:
    return [t.stage for t in output.transcript or [] if t.role == "clinician"]


def runs_of(stages: Sequence[str | None]) -> list[tuple[str | None, int]]:
    out: list[tuple[str | None, int]] = []
    for stage in stages:
        if out and out[-1][0] == stage:
            out[-1] = (stage, out[-1][1] + 1)
        else:
            out.append((stage, 1))
    return out


def decisions(output: Output) -> list[dict[str, Any]]:
    return [entry["decision"] for entry in output.trace or []]


@pytest.mark.parametrize("path", PATHS)
def test_four_stays_then_the_cap_forces_the_move(path: str) -> None:
    output, _ = simulate(SensemakingScript(stays={"gathering": 99}), {**LIGHT, "path": path})
    assert runs_of(sensemaker_stages(output))[:2] == [("gathering", 5), ("providing_information", 1)]
    forced = decisions(output)[5]  # the decision after the fifth Gathering message
    assert forced["source"] == "cap"
    assert forced["forced"] is True
    if path == "reference":
        assert forced["stage_answer"] == "STAY"
        assert forced["stage_answer_ignored"] is True  # the reference asks anyway and discards the answer
    else:
        assert "stage_answer" not in forced  # the efficient path does not ask when the cap decides
    assert [d["source"] for d in decisions(output)[1:5]] == ["agent"] * 4
    assert output.extra["termination"] == "completed"


@pytest.mark.parametrize("path", PATHS)
def test_fostering_holds_at_most_four_messages(path: str) -> None:
    output, _ = simulate(SensemakingScript(stays={"fostering": 99}), {**LIGHT, "path": path})
    assert runs_of(sensemaker_stages(output))[0] == ("fostering", 4)
    assert decisions(output)[4]["source"] == "cap"


def test_a_complete_conversation_has_one_message_in_providing_information_and_exit() -> None:
    output, _ = simulate(SensemakingScript(stays={"gathering": 1, "decision_making": 2}), LIGHT)
    assert runs_of(sensemaker_stages(output)) == [
        ("gathering", 2),
        ("providing_information", 1),
        ("decision_making", 3),
        ("responding_to_emotions", 1),
        ("exit", 1),
    ]
    assert output.transcript is not None
    assert output.transcript[0].role == "patient"
    assert output.transcript[0].stage == "fostering"  # the opening counts under Fostering
    assert output.transcript[-1].role == "clinician"  # the patient never answers the exit message
    assert output.extra["messages_per_stage"]["providing_information"] == 2  # the message and its answer


@pytest.mark.parametrize("path", PATHS)
def test_after_providing_information_the_move_needs_no_call_and_no_fact_mining(path: str) -> None:
    script = SensemakingScript()
    output, _ = simulate(script, {**LIGHT, "path": path})
    trace = output.trace or []
    index = next(i for i, e in enumerate(trace) if e["stage_before"] == "providing_information")
    entry = trace[index]
    assert entry["decision"]["source"] == "stage_rule"
    assert entry["decision"]["forced"] is True
    assert "extracted" not in entry["decision"]
    assert entry["calls"]["system"]["calls"] == 1  # generate, or the folded call
    assert entry["calls"]["helper"]["calls"] == 1  # the redundancy filter: the paper's fixed side
    assert entry["calls"]["patient"]["calls"] == 2


@pytest.mark.parametrize("path", PATHS)
def test_all_candidates_redundant_moves_on_and_sends_the_next_stages_candidate(path: str) -> None:
    script = SensemakingScript(redundant=lambda stage: stage == "gathering")
    output, _ = simulate(script, {**LIGHT, "path": path})
    stages = sensemaker_stages(output)
    assert "gathering" not in stages
    assert stages[0] == "providing_information"
    first = decisions(output)[0]
    assert first["source"] == "stagnation"
    assert first["to_stage"] == "providing_information"
    assert first["stagnation"] is True
    rounds = first["rounds"]
    assert rounds[0]["stage"] == "gathering"
    assert rounds[0]["redundant"] == [True, True, True]
    assert rounds[0]["chosen"] is None
    assert rounds[-1]["stage"] == "providing_information"
    assert rounds[-1]["chosen"] in (0, 1, 2)
    assert all("No New Message" not in t.content for t in output.transcript or [])
    if path == "reference":  # a second generate + filter pair in the same exchange
        assert output.trace is not None
        assert output.trace[0]["calls"]["system"]["calls"] == 3  # stage + generate + generate
        assert output.trace[0]["calls"]["helper"]["calls"] == 4  # extract + match + filter + filter
    else:
        assert output.trace is not None
        assert output.trace[0]["calls"]["system"]["calls"] == 1
        assert output.trace[0]["calls"]["helper"]["calls"] == 1


@pytest.mark.parametrize("path", PATHS)
def test_stagnation_moving_to_the_last_stages_ends_without_an_exit_message(path: str) -> None:
    script = SensemakingScript(redundant=lambda stage: stage in ("responding_to_emotions", "exit"))
    output, _ = simulate(script, {**LIGHT, "path": path})
    assert output.extra["termination"] == "stagnation_end"
    assert output.extra["stagnation_at"] == "responding_to_emotions"
    assert "exit" not in sensemaker_stages(output)
    assert output.extra["excluded"] is None  # the reference's normal end there: complete
    assert TASK.score("completed", sample(), output) == 1.0


def test_stagnation_early_in_the_conversation_is_an_incomplete_end() -> None:
    script = SensemakingScript(redundant=lambda stage: stage in ("gathering", "providing_information"))
    output, _ = simulate(script, LIGHT)
    assert output.extra["termination"] == "stagnation_end"
    assert output.extra["excluded"] == "stagnation_end"
    assert TASK.score("completed", sample(), output) == 0.0
    assert output.transcript is not None
    assert [t.role for t in output.transcript] == ["patient"]  # nothing was sent, no placeholder written


def test_an_unparseable_stage_answer_is_re_asked_then_the_samples_error() -> None:
    script = SensemakingScript(bad_stage_answer=True)
    with pytest.raises(StructuredOutputError, match="no valid"):
        simulate(script, LIGHT)
    assert script.calls.count("stage") == 3  # the first answer and two re-asks


@pytest.mark.parametrize("path", PATHS)
def test_zero_extracted_facts_make_no_match_call(path: str) -> None:
    script = SensemakingScript(extract_nothing=True)
    output, _ = simulate(script, {**LIGHT, "path": path})
    assert "match" not in script.calls
    assert output.extra["sensemaker_facts"] == []
    if path == "reference":
        assert script.calls.count("extract") == len([d for d in decisions(output) if "extracted" in d])


@pytest.mark.parametrize("with_helper", [True, False])
def test_extraction_matching_and_redundancy_are_the_helper_side_or_the_system_model_without_one(
    with_helper: bool,
) -> None:
    """The paper ran fact extraction, matching and the redundancy filter on a fixed GPT-4o and only the stage and
    generation calls on the compared models: bedside's helper role; with no helper model, the cell's own."""
    script = SensemakingScript(stays={"gathering": 1})
    roles: list[tuple[str, str]] = []

    async def main() -> Output:
        models: dict[Role, Model] = {}
        for role in ROLES:
            if role == "helper" and not with_helper:
                continue

            def rules(messages: Sequence[ChatMessage], role: str = role) -> str:
                answer = script(messages)
                roles.append((script.calls[-1], role))
                return answer

            models[role] = get_model("scripted/x", role=role, options={"rules": rules})
        context = SampleContext(models, {}, "0", 0)
        try:
            return await TASK.systems["medagent"](sample(), LIGHT, context)
        finally:
            for model in models.values():
                await model.aclose()

    output = asyncio.run(main())
    by_kind: dict[str, set[str]] = {}
    for kind, role in roles:
        by_kind.setdefault(kind, set()).add(role)
    fixed = "helper" if with_helper else "system"
    assert by_kind["extract"] == by_kind["match"] == by_kind["redundancy"] == {fixed}
    assert by_kind["stage"] == by_kind["generate"] == {"system"}
    assert output.extra["helper_side"] == fixed


@pytest.mark.parametrize(("path", "per_exchange"), [("reference", 7), ("efficient", 4)])
def test_calls_per_ordinary_exchange(path: str, per_exchange: int) -> None:
    output, _ = simulate(SensemakingScript(stays={"gathering": 2}), {**LIGHT, "path": path})
    trace = output.trace or []
    ordinary = [
        e for e in trace[1:] if e["stage_before"] in ("gathering", "decision_making") and "patient" in e["calls"]
    ]
    assert ordinary
    for entry in ordinary:
        assert sum(c["calls"] for c in entry["calls"].values()) == per_exchange


def test_vitals_seed_the_sensemakers_memory_and_never_reach_the_patient() -> None:
    script = SensemakingScript()
    seen: list[Sequence[ChatMessage]] = []

    def rules(messages: Sequence[ChatMessage]) -> str:
        seen.append(messages)
        return script(messages)

    the_sample = sample("agreeableness-advanced")
    vitals = the_sample.inputs["case"]["vital_facts"]
    assert vitals
    simulate(rules, LIGHT, the_sample=the_sample)  # type: ignore[arg-type]
    redundancy = [m for m in seen if "For each numbered candidate message" in m[0].content]
    assert vitals[0] in redundancy[0][-1].content  # H starts as the vital facts
    patient_kinds = ("You decide which of a patient's facts", "Use only the facts below", "starting a conversation")
    patient_prompts = [m for m in seen if any(k in m[0].content for k in patient_kinds)]
    assert patient_prompts
    for messages in patient_prompts:
        assert all(vitals[0] not in m.content for m in messages)


def test_the_patient_is_stateless_and_sees_only_the_selected_facts() -> None:
    script = SensemakingScript()
    seen: list[Sequence[ChatMessage]] = []

    def rules(messages: Sequence[ChatMessage]) -> str:
        seen.append(messages)
        return script(messages)

    the_sample = sample()
    facts = the_sample.inputs["case"]["facts"]
    simulate(rules, LIGHT, the_sample=the_sample)  # type: ignore[arg-type]
    answers = [m for m in seen if "Use only the facts below" in m[0].content]
    assert answers
    for messages in answers:
        assert len(messages) == 2  # system + the current message only: no history
        assert facts[0] in messages[-1].content  # the selected fact (number 2 = the first case fact)
        assert facts[1] not in messages[-1].content
    selects = [m for m in seen if "You decide which of a patient's facts" in m[0].content]
    intent_line = "turning medical terms"
    goal_line = "priority"
    early = [m for m in selects if intent_line in m[-1].content]
    late = [m for m in selects if goal_line in m[-1].content and intent_line not in m[-1].content]
    assert early  # the intent in stages 1-3
    assert late  # the goal from Decision Making on


def test_the_no_match_branch_is_one_call_without_facts() -> None:
    script = SensemakingScript(select_nothing=True)
    output, _ = simulate(script, LIGHT)
    assert script.calls.count("patient_no_match") == script.calls.count("patient_select")
    assert "patient_answer" not in script.calls
    details = [e["patient"] for e in output.trace or [] if "patient" in e]
    assert {d["branch"] for d in details} == {"no_match"}
    assert (output.trace or [])[0]["opening"]["details"]["branch"] == "opening"


def test_a_resumed_conversation_makes_no_new_call(tmp_path: Path) -> None:
    script = SensemakingScript(stays={"gathering": 1})
    with ScriptedServer(rules=script) as server:
        full, _ = simulate(script, LIGHT, server=server, cache=tmp_path / "c.sqlite")
        assert server.stats()["requests"] > 0
        server.reset()
        again, context = simulate(script, LIGHT, server=server, cache=tmp_path / "c.sqlite")
        assert server.stats()["requests"] == 0
    assert again.transcript == full.transcript
    assert context.usage["system"].cache_hits == context.usage["system"].calls


def test_a_failing_endpoint_is_the_samples_error() -> None:
    script = SensemakingScript()

    def rules(messages: Sequence[ChatMessage]) -> str:
        if "candidate messages for your next turn" in messages[0].content:
            raise RuntimeError("boom")
        return script(messages)

    with ScriptedServer(rules=rules) as server, pytest.raises(RetriesExhaustedError):
        simulate(script, LIGHT, server=server)


def test_a_vignette_only_case_is_prepared_by_the_helper() -> None:
    script = SensemakingScript()
    case = {"id": "v1", "vignette": "A 30-year-old feels low. Pulse 90/min."}
    output, context = simulate(script, LIGHT, the_sample=sample(case=case))
    prepared = output.extra["case"]
    assert prepared["facts"] == ["The person feels low.", "The person sleeps badly."]
    assert prepared["vital_facts"] == ["The pulse is 90/min."]
    assert prepared["intent"] == "interpreting_medical_information"
    assert prepared["goal"] == "comfort"
    assert prepared["diagnosis"] == {
        "label": "major depressive disorder",
        "provenance": "derived",
        "reviewed": False,
        "note": "low mood",
    }
    preparation = [k for k in script.calls if k in ("decompose", "vitals", "assign", "diagnosis")]
    fixed_side = [k for k in script.calls if k in ("extract", "match", "redundancy")]
    assert len(preparation) == 4  # decompose, intent, goal, diagnosis
    assert context.usage["helper"].calls == len(preparation) + len(fixed_side)  # all on the helper role


def test_vital_facts_by_rule() -> None:
    assert is_vital_fact("His pulse is 88/min.")
    assert is_vital_fact("Blood pressure is 130/84 mm Hg.")
    assert is_vital_fact("Temperature 38.9 C, pulse 120, BP 100/60, respirations 22.")
    assert not is_vital_fact("Her pulse is 110/min and she is tremulous.")  # mixed: stays with the patient
    assert not is_vital_fact("She reports a racing heart rate when anxious.")
    patient, vitals = split_vitals(["Feels low.", "Respirations are 14/min."])
    assert (patient, vitals) == (["Feels low."], ["Respirations are 14/min."])


def test_personas_cross_and_errors() -> None:
    cross = persona_cross()
    assert len(cross) == 10
    assert cross[0].levels() == {
        "openness": "HIGH",
        "conscientiousness": "LOW",
        "extraversion": "LOW",
        "agreeableness": "LOW",
        "neuroticism": "LOW",
    }
    assert len(Persona("openness", "basic").literacy_bullets()) == 5
    assert len(Persona("openness", "advanced").literacy_bullets()) == 6
    assert [p.id for p in select_personas(["extraversion-basic"])] == ["extraversion-basic"]
    with pytest.raises(ValueError, match="unknown trait"):
        Persona.parse("grumpiness-basic")


def test_loading_crosses_cases_with_personas() -> None:
    samples = TASK.load("synthetic", DatasetConfig(options={}))
    assert len(samples) == 12 * 10
    assert samples[0].strata == {"trait": "openness", "literacy": "basic"}
    assert samples[0].references == ["major depressive disorder"]


def test_bad_case_files_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "a", "facts": ["x"]}\n{"id": "b", "facts": ["x"], "intent": "wishful"}\n')
    with pytest.raises(ValueError, match=r"cases.jsonl:2: intent: .*unknown intent 'wishful'"):
        read_cases(path)
    path.write_text('{"id": "a"}\n')
    with pytest.raises(ValueError, match=r"cases.jsonl:1: .*vignette or a list of facts"):
        read_cases(path)


def test_mediq_cases_keep_given_facts_and_label_only_diagnosis_cases(tmp_path: Path) -> None:
    path = tmp_path / "mediq.jsonl"
    rows = [
        {"id": 15, "context": ["A man feels low."], "facts": ["1. A man feels low.", "2. Pulse is 80/min."],
         "answer": "Major depressive disorder"},
        {"id": 2, "context": ["A woman sleeps badly."], "facts": ["1. A woman sleeps badly."], "answer": "Trazodone"},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cases = read_mediq(path, diagnosis_ids={"15"})
    assert cases[0].facts == ["A man feels low.", "Pulse is 80/min."]
    assert cases[0].vital_facts is None  # split at run time, by rules or the helper
    assert cases[0].diagnosis is not None
    assert cases[0].diagnosis.provenance == "given"
    assert cases[1].diagnosis is None  # a drug is not a diagnosis: derived at run time


@pytest.mark.parametrize("bad_id", [{"id": 15}, [15], True, None])
def test_mediq_ids_that_are_not_strings_or_numbers_are_an_error(tmp_path: Path, bad_id: object) -> None:
    """An object id was stringified ("{'id': 15}") into a case no index could name; now it names the line."""
    path = tmp_path / "mediq.jsonl"
    good = {"id": 1, "facts": ["1. A man feels low."]}
    path.write_text(json.dumps(good) + "\n" + json.dumps({"id": bad_id, "facts": ["1. x"]}) + "\n")
    with pytest.raises(InputError, match=r"mediq.jsonl:2.*id"):
        read_mediq(path)


def test_mediq_ids_asked_for_that_the_file_lacks_are_an_error(tmp_path: Path) -> None:
    path = tmp_path / "mediq.jsonl"
    path.write_text(json.dumps({"id": 1, "facts": ["1. A man feels low."]}) + "\n")
    assert len(read_mediq(path, ids={"1", "2"})) == 1
    with pytest.raises(InputError, match="none of the 2 case ids asked for is in the file"):
        read_mediq(path, ids={"7", "8"})


@pytest.mark.skipif(not EXTERNAL.is_dir(), reason="MediQ data not present in ../shared/data/external/mediq")
def test_the_mediq_psych_index_loads() -> None:
    samples = TASK.load(
        "mediq",
        DatasetConfig(
            path=str(EXTERNAL / "all_dev_good.jsonl"),
            options={
                "format": "mediq",
                "psych_index": str(EXTERNAL / "psych_case_index.json"),
                "personas": ["openness-basic"],
            },
        ),
    )
    assert len(samples) == 76
    labelled = [s for s in samples if s.references]
    assert len(labelled) == 22


def test_the_whole_sample_judges_smog_and_fidelity() -> None:
    output, context = simulate(SensemakingScript(judge_score=3.0), {"path": "efficient"})
    sample_ = sample()
    assert TASK.score("susceptibility", sample_, output) == 3.0
    assert TASK.score("hbm_mean", sample_, output) == 3.0
    assert TASK.score("diagnosis_hard", sample_, output) == 1.0
    assert TASK.score("diagnosis_soft", sample_, output) == 1.0
    smog = TASK.score("smog", sample_, output)
    assert smog is not None
    assert smog > 3
    if importlib.util.find_spec("textstat") is not None:
        from bedside.text import textstat_smog

        said = " ".join(t.content for t in output.transcript or [] if t.role == "clinician")
        assert TASK.score("smog_textstat", sample_, output) == textstat_smog(said)
    assert TASK.score("fidelity_unsupported_closed", sample_, output) == 0.0
    assert output.extra["errors"] == {}
    assert context.usage["judge"].calls >= 6


def test_the_diagnosis_judges_see_only_the_diagnosis_message_and_the_label() -> None:
    script = SensemakingScript()
    seen: list[Sequence[ChatMessage]] = []

    def rules(messages: Sequence[ChatMessage]) -> str:
        seen.append(messages)
        return script(messages)

    output, _ = simulate(rules, {"judges": ["hard", "soft"], "fidelity": False})  # type: ignore[arg-type]
    judged = [m for m in seen if '"correct"' in m[0].content]
    assert len(judged) == 2
    pi = next(
        t.content for t in output.transcript or [] if t.stage == "providing_information" and t.role == "clinician"
    )
    for messages in judged:
        assert pi in messages[-1].content
        assert "major depressive disorder" in messages[-1].content
        assert "Patient:" not in messages[-1].content  # no wider transcript


@pytest.mark.parametrize(("judge_max_repairs", "asked"), [(None, 3), (0, 1)])
def test_judge_max_repairs_bounds_the_re_asks_of_a_malformed_judgement(
    judge_max_repairs: int | None, asked: int
) -> None:
    script = SensemakingScript()
    flow_asks: list[Sequence[ChatMessage]] = []

    flow = load_rubric("sensemaking_flow_correctness")

    def rules(messages: Sequence[ChatMessage]) -> str:
        if all(f'"{c.name}"' in messages[0].content for c in flow.criteria):
            flow_asks.append(messages)
            return "A warm and natural conversation overall"  # never on the scale
        return script(messages)

    options: dict[str, Any] = {"judges": ["flow"], "fidelity": False}
    if judge_max_repairs is not None:
        options["judge_max_repairs"] = judge_max_repairs
    output, _ = simulate(rules, options)  # type: ignore[arg-type]
    assert len(flow_asks) == asked
    assert output.extra["errors"]["judge_flow"].startswith("JudgeError: ")


def test_no_diagnosis_message_leaves_accuracy_absent_not_zero() -> None:
    script = SensemakingScript(redundant=lambda stage: stage in ("gathering", "providing_information"))
    output, _ = simulate(script, {"judges": ["hard", "soft", "flow"], "fidelity": False})
    assert TASK.score("diagnosis_hard", sample(), output) is None
    assert output.extra["skipped"]["judge_hard"].startswith("not applicable")


def test_the_fidelity_checker_flags_a_fact_outside_the_list() -> None:
    def judge(messages: Sequence[ChatMessage]) -> str:
        user = messages[-1].content
        facts = user.split("## The patient's facts", 1)[1].split("##", 1)[0].lower()
        sentences = re.findall(r"^\d+\. (.+)$", user.split("one sentence per line", 1)[1], re.MULTILINE)
        labels = []
        for sentence in sentences:
            words = [w for w in re.findall(r"[a-z]+", sentence.lower()) if len(w) > 4]
            labels.append("entailed" if words and all(w in facts for w in words) else "unsupported")
        return json.dumps({"labels": labels})

    transcript = [
        Turn(role="patient", content="Sleeping terribly lately.", stage="fostering"),
        Turn(role="clinician", content="Tell me more.", stage="gathering"),
        Turn(role="patient", content="Started smoking cigarettes heavily.", stage="gathering"),
        Turn(role="clinician", content="Some ideas for you.", stage="decision_making"),
        Turn(role="patient", content="Sleeping terribly lately.", stage="decision_making"),
    ]
    knowledge = Knowledge(("The person has been sleeping terribly lately.",))

    async def main() -> dict[str, Any]:
        model = get_model("scripted/x", role="judge", options={"rules": judge})
        context = SampleContext({"judge": model}, {}, "0", 0)
        return (await check_fidelity(transcript, knowledge, context)).as_dict()

    report = asyncio.run(main())
    flagged = [s for s in report["sentences"] if s["label"] == "unsupported"]
    assert [s["sentence"] for s in flagged] == ["Started smoking cigarettes heavily."]
    assert fidelity_rate(report, "unsupported", closed=True) == 0.5
    assert fidelity_rate(report, "unsupported", closed=False) == 0.0


def test_the_rubrics_follow_the_paper() -> None:
    susceptibility = load_rubric("sensemaking_susceptibility").criteria[0].anchors
    assert "own situation" in susceptibility["4 (very good)"]
    assert not any("circumstances" in text for text in susceptibility.values())
    benefits = load_rubric("sensemaking_benefits").criteria[0].anchors
    assert benefits["1 (very poor)"].endswith("unhelpful")
    soft = load_rubric("diagnostic_accuracy_soft")
    assert "related" in soft.criteria[0].anchors["1"]
    assert any("anxiety" in g and "1" in g for g in soft.guidance)
    hard = load_rubric("diagnostic_accuracy_hard")
    assert any("anxiety" in g and "0" in g for g in hard.guidance)


class _Row:
    def __init__(self, cell: str, sample_id: str, trait: str, literacy: str, scores: dict[str, float], n: int) -> None:
        self.cell, self.sample_id, self.status, self.error = cell, sample_id, "ok", None
        self.strata = {"trait": trait, "literacy": literacy}
        self.scores = scores
        self.output = {
            "extra": {"excluded": None, "sensemaker_messages": n, "messages_per_stage": {"gathering": n}, "errors": {}}
        }


def test_tables_compare_cells_on_the_intersection_with_model_a_first() -> None:
    from scipy.stats import mannwhitneyu

    from bedside.tasks.sensemaking.tables import report_tables

    hard_a = [1.0, 0.0, 1.0, 1.0]
    hard_b = [0.0, 0.0, 1.0, 0.0]
    rows = []
    for cell, hard in (("o1", hard_a), ("r1", hard_b)):
        for i, value in enumerate(hard):
            trait = "agreeableness" if i % 2 else "neuroticism"
            scores = {"diagnosis_hard": value, "susceptibility": 2.0 + (i % 2), "smog": 10.0 + i}
            rows.append(_Row(cell, f"case{i}/{trait}-basic", trait, "basic", scores, 5 + 4 * i))
    extra = _Row("r1", "case9/openness-basic", "openness", "basic", {"diagnosis_hard": 1.0}, 5)
    rows.append(extra)  # only in one cell: outside the intersection
    tables = {t.title: t for t in report_tables(rows)}
    comparison = tables["MultiSenseEval: model comparison, mean (SD)"]
    hard_row = next(r for r in comparison.rows if r[0] == "Hard %")
    expected = mannwhitneyu(hard_a, hard_b, alternative="two-sided")
    assert hard_row[-1] == f"U = {expected.statistic:.1f}, p = {expected.pvalue:.4f}"
    assert hard_row[1].startswith("75.00 (")
    exclusions = tables["Exclusions by cause, and the persona instances compared"]
    assert [r[-2] for r in exclusions.rows] == ["4", "4"]
    assert [r[-1] for r in exclusions.rows] == ["0", "0"]  # no derived, unreviewed label here
    relative = tables["Relative differences by persona (spec 004 item 52)"]
    gap = next(r for r in relative.rows if r[0] == "o1" and r[2] == "susceptibility: (A − N)/A")
    assert gap[3] == f"{100 * (3.0 - 2.0) / 3.0:+.2f}%"  # A scores 3, N scores 2
    bins = tables["Metric means by conversation length (sensemaker messages)"]
    assert [r[1:3] for r in bins.rows if r[0] == "o1"] == [["5", "1"], ["6-9", "1"], ["10-15", "1"], ["≥16", "1"]]


def test_smog_cross_check_table_correlates_the_two_graders_or_says_how_to_get_textstat() -> None:
    from scipy.stats import pearsonr

    from bedside.tasks.sensemaking.tables import report_tables

    ours, theirs = [9.0, 10.0, 12.0, 13.5], [8.5, 9.0, 11.8, 12.0]
    rows = [
        _Row("o1", f"case{i}/openness-basic", "openness", "basic", {"smog": a, "smog_textstat": b}, 5)
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True))
    ]
    table = next(t for t in report_tables(rows) if t.title.startswith("SMOG cross-check"))
    assert table.rows == [["o1", "4", "11.12", "10.32", "-0.80", f"{pearsonr(ours, theirs).statistic:.2f}", "1.00"]]
    without = [_Row("o1", "case0/openness-basic", "openness", "basic", {"smog": 9.0}, 5)]
    table = next(t for t in report_tables(without) if t.title.startswith("SMOG cross-check"))
    assert table.rows == []
    assert "bedside[readability]" in table.note


PERSONAS = ["openness-basic", "neuroticism-advanced"]


def test_a_run_stores_conversations_and_reports_the_papers_tables(tmp_path: Path) -> None:
    import yaml

    from bedside.runs import Store, execute, load_config
    from bedside.runs.report import build_report

    script = SensemakingScript(stays={"gathering": 1})
    with ScriptedServer(rules=script) as server:
        config_path = tmp_path / "run.yaml"
        config_path.write_text(
            yaml.safe_dump(
                {
                    "name": "sensemaking-test",
                    "task": "sensemaking",
                    "datasets": {"synthetic": {"options": {"cases": 1, "personas": PERSONAS}}},
                    "systems": {"medagent": {"type": "medagent", "options": {"path": "efficient"}}},
                    "models": {
                        "system": [server.model_name("o1"), server.model_name("r1")],
                        "patient": server.model_name("patient"),
                        "helper": server.model_name("helper"),
                        "judge": server.model_name("judge"),
                    },
                    "store": str(tmp_path / "store.sqlite"),
                }
            ),
            encoding="utf-8",
        )  # fmt: skip
        config = load_config(config_path)
        summary = asyncio.run(execute(config, cache=False))
    assert summary.errors == 0
    store = Store(config.store)
    try:
        rows = store.results(config.run_id)
        report = build_report(store, config.run_id)
    finally:
        store.close()
    assert len(rows) == 4
    assert {r.strata["trait"] for r in rows} == {"openness", "neuroticism"}
    assert all(r.scores["completed"] == 1.0 for r in rows)
    titles = [t.title for t in report.tables]
    assert any(t.startswith("MedAgent Table 1") for t in titles)
    assert any(t.startswith("MedAgent Table 2") for t in titles)
    assert any(t.startswith("MultiSenseEval: model comparison") for t in titles)
    assert any(t.startswith("Simulator fidelity") for t in titles)

    # The human validation protocol on this run: blinded items out, agree/disagree labels in, majority of 3.
    from typer.testing import CliRunner

    from bedside.cli import app

    items, key = tmp_path / "items.jsonl", tmp_path / "key.jsonl"
    result = CliRunner().invoke(
        app,
        ["sensemaking", "review-items", config.run_id, "-o", str(items), "--key", str(key), "--store", config.store],
    )
    assert result.exit_code == 0, result.output
    exported = [json.loads(line) for line in items.read_text().splitlines()]
    assert len(exported) == 4 * 6  # 4 samples × 6 judged metrics

    def strings(value: object) -> list[str]:
        if isinstance(value, dict):
            return [*map(str, value), *(s for v in value.values() for s in strings(v))]
        if isinstance(value, list):
            return [s for v in value for s in strings(v)]
        return [value] if isinstance(value, str) else []

    shown = [s for item in exported for s in strings(item)]  # blinded: neither the run nor the model is named
    assert not [s for s in shown if config.run_id in s or s == "o1" or "/o1" in s or "o1@" in s]
    # The same file is a valid `agree` review upload for the web app (bedside review, task type agree).
    pytest.importorskip("fastapi")
    from bedside.web.review import items_from_jsonl

    uploaded = items_from_jsonl("agree", items.read_text())
    assert [item_id for item_id, _, _ in uploaded] == [i["item"] for i in exported]
    assert {payload["metric"] for _, payload, _ in uploaded} == {i["metric"] for i in exported}
    assert all(payload["output"] for _, payload, _ in uploaded)
    flow = [i["item"] for i in exported if i["metric"] == "flow"]
    votes = [(flow[0], [True, True, False]), (flow[1], [False, False, True]), (flow[2], [True, False])]
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"item": item, "metric": "flow", "annotator": f"a{i}", "agree": vote}) + "\n"
            for item, ballot in votes
            for i, vote in enumerate(ballot)
        )
    )
    result = CliRunner().invoke(app, ["sensemaking", "human-agreement", str(labels), "--json"])
    assert result.exit_code == 0, result.output
    (flow_agreement,) = json.loads(result.output)
    assert flow_agreement["items"] == 2  # the 1-1 split has no majority
    assert flow_agreement["ties"] == 1
    assert flow_agreement["rate"] == 0.5
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item": "x", "metric": "flow", "annotator": "a"}\n')
    result = CliRunner().invoke(app, ["sensemaking", "human-agreement", str(bad)])
    assert result.exit_code == 1
    assert "bad.jsonl:1: missing 'agree'" in result.output

    # The round trip through the web app: the file uploaded as an `agree` review, labelled by three annotators,
    # exported in the sensemaking format and read back by human-agreement, under the review-items ids.
    pytest.importorskip("argon2")
    from fastapi.testclient import TestClient

    from bedside.runs.store import Store
    from bedside.web.app import create_app
    from bedside.web.db import create_web_tables
    from bedside.web.security import add_user
    from web_support import csrf_of, login

    web_store = Store(str(tmp_path / "review.sqlite"))
    create_web_tables(web_store.engine)
    annotators = ["a0", "a1", "a2"]
    for name in ["admin", *annotators]:
        add_user(web_store.engine, name, "a long enough password", "admin" if name == "admin" else "annotator")

    def client_of(name: str) -> TestClient:
        client = TestClient(create_app(web_store))
        assert login(client, name, "a long enough password").status_code == 303
        return client

    admin = client_of("admin")
    created = admin.post(
        "/reviews",
        data={
            "csrf": csrf_of(admin.get("/reviews/new").text),
            "name": "sensemaking agreement",
            "task_type": "agree",
            "annotators": annotators,
            "per_annotator": str(len(exported)),
            "overlap": "3",
            "blind": "on",
            "seed": "3",
            "instructions": "Does the judge's score fit the conversation?",
        },
        files={"items": ("items.jsonl", items.read_bytes())},
        follow_redirects=False,
    )
    assert created.status_code == 303, created.text[:500]
    review_id = str(created.headers["location"]).rsplit("/", 1)[1]
    for n, name in enumerate(annotators):
        client = client_of(name)
        page = client.get(f"/reviews/{review_id}")
        labelled = 0
        while "/items/" in str(page.url):
            vote = "yes" if n < 2 else "no"  # two of three agree with the judge on every item
            sent = client.post(str(page.url), data={"csrf": csrf_of(page.text), "agree": vote}, follow_redirects=False)
            assert sent.status_code == 303, sent.text[:500]
            labelled += 1
            page = client.get(sent.headers["location"])
        assert labelled == len(exported)
    export = admin.get(f"/reviews/{review_id}/export?format=sensemaking")
    assert export.status_code == 200
    (tmp_path / "web-labels.jsonl").write_text(export.text)
    result = CliRunner().invoke(app, ["sensemaking", "human-agreement", str(tmp_path / "web-labels.jsonl"), "--json"])
    assert result.exit_code == 0, result.output
    by_metric = {entry["metric"]: entry for entry in json.loads(result.output)}
    assert set(by_metric) == {i["metric"] for i in exported}
    assert all(entry["items"] == len(exported) // len(by_metric) for entry in by_metric.values())
    assert all(entry["rate"] == 1.0 and entry["ties"] == 0 for entry in by_metric.values())
    exported_labels = [json.loads(line) for line in export.text.splitlines()]
    assert {label["item"] for label in exported_labels} == {i["item"] for i in exported}
    web_store.close()


def test_missing_fallbacks_on_the_efficient_path_fall_back_to_the_separate_calls() -> None:
    class NoFallbacks(SensemakingScript):
        def _folded(self, system: str, user: str) -> str:
            answer = json.loads(super()._folded(system, user))
            answer["fallback_messages"] = []
            return json.dumps(answer)

    script = NoFallbacks(redundant=lambda stage: stage == "gathering")
    output, _ = simulate(script, {**LIGHT, "path": "efficient"})
    first = decisions(output)[0]
    assert first["fallback_calls"] == "separate"
    assert first["to_stage"] == "providing_information"
    assert script.calls[:5] == ["patient_opening", "folded", "redundancy", "generate", "redundancy"]
