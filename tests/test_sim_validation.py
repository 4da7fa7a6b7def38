"""The fidelity checker's validation set and the agreement command, against scripted judges."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.llm import ChatMessage
from bedside.llm.scripted import ScriptedRules
from bedside.sim.contradiction import JUDGED_LABELS
from bedside.sim.validation import read_fidelity_items
from bedside.testing import ScriptedServer

ITEMS = read_fidelity_items()
GOLD = {sentence: label for item in ITEMS for sentence, label in zip(item.sentences, item.labels, strict=True)}


def test_the_labelled_set_is_large_enough_and_covers_every_label_and_phase() -> None:
    sentences = [label for item in ITEMS for label in item.labels]
    assert len(sentences) >= 100
    assert set(sentences) == set(JUDGED_LABELS)
    assert {item.phase for item in ITEMS} == {"closed_world", "later"}


def _numbered_sentences(messages: Sequence[ChatMessage]) -> tuple[str, ...]:
    text = messages[-1].content.split("one sentence per line")[1]
    return tuple(m.group(1) for m in re.finditer(r"^\d+\. (.+)$", text.split("Answer with")[0], re.MULTILINE))


def oracle(messages: Sequence[ChatMessage]) -> str:
    return json.dumps({"labels": [GOLD[sentence] for sentence in _numbered_sentences(messages)]})


def everything_entailed(messages: Sequence[ChatMessage]) -> str:
    return json.dumps({"labels": ["entailed"] * len(_numbered_sentences(messages))})


def test_a_judge_that_agrees_with_the_labels_scores_kappa_one() -> None:
    with ScriptedServer(oracle) as server:
        result = CliRunner().invoke(
            app, ["sim", "fidelity-agreement", "-m", server.model_name(), "--no-cache", "--json"]
        )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["overall"] == {"n": len([x for i in ITEMS for x in i.labels]), "accuracy": 1.0, "kappa": 1.0}
    assert data["flagged_recall"] == 1.0
    assert data["failed"] == {}


def test_a_judge_that_flags_nothing_is_seen_to_flag_nothing(tmp_path: Path) -> None:
    with ScriptedServer(everything_entailed) as server:
        result = CliRunner().invoke(app, ["sim", "fidelity-agreement", "-m", server.model_name(), "--no-cache"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    entailed = sum(label == "entailed" for item in ITEMS for label in item.labels)
    total = sum(len(item.labels) for item in ITEMS)
    assert f"| all four labels | {total} | {entailed / total:.3f} | 0.000 |" in text
    assert "flagged recall: 0.000" in text


def test_a_broken_labels_file_names_the_line(tmp_path: Path) -> None:
    item = json.loads(
        (Path(read_fidelity_items.__code__.co_filename).parent / "data" / "fidelity_labelled.jsonl")
        .read_text()
        .splitlines()[0]
    )
    item["labels"] = item["labels"][:-1]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(item) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{re.escape(str(bad))}:1: \d sentences but \d labels"):
        read_fidelity_items(bad)
    result = CliRunner().invoke(app, ["sim", "fidelity-agreement", "--labels", str(bad)])
    assert result.exit_code == 1
    assert "sentences but" in result.output


def test_the_embedding_checker_needs_no_model_and_the_prefilter_asks_about_fewer_sentences() -> None:
    with ScriptedServer(oracle) as server:
        embedding = CliRunner().invoke(
            app,
            ["sim", "fidelity-agreement", "-m", server.model_name(), "--checker", "embedding", "--no-cache", "--json"],
        )
        assert embedding.exit_code == 0, embedding.output
        assert server.stats()["requests"] == 0  # no model call at all
        data = json.loads(embedding.stdout)
        assert data["model"].startswith("embedding")
        assert data["overall"]["kappa"] > 0.2  # 0.34 here; a weak checker, but far above chance
        assert data["per_label"]["contradicted"]["predicted"] == 0  # it cannot see a contradiction

        sent: list[int] = []

        def counting_oracle(messages: Sequence[ChatMessage]) -> str:
            sent.append(len(_numbered_sentences(messages)))
            return oracle(messages)

        server.rules = ScriptedRules.coerce(counting_oracle)
        hybrid = CliRunner().invoke(
            app,
            ["sim", "fidelity-agreement", "-m", server.model_name(), "--prefilter", "0.6", "--no-cache", "--json"],
        )
    assert hybrid.exit_code == 0, hybrid.output
    data = json.loads(hybrid.stdout)
    total = sum(len(item.sentences) for item in ITEMS)
    assert 0 < sum(sent) < total  # the judge was asked about the rest only
    assert len(sent) <= len(ITEMS)  # and a turn left with nothing to ask cost no call
    assert data["overall"]["n"] == total
    assert data["overall"]["accuracy"] < 1.0  # an oracle judge is only as right as the pre-filter lets it be
