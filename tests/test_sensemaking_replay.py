"""The §4.5 validation of the efficient path: recorded states rebuilt from a reference run, the folded call
replayed on them, the agreement figures and bars, the hybrid path a missed bar asks for, and the CLI."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from bedside.cli import app
from bedside.llm.scripted_server import ScriptedServer
from bedside.runs import Store, execute, load_config
from bedside.runs.store import ResultRow
from bedside.tasks.sensemaking.replay import (
    RecordedState,
    Replayed,
    align,
    compare_paths,
    decision_agreement,
    mining_agreement,
    recorded_states,
)
from bedside.testing.scripted_answers import SensemakingScript
from test_sensemaking import LIGHT, decisions, simulate


def same_text(a: Sequence[str], b: Sequence[str]) -> list[list[float]]:
    """A similarity with no model: 1 for identical texts, else 0."""
    return [[1.0 if x == y else 0.0 for y in b] for x in a]


def state(**fields: Any) -> RecordedState:
    base: dict[str, Any] = {
        "sample_id": "s",
        "exchange": 1,
        "stage": "gathering",
        "in_stage": 1,
        "message": "a",
        "facts": (),
        "said": (),
        "extracted": None,
        "new_facts": None,
        "stage_answer": None,
    }
    return RecordedState(**{**base, **fields})


def stored_run(tmp_path: Path, paths: Sequence[str]) -> tuple[str, str]:
    systems = {f"medagent-{p}": {"type": "medagent", "options": {**LIGHT, "path": p}} for p in paths}
    with ScriptedServer(rules=SensemakingScript(stays={"gathering": 1})) as server:
        config_path = tmp_path / "run.yaml"
        config_path.write_text(
            yaml.safe_dump(
                {
                    "name": "replay-test",
                    "task": "sensemaking",
                    "datasets": {"synthetic": {"options": {"cases": 1, "personas": ["openness-basic"]}}},
                    "systems": systems,
                    "models": {r: server.model_name(r) for r in ("system", "patient", "helper", "judge")},
                    "store": str(tmp_path / "store.sqlite"),
                }
            ),
            encoding="utf-8",
        )
        config = load_config(config_path)
        summary = asyncio.run(execute(config, cache=False))
    assert summary.errors == 0
    return config.run_id, config.store


def rows_of(run_id: str, store: str) -> list[ResultRow]:
    opened = Store(store)
    try:
        return opened.results(run_id)
    finally:
        opened.close()


def validate(run_id: str, store: str, server: ScriptedServer) -> list[str]:
    return [
        "sensemaking",
        "validate-efficient",
        run_id,
        "--store",
        store,
        "-m",
        server.model_name("system"),
        "--no-cache",
    ]


def test_recorded_states_rebuild_what_the_sensemaker_saw_before_each_decision(tmp_path: Path) -> None:
    run_id, store = stored_run(tmp_path, ["reference"])
    (row,) = rows_of(run_id, store)
    assert row.output is not None
    trace = row.output["trace"]
    states = recorded_states([row])
    patient = [t["content"] for t in row.output["transcript"] if t["role"] == "patient"]
    assert len(states) == min(len(trace), len(patient))
    vitals = tuple(row.output["extra"]["case"]["vital_facts"] or ())
    known: list[str] = []
    for k, (recorded, entry) in enumerate(zip(states, trace, strict=False)):
        assert recorded.message == patient[k]
        assert recorded.stage == entry["stage_before"]
        assert recorded.facts == tuple(known)  # F before the exchange: the new facts of the exchanges before
        assert recorded.said[: len(vitals)] == vitals
        assert len(recorded.said) == len(vitals) + k
        details = entry["decision"]
        if details.get("stage_answer_ignored") or "stage_answer" not in details:
            assert recorded.stage_answer is None
        else:
            assert recorded.stage_answer == details["stage_answer"]
        known.extend(details.get("new_facts") or ())
    # Gathering holds one STAY, then MOVE: its decisions are taken after one, then two messages sent there.
    gathering = [s for s in states if s.stage == "gathering"]
    assert [s.in_stage for s in gathering] == [1, 2]
    assert [s.stage_answer for s in gathering] == ["STAY", "MOVE"]
    # Efficient-path samples are not recorded states: their trace holds the folded answers, not the separate ones.
    assert recorded_states([ResultRow(**{**vars(row), "output": {**row.output, "extra": {"path": "efficient"}}})]) == []


def test_folded_facts_are_aligned_one_to_one_and_scored_against_the_separate_labels() -> None:
    recorded = state(message="a", extracted=("a", "b", "c"), new_facts=("a", "b"))
    replayed = [Replayed(recorded, [("a", "new"), ("b", "present"), ("x", "new")], None)]
    figures = mining_agreement(replayed, same_text)
    assert figures["aligned_facts"] == 2  # a and b; x and c have no counterpart
    assert figures["agreement"] == 0.5  # a: new/new, b: new/present
    assert figures["recall_of_new"] == 0.5  # of the separate new facts {a, b}, only a came back new
    assert figures["unaligned_folded"] == 1
    assert figures["unaligned_separate"] == 1
    assert figures["unsupported_share"] == pytest.approx(2 / 3)  # only "a" is a sentence of the message
    assert figures["passes"] is False
    # A state the separate pipeline did not mine is left out.
    assert mining_agreement([Replayed(state(), [("a", "new")], None)], same_text)["states"] == 0


def test_alignment_takes_the_best_pair_first_and_uses_each_fact_once() -> None:
    scores = {("p", "x"): 0.9, ("p", "y"): 0.95, ("q", "y"): 0.8, ("q", "x"): 0.7}

    def similarity(a: Sequence[str], b: Sequence[str]) -> list[list[float]]:
        return [[scores.get((i, j), 0.0) for j in b] for i in a]

    assert align(["p", "q"], ["x", "y"], similarity) == [(0, 1), (1, 0)]  # p-y (0.95), then q-x (0.7)
    assert align(["p", "q"], ["x", "y"], similarity, threshold=0.75) == [(0, 1)]  # q-x is below it


def test_decisions_compare_only_states_both_sides_decided_and_the_bar_is_kappa() -> None:
    answers = [("MOVE", "MOVE"), ("STAY", "STAY"), ("MOVE", "STAY"), ("STAY", "STAY"), ("MOVE", "MOVE")]
    replayed = [Replayed(state(stage_answer=g), None, p) for g, p in answers]
    replayed.append(Replayed(state(stage_answer=None, stage="providing_information"), None, None))  # forced
    figures = decision_agreement(replayed)
    assert figures["states"] == 5
    assert figures["agreement"] == pytest.approx(0.8)
    assert figures["kappa"] == pytest.approx((0.8 - 0.48) / 0.52)  # p_e = .6*.4 + .4*.6
    assert figures["passes"] is (figures["kappa"] >= 0.6)


def test_forced_states_follow_the_stage_rules() -> None:
    assert state(stage="providing_information").forced
    assert state(stage="gathering", in_stage=5).forced  # Gathering's cap
    assert not state(stage="gathering", in_stage=1).forced


@pytest.mark.parametrize(("option", "separate"), [("fold_mining", {"extract", "match"}), ("fold_decision", {"stage"})])
def test_a_step_that_missed_its_bar_keeps_the_reference_call_on_the_efficient_path(
    option: str, separate: set[str]
) -> None:
    folded = SensemakingScript(stays={"gathering": 1})
    simulate(folded, {**LIGHT, "path": "efficient"})
    assert not separate & set(folded.calls)
    hybrid = SensemakingScript(stays={"gathering": 1})
    output, _ = simulate(hybrid, {**LIGHT, "path": "efficient", option: False})
    assert separate <= set(hybrid.calls)
    assert output.extra["termination"] == "completed"
    mined = [d for d in decisions(output) if "extracted" in d]
    assert mined  # facts are still mined, by whichever call
    gathering = [e["decision"] for e in output.trace or [] if e["stage_before"] == "gathering"]
    assert [d["stage_answer"] for d in gathering] == ["STAY", "MOVE"]


def test_validate_efficient_replays_a_reference_run_and_compares_both_paths(tmp_path: Path) -> None:
    run_id, store = stored_run(tmp_path, ["reference", "efficient"])
    rows = rows_of(run_id, store)
    expected = len(recorded_states(rows))
    with ScriptedServer(rules=SensemakingScript()) as server:
        result = CliRunner().invoke(
            app,
            [*validate(run_id, store, server), "--json"],
        )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["states"] == expected
    assert data["failed"] == {}
    assert data["mining"]["states"] > 0
    assert data["decision"]["states"] > 0
    # The scripted folded call labels every fact new, as the separate match did: one class, no κ, bar not met.
    assert data["mining"]["kappa"] is None
    assert "fold_mining: false" in data["keep_reference"]
    full = data["full_runs"]
    assert full["conversations"] == {"reference": 1, "efficient": 1}
    assert "stagnation end" in full["measures"]
    assert set(full["measures"]["facts per exchange"]) == {"reference", "efficient", "overlap"}
    assert compare_paths(rows) == full

    with ScriptedServer(rules=SensemakingScript()) as server:
        text = CliRunner().invoke(
            app,
            [*validate(run_id, store, server), "--limit", "2"],
        )
    assert text.exit_code == 0, text.output
    assert "Folded call vs the reference's separate calls" in text.output
    assert "state 2:" in text.output  # progress, one line per replayed state
    assert "state 3:" not in text.output  # --limit 2
    assert "fold_mining: false" in text.output
    assert "Full runs by path" in text.output


def test_validate_efficient_refuses_a_run_without_reference_conversations(tmp_path: Path) -> None:
    run_id, store = stored_run(tmp_path, ["efficient"])
    result = CliRunner().invoke(
        app, ["sensemaking", "validate-efficient", run_id, "--store", store, "-m", "scripted/x"]
    )
    assert result.exit_code != 0
    assert "no finished reference-path conversation" in result.output
