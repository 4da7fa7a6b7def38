"""The combined fidelity checker asks a judge only about the sentences its rules leave uncertain (issue 45)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.llm import ChatMessage, GenerationSettings, get_model
from bedside.runs.task import SampleContext, Turn
from bedside.sim.contradiction import ContradictionRules, label_combined
from bedside.sim.fidelity import check_fidelity
from bedside.sim.knowledge import Knowledge
from bedside.testing import ScriptedServer

FACTS = ["I take metformin 500 mg twice a day.", "I live alone in a flat on the third floor."]
NOT_ENGLISH = "Tomo metformina dos veces al día y vivo sola en un piso."
GOLD = {
    NOT_ENGLISH: "entailed",
    "I take metformin 500 mg twice a day.": "entailed",
    "I take metformin 850 mg twice a day.": "contradicted",
}


def _oracle(messages: Sequence[ChatMessage]) -> str:
    text = messages[-1].content.split("latest message")[1].split("Answer with")[0]
    asked = re.findall(r"^\d+\. (.+)$", text, re.MULTILINE)
    return json.dumps({"labels": [GOLD[sentence] for sentence in asked]})


def _set(tmp_path: Path) -> Path:
    rows = [
        {
            "id": f"v-{i}",
            "split": "heldout",
            "case": "diabetes",
            "kind": "k",
            "style": "plain",
            "facts": FACTS,
            "clinician_said": ["What do you take for your sugar?"],
            "sentences": [sentence],
            "labels": [label],
        }
        for i, (sentence, label) in enumerate(GOLD.items())
    ]
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_only_the_uncertain_sentence_is_asked_and_its_label_is_marked_verified() -> None:
    transcript = [
        Turn(role="clinician", content="What do you take for your sugar?"),
        Turn(role="patient", content=f"I take metformin 850 mg twice a day. {NOT_ENGLISH}"),
    ]

    async def check(verify: bool) -> dict[str, Any]:
        async with get_model(server.model_name(), role="judge") as judge:
            context = SampleContext({"judge": judge}, {"judge": GenerationSettings(temperature=0.0)}, epoch="0", seed=0)
            report = await check_fidelity(
                transcript, Knowledge(tuple(FACTS)), context, checker="combined", verify=verify
            )
        return report.as_dict()

    with ScriptedServer(_oracle) as server:
        unverified = asyncio.run(check(False))
        assert server.stats()["requests"] == 0  # the rules alone: no call
        verified = asyncio.run(check(True))
        assert server.stats()["requests"] == 1  # one call, for the one sentence the rules could not read
    assert [s["label"] for s in unverified["sentences"]] == ["contradicted", "uncertain"]
    assert [s["label"] for s in verified["sentences"]] == ["contradicted", "entailed"]
    assert [s.get("verified", False) for s in verified["sentences"]] == [False, True]
    assert verified["verified"] == 1
    assert unverified["verified"] == 0


def test_fidelity_eval_verify_counts_uncertain_apart_and_asks_the_judge(tmp_path: Path) -> None:
    labelled = _set(tmp_path)
    plain = CliRunner().invoke(app, ["sim", "fidelity-eval", "--set", str(labelled), "--checkers", "combined"])
    assert plain.exit_code == 0, plain.output
    assert "uncertain 1 of 3" in " ".join(plain.output.split())
    with ScriptedServer(_oracle) as server:
        result = CliRunner().invoke(
            app,
            ["sim", "fidelity-eval", "-m", server.model_name(), "--set", str(labelled), "--checkers", "combined",
             "--verify", "--no-cache", "--json"],
        )  # fmt: skip
        assert server.stats()["requests"] == 1
    assert result.exit_code == 0, result.output
    (combined,) = json.loads(result.stdout)["sets"][0]["checkers"]
    assert "asked of" in combined["name"]
    figures = combined["splits"]["all"]["per_label"]
    assert figures["uncertain"]["predicted"] == 0
    assert figures["entailed"]["hits"] == 2
    assert figures["contradicted"]["hits"] == 1
    # the Wilson 95% interval the text prints, in the JSON too: 1 of 1 is [0.207, 1.0], not a certain 1.0
    assert figures["contradicted"]["precision_ci_low"] == pytest.approx(0.2065, abs=1e-3)
    assert figures["contradicted"]["precision_ci_high"] == pytest.approx(1.0)
    assert figures["uncertain"]["recall_ci_low"] is None  # no gold uncertain: no interval


def test_verify_without_a_judge_is_refused_with_what_to_give(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["sim", "fidelity-eval", "--set", str(_set(tmp_path)), "--verify"])
    assert result.exit_code != 0
    assert "--model" in result.output
    assert "combined" in result.output
    assert "Traceback" not in result.output


def test_leaving_a_kind_out_shows_what_the_other_rules_catch_of_it(tmp_path: Path) -> None:
    """Issue 45's figure for kinds the rules never saw: each kind's rules taken away, on what it catches."""
    sentence, facts = "I take metformin 850 mg twice a day.", FACTS
    rules = ContradictionRules()
    (full,) = label_combined([sentence], facts, rules=rules)
    assert full.conflict is not None
    assert full.conflict.kind == "number"
    (blind,) = label_combined([sentence], facts, rules=rules.leaving_out(frozenset({"number"})))
    assert blind.label != "contradicted"
    result = CliRunner().invoke(
        app,
        ["sim", "fidelity-eval", "--set", str(_set(tmp_path)), "--checkers", "combined", "--leave-one-kind-out",
         "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (entry,) = json.loads(result.stdout)["sets"]
    assert entry["leave_one_kind_out"] == [
        {"kind": "number", "caught": 1, "still_caught": 0, "uncertain": 0, "missed": 1}
    ]
    shown = CliRunner().invoke(
        app,
        ["sim", "fidelity-eval", "--set", str(_set(tmp_path)), "--checkers", "combined", "--leave-one-kind-out"],
        env={"COLUMNS": "200"},
    )
    assert "one conflict kind left out" in shown.output
    assert re.search(r"number\s*│\s*1\s*│\s*0\s*│\s*0\s*│\s*1", shown.output), shown.output


def test_show_errors_lists_the_sentences_labelled_otherwise(tmp_path: Path) -> None:
    """A newcomer checking their own transcripts could see per-label counts but not which sentence was wrong."""
    labelled = _set(tmp_path)
    result = CliRunner().invoke(
        app, ["sim", "fidelity-eval", "--set", str(labelled), "--checkers", "combined", "--show-errors"]
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"combined labelled v-0 #1 uncertain (yours: entailed): {NOT_ENGLISH!r}" in text
    assert "v-1 #1" not in text  # labelled as its writer did: not listed
    data = CliRunner().invoke(
        app, ["sim", "fidelity-eval", "--set", str(labelled), "--checkers", "combined", "--show-errors", "--json"]
    )
    (combined,) = json.loads(data.stdout)["sets"][0]["checkers"]
    assert combined["errors"] == [
        {"id": "v-0", "index": 1, "sentence": NOT_ENGLISH, "gold": "entailed", "predicted": "uncertain"}
    ]
    # "uncertain" is an abstention, never a hand label: no precision for it (it read 0.000, like an error rate)
    assert combined["splits"]["all"]["per_label"]["uncertain"]["precision"] is None


def test_show_errors_keeps_the_shipped_held_out_sets_unread(tmp_path: Path) -> None:
    from importlib import resources

    everything = CliRunner().invoke(app, ["sim", "fidelity-eval", "--checkers", "combined", "--show-errors"])
    assert everything.exit_code == 1
    assert "give --set" in everything.output
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes((resources.files("bedside.sim") / "data" / "fidelity_heldout_36.jsonl").read_bytes())
    sealed = CliRunner().invoke(
        app, ["sim", "fidelity-eval", "--set", str(copy), "--checkers", "combined", "--show-errors", "--json"]
    )
    assert sealed.exit_code == 0, "a copy of a held-out set failed"  # no output: a failure must not print it
    assert "outside-written 2026-11-30r" in sealed.stderr
    assert "errors" not in json.loads(sealed.stdout)["sets"][0]["checkers"][0]


def test_show_errors_lists_a_development_set_s_errors(tmp_path: Path) -> None:
    """A development set's errors are read already: its copy lists them, as guard-eval lists a development set's
    (once every shipped outside set was sealed, and a round read its development sets with scripts of its own)."""
    from importlib import resources

    copy = tmp_path / "copy.jsonl"
    copy.write_bytes((resources.files("bedside.sim") / "data" / "fidelity_heldout_6.jsonl").read_bytes())
    shown = CliRunner().invoke(
        app, ["sim", "fidelity-eval", "--set", str(copy), "--checkers", "combined", "--show-errors", "--json"]
    )
    assert shown.exit_code == 0, shown.output
    (checker,) = json.loads(shown.stdout)["sets"][0]["checkers"]
    assert checker["errors"], "a development set's errors were not listed"
    assert all(error["id"].startswith("f6-") for error in checker["errors"])


def test_a_held_out_sentence_set_is_one_frozen_and_not_yet_spent() -> None:
    from bedside.sim.validation import BUILTIN_SENTENCE_SETS

    held_out = {s.name for s in BUILTIN_SENTENCE_SETS if s.held_out}
    assert "outside-written 2026-11-30r" in held_out
    assert "outside-written 2026-11-30q" not in held_out  # spent in the fifteenth round
    assert "bedside's own" not in held_out


def test_a_set_line_missing_a_field_or_with_no_facts_is_refused_by_name(tmp_path: Path) -> None:
    row = {"id": "a", "facts": ["I take metformin."], "sentences": ["I take metformin."], "labels": ["entailed"]}
    missing, empty = tmp_path / "missing.jsonl", tmp_path / "empty.jsonl"
    missing.write_text(json.dumps({k: v for k, v in row.items() if k != "labels"}) + "\n", encoding="utf-8")
    empty.write_text(json.dumps({**row, "facts": []}) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["sim", "fidelity-eval", "--set", str(missing), "--checkers", "combined"])
    assert result.exit_code == 1
    assert f"{missing}:1: missing field 'labels'" in " ".join(result.output.split())
    result = CliRunner().invoke(app, ["sim", "fidelity-eval", "--set", str(empty), "--checkers", "combined"])
    assert result.exit_code == 1
    assert f"{empty}:1: facts: empty" in " ".join(result.output.split())
