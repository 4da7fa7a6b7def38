"""LoRA SFT and DPO with TRL, on a base model that is already on disk.

The base model is one of: ``smollm2-135m`` (the embedded model's GGUF, which transformers dequantises),
a path to any ``.gguf`` file, or a local folder with a transformers checkpoint. Nothing is downloaded: the
Hugging Face libraries are put in offline mode and every load is ``local_files_only``.

DPO starts from the SFT model, as in the paper: ``init_adapter`` (an SFT output folder) is merged into the base
first, so the frozen reference policy is the SFT model and the new LoRA adapter learns only the preference
step. Each output folder holds the adapter, the tokenizer, and ``bedside-train.json`` (recipe, data hash, the
adapter it was trained on top of, losses, library versions), which :func:`merge_adapter` follows to rebuild
the model exactly.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from bedside.private_files import private_dir, write_private_text
from bedside.training.data import Chat, read_dpo, read_sft
from bedside.training.recipe import Recipe

MANIFEST = "bedside-train.json"
CHECKPOINTS = "checkpoints"
_LIBRARIES = ("torch", "transformers", "peft", "trl")
_INSTALL_HINT = "install the training extra: pip install 'bedside[train]' (with torch==2.13.0 for the CPU build)"

LogCallback = Callable[[dict[str, float]], None]


class TrainingError(RuntimeError):
    """Training could not start or finish; the message says what to change."""


@dataclass(frozen=True)
class TrainResult:
    output: Path
    steps: int
    examples: int
    left_out: int
    truncated: int
    losses: list[float] = field(default_factory=list)  # as logged: the first step, then every logging_steps
    mean_loss: float = math.nan  # the trainer's mean over the steps this call trained
    runtime_s: float = 0.0

    @property
    def last_loss(self) -> float:
        return self.losses[-1] if self.losses else math.nan


def _require_libraries() -> None:
    """Fail with the install line when the extra is missing, and keep the Hugging Face libraries offline."""
    missing = []
    for name in _LIBRARIES:
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        raise TrainingError(f"missing {', '.join(missing)}; {_INSTALL_HINT}")
    for variable in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ.setdefault(variable, "1")


def _dtype(precision: str) -> Any:
    import torch

    if precision == "auto":
        precision = "fp16" if torch.cuda.is_available() else "fp32"
    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[precision]


def load_base(model: str, precision: str = "fp32") -> tuple[Any, Any]:
    """The base model and its tokenizer, from local files only."""
    _require_libraries()
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    from bedside.llm.errors import ModelConfigError
    from bedside.llm.providers.embedded import SMOLLM2_NAME, resolve_weights

    path = Path(model).expanduser()
    kwargs: dict[str, Any] = {"local_files_only": True}
    model_kwargs: dict[str, Any] = {}
    if model == SMOLLM2_NAME or path.suffix == ".gguf":
        try:
            weights = resolve_weights(model)
        except ModelConfigError as exc:
            raise TrainingError(str(exc)) from None
        folder, kwargs["gguf_file"] = str(weights.parent), weights.name
        # Unpacked at load into a plain dense model: GGUF blocks cannot be trained, and without this the
        # model stays flagged as quantized and the trainer refuses it.
        model_kwargs["quantization_config"] = GgufConfig(dequantize=True)
    elif (path / "config.json").is_file():
        folder = str(path)
    else:
        raise TrainingError(
            f"base model {model!r} is not on disk: give {SMOLLM2_NAME!r}, a .gguf file, or a folder with a "
            "transformers checkpoint (config.json); nothing is downloaded"
        )
    tokenizer = AutoTokenizer.from_pretrained(folder, **kwargs)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    network = AutoModelForCausalLM.from_pretrained(folder, dtype=_dtype(precision), **kwargs, **model_kwargs)
    return network, tokenizer


def read_manifest(adapter: Path) -> dict[str, Any]:
    path = adapter / MANIFEST
    if not path.is_file():
        raise TrainingError(f"{adapter}: not a bedside training output (no {MANIFEST})")
    manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return manifest


def merge_adapter(network: Any, adapter: Path) -> Any:
    """``network`` with ``adapter`` merged in, after the adapters it was itself trained on top of.

    ``network`` is changed in place (copy it first to keep the base as well).
    """
    from peft import PeftModel

    parent = read_manifest(adapter).get("init_adapter")
    if parent:
        network = merge_adapter(network, Path(parent))
    with _known_library_warnings_silenced():
        return PeftModel.from_pretrained(network, str(adapter)).merge_and_unload()


def _token_count(tokenizer: Any, text: str) -> int:
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def fit_to_length(
    examples: list[dict[str, Chat]], tokenizer: Any, max_length: int
) -> tuple[list[dict[str, Chat]], int, int]:
    """Examples whose prompt leaves room for an answer, and counts of those left out and those truncated.

    A prompt that fills ``max_length`` on its own would leave no answer token to learn from (a NaN loss for
    SFT, nothing to prefer for DPO), so such examples are left out rather than silently cut.
    """
    kept, left_out, truncated = [], 0, 0
    for example in examples:
        prompt = tokenizer.apply_chat_template(example["prompt"], tokenize=False, add_generation_prompt=True)
        prompt_tokens = _token_count(tokenizer, prompt)
        answers = [example[k][0]["content"] for k in ("completion", "chosen", "rejected") if k in example]
        answer_tokens = max(_token_count(tokenizer, a) for a in answers) + 2  # end-of-turn tokens
        if prompt_tokens >= max_length - 1:
            left_out += 1
            continue
        truncated += prompt_tokens + answer_tokens > max_length
        kept.append(example)
    return kept, left_out, truncated


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _versions() -> dict[str, str]:
    return {name: metadata.version(name) for name in ("bedside", *_LIBRARIES)}


def _trl_config(recipe: Recipe, output: Path, use_cuda: bool) -> Any:
    from trl import DPOConfig, SFTConfig

    precision = recipe.precision
    if precision == "auto":
        precision = "fp16" if use_cuda else "fp32"
    if precision in ("fp16", "bf16") and not use_cuda:
        raise TrainingError(f"precision {precision} needs a GPU; on the CPU use fp32 (or auto)")
    common: dict[str, Any] = {
        "output_dir": str(output / CHECKPOINTS),
        "learning_rate": recipe.learning_rate,
        "per_device_train_batch_size": recipe.batch_size,
        "gradient_accumulation_steps": recipe.gradient_accumulation,
        "num_train_epochs": recipe.epochs,
        "max_steps": recipe.max_steps or -1,
        "optim": "adamw_torch",
        "weight_decay": recipe.weight_decay,
        "lr_scheduler_type": "linear",
        "warmup_steps": recipe.warmup_ratio,  # a float below 1 is a fraction of the total steps
        "max_grad_norm": recipe.max_grad_norm,
        "max_length": recipe.max_length,
        "fp16": precision == "fp16",
        "bf16": precision == "bf16",
        "activation_checkpointing": recipe.gradient_checkpointing,
        "seed": recipe.seed,
        "data_seed": recipe.seed,
        "logging_steps": recipe.logging_steps,
        "logging_first_step": True,  # a long run shows its starting loss at once
        "save_strategy": "steps",
        "save_steps": recipe.save_steps,
        "save_total_limit": 2,
        "report_to": "none",
        "disable_tqdm": True,
        "dataloader_num_workers": 0,
        "dataloader_pin_memory": use_cuda,
    }
    if recipe.method == "sft":
        return SFTConfig(**common, completion_only_loss=True, packing=False)
    return DPOConfig(**common, beta=recipe.beta)


@contextmanager
def _known_library_warnings_silenced() -> Iterator[None]:
    """Silence two warnings that say nothing to a bedside user; every other warning still shows."""
    with warnings.catch_warnings():
        # peft looks for config.json beside a GGUF file to see whether the vocabulary changed; it did not
        warnings.filterwarnings("ignore", message="Could not find a config file")
        # raised inside trl by its own use of transformers' renamed gradient-checkpointing methods
        warnings.filterwarnings("ignore", message=r"`\w*gradient_checkpointing\w*` is deprecated")
        yield


def _checkpoints(output: Path) -> list[Path]:
    """The run's checkpoints, oldest first (by step number: checkpoint-10 comes after checkpoint-9)."""
    found = [p for p in (output / CHECKPOINTS).glob("checkpoint-*") if p.name.split("-")[-1].isdigit()]
    return sorted(found, key=lambda p: int(p.name.split("-")[-1]))


def _logged_losses(checkpoint: Path) -> list[float]:
    """The losses logged before ``checkpoint`` was written, so a resumed run's manifest has them all."""
    state = checkpoint / "trainer_state.json"
    if not state.is_file():
        return []
    history = json.loads(state.read_text(encoding="utf-8")).get("log_history", [])
    return [float(entry["loss"]) for entry in history if "loss" in entry]


def _check_output(output: Path, resume: bool) -> list[Path]:
    """The checkpoints to resume from; refuses to overwrite a finished run or silently restart one."""
    if (output / MANIFEST).is_file():
        raise TrainingError(f"{output} already holds a trained adapter; choose another folder")
    earlier = _checkpoints(output)
    if resume and not earlier:
        raise TrainingError(f"{output / CHECKPOINTS}: no checkpoint to resume from")
    if earlier and not resume:
        raise TrainingError(
            f"{output} holds checkpoints of an earlier run; pass resume to continue it, or choose another folder"
        )
    return earlier


def _lora(recipe: Recipe) -> Any:
    from peft import LoraConfig

    return LoraConfig(
        r=recipe.lora_r,
        lora_alpha=recipe.lora_alpha,
        lora_dropout=recipe.lora_dropout,
        target_modules=recipe.target_modules,
        task_type="CAUSAL_LM",
    )


def _progress_callback(losses: list[float], on_log: LogCallback | None) -> Any:
    """A trainer callback that keeps every logged loss and passes each log line on."""
    from transformers import TrainerCallback

    class Progress(TrainerCallback):  # type: ignore[misc]
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **_: Any) -> None:
            if logs and "loss" in logs:
                losses.append(float(logs["loss"]))
                if on_log:
                    on_log({"step": state.global_step, "max_steps": state.max_steps, **logs})

    return Progress()


def train(
    model: str,
    data: Path,
    output: Path,
    recipe: Recipe,
    *,
    init_adapter: Path | None = None,
    resume: bool = False,
    merge: bool = False,
    on_log: LogCallback | None = None,
) -> TrainResult:
    """Train a LoRA adapter on ``data`` with ``recipe`` and save it (and its manifest) in ``output``.

    Checkpoints go to ``output/checkpoints``; ``resume`` continues from the newest one. ``merge`` also writes
    the base with the adapter merged in to ``output/merged`` (for serving, or converting to GGUF).
    Everything that can be checked without a model (data, folders, the adapter to start from) is checked first.
    """
    examples = read_sft(data) if recipe.method == "sft" else read_dpo(data)
    if recipe.method == "sft" and init_adapter is not None:
        raise TrainingError("init_adapter is for DPO on an SFT model; SFT starts from the base model")
    if init_adapter is not None:
        read_manifest(init_adapter)
    earlier = _check_output(output, resume)
    # The adapter can repeat its training text, and the libraries write with the umask's modes: a new output
    # folder is 0700 before any checkpoint lands in it.
    private_dir(output)

    _require_libraries()
    import torch
    from datasets import Dataset
    from transformers import PrinterCallback, set_seed
    from trl import DPOTrainer, SFTTrainer

    use_cuda = torch.cuda.is_available()
    args = _trl_config(recipe, output, use_cuda)
    set_seed(recipe.seed)
    network, tokenizer = load_base(model, recipe.precision if use_cuda else "fp32")
    if init_adapter is not None:
        network = merge_adapter(network, init_adapter)
    kept, left_out, truncated = fit_to_length(examples, tokenizer, recipe.max_length)
    if not kept:
        raise TrainingError(f"{data}: every prompt is longer than max_length={recipe.max_length} tokens")

    losses = _logged_losses(earlier[-1]) if resume else []
    trainer_class = SFTTrainer if recipe.method == "sft" else DPOTrainer
    with _known_library_warnings_silenced():
        trainer = trainer_class(
            model=network,
            args=args,
            train_dataset=Dataset.from_list(kept),
            processing_class=tokenizer,
            peft_config=_lora(recipe),
            callbacks=[_progress_callback(losses, on_log)],
        )
        trainer.remove_callback(PrinterCallback)  # progress goes through on_log instead
        started = time.perf_counter()
        outcome = trainer.train(resume_from_checkpoint=True if resume else None)
        runtime = time.perf_counter() - started
    mean_loss = float(outcome.training_loss)
    if not all(math.isfinite(x) for x in [*losses, mean_loss]):
        raise TrainingError(
            f"the training loss is not finite ({losses}, mean {mean_loss}); lower the learning rate or check the data"
        )

    result = TrainResult(
        output, outcome.global_step, len(kept), left_out, truncated, losses, mean_loss, round(runtime, 2)
    )
    manifest = {
        "method": recipe.method,
        "base_model": model,
        "init_adapter": str(init_adapter.resolve()) if init_adapter else None,
        "data": str(data.resolve()),
        "data_sha256": _sha256(data),
        "examples": len(kept),
        "left_out_too_long": left_out,
        "truncated": truncated,
        "recipe": recipe.to_dict(),
        "steps": outcome.global_step,
        "losses": losses,
        "mean_loss": mean_loss,
        "runtime_s": result.runtime_s,
        "device": "cuda" if use_cuda else "cpu",
        "versions": _versions(),
    }
    _save(trainer.model, tokenizer, output, manifest, merge)
    return result


def _save(network: Any, tokenizer: Any, output: Path, manifest: dict[str, Any], merge: bool) -> None:
    """Adapter, tokenizer and manifest; then the checkpoints go (only an unfinished run needs them)."""
    private_dir(output)
    with _known_library_warnings_silenced():
        network.save_pretrained(str(output))
    tokenizer.save_pretrained(str(output))
    write_private_text(output / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    shutil.rmtree(output / CHECKPOINTS, ignore_errors=True)
    if merge:
        merged = output / "merged"
        network.merge_and_unload().save_pretrained(str(merged))
        tokenizer.save_pretrained(str(merged))
