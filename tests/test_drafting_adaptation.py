"""SFT chats and TADPOLE preference pairs, built against the scripted server and checked record by record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.tasks.drafting.adaptation import PreferenceTuple, enhancement_examples, preference_pairs
from bedside.tasks.drafting.themes import RESPONSE_THEMES
from bedside.testing import ScriptedServer

runner = CliRunner()
BASE = "Please rest and drink fluids."
RULES = [
    (r"Improved reply:\s*$", "I'm sorry you feel unwell. Please rest and drink fluids."),
    (r"Edited reply:\s*$", "Drink fluids."),
    (r"Patient(?:'s)? message:", BASE),
]


def read(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_sft_export_has_one_chat_per_reply(tmp_path: Path) -> None:
    output = tmp_path / "sft.jsonl"
    result = runner.invoke(app, ["drafting", "export-sft", "--cases", "demo", "-o", str(output)])
    assert result.exit_code == 0, result.output
    chats = read(output)
    assert len(chats) == 14 + 8  # every reply of both demo clinicians
    first = chats[0]["messages"]
    assert [m["role"] for m in first] == ["user", "assistant"]  # the zero-shot prompt is one user turn (Fig. 7)
    assert "Patient's message:" in first[0]["content"]
    assert first[1]["content"].startswith("I'm sorry the cough is keeping you up.")


def test_tadpole_writes_tuples_and_four_pair_sets(tmp_path: Path) -> None:
    folder = tmp_path / "tadpole"
    with ScriptedServer(RULES) as server:
        result = runner.invoke(
            app,
            ["drafting", "tadpole", "--cases", "demo", "-m", server.model_name("sft"), "-o", str(folder),
             "--limit", "9", "--no-cache"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert server.stats()["requests"] == 9 * 3  # base draft, enhancement, corruption per case
    tuples = read(folder / "tuples.jsonl")
    assert len(tuples) == 9
    # Themes go round robin: the ninth case wraps to the first theme.
    assert [t["theme"] for t in tuples] == [*RESPONSE_THEMES, RESPONSE_THEMES[0]]
    assert tuples[0]["base"] == BASE
    enhanced = read(folder / "dpo_enhanced.jsonl")
    assert enhanced[0]["chosen"] == [{"role": "assistant", "content": tuples[0]["enhanced"]}]
    assert enhanced[0]["rejected"] == [{"role": "assistant", "content": BASE}]
    assert enhanced[0]["prompt"][-1]["role"] == "user"
    corrupted = read(folder / "dpo_corrupted.jsonl")
    assert (corrupted[0]["chosen"][0]["content"], corrupted[0]["rejected"][0]["content"]) == (BASE, "Drink fluids.")
    hard = read(folder / "dpo_hard_corrupted.jsonl")
    assert hard[0]["chosen"][0]["content"] == tuples[0]["enhanced"]
    assert hard[0]["rejected"][0]["content"] == "Drink fluids."
    blend = read(folder / "dpo_blend.jsonl")
    assert [p["pair"] for p in blend][:4] == ["enhanced", "corrupted", "hard_corrupted", "enhanced"]


@pytest.mark.parametrize(
    ("enhanced", "corrupted", "limit"),
    [
        (BASE, "x", 2),  # the enhancement agent changed nothing
        ("Please rest, drink fluids and call if worse.", "Please rest, drink fluids and call if worse.", 3),
    ],
    ids=["agent-changed-nothing", "both-agents-same-text"],
)
def test_tuples_with_nothing_to_prefer_are_dropped(tmp_path: Path, enhanced: str, corrupted: str, limit: int) -> None:
    """r+ == r or r- == r, and r+ == r- (seen with the embedded model), each leave a pair with nothing to prefer."""
    rules = [(r"Improved reply:\s*$", enhanced), (r"Edited reply:\s*$", corrupted), (r"", BASE)]
    with ScriptedServer(rules) as server:
        result = runner.invoke(
            app,
            ["drafting", "tadpole", "--cases", "demo", "-m", server.model_name("m"), "-o", str(tmp_path),
             "--limit", str(limit), "--no-cache"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"0 tuples ({limit} dropped)" in result.output


def test_every_theme_has_three_examples_and_unknown_set_is_refused() -> None:
    examples = enhancement_examples()
    assert all(len(examples[t]) == 3 for t in RESPONSE_THEMES)
    t = PreferenceTuple("c", "empathy", [], "e", "b", "x")
    with pytest.raises(ValueError, match="unknown pair set"):
        preference_pairs([t], "best")


def test_export_judge_writes_sft_chats_the_trainer_reads(tmp_path: Path) -> None:
    from bedside.tasks.drafting.validation import read_annotations
    from bedside.training.data import read_sft

    output = tmp_path / "judge.jsonl"
    result = runner.invoke(app, ["drafting", "export-judge", "-o", str(output)])
    assert result.exit_code == 0, result.output
    annotations = read_annotations()
    chats = read(output)
    assert len(chats) == len(annotations) == 309
    assert len(read_sft(output)) == 309  # the trainer's own checks accept every line
    for chat, annotation in zip(chats, annotations, strict=True):
        messages = chat["messages"]
        assert annotation.sentence in messages[-2]["content"]
        assert messages[-1] == {"role": "assistant", "content": annotation.gold or "NO MATCH"}
    # Keeping an evaluation set's drafts out of the training chats.
    held = tmp_path / "held.jsonl"
    held.write_text("".join(json.dumps(a.model_dump()) + "\n" for a in annotations[:5]), encoding="utf-8")
    fewer = tmp_path / "fewer.jsonl"
    result = runner.invoke(app, ["drafting", "export-judge", "-o", str(fewer), "--exclude", str(held)])
    assert result.exit_code == 0, result.output
    assert len(read(fewer)) == 309 - sum(a.draft == annotations[0].draft for a in annotations)


def test_split_annotations_by_draft_is_seeded_and_disjoint(tmp_path: Path) -> None:
    from bedside.tasks.drafting.validation import read_annotations, split_by_draft

    annotations = read_annotations()
    train, held = split_by_draft(annotations, held_out=0.2, seed=0)
    assert len(train) + len(held) == 309
    assert not {a.draft for a in train} & {a.draft for a in held}  # no draft on both sides
    assert len({a.draft for a in held}) == 7  # round(0.2 * 37 drafts)
    assert split_by_draft(annotations, seed=0) == (train, held)
    assert split_by_draft(annotations, seed=1) != (train, held)
    with pytest.raises(ValueError, match="between 0 and 1"):
        split_by_draft(annotations, held_out=1.0)

    result = runner.invoke(app, ["drafting", "split-annotations", "-o", str(tmp_path / "split")])
    assert result.exit_code == 0, result.output
    assert [a["id"] for a in read(tmp_path / "split" / "heldout.jsonl")] == [a.id for a in held]
    assert len(read(tmp_path / "split" / "train.jsonl")) == len(train)
    # the held-out file reads back as annotations (calibrate) and keeps its drafts out of export-judge
    result = runner.invoke(
        app,
        [
            "drafting",
            "export-judge",
            "-o",
            str(tmp_path / "judge.jsonl"),
            "--exclude",
            str(tmp_path / "split" / "heldout.jsonl"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert len(read(tmp_path / "judge.jsonl")) == len(train)
