"""Learned metrics: absent (with the reason) without package or checkpoint, checkpoint names, and UniEval's scoring
computed for real on a tiny randomly initialised T5 saved to a folder."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from bedside.metrics.learned import PACKAGES, checkpoint_name, learned_unavailable, metric_name
from bedside.metrics.lexical import MetricUnavailableError

HAVE_TORCH = all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))
WORDS = [
    "question",
    "answer",
    "record",
    "reference",
    "is",
    "does",
    "this",
    "the",
    "patient",
    "on",
    "lisinopril",
    "10",
    "mg",
    "daily",
    ".",
    "?",
]


def test_each_learned_metric_names_its_missing_package_or_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for kind in PACKAGES:
        reason = learned_unavailable(kind, tmp_path / "missing")
        assert reason is not None
        assert reason.startswith(f"{kind} unavailable: ")
    real = importlib.util.find_spec

    def without_lens(name: str, package: str | None = None) -> object:
        return None if name == "lens" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", without_lens)
    assert learned_unavailable("lens", tmp_path) == (
        "lens unavailable: the lens-metric package is not installed (pip install 'bedside[lens]')"
    )
    with pytest.raises(ValueError, match="unknown learned metric"):
        learned_unavailable("nope", None)


@pytest.mark.skipif(not HAVE_TORCH, reason="needs torch and transformers")
def test_unieval_needs_a_checkpoint_directory(tmp_path: Path) -> None:
    from bedside.metrics.unieval import UniEval

    assert "no local checkpoint directory given" in (learned_unavailable("unieval", None) or "")
    file = tmp_path / "model.bin"
    file.write_bytes(b"")
    assert f"no local checkpoint directory at {file}" in (learned_unavailable("unieval", file) or "")
    with pytest.raises(MetricUnavailableError, match="unieval unavailable"):
        UniEval(tmp_path / "absent")


def test_checkpoint_names_come_from_the_folder_above_checkpoints() -> None:
    assert checkpoint_name("/m/wmt22-comet-da/checkpoints/model.ckpt") == "wmt22-comet-da"
    assert checkpoint_name("/m/lens.ckpt") == "lens"
    assert metric_name("unieval", "/m/unieval-sum/") == "unieval[unieval-sum]"


def _tiny_t5(folder: Path) -> Path:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    vocab = {word: i for i, word in enumerate(["<pad>", "</s>", "<unk>", "Yes", "No", *WORDS])}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    torch.manual_seed(7)
    config = T5Config(
        vocab_size=len(vocab),
        d_model=16,
        d_kv=4,
        d_ff=32,
        num_layers=1,
        num_decoder_layers=1,
        num_heads=2,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )
    T5ForConditionalGeneration(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.mark.skipif(not HAVE_TORCH, reason="needs torch and transformers")
def test_unieval_scores_yes_over_yes_plus_no_per_dimension_on_a_tiny_t5(tmp_path: Path) -> None:
    from bedside.metrics.unieval import DIMENSIONS, UniEval, template
    from bedside.prompts import render

    evaluator = UniEval(_tiny_t5(tmp_path / "tiny-t5"), batch_size=3)
    assert evaluator.name == "unieval[tiny-t5]"
    output = "The patient is on lisinopril 10 mg daily. Does this answer the question?"
    source, reference = "record: lisinopril 10 mg daily", "lisinopril 10 mg daily"
    first, second, empty = evaluator.score([output, output, ""], [source] * 3, [reference] * 3)
    assert first == second  # identical inputs, identical scores (batch position does not matter)
    assert set(first) == {*DIMENSIONS, "overall"}
    assert all(0.0 <= value <= 1.0 for row in (first, empty) for value in row.values())
    assert first["overall"] == pytest.approx(sum(first[d] for d in DIMENSIONS) / 4)

    def asked(dimension: str, text: str) -> float:
        question = render(template(dimension), output=text, source=source, reference=reference)
        return evaluator.yes_probabilities([question])[0]

    sentences = ["The patient is on lisinopril 10 mg daily.", "Does this answer the question?"]
    for dimension in ("fluency", "consistency"):  # asked per sentence, then averaged
        assert first[dimension] == pytest.approx(sum(asked(dimension, s) for s in sentences) / 2, abs=1e-6)
    for dimension in ("relevance", "coherence"):  # asked once about the whole output
        assert first[dimension] == pytest.approx(asked(dimension, output), abs=1e-6)
    assert empty["fluency"] == pytest.approx(asked("fluency", ""), abs=1e-6)  # no sentence: one empty one

    # the probability is Yes renormalised against No on the first decoder token
    import torch

    question = render(template("coherence"), output=output, source=source, reference=reference)
    batch = evaluator._tokenizer([question], return_tensors="pt")
    with torch.no_grad():
        logits = evaluator._model(**batch, decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits[0, 0]
    probabilities = torch.softmax(logits, dim=-1)
    yes, no = probabilities[3].item(), probabilities[4].item()
    assert first["coherence"] == pytest.approx(yes / (yes + no), abs=1e-6)


@pytest.mark.skipif(not HAVE_TORCH, reason="needs torch and transformers")
def test_unieval_questions_can_be_overridden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bedside.metrics.unieval import UniEval

    evaluator = UniEval(_tiny_t5(tmp_path / "tiny-t5"))
    (tmp_path / "mine" / "metrics").mkdir(parents=True)
    (tmp_path / "mine" / "metrics" / "unieval_fluency.j2").write_text("is this daily ? </s> {{ output }}")
    before = evaluator.score(["lisinopril 10 mg daily."], ["record"], ["reference"])[0]
    monkeypatch.setenv("BEDSIDE_PROMPTS", str(tmp_path / "mine"))
    after = evaluator.score(["lisinopril 10 mg daily."], ["record"], ["reference"])[0]
    assert after["fluency"] == pytest.approx(
        evaluator.yes_probabilities(["is this daily ? </s> lisinopril 10 mg daily."])[0]
    )
    assert after["fluency"] != before["fluency"]
    assert after["coherence"] == before["coherence"]  # only the overridden question changed


@pytest.mark.skipif(not HAVE_TORCH, reason="needs torch and transformers")
def test_unieval_rows_in_the_agreement_command_from_a_local_folder(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from bedside.cli import app
    from bedside.tasks.instruct.task import SYNTHETIC_LABELS

    folder = _tiny_t5(tmp_path / "tiny-t5")
    labels = tmp_path / "labels.jsonl"  # three instructions' labels keep the test quick
    lines = SYNTHETIC_LABELS.read_text(encoding="utf-8").splitlines()
    labels.write_text("\n".join(x for x in lines if any(f'"syn-0{i}"' in x for i in (1, 2, 3))), encoding="utf-8")
    result = CliRunner().invoke(
        app, ["instruct", "agreement", str(labels), "--metric", "rougeL", "--unieval", str(folder), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["absent"] == []
    names = [r["name"] for r in data["agreement"]]
    prefix = "unieval[tiny-t5][src=bm25-events-400]:"
    assert names == [
        "rougeL",
        *(prefix + d for d in ("relevance", "fluency", "coherence", "consistency", "overall")),
        "inter-rater",
    ]
    for row in data["agreement"][1:6]:
        assert row["n"] + row["undefined"] == 3


def test_lens_gets_the_bm25_source_as_its_complex_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """lens-metric is not installed here: a stand-in module records what bedside passes to it."""
    import importlib.machinery
    import sys
    import types

    from bedside.tasks.instruct import agreement, primary_labels, read_instructions, read_labels_jsonl
    from bedside.tasks.instruct.ehr import load_ehr
    from bedside.tasks.instruct.task import DEMO_RECORDS, SYNTHETIC_INSTRUCTIONS, SYNTHETIC_LABELS
    from bedside.text.tokens import CharEstimate

    calls: list[dict[str, object]] = []

    class StandIn:
        def __init__(self, path: str, rescale: bool = False) -> None:
            calls.append({"path": path, "rescale": rescale})

        def score(
            self, complex: list[str], simplified: list[str], references: list[list[str]], batch_size: int = 16
        ) -> list[float]:
            calls.append({"complex": complex, "simplified": simplified, "references": references})
            return [float(len(s)) for s in simplified]

    module = types.ModuleType("lens")
    module.__spec__ = importlib.machinery.ModuleSpec("lens", None)
    module.LENS = StandIn  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "lens", module)
    checkpoint = tmp_path / "lens" / "checkpoints" / "epoch=5-step=6102.ckpt"
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_bytes(b"")
    labels = primary_labels(read_labels_jsonl(SYNTHETIC_LABELS))
    cases = {i.id: i for i in read_instructions(SYNTHETIC_INSTRUCTIONS)}
    rows = agreement.learned_agreement(
        "lens", checkpoint, labels, cases, records=str(DEMO_RECORDS), tokenizer=CharEstimate(4)
    )
    assert not isinstance(rows, str), rows
    assert [r.name for r in rows] == ["lens[lens][complex=bm25-events-400]"]
    assert calls[0] == {"path": str(checkpoint), "rescale": True}
    first, case = labels[0], cases[labels[0].instruction_id]
    assert calls[1]["simplified"][0] == first.response  # type: ignore[index]
    assert calls[1]["references"][0] == [case.primary_reference.text]  # type: ignore[index,union-attr]
    source = agreement.source_snippets(load_ehr(case, str(DEMO_RECORDS)), case.question, CharEstimate(4))
    assert calls[1]["complex"][0] == source  # type: ignore[index]


@pytest.mark.skipif(not HAVE_TORCH, reason="needs torch and transformers")
def test_a_checkpoint_folder_that_does_not_load_is_absent_with_its_reason(tmp_path: Path) -> None:
    from bedside.tasks.instruct import agreement, primary_labels, read_instructions, read_labels_jsonl
    from bedside.tasks.instruct.task import DEMO_RECORDS, SYNTHETIC_INSTRUCTIONS, SYNTHETIC_LABELS
    from bedside.text.tokens import CharEstimate

    broken = tmp_path / "unieval-broken"
    broken.mkdir()  # exists, so the availability check passes, but holds no model
    labels = primary_labels(read_labels_jsonl(SYNTHETIC_LABELS))
    cases = {i.id: i for i in read_instructions(SYNTHETIC_INSTRUCTIONS)}
    found = agreement.learned_agreement(
        "unieval", broken, labels, cases, records=str(DEMO_RECORDS), tokenizer=CharEstimate(4)
    )
    assert isinstance(found, str)  # the other rows of the table survive; this one is absent, never zero
    assert found.startswith("unieval[unieval-broken]")
    assert "could not run the checkpoint" in found
