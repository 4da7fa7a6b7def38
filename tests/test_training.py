"""``bedside train sft|dpo``: data checks, the paper's recipe, and real LoRA steps on SmolLM2 on the CPU."""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.tasks.drafting.adaptation import PreferenceTuple, preference_pairs, sft_records, write_jsonl
from bedside.tasks.drafting.readers import read_cases
from bedside.tasks.drafting.systems import zero_shot_chat
from bedside.training import TrainingDataError, paper_recipe, read_dpo, read_sft

runner = CliRunner()
TRAIN_LIBRARIES = ("torch", "transformers", "peft", "trl", "datasets")


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def _pairs(count: int) -> list[dict[str, Any]]:
    """Hard-corrupted pairs in the format `bedside drafting tadpole` writes, built without an LLM."""
    tuples = []
    for case in read_cases("demo")[:count]:
        reply = case.references[0].text
        prompt = [{"role": m.role, "content": m.content} for m in zero_shot_chat(case)]
        enhanced = "I'm sorry this has been worrying you. " + reply
        tuples.append(PreferenceTuple(case.id, "empathy", prompt, enhanced, reply, reply.split(".")[0] + "."))
    return preference_pairs(tuples, "hard_corrupted")


# --- data ---------------------------------------------------------------------------------------------------


def test_sft_export_reads_as_prompt_and_reply(tmp_path: Path) -> None:
    records = sft_records(read_cases("demo"))
    path = tmp_path / "sft.jsonl"
    write_jsonl(path, records)
    examples = read_sft(path)
    assert len(examples) == len(records) == 22  # 14 replies by dr-a, 8 by np-b
    first = examples[0]
    assert [m["role"] for m in first["prompt"]] == ["user"]  # the zero-shot prompt is one user turn (Fig. 7)
    assert first["completion"] == [records[0]["messages"][-1]]


def test_tadpole_pairs_read_and_extra_fields_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "dpo.jsonl"
    write_jsonl(path, _pairs(3))
    pairs = read_dpo(path)
    assert len(pairs) == 3
    assert set(pairs[0]) == {"prompt", "chosen", "rejected"}
    assert pairs[0]["chosen"][0]["content"].startswith("I'm sorry")


GOOD_CHAT = [{"role": "user", "content": "Is it normal?"}, {"role": "assistant", "content": "Yes."}]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", ":2: not valid JSON"),
        ({"text": "hi"}, ":2: no 'messages' field"),
        ({"messages": [GOOD_CHAT[0]]}, ":2: the last message must be the assistant's"),
        ({"messages": [{"role": "doctor", "content": "x"}, GOOD_CHAT[1]]}, ":2: messages[0]: role must be one of"),
        ({"messages": [GOOD_CHAT[0], {"role": "assistant", "content": " "}]}, ":2: messages[1]: content must be"),
        ({"messages": [GOOD_CHAT[1], GOOD_CHAT[1]]}, ":2: 'messages' must end with a user turn"),
    ],
)
def test_bad_sft_lines_name_file_and_line(tmp_path: Path, line: Any, message: str) -> None:
    path = _write(tmp_path / "sft.jsonl", [{"messages": GOOD_CHAT}, line])
    with pytest.raises(TrainingDataError, match=re.escape(str(path) + message)):
        read_sft(path)


def test_bad_preference_pairs_name_file_and_line(tmp_path: Path) -> None:
    pair = _pairs(1)[0]
    missing = _write(tmp_path / "a.jsonl", [pair, {k: v for k, v in pair.items() if k != "rejected"}])
    with pytest.raises(TrainingDataError, match=r"a\.jsonl:2: missing rejected"):
        read_dpo(missing)
    same = _write(tmp_path / "b.jsonl", [{**pair, "rejected": pair["chosen"]}])
    with pytest.raises(TrainingDataError, match=r"b\.jsonl:1: chosen and rejected are the same text"):
        read_dpo(same)
    two = _write(tmp_path / "c.jsonl", [{**pair, "chosen": pair["chosen"] * 2}])
    with pytest.raises(TrainingDataError, match=r"c\.jsonl:1: 'chosen' must be exactly one assistant message"):
        read_dpo(two)
    empty = _write(tmp_path / "d.jsonl", [""])
    with pytest.raises(TrainingDataError, match=r"d\.jsonl: no data: the file is empty"):
        read_dpo(empty)


# --- recipe -------------------------------------------------------------------------------------------------


def test_paper_recipe_defaults_and_checks() -> None:
    sft, dpo = paper_recipe("sft"), paper_recipe("dpo")
    assert (sft.lora_r, sft.lora_alpha, sft.weight_decay, sft.warmup_ratio, sft.max_grad_norm, sft.epochs) == (
        8, 16, 0.01, 0.1, 1.0, 1.0,
    )  # fmt: skip
    assert (sft.batch_size, dpo.batch_size, dpo.beta, sft.beta) == (4, 1, 0.01, None)
    assert sft.with_overrides(learning_rate=None, seed=3).seed == 3
    with pytest.raises(ValueError, match="learning_rate must be positive"):
        sft.with_overrides(learning_rate=-1.0)
    with pytest.raises(ValueError, match="beta must be positive"):
        dpo.with_overrides(beta=0.0)
    with pytest.raises(ValueError, match="unknown precision"):
        sft.with_overrides(precision="int3")


needs_training = pytest.mark.skipif(
    any(find_spec(name) is None for name in TRAIN_LIBRARIES),
    reason="the train extra is not installed (pip install 'bedside[train]' with torch==2.13.0)",
)


@needs_training
def test_recipe_reaches_the_trl_configs(tmp_path: Path) -> None:
    from bedside.training.trainer import _trl_config

    sft = _trl_config(paper_recipe("sft"), tmp_path, use_cuda=False)
    assert (sft.weight_decay, sft.lr_scheduler_type.value, sft.warmup_steps, sft.max_grad_norm) == (
        0.01, "linear", 0.1, 1.0,
    )  # fmt: skip
    assert (sft.per_device_train_batch_size, sft.num_train_epochs, sft.optim.value) == (4, 1.0, "adamw_torch")
    assert sft.completion_only_loss is True
    assert not sft.fp16
    assert sft.report_to in ("none", [], ["none"])
    dpo = _trl_config(paper_recipe("dpo"), tmp_path, use_cuda=True)
    assert (dpo.beta, dpo.per_device_train_batch_size, dpo.learning_rate) == (0.01, 1, 5e-6)
    from bedside.training.trainer import TrainingError

    with pytest.raises(TrainingError, match="fp16 needs a GPU"):
        _trl_config(paper_recipe("sft").with_overrides(precision="fp16"), tmp_path, use_cuda=False)


# --- real training on the CPU -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """SFT through the CLI, then DPO on top of it through the library: a few real steps each."""
    if any(find_spec(name) is None for name in TRAIN_LIBRARIES):
        pytest.skip("the train extra is not installed (pip install 'bedside[train]' with torch==2.13.0)")
    from bedside.llm.errors import ModelConfigError
    from bedside.llm.providers.embedded import smollm2_path

    try:
        smollm2_path()
    except ModelConfigError as exc:
        pytest.skip(str(exc))
    from bedside.training.trainer import train

    folder = tmp_path_factory.mktemp("train")
    sft_data, dpo_data = folder / "sft.jsonl", folder / "dpo.jsonl"
    write_jsonl(sft_data, sft_records(read_cases("demo")))
    write_jsonl(dpo_data, _pairs(4))
    small = ["--max-length", "512", "--no-gradient-checkpointing", "--logging-steps", "1"]
    args = ["train", "sft", "--data", str(sft_data), "-o", str(folder / "sft"), "--max-steps", "2", "--batch-size", "1"]
    result = runner.invoke(app, args + small)
    recipe = paper_recipe("dpo").with_overrides(
        max_steps=2, max_length=512, gradient_checkpointing=False, logging_steps=1
    )
    dpo = train("smollm2-135m", dpo_data, folder / "dpo", recipe, init_adapter=folder / "sft")
    return {"folder": folder, "cli": result, "args": args + small, "sft_data": sft_data, "dpo": dpo}


@pytest.mark.train
def test_sft_runs_real_steps_and_saves_the_adapter(trained: dict[str, Any]) -> None:
    result, folder = trained["cli"], trained["folder"]
    assert result.exit_code == 0, result.output
    assert "step 1/2  loss" in result.output
    assert "step 2/2  loss" in result.output
    assert "saved the adapter" in result.output
    manifest = json.loads((folder / "sft" / "bedside-train.json").read_text(encoding="utf-8"))
    assert manifest["steps"] == 2
    assert len(manifest["losses"]) == 2
    assert all(math.isfinite(x) and x > 0 for x in manifest["losses"])
    assert manifest["recipe"]["lora_r"] == 8
    assert manifest["recipe"]["weight_decay"] == 0.01
    assert manifest["data_sha256"] == hashlib.sha256(trained["sft_data"].read_bytes()).hexdigest()
    assert manifest["examples"] == 22
    assert manifest["left_out_too_long"] == 0
    assert (folder / "sft" / "adapter_model.safetensors").is_file()
    assert not (folder / "sft" / "checkpoints").exists()  # a finished run keeps only the adapter

    from safetensors.torch import load_file

    weights = load_file(str(folder / "sft" / "adapter_model.safetensors"))
    lora_b = [t for name, t in weights.items() if "lora_B" in name]
    assert lora_b
    assert any(bool(t.abs().sum() > 0) for t in lora_b)


@pytest.mark.train
def test_a_finished_output_folder_is_never_overwritten(trained: dict[str, Any]) -> None:
    again = runner.invoke(app, trained["args"])
    assert again.exit_code == 1
    assert "already holds a trained adapter" in again.output


@pytest.mark.train
def test_dpo_starts_from_the_sft_model_and_loads_back(trained: dict[str, Any]) -> None:
    import torch

    from bedside.training.trainer import fit_to_length, load_base, merge_adapter, read_manifest

    dpo, folder = trained["dpo"], trained["folder"]
    # the policy starts equal to the frozen reference, so the first DPO loss is -log sigmoid(0) = ln 2
    assert dpo.steps == 2
    assert dpo.losses[0] == pytest.approx(math.log(2), abs=1e-4)
    assert read_manifest(folder / "dpo")["init_adapter"] == str((folder / "sft").resolve())

    base, tokenizer = load_base("smollm2-135m")
    examples = read_sft(trained["sft_data"])
    assert fit_to_length(examples, tokenizer, 100_000) == (examples, 0, 0)
    assert fit_to_length(examples, tokenizer, 64) == ([], 22, 0)  # every prompt fills 64 tokens on its own
    kept, left_out, truncated = fit_to_length(examples, tokenizer, 300)  # prompts are 206-310 tokens here
    assert len(kept) + left_out == 22
    assert truncated > 0

    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "My incision is red. Should I worry?"}], tokenize=False, add_generation_prompt=True
    )
    ids = tokenizer(text, return_tensors="pt")["input_ids"]

    def logits(model: Any) -> Any:
        with torch.no_grad():
            return model.eval()(ids).logits[0, -1]

    from_base = logits(base)
    from_sft = logits(merge_adapter(copy.deepcopy(base), folder / "sft"))
    from_dpo = logits(merge_adapter(base, folder / "dpo"))
    assert not torch.allclose(from_sft, from_base)
    # the DPO adapter is applied on top of the SFT one: a couple of tiny DPO steps stay near the SFT model
    assert (from_dpo - from_sft).abs().max() < (from_dpo - from_base).abs().max()


@needs_training
def test_training_refuses_what_it_cannot_use(tmp_path: Path) -> None:
    from bedside.training.trainer import TrainingError, train

    data = write_jsonl(tmp_path / "sft.jsonl", [{"messages": GOOD_CHAT}])
    data_path = tmp_path / "sft.jsonl"
    assert data == 1
    with pytest.raises(TrainingError, match="is not on disk"):
        train("org/some-hub-model", data_path, tmp_path / "out", paper_recipe("sft"))
    with pytest.raises(TrainingError, match="no checkpoint to resume from"):
        train("smollm2-135m", data_path, tmp_path / "out", paper_recipe("sft"), resume=True)
    with pytest.raises(TrainingError, match="init_adapter is for DPO"):
        train("smollm2-135m", data_path, tmp_path / "out", paper_recipe("sft"), init_adapter=tmp_path)
    (tmp_path / "old" / "checkpoints" / "checkpoint-5").mkdir(parents=True)
    with pytest.raises(TrainingError, match="holds checkpoints of an earlier run"):
        train("smollm2-135m", data_path, tmp_path / "old", paper_recipe("sft"))


class _Interrupted(Exception):
    pass


@pytest.mark.train
def test_an_interrupted_run_resumes_from_its_checkpoint(trained: dict[str, Any], tmp_path: Path) -> None:
    from bedside.training.trainer import train

    recipe = paper_recipe("sft").with_overrides(
        max_steps=2, save_steps=1, logging_steps=1, batch_size=1, max_length=512, gradient_checkpointing=False
    )

    def stop_at_step_two(logs: dict[str, float]) -> None:
        if logs["step"] == 2:
            raise _Interrupted

    output = tmp_path / "run"
    with pytest.raises(_Interrupted):
        train("smollm2-135m", trained["sft_data"], output, recipe, on_log=stop_at_step_two)
    assert [p.name for p in (output / "checkpoints").iterdir() if p.is_dir()] == ["checkpoint-1"]
    steps: list[float] = []
    resumed = train(
        "smollm2-135m", trained["sft_data"], output, recipe, resume=True, on_log=lambda x: steps.append(x["step"])
    )
    assert steps == [2]  # step 1 came from the checkpoint
    assert resumed.steps == 2
    assert len(resumed.losses) == 2  # the manifest keeps the loss logged before the interruption
    assert not (output / "checkpoints").exists()


def test_cli_reports_bad_data_and_bad_settings_without_loading_a_model(tmp_path: Path) -> None:
    bad = _write(tmp_path / "pairs.jsonl", [{"prompt": GOOD_CHAT[:1], "chosen": GOOD_CHAT[1:]}])
    result = runner.invoke(app, ["train", "dpo", "--data", str(bad), "-o", str(tmp_path / "out"), "--beta", "0.1"])
    assert result.exit_code == 1
    assert "pairs.jsonl:1: missing rejected" in result.output
    assert "no --init-adapter" in result.output
    result = runner.invoke(app, ["train", "sft", "--data", str(bad), "-o", str(tmp_path / "out"), "--lr", "-1"])
    assert result.exit_code == 1
    assert "learning_rate must be positive" in result.output
    assert not (tmp_path / "out").exists()
