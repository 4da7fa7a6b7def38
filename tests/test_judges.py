"""Rubric judges against the scripted server: validation, re-asking, typed failure, juries and stability."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bedside.judges import (
    NOT_AVAILABLE,
    JudgeError,
    Jury,
    JuryError,
    PairEvidence,
    RubricError,
    RubricJudge,
    SnippetEvidence,
    answer_model,
    combine_scores,
    load_rubric,
    repeat_judgement,
    shipped_rubrics,
)
from bedside.llm import RetryPolicy, get_model
from bedside.llm.types import ChatMessage
from bedside.prompts import render_chat
from bedside.testing import ScriptedServer

CONVERSATION = (
    "Doctor: You were treated for pneumonia with antibiotics. Take amoxicillin three times a day for 5 more days.\n"
    "Patient: What if I get a fever again?\n"
    "Doctor: Come back if the fever is above 38.5 C or you are short of breath."
)
NOTE = "Community-acquired pneumonia. Amoxicillin 500 mg TID x5 days. Return for fever or dyspnoea. PCP in 1 week."
INPUTS = {"conversation": CONVERSATION, "reference_note": NOTE}
SUMMARY_INPUTS = {
    "summary": "You had pneumonia. Take amoxicillin three times a day for 5 days.",
    "reference_summary": "Pneumonia: amoxicillin 500 mg three times daily for 5 days; see your GP in a week.",
    "conversation": CONVERSATION,
}
LONG_REASON = "The doctor names the antibiotic and the fever threshold but leaves the dose unexplained."
QUOTE = {"quote": "Take amoxicillin three times a day", "supports": True}
SNIPPET = {"snippet": "Take amoxicillin three times a day", "addresses": True, "issue": None}
OMISSION = {"snippet": "N/A", "addresses": False, "issue": "omitted"}
PAIR = {
    "summary_span": "Take amoxicillin three times a day for 5 days.",
    "reference_span": "amoxicillin 500 mg three times daily for 5 days",
    "match": True,
    "issue": None,
}


def answer(
    scores: dict[str, Any],
    evidence: Sequence[dict[str, Any]] = (),
    justification: str = "Specific reasons drawn from the conversation.",
) -> str:
    """A judge's JSON reply giving every criterion the same justification and evidence items."""
    entry = {"justification": justification, "evidence": list(evidence)}
    return json.dumps({name: {"score": score, **entry} for name, score in scores.items()})


CONVERSATION_SCORES = {
    "linguistic_clarity": 3.4,
    "coherence": 3.1,
    "non_repetition": 3.6,
    "personalization_empathy": 2.8,
    "interaction_appropriateness": 3.3,
}


def judge_once(
    server: ScriptedServer, rubric: str = "discharge_conversation", inputs: dict[str, str] = INPUTS, **kwargs: Any
) -> Any:
    async def run() -> Any:
        async with get_model(server.model_name(), role="judge") as model:
            return await RubricJudge(rubric, model, **kwargs).judge(inputs)

    return asyncio.run(run())


def test_every_shipped_rubric_loads_and_renders() -> None:
    names = shipped_rubrics()
    discharge = {
        "discharge_conversation",
        "discharge_content_coverage",
        "discharge_strategy",
        "discharge_summary_a",
        "discharge_summary_b",
    }
    assert discharge == {name for name in names if name.startswith("discharge_")}
    assert {
        "sensemaking_susceptibility",
        "sensemaking_severity",
        "sensemaking_benefits",
        "sensemaking_flow_correctness",
        "diagnostic_accuracy_hard",
        "diagnostic_accuracy_soft",
    } <= set(names)
    rubrics = {name: load_rubric(name) for name in names}
    for rubric in rubrics.values():
        sections = [(label, f"<{name}>") for name, label in {**rubric.inputs, **rubric.optional_inputs}.items()]
        assert render_chat(rubric.template, rubric=rubric, sections=sections)[0].role == "system"
    counts = {name: len(rubric.criteria) for name, rubric in rubrics.items()}
    assert counts["discharge_conversation"] == 5
    assert counts["discharge_content_coverage"] == counts["discharge_strategy"] == 6
    assert counts["discharge_summary_a"] == counts["discharge_summary_b"] == 4
    assert rubrics["sensemaking_benefits"].scale.describe() == "whole numbers 1 to 4"
    assert rubrics["diagnostic_accuracy_hard"].scale.kind == "binary"
    # The non-discharge rubrics keep the default shape: no groups, quoted evidence, no length rule.
    for name in names:
        if name not in discharge:
            assert (rubrics[name].groups, rubrics[name].evidence_kind) == ({}, "quote")
            assert rubrics[name].justification_min_words == 0


def test_the_discharge_rubrics_follow_the_paper() -> None:
    j1, j2, j3, j4, j5 = (
        load_rubric(n)
        for n in (
            "discharge_conversation",
            "discharge_content_coverage",
            "discharge_strategy",
            "discharge_summary_a",
            "discharge_summary_b",
        )
    )
    assert j1.groups == {
        "language_delivery": ["linguistic_clarity", "coherence", "non_repetition"],
        "human_centred": ["personalization_empathy", "interaction_appropriateness"],
    }
    assert [label.split()[0] for label in j1.scale_anchors] == ["5.0", "4.0-4.9", "3.0-3.9", "2.0-2.9", "1.0-1.9"]
    assert all(not c.anchors for c in j1.criteria)
    assert j2.criterion_names == [
        "return_indications",
        "medications",
        "diagnosis",
        "post_discharge_care",
        "hospital_course",
        "follow_up",
    ]
    assert [c.title.rsplit("(", 1)[1] for c in j3.criteria] == ["FR)", "GI)", "PI)", "DM)", "EBC)", "RE)"]
    assert all(list(c.anchors) == ["5.0", "4.0-4.9", "3.0-3.9", "below 3.0"] for c in j3.criteria)
    for rubric in (j1, j2, j3):
        assert "Section 3.1" in rubric.source
        assert set(rubric.inputs) == {"conversation", "reference_note"}
        strictness = " ".join(rubric.guidance)
        assert "extremely rare" in strictness
        assert "more than 3.8 only" in strictness
        assert "between 2.5 and 3.8" in strictness
        assert "uncommon" not in strictness
    assert set(j1.optional_inputs) == {"patient_profile"}
    assert [("Section 3.2" in r.source, "Figure 1" in r.source) for r in (j4, j5)] == [(True, True)] * 2
    assert set(j4.inputs) == {"summary"}
    assert set(j4.optional_inputs) == {"conversation", "patient_profile"}
    assert set(j5.inputs) == {"summary", "reference_summary", "conversation"}
    assert "more than 4.0 only" in " ".join(j4.guidance)
    assert "between 2.5 and 3.8" in " ".join(j4.guidance)
    assert not any("2.5" in rule for rule in j5.guidance)  # J5 has evidence rules instead of a score band
    assert "above 4.0 must be justified by citing specific evidence" in " ".join(j5.guidance)
    assert [r.justification for r in (j1, j2, j3, j4, j5)] == [
        "one or two sentences",
        "more than ten words",
        "more than ten words",
        "one or two sentences",
        "more than ten words",
    ]
    assert [r.justification_min_words for r in (j1, j2, j3, j4, j5)] == [0, 11, 11, 0, 11]
    assert [(r.evidence, r.evidence_kind) for r in (j1, j2, j3, j4, j5)] == [
        (False, "quote"),
        (True, "snippet"),
        (True, "snippet"),
        (False, "quote"),
        (True, "pair"),
    ]


def test_a_valid_answer_passes_and_the_prompt_carries_rubric_and_inputs() -> None:
    with ScriptedServer({"rules": [], "default": answer(CONVERSATION_SCORES)}) as server:
        judgement = judge_once(server)
        sent = server.recent[-1]
    assert judgement.attempts == 1
    assert {name: s.score for name, s in judgement.scores.items()} == CONVERSATION_SCORES
    assert judgement.aggregate == pytest.approx(sum(CONVERSATION_SCORES.values()) / 5)
    # One call, two parts: each group's aggregate comes from its own criteria only.
    assert judgement.groups == {
        "language_delivery": pytest.approx((3.4 + 3.1 + 3.6) / 3),
        "human_centred": pytest.approx((2.8 + 3.3) / 2),
    }
    system, user = sent["messages"][0]["content"], sent["messages"][1]["content"]
    assert '"linguistic_clarity" (Linguistic clarity)' in system
    assert "1.0 to 5.0 (decimals allowed)" in system
    assert 'Part "language_delivery": linguistic_clarity, coherence, non_repetition' in system
    assert 'Part "human_centred": personalization_empathy, interaction_appropriateness' in system
    assert system.index('Part "human_centred"') < system.index('"personalization_empathy" (')
    assert "(one or two sentences)" in system
    assert CONVERSATION in user
    assert NOTE in user
    assert "Patient profile" not in user  # the profile-aware variant is opt-in
    schema = sent["response_format"]["json_schema"]["schema"]
    assert set(schema["required"]) == set(CONVERSATION_SCORES)


def test_a_shared_scale_is_rendered_once_and_per_criterion_anchors_stay_per_criterion() -> None:
    j1 = load_rubric("discharge_conversation")
    system = render_chat(j1.template, rubric=j1, sections=[("C", "x")])[0].content
    assert system.count("One scale for every criterion:") == 1
    for label, text in j1.scale_anchors.items():
        assert system.count(f"- {label}: {text}") == 1
    # Each band line sits after the last criterion, not under each one.
    assert system.index("- 5.0 (perfect)") > system.index('"interaction_appropriateness" (')
    strategy = load_rubric("discharge_strategy")
    system = render_chat(strategy.template, rubric=strategy, sections=[("C", "x")])[0].content
    assert "One scale for every criterion" not in system
    assert system.count("  - below 3.0: ") == 6
    assert "Part " not in system


@pytest.mark.parametrize(
    ("rubric", "bad", "good", "reason"),
    [
        (
            "discharge_conversation",
            {**CONVERSATION_SCORES, "coherence": 7.5},
            CONVERSATION_SCORES,
            "less than or equal to 5",
        ),
        (
            "discharge_conversation",
            {n: 3 for n in CONVERSATION_SCORES if n != "non_repetition"},
            CONVERSATION_SCORES,
            "non_repetition",
        ),
        ("sensemaking_severity", {"severity": 2.5}, {"severity": 3}, "not a whole number"),
    ],
)
def test_invalid_answers_are_re_asked_then_accepted(
    rubric: str, bad: dict[str, Any], good: dict[str, Any], reason: str
) -> None:
    rules = {"rules": [{"pattern": "could not be used", "reply": answer(good)}], "default": answer(bad)}
    inputs = INPUTS if rubric.startswith("discharge") else {"conversation": CONVERSATION}
    with ScriptedServer(rules) as server:

        async def run() -> Any:
            async with get_model(server.model_name(), role="judge") as model:
                return await RubricJudge(rubric, model).judge(inputs)

        judgement = asyncio.run(run())
        repair = server.recent[-1]["messages"][-1]["content"]
    assert judgement.attempts == 2
    assert reason in repair
    assert {name: s.score for name, s in judgement.scores.items()} == good


def test_evidence_is_required_where_the_rubric_says_so() -> None:
    scores = {name: 3.0 for name in load_rubric("discharge_content_coverage").criterion_names}
    rules = {
        "rules": [{"pattern": "could not be used", "reply": answer(scores, [SNIPPET], LONG_REASON)}],
        "default": answer(scores, [], LONG_REASON),
    }
    with ScriptedServer(rules) as server:
        judgement = judge_once(server, "discharge_content_coverage")
        assert "evidence" in server.recent[-1]["messages"][-1]["content"]
    assert judgement.attempts == 2
    item = judgement.scores["medications"].evidence[0]
    assert isinstance(item, SnippetEvidence)
    assert item.snippet == "Take amoxicillin three times a day"


def test_a_justification_below_the_rubric_minimum_is_re_asked_naming_the_criterion() -> None:
    scores = {name: 3.0 for name in load_rubric("discharge_content_coverage").criterion_names}
    short = json.loads(answer(scores, [SNIPPET], LONG_REASON))
    short["follow_up"]["justification"] = "Follow-up is never mentioned at all."  # 6 words; the rubric asks 11+
    rules = {
        "rules": [{"pattern": "could not be used", "reply": answer(scores, [SNIPPET], LONG_REASON)}],
        "default": json.dumps(short),
    }
    with ScriptedServer(rules) as server:
        judgement = judge_once(server, "discharge_content_coverage")
        repair = server.recent[-1]["messages"][-1]["content"]
        system = server.recent[-1]["messages"][0]["content"]
    assert judgement.attempts == 2
    assert "follow_up has 6" in repair
    assert "at least 11 words" in repair
    assert "medications" not in repair
    assert "(more than ten words)" in system
    # Without a minimum, a one-word justification is fine.
    with ScriptedServer({"rules": [], "default": answer(CONVERSATION_SCORES, justification="Clear.")}) as server:
        assert judge_once(server).attempts == 1


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ([{**OMISSION, "addresses": True}], "records an omission"),
        ([{"snippet": "N/A", "addresses": False, "issue": "vague"}], "records an omission"),
        ([QUOTE], "snippet"),
        ([{**SNIPPET, "issue": "made up"}], "issue"),
    ],
)
def test_snippet_evidence_is_checked_and_an_omission_is_na_not_a_quote(bad: list[dict[str, Any]], reason: str) -> None:
    scores = {name: 3.0 for name in load_rubric("discharge_strategy").criterion_names}
    good = [SNIPPET, {**OMISSION, "snippet": " n/a "}, {**SNIPPET, "issue": "vague"}]
    rules = {
        "rules": [{"pattern": "could not be used", "reply": answer(scores, good, LONG_REASON)}],
        "default": answer(scores, bad, LONG_REASON),
    }
    with ScriptedServer(rules) as server:
        judgement = judge_once(server, "discharge_strategy")
        repair = server.recent[-1]["messages"][-1]["content"]
        system = server.recent[-1]["messages"][0]["content"]
    assert judgement.attempts == 2
    assert reason in repair
    evidence = judgement.scores["responding_to_emotions"].evidence
    assert all(isinstance(item, SnippetEvidence) for item in evidence)
    assert [(e.snippet, e.addresses, e.issue) for e in evidence if isinstance(e, SnippetEvidence)] == [
        ("Take amoxicillin three times a day", True, None),
        (NOT_AVAILABLE, False, "omitted"),
        ("Take amoxicillin three times a day", True, "vague"),
    ]
    assert '{"snippet": "N/A", "addresses": false, "issue": "omitted"}' in system
    assert "closest passage" not in system


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ([{**PAIR, "reference_span": "N/A"}], "matching pair"),
        ([{**PAIR, "issue": "vague"}], "matching pair"),
        ([{**PAIR, "summary_span": "N/A", "reference_span": "n/a", "match": False}], "both spans"),
        ([SNIPPET], "summary_span"),
    ],
)
def test_pair_evidence_sets_summary_spans_against_reference_spans(bad: list[dict[str, Any]], reason: str) -> None:
    scores = {name: 3.2 for name in load_rubric("discharge_summary_b").criterion_names}
    unsupported = {"summary_span": "You had pneumonia.", "reference_span": "N/A", "match": False}
    unsupported["issue"] = "hallucinated"
    omitted = {"summary_span": "N/A", "reference_span": "see your GP in a week", "match": False, "issue": "omitted"}
    good = [PAIR, unsupported, omitted]
    rules = {
        "rules": [{"pattern": "could not be used", "reply": answer(scores, good, LONG_REASON)}],
        "default": answer(scores, bad, LONG_REASON),
    }
    with ScriptedServer(rules) as server:
        judgement = judge_once(server, "discharge_summary_b", SUMMARY_INPUTS)
        repair = server.recent[-1]["messages"][-1]["content"]
    assert judgement.attempts == 2
    assert reason in repair
    evidence = judgement.scores["semantic_coverage"].evidence
    assert [e.model_dump() for e in evidence] == good
    assert all(isinstance(item, PairEvidence) for item in evidence)
    # A judgement stays JSON-serialisable whatever the evidence kind (as `bedside judges run --json` writes it).
    written = json.loads(json.dumps(dataclasses.asdict(judgement), default=lambda m: m.model_dump()))
    assert written["scores"]["semantic_coverage"]["evidence"][2]["issue"] == "omitted"
    assert written["groups"] == {}


def test_the_answer_schema_follows_the_evidence_kind() -> None:
    def item_fields(rubric: str) -> set[str]:
        defs = answer_model(load_rubric(rubric)).model_json_schema()["$defs"]
        ref = defs["CriterionAnswer"]["properties"]["evidence"]["items"]["$ref"]
        return set(defs[ref.rsplit("/", 1)[1]]["properties"])

    assert item_fields("sensemaking_severity") == {"quote", "supports", "issue"}
    assert item_fields("discharge_content_coverage") == {"snippet", "addresses", "issue"}
    assert item_fields("discharge_summary_b") == {"summary_span", "reference_span", "match", "issue"}


def test_a_judge_that_never_answers_validly_is_a_typed_error_not_a_score() -> None:
    with ScriptedServer({"rules": [], "default": "I would give it a four."}) as server:
        with pytest.raises(JudgeError) as caught:
            judge_once(server, max_repairs=1)
        assert server.stats()["requests"] == 2
    error = caught.value
    assert error.rubric == "discharge_conversation"
    assert "not valid JSON" in error.cause
    assert error.attempts == 2
    assert error.last_text == "I would give it a four."


def test_transport_failures_become_judge_errors() -> None:
    with ScriptedServer({"rules": [], "default": answer(CONVERSATION_SCORES)}, faults="500=1.0") as server:

        async def run() -> Any:
            async with get_model(
                server.model_name(), role="judge", retry=RetryPolicy(max_retries=1, initial_delay_s=0.01)
            ) as model:
                return await RubricJudge("discharge_conversation", model).judge(INPUTS)

        with pytest.raises(JudgeError, match="RetriesExhaustedError"):
            asyncio.run(run())


def test_missing_or_unknown_inputs_are_refused_before_any_call() -> None:
    with ScriptedServer({"rules": [], "default": answer(CONVERSATION_SCORES)}) as server:

        async def run(inputs: dict[str, str]) -> Any:
            async with get_model(server.model_name(), role="judge") as model:
                return await RubricJudge("discharge_conversation", model).judge(inputs)

        with pytest.raises(ValueError, match="needs the input"):
            asyncio.run(run({"conversation": CONVERSATION}))
        with pytest.raises(ValueError, match="no input"):
            asyncio.run(run({**INPUTS, "summary": "x"}))
        assert server.stats()["requests"] == 0


def rules_for(scores: dict[str, Any]) -> dict[str, Any]:
    return {"rules": [], "default": answer(scores)}


def run_jury(servers: list[ScriptedServer], aggregate: str, rubric: str = "discharge_conversation") -> Any:
    async def run() -> Any:
        models = [get_model(s.model_name(), role="judge") for s in servers]
        try:
            judges = [RubricJudge(rubric, m, name=f"judge{i}") for i, m in enumerate(models)]
            return await Jury(judges, aggregate=aggregate).judge(  # type: ignore[arg-type]
                INPUTS if rubric.startswith("discharge") else {"diagnosis_statement": "MDD", "true_diagnosis": "MDD"}
            )
        finally:
            for m in models:
                await m.aclose()

    return asyncio.run(run())


def test_a_jury_of_two_keeps_each_judge_and_aggregates_as_configured() -> None:
    other = {**CONVERSATION_SCORES, "linguistic_clarity": 2.0, "coherence": 4.1, "personalization_empathy": 3.8}
    with ScriptedServer(rules_for(CONVERSATION_SCORES)) as one, ScriptedServer(rules_for(other)) as two:
        mean = run_jury([one, two], "mean")
        median = run_jury([one, two], "median")
    assert set(mean.judgements) == {"judge0", "judge1"}
    assert mean.judgements["judge1"].score("coherence") == 4.1
    assert mean.scores["linguistic_clarity"] == pytest.approx(2.7)
    assert median.scores == mean.scores  # the median of two is their mean
    assert mean.agreement["non_repetition"] == 1.0
    assert mean.aggregate == pytest.approx((2.7 + 3.6 + 3.6 + 3.3 + 3.3) / 5)
    assert mean.groups == {
        "language_delivery": pytest.approx((2.7 + 3.6 + 3.6) / 3),
        "human_centred": pytest.approx((3.3 + 3.3) / 2),
    }
    assert mean.errors == {}


def test_majority_breaks_ties_toward_the_lower_score() -> None:
    yes, no = {"correct": 1}, {"correct": 0}
    with ScriptedServer(rules_for(yes)) as a, ScriptedServer(rules_for(no)) as b, ScriptedServer(rules_for(yes)) as c:
        split = run_jury([a, b], "majority", "diagnostic_accuracy_hard")
        two_to_one = run_jury([a, b, c], "majority", "diagnostic_accuracy_hard")
    assert split.scores["correct"] == 0
    assert split.agreement["correct"] == 0.5
    assert two_to_one.scores["correct"] == 1
    assert two_to_one.agreement["correct"] == pytest.approx(2 / 3)
    assert combine_scores([3, 4, 4, 2], "majority") == 4


def test_a_failed_juror_is_listed_and_a_jury_with_no_answers_raises() -> None:
    broken = {"rules": [], "default": "no idea"}
    with ScriptedServer(rules_for(CONVERSATION_SCORES)) as good, ScriptedServer(broken) as bad:
        verdict = run_jury([good, bad], "mean")
        assert set(verdict.judgements) == {"judge0"}
        assert "not valid JSON" in verdict.errors["judge1"]
        assert verdict.scores == CONVERSATION_SCORES
        with pytest.raises(JuryError, match=r"judge0: .*judge1: "):
            run_jury([bad, bad], "mean")


def test_stability_draws_use_distinct_epochs_and_report_the_spread() -> None:
    draws = iter([3.0, 3.5, 4.0, 3.5])

    def vary(messages: Sequence[ChatMessage]) -> str:
        score = next(draws)
        return answer({**CONVERSATION_SCORES, "linguistic_clarity": score, "coherence": 3.0, "non_repetition": 3.0})

    with ScriptedServer({"rules": [], "default": "x"}) as server:
        server.rules = type(server.rules)(default=vary)

        async def run() -> Any:
            async with get_model(server.model_name(), role="judge") as model:
                judge = RubricJudge("discharge_conversation", model)
                return await repeat_judgement(judge, INPUTS, 4)

        stability = asyncio.run(run())
        assert server.stats()["requests"] == 4  # distinct epochs: no cache hit between draws
    clarity = stability.criteria["linguistic_clarity"]
    assert sorted(j.score("linguistic_clarity") for j in stability.judgements) == [3.0, 3.5, 3.5, 4.0]
    assert clarity.mean == pytest.approx(3.5)
    assert clarity.stdev == pytest.approx(0.408248290463863)
    assert (clarity.low, clarity.high, clarity.range) == (3.0, 4.0, 1.0)
    assert stability.criteria["coherence"].stdev == 0.0
    assert stability.groups["language_delivery"].mean == pytest.approx((3.5 + 3.0 + 3.0) / 3)
    assert stability.groups["human_centred"].stdev == 0.0
    assert {j.epoch for j in stability.judgements} == {f"stability-{i}" for i in range(4)}


def test_rubric_files_are_validated_with_file_and_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = load_rubric("sensemaking_severity")
    bad = tmp_path / "mine.toml"
    bad.write_text(
        'id = "mine"\ntitle = "t"\njudge_role = "r"\ntask = "t"\n[scale]\nmin = 4\nmax = 1\n'
        '[inputs]\nconversation = "C"\n[[criteria]]\nname = "Bad Name"\ntitle = "x"\ndefinition = "d"\n',
        encoding="utf-8",
    )
    with pytest.raises(RubricError) as caught:
        load_rubric(bad)
    message = str(caught.value)
    assert str(bad) in message
    assert "scale" in message
    assert "criteria.0.name" in message
    with pytest.raises(RubricError, match="no rubric 'nope'"):
        load_rubric("nope")
    # An override in BEDSIDE_RUBRICS replaces the shipped rubric of the same id.
    override = tmp_path / "sensemaking_severity.yaml"
    data = source.model_dump()
    data["title"] = "Local severity rubric"
    import yaml

    override.write_text(yaml.safe_dump(data), encoding="utf-8")
    monkeypatch.setenv("BEDSIDE_RUBRICS", str(tmp_path))
    assert load_rubric("sensemaking_severity").title == "Local severity rubric"


def rubric_file(tmp_path: Path, groups: str) -> Path:
    path = tmp_path / "grouped.toml"
    path.write_text(
        'id = "grouped"\ntitle = "t"\njudge_role = "r"\ntask = "t"\n[scale]\nmin = 1\nmax = 5\n'
        '[inputs]\nconversation = "C"\n'
        '[[criteria]]\nname = "a"\ntitle = "A"\ndefinition = "d"\n'
        '[[criteria]]\nname = "b"\ntitle = "B"\ndefinition = "d"\n'
        '[[criteria]]\nname = "c"\ntitle = "C"\ndefinition = "d"\n'
        f"[groups]\n{groups}\n",
        encoding="utf-8",
    )
    return path


def test_groups_aggregate_their_criteria_with_the_rubric_aggregate(tmp_path: Path) -> None:
    rubric = load_rubric(rubric_file(tmp_path, 'first = ["a", "c"]\nsecond = ["b"]'))
    scores = {"a": 1.0, "b": 4.0, "c": 2.0}
    assert rubric.group_scores(scores) == {"first": 1.5, "second": 4.0}
    assert rubric.combine(list(scores.values())) == pytest.approx(7 / 3)
    assert [(part, [c.name for c in criteria]) for part, criteria in rubric.parts] == [
        ("first", ["a", "c"]),
        ("second", ["b"]),
    ]
    ungrouped = load_rubric(rubric_file(tmp_path, 'first = ["c"]'))
    assert [(part, [c.name for c in criteria]) for part, criteria in ungrouped.parts] == [
        ("first", ["c"]),
        (None, ["a", "b"]),
    ]
    assert load_rubric("sensemaking_severity").group_scores({"severity": 3}) == {}


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        ('first = ["a", "nope"]', "group 'first' lists 'nope', which is not a criterion"),
        ('first = ["a"]\nsecond = ["b", "a"]', "group 'second' lists 'a' in 'first' too"),
        ('first = ["a", "a"]', "group 'first' lists 'a' twice"),
        ("first = []", "group 'first' lists no criteria"),
        ('"Bad Group" = ["a"]', "groups.Bad Group.[key]"),
    ],
)
def test_bad_groups_are_rejected_with_file_and_key(tmp_path: Path, groups: str, message: str) -> None:
    path = rubric_file(tmp_path, groups)
    with pytest.raises(RubricError) as caught:
        load_rubric(path)
    text = str(caught.value)
    assert text.startswith(f"{path}: groups")
    assert message in text
