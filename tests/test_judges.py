"""Rubric judges against the scripted server: validation, re-asking, typed failure, juries and stability."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bedside.judges import (
    JudgeError,
    Jury,
    JuryError,
    RubricError,
    RubricJudge,
    combine_scores,
    load_rubric,
    repeat_judgement,
    shipped_rubrics,
)
from bedside.llm import RetryPolicy, get_model
from bedside.llm.types import ChatMessage
from bedside.testing import ScriptedServer

CONVERSATION = (
    "Doctor: You were treated for pneumonia with antibiotics. Take amoxicillin three times a day for 5 more days.\n"
    "Patient: What if I get a fever again?\n"
    "Doctor: Come back if the fever is above 38.5 C or you are short of breath."
)
NOTE = "Community-acquired pneumonia. Amoxicillin 500 mg TID x5 days. Return for fever or dyspnoea. PCP in 1 week."
INPUTS = {"conversation": CONVERSATION, "reference_note": NOTE}


def answer(scores: dict[str, Any], evidence: bool = False) -> str:
    def entry(score: Any) -> dict[str, Any]:
        quotes = [{"quote": "Take amoxicillin three times a day", "supports": True}] if evidence else []
        return {"score": score, "justification": "Specific reasons drawn from the conversation.", "evidence": quotes}

    return json.dumps({name: entry(score) for name, score in scores.items()})


LANGUAGE = {"linguistic_clarity": 3.4, "coherence": 3.1, "non_repetition": 3.6}


def judge_once(server: ScriptedServer, rubric: str = "discharge_language_delivery", **kwargs: Any) -> Any:
    async def run() -> Any:
        async with get_model(server.model_name(), role="judge") as model:
            return await RubricJudge(rubric, model, **kwargs).judge(INPUTS)

    return asyncio.run(run())


def test_every_shipped_rubric_loads_and_renders() -> None:
    names = shipped_rubrics()
    assert {
        "discharge_language_delivery",
        "discharge_human_centred",
        "discharge_content_coverage",
        "discharge_strategy",
        "discharge_summary_a",
        "discharge_summary_b",
        "sensemaking_susceptibility",
        "sensemaking_severity",
        "sensemaking_benefits",
        "sensemaking_flow_correctness",
        "diagnostic_accuracy_hard",
        "diagnostic_accuracy_soft",
    } <= set(names)
    counts = {name: len(load_rubric(name).criteria) for name in names}
    assert counts["discharge_content_coverage"] == counts["discharge_strategy"] == 6
    assert counts["discharge_summary_a"] == counts["discharge_summary_b"] == 4
    assert load_rubric("sensemaking_benefits").scale.describe() == "whole numbers 1 to 4"
    assert load_rubric("diagnostic_accuracy_hard").scale.kind == "binary"


def test_a_valid_answer_passes_and_the_prompt_carries_rubric_and_inputs() -> None:
    with ScriptedServer({"rules": [], "default": answer(LANGUAGE)}) as server:
        judgement = judge_once(server)
        sent = server.recent[-1]
    assert judgement.attempts == 1
    assert {name: s.score for name, s in judgement.scores.items()} == LANGUAGE
    assert judgement.aggregate == pytest.approx(sum(LANGUAGE.values()) / 3)
    system, user = sent["messages"][0]["content"], sent["messages"][1]["content"]
    assert '"linguistic_clarity" (Linguistic clarity)' in system
    assert "1.0 to 5.0 (decimals allowed)" in system
    assert CONVERSATION in user
    assert NOTE in user
    schema = sent["response_format"]["json_schema"]["schema"]
    assert set(schema["required"]) == set(LANGUAGE)


@pytest.mark.parametrize(
    ("rubric", "bad", "good", "reason"),
    [
        ("discharge_language_delivery", {**LANGUAGE, "coherence": 7.5}, LANGUAGE, "less than or equal to 5"),
        ("discharge_language_delivery", {"linguistic_clarity": 3, "coherence": 3}, LANGUAGE, "non_repetition"),
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
        "rules": [{"pattern": "could not be used", "reply": answer(scores, evidence=True)}],
        "default": answer(scores, evidence=False),
    }
    with ScriptedServer(rules) as server:
        judgement = judge_once(server, "discharge_content_coverage")
        assert "evidence" in server.recent[-1]["messages"][-1]["content"]
    assert judgement.attempts == 2
    assert judgement.scores["medications"].evidence[0].quote == "Take amoxicillin three times a day"


def test_a_judge_that_never_answers_validly_is_a_typed_error_not_a_score() -> None:
    with ScriptedServer({"rules": [], "default": "I would give it a four."}) as server:
        with pytest.raises(JudgeError) as caught:
            judge_once(server, max_repairs=1)
        assert server.stats()["requests"] == 2
    error = caught.value
    assert error.rubric == "discharge_language_delivery"
    assert "not valid JSON" in error.cause
    assert error.attempts == 2
    assert error.last_text == "I would give it a four."


def test_transport_failures_become_judge_errors() -> None:
    with ScriptedServer({"rules": [], "default": answer(LANGUAGE)}, faults="500=1.0") as server:

        async def run() -> Any:
            async with get_model(
                server.model_name(), role="judge", retry=RetryPolicy(max_retries=1, initial_delay_s=0.01)
            ) as model:
                return await RubricJudge("discharge_language_delivery", model).judge(INPUTS)

        with pytest.raises(JudgeError, match="RetriesExhaustedError"):
            asyncio.run(run())


def test_missing_or_unknown_inputs_are_refused_before_any_call() -> None:
    with ScriptedServer({"rules": [], "default": answer(LANGUAGE)}) as server:

        async def run(inputs: dict[str, str]) -> Any:
            async with get_model(server.model_name(), role="judge") as model:
                return await RubricJudge("discharge_language_delivery", model).judge(inputs)

        with pytest.raises(ValueError, match="needs the input"):
            asyncio.run(run({"conversation": CONVERSATION}))
        with pytest.raises(ValueError, match="no input"):
            asyncio.run(run({**INPUTS, "summary": "x"}))
        assert server.stats()["requests"] == 0


def rules_for(scores: dict[str, Any]) -> dict[str, Any]:
    return {"rules": [], "default": answer(scores)}


def run_jury(servers: list[ScriptedServer], aggregate: str, rubric: str = "discharge_language_delivery") -> Any:
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
    other = {"linguistic_clarity": 2.0, "coherence": 4.1, "non_repetition": 3.6}
    with ScriptedServer(rules_for(LANGUAGE)) as one, ScriptedServer(rules_for(other)) as two:
        mean = run_jury([one, two], "mean")
        median = run_jury([one, two], "median")
    assert set(mean.judgements) == {"judge0", "judge1"}
    assert mean.judgements["judge1"].score("coherence") == 4.1
    assert mean.scores["linguistic_clarity"] == pytest.approx(2.7)
    assert median.scores == mean.scores  # the median of two is their mean
    assert mean.agreement["non_repetition"] == 1.0
    assert mean.aggregate == pytest.approx((2.7 + 3.6 + 3.6) / 3)
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
    with ScriptedServer(rules_for(LANGUAGE)) as good, ScriptedServer(broken) as bad:
        verdict = run_jury([good, bad], "mean")
        assert set(verdict.judgements) == {"judge0"}
        assert "not valid JSON" in verdict.errors["judge1"]
        assert verdict.scores == LANGUAGE
        with pytest.raises(JuryError, match=r"judge0: .*judge1: "):
            run_jury([bad, bad], "mean")


def test_stability_draws_use_distinct_epochs_and_report_the_spread() -> None:
    draws = iter([3.0, 3.5, 4.0, 3.5])

    def vary(messages: Sequence[ChatMessage]) -> str:
        score = next(draws)
        return answer({"linguistic_clarity": score, "coherence": 3.0, "non_repetition": 3.0})

    with ScriptedServer({"rules": [], "default": "x"}) as server:
        server.rules = type(server.rules)(default=vary)

        async def run() -> Any:
            async with get_model(server.model_name(), role="judge") as model:
                judge = RubricJudge("discharge_language_delivery", model)
                return await repeat_judgement(judge, INPUTS, 4)

        stability = asyncio.run(run())
        assert server.stats()["requests"] == 4  # distinct epochs: no cache hit between draws
    clarity = stability.criteria["linguistic_clarity"]
    assert sorted(j.score("linguistic_clarity") for j in stability.judgements) == [3.0, 3.5, 3.5, 4.0]
    assert clarity.mean == pytest.approx(3.5)
    assert clarity.stdev == pytest.approx(0.408248290463863)
    assert (clarity.low, clarity.high, clarity.range) == (3.0, 4.0, 1.0)
    assert stability.criteria["coherence"].stdev == 0.0
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
