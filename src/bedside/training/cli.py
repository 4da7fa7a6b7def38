"""``bedside train sft|dpo``: LoRA fine-tuning with the seed paper's recipe as defaults."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from bedside.console import err, fail, out
from bedside.training.data import TrainingDataError
from bedside.training.recipe import PRECISIONS, Method, paper_recipe

train_app = typer.Typer(
    help="Fine-tune a local model with LoRA (needs the `train` extra). Defaults follow the seed paper's recipe.",
    no_args_is_help=True,
)

DataOption = Annotated[Path, typer.Option("--data", "-d", help="Training JSONL written by `bedside drafting ...`.")]
OutputOption = Annotated[
    Path, typer.Option("--output", "-o", help="New folder for the adapter, tokenizer and bedside-train.json.")
]
BaseOption = Annotated[
    str,
    typer.Option(
        "--model", "-m", help="Base model: smollm2-135m, a .gguf file, or a folder with a transformers checkpoint."
    ),
]
LearningRate = Annotated[float | None, typer.Option("--lr", help="Peak learning rate [SFT 2e-4, DPO 5e-6].")]
BatchSize = Annotated[int | None, typer.Option(help="Examples per device step [SFT 4, DPO 1].")]
GradientAccumulation = Annotated[
    int | None, typer.Option(help="Steps to accumulate per update (effective batch = batch-size x this) [1].")
]
Epochs = Annotated[float | None, typer.Option(help="Passes over the data [1].")]
MaxSteps = Annotated[int | None, typer.Option(help="Stop after this many updates (overrides epochs).")]
MaxLength = Annotated[int | None, typer.Option(help="Token cap per example; longer prompts are left out [2048].")]
LoraRank = Annotated[int | None, typer.Option("--lora-r", help="LoRA rank [8].")]
LoraAlpha = Annotated[int | None, typer.Option(help="LoRA alpha [16].")]
Precision = Annotated[
    str | None,
    typer.Option(
        help=f"{', '.join(PRECISIONS)}; auto (default) is fp16 on a GPU, as in the paper, and fp32 on the CPU."
    ),
]
NoCheckpointing = Annotated[
    bool, typer.Option("--no-gradient-checkpointing", help="Faster, but more memory (worth it for small models).")
]
Seed = Annotated[int | None, typer.Option(help="Random seed [0].")]
LoggingSteps = Annotated[int | None, typer.Option(help="Print the loss every N updates [10].")]
SaveSteps = Annotated[int | None, typer.Option(help="Checkpoint every N updates, for --resume [500].")]
Resume = Annotated[bool, typer.Option("--resume", help="Continue an interrupted run from its newest checkpoint.")]
Merge = Annotated[bool, typer.Option("--merge", help="Also write the merged model to OUTPUT/merged (for serving).")]


def _progress(logs: dict[str, float]) -> None:
    step, total = int(logs["step"]), int(logs["max_steps"])
    err.print(
        f"step {step}/{total}  loss {logs['loss']:.4f}  lr {logs.get('learning_rate', 0.0):.2e}",
        highlight=False,
    )


def _train(
    method: Method,
    *,
    data: Path,
    output: Path,
    model: str,
    resume: bool,
    merge: bool,
    no_gradient_checkpointing: bool,
    init_adapter: Path | None = None,
    **overrides: object,
) -> None:
    """One training command; ``overrides`` are recipe fields (None keeps the paper's value)."""
    from bedside.training.trainer import TrainingError, train

    try:
        recipe = paper_recipe(method).with_overrides(
            gradient_checkpointing=False if no_gradient_checkpointing else None, **overrides
        )
    except ValueError as exc:
        raise fail(exc) from None
    err.print(
        f"{method.upper()} on {escape(str(data))} from {escape(model)}: LoRA r={recipe.lora_r} "
        f"alpha={recipe.lora_alpha}, lr {recipe.learning_rate:g}, batch {recipe.batch_size}"
        + (f", beta {recipe.beta:g}" if recipe.beta is not None else ""),
        highlight=False,
    )
    try:
        result = train(
            model, data, output, recipe, init_adapter=init_adapter, resume=resume, merge=merge, on_log=_progress
        )
    except (TrainingError, TrainingDataError, ValueError) as exc:
        raise fail(exc) from None
    left = f"; {result.left_out} left out (prompt over max-length)" if result.left_out else ""
    cut = f"; {result.truncated} truncated" if result.truncated else ""
    first = result.losses[0] if result.losses else math.nan
    out.print(
        f"saved the adapter to {escape(str(output))}: {result.steps} steps on {result.examples} examples{left}{cut}, "
        f"loss {first:.4f} at the first step, {result.last_loss:.4f} at the last logged, mean "
        f"{result.mean_loss:.4f}; {result.runtime_s:.0f} s",
        highlight=False,
    )


# The commands' parameters after the first few are named as the recipe's fields, so each passes them on whole.


@train_app.command("sft")
def sft(
    data: DataOption,
    output: OutputOption,
    model: BaseOption = "smollm2-135m",
    learning_rate: LearningRate = None,
    batch_size: BatchSize = None,
    gradient_accumulation: GradientAccumulation = None,
    epochs: Epochs = None,
    max_steps: MaxSteps = None,
    max_length: MaxLength = None,
    lora_r: LoraRank = None,
    lora_alpha: LoraAlpha = None,
    precision: Precision = None,
    no_gradient_checkpointing: NoCheckpointing = False,
    seed: Seed = None,
    logging_steps: LoggingSteps = None,
    save_steps: SaveSteps = None,
    resume: Resume = False,
    merge: Merge = False,
) -> None:
    """Supervised fine-tuning on chats (`bedside drafting export-sft`); the loss is on the reply only."""
    _train("sft", **locals())


@train_app.command("dpo")
def dpo(
    data: DataOption,
    output: OutputOption,
    model: BaseOption = "smollm2-135m",
    init_adapter: Annotated[
        Path | None,
        typer.Option(help="An SFT output folder to start from (the paper runs DPO on the SFT model)."),
    ] = None,
    beta: Annotated[float | None, typer.Option(help="DPO beta [0.01].")] = None,
    learning_rate: LearningRate = None,
    batch_size: BatchSize = None,
    gradient_accumulation: GradientAccumulation = None,
    epochs: Epochs = None,
    max_steps: MaxSteps = None,
    max_length: MaxLength = None,
    lora_r: LoraRank = None,
    lora_alpha: LoraAlpha = None,
    precision: Precision = None,
    no_gradient_checkpointing: NoCheckpointing = False,
    seed: Seed = None,
    logging_steps: LoggingSteps = None,
    save_steps: SaveSteps = None,
    resume: Resume = False,
    merge: Merge = False,
) -> None:
    """Direct preference optimisation on pairs (`bedside drafting tadpole`, e.g. dpo_hard_corrupted.jsonl)."""
    if init_adapter is None:
        err.print("note: no --init-adapter, so DPO starts from the base model (the paper starts from its SFT model)")
    _train("dpo", **locals())
