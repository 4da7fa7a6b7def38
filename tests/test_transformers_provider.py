"""The transformers provider on a tiny randomly initialised Llama built here (no weights, no network).

The model is random, so the tests check the plumbing a fine-tuned judge relies on (chat template, usage,
max_tokens, seeds, stop strings, errors), never what the text says.
"""

from __future__ import annotations

import asyncio
from importlib.util import find_spec
from pathlib import Path

import pytest

from bedside.llm import GenerationSettings, get_model
from bedside.llm.errors import ModelConfigError
from bedside.llm.providers.transformers_local import cut_at_stop

needs_torch = pytest.mark.skipif(
    find_spec("torch") is None or find_spec("transformers") is None or find_spec("tokenizers") is None,
    reason="the transformers provider needs torch, transformers and tokenizers (the `train` extra)",
)

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
CORPUS = [
    "Please check your blood pressure every morning and send me the readings.",
    "NO MATCH",
    "Clinician sentence: Draft reply: You compare a draft reply to a patient with one sentence.",
    "Take your metformin with meals. A single reading after a large meal is not a cause for alarm.",
]


def build_tiny_checkpoint(folder: Path, *, max_positions: int = 4096) -> Path:
    """A byte-level BPE tokenizer with a ChatML template and a 2-layer random Llama, saved as a checkpoint.

    Byte-level so any text (a judge prompt included) encodes and decodes exactly; the vocabulary is tiny so the
    model is a few hundred kilobytes and a generation step takes milliseconds.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    core.train_from_iterator(CORPUS * 4, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    import torch

    torch.manual_seed(0)
    network = LlamaForCausalLM(config)
    # A random model often picks a special or blank token first, which decodes to no text (an error in bedside,
    # as an empty answer is); the checkpoint's own generation config rules those out, as a trained model would.
    blank = [i for i in range(len(tokenizer)) if not tokenizer.decode([i], skip_special_tokens=True).strip()]
    network.generation_config.suppress_tokens = blank
    network.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if find_spec("torch") is None or find_spec("transformers") is None or find_spec("tokenizers") is None:
        pytest.skip("the transformers provider needs torch, transformers and tokenizers (the `train` extra)")
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny-llama"))


def _ask(folder: Path, prompt: str, settings: GenerationSettings) -> tuple[tuple[str, ...], int, int, str | None]:
    async def run() -> tuple[tuple[str, ...], int, int, str | None]:
        async with get_model(f"transformers/{folder}") as model:
            completion = await model.generate(prompt, settings, system="You are a judge.")
        return (
            completion.texts,
            completion.usage.prompt_tokens,
            completion.usage.completion_tokens,
            (completion.finish_reason),
        )

    return asyncio.run(run())


@needs_torch
def test_generates_text_and_counts_tokens(checkpoint: Path) -> None:
    texts, prompt_tokens, completion_tokens, finish = _ask(
        checkpoint, "Is the blood pressure reading normal?", GenerationSettings(max_tokens=6, temperature=0.0)
    )
    assert len(texts) == 1
    assert isinstance(texts[0], str)
    assert prompt_tokens > 10  # system and user turns through the chat template
    assert 0 < completion_tokens <= 6  # max_tokens honoured
    # an answer that used the whole budget was cut off; a shorter one ended on its own
    assert finish == ("length" if completion_tokens == 6 else "stop")


@needs_torch
def test_greedy_and_seeded_sampling_are_reproducible(checkpoint: Path) -> None:
    greedy = GenerationSettings(max_tokens=8, temperature=0.0)
    assert _ask(checkpoint, "Name a fruit.", greedy)[0] == _ask(checkpoint, "Name a fruit.", greedy)[0]
    sampled = GenerationSettings(max_tokens=8, temperature=1.0, top_p=0.9, n=2, seed=11)
    first, _, completion_tokens, _ = _ask(checkpoint, "Name a fruit.", sampled)
    assert len(first) == 2
    assert completion_tokens <= 16
    assert _ask(checkpoint, "Name a fruit.", sampled)[0] == first


@needs_torch
def test_stop_strings_end_and_are_cut(checkpoint: Path) -> None:
    # sampled, not greedy: the random model's greedy text repeats one token, so no stop leaves text before it
    settings = GenerationSettings(max_tokens=12, temperature=1.0, seed=3)
    (full,), *_ = _ask(checkpoint, "Say something.", settings)
    # a stop string whose first appearance leaves some text before it (an empty answer is an error)
    stops = [full[k : k + 2] for k in range(1, len(full) - 1) if full[: full.find(full[k : k + 2])].strip()]
    if not stops:
        pytest.skip("the random model's text has nothing to stop on")
    stop = stops[0]
    (cut,), _, _completion_tokens, finish = _ask(
        checkpoint, "Say something.", settings.model_copy(update={"stop": (stop,)})
    )
    assert cut == full[: full.find(stop)]
    assert finish == "stop"


@needs_torch
def test_penalties_it_cannot_apply_are_refused(checkpoint: Path) -> None:
    with pytest.raises(ModelConfigError, match="frequency_penalty"):
        _ask(checkpoint, "Name a fruit.", GenerationSettings(max_tokens=4, frequency_penalty=0.5))


def test_cut_at_stop_takes_the_earliest() -> None:
    assert cut_at_stop("abc END x STOP", ["STOP", "END"]) == ("abc ", True)
    assert cut_at_stop("abc", ["x"]) == ("abc", False)
    assert cut_at_stop("abc", []) == ("abc", False)


@needs_torch
def test_a_missing_or_wrong_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="folder not found"):
        get_model(f"transformers/{tmp_path / 'nowhere'}")
    with pytest.raises(ModelConfigError, match=r"no config\.json"):
        get_model(f"transformers/{tmp_path}")


@needs_torch
def test_a_checkpoint_without_a_chat_template_is_a_clear_error(checkpoint: Path, tmp_path: Path) -> None:
    import shutil

    bare = tmp_path / "bare"
    shutil.copytree(checkpoint, bare)
    for name in ("chat_template.jinja", "tokenizer_config.json"):
        path = bare / name
        if name == "chat_template.jinja":
            path.unlink(missing_ok=True)
        elif path.is_file():
            import json

            config = json.loads(path.read_text(encoding="utf-8"))
            config.pop("chat_template", None)
            path.write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ModelConfigError, match="no chat template"):
        _ask(bare, "Hello?", GenerationSettings(max_tokens=2))


def test_missing_libraries_are_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import bedside.llm.providers.transformers_local as module

    monkeypatch.setattr(module, "find_spec", lambda name: None)
    with pytest.raises(ModelConfigError, match="needs torch and transformers"):
        get_model(f"transformers/{tmp_path}")


needs_training = pytest.mark.skipif(
    any(find_spec(name) is None for name in ("torch", "transformers", "tokenizers", "peft", "trl", "datasets")),
    reason="the judge fine-tuning path needs the train extra (torch, transformers, peft, trl, datasets)",
)


@needs_training
def test_judge_finetuning_path_end_to_end(tmp_path: Path) -> None:
    """export-judge -> train sft --merge -> the merged folder as a judge in calibrate, all through the CLI.

    Two LoRA steps on the tiny random model: the judge's answers are noise, so this checks that every step
    hands the next one what it needs (chats, a merged checkpoint with its chat template, a callable judge),
    not what the judge decides.
    """
    import json

    from typer.testing import CliRunner

    from bedside.cli import app
    from bedside.tasks.drafting.validation import read_annotations

    runner = CliRunner()
    base = build_tiny_checkpoint(tmp_path / "base")
    annotations = tmp_path / "annotations.jsonl"
    annotations.write_text("".join(a.model_dump_json() + "\n" for a in read_annotations()[:4]), encoding="utf-8")
    chats = tmp_path / "judge.jsonl"
    exported = runner.invoke(app, ["drafting", "export-judge", "--annotations", str(annotations), "-o", str(chats)])
    assert exported.exit_code == 0, exported.output

    output = tmp_path / "sft"
    trained = runner.invoke(
        app,
        ["train", "sft", "--data", str(chats), "-o", str(output), "--model", str(base), "--max-steps", "2",
         "--batch-size", "2", "--no-gradient-checkpointing", "--logging-steps", "1", "--merge"],
    )  # fmt: skip
    assert trained.exit_code == 0, trained.output
    assert "2 steps on 4 examples" in " ".join(trained.output.split())  # the console wraps lines
    assert (output / "merged" / "config.json").is_file()

    judged = runner.invoke(
        app,
        ["drafting", "calibrate", "--annotations", str(annotations), "--finetuned",
         f"transformers/{output / 'merged'}", "--no-cache", "--json"],
    )  # fmt: skip
    assert judged.exit_code == 0, judged.output
    data = json.loads(judged.stdout)
    assert data["annotations"] == 4
    assert [(j["judge"], j["kind"]) for j in data["judges"]] == [("ft-1", "0-shot")]
    judge = data["judges"][0]
    # a tiny fine-tuned judge may answer nothing usable: then agreement is absent with the failures counted,
    # never a number resting on no answer
    if judge["agreement"] is None:
        assert judge["failures"] == 4, judge
    else:
        assert 0.0 <= judge["agreement"] <= 1.0
