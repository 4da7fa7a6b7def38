"""The training recipe: the seed paper's settings as defaults, and bedside's choices where it is silent.

Stated in the paper (Appendix D.2, D.3): LoRA rank 8 and alpha 16; AdamW with weight decay 0.01; a linear
learning-rate schedule with warmup over 10% of the steps; gradient clipping at norm 1.0; one epoch; batch size
4 for SFT and 1 for DPO; DPO on the SFT model with beta 0.01; float16 mixed precision on the GPU.

Not stated, chosen here (documented in ARCHITECTURE.md, each overridable):
- learning rate 2e-4 for SFT and 5e-6 for DPO (common LoRA values; the paper gives none);
- LoRA on every linear layer of the transformer ("all-linear"), following the LoRA study the paper cites,
  with dropout 0.05;
- sequences capped at 2048 tokens; examples whose prompt alone fills the cap are left out and counted;
- seed 0; a checkpoint every 500 steps (two kept) so a long run can resume.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

Method = Literal["sft", "dpo"]
METHODS: tuple[Method, ...] = ("sft", "dpo")
Precision = Literal["auto", "fp16", "bf16", "fp32"]
PRECISIONS: tuple[Precision, ...] = ("auto", "fp16", "bf16", "fp32")


@dataclass(frozen=True)
class Recipe:
    """Everything that decides a training run's outcome besides the model and the data."""

    method: Method
    learning_rate: float
    batch_size: int
    beta: float | None = None  # DPO only
    lora_r: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.05
    target_modules: str = "all-linear"
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    max_grad_norm: float = 1.0
    epochs: float = 1.0
    gradient_accumulation: int = 1
    max_length: int = 2048
    max_steps: int | None = None
    precision: Precision = "auto"
    gradient_checkpointing: bool = True
    seed: int = 0
    logging_steps: int = 10
    save_steps: int = 500

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown training method {self.method!r}; choose one of {', '.join(METHODS)}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"unknown precision {self.precision!r}; choose one of {', '.join(PRECISIONS)}")
        positive = {
            "learning_rate": self.learning_rate,
            "batch_size": self.batch_size,
            "lora_r": self.lora_r,
            "lora_alpha": self.lora_alpha,
            "epochs": self.epochs,
            "gradient_accumulation": self.gradient_accumulation,
            "max_length": self.max_length,
            "logging_steps": self.logging_steps,
            "save_steps": self.save_steps,
        }
        bad = [name for name, value in positive.items() if not value > 0]
        if self.max_steps is not None and self.max_steps <= 0:
            bad.append("max_steps")
        if self.method == "dpo" and not (self.beta is not None and self.beta > 0):
            bad.append("beta")
        if bad:
            raise ValueError(f"recipe: {', '.join(bad)} must be positive")
        if not 0 <= self.warmup_ratio < 1 or not 0 <= self.lora_dropout < 1:
            raise ValueError("recipe: warmup_ratio and lora_dropout must be in [0, 1)")

    def with_overrides(self, **changes: Any) -> Recipe:
        """This recipe with the given fields changed; ``None`` values leave a field as it is."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def paper_recipe(method: Method) -> Recipe:
    """The seed paper's recipe for ``method`` (SFT: batch 4; DPO: batch 1, beta 0.01)."""
    if method == "sft":
        return Recipe(method="sft", learning_rate=2e-4, batch_size=4)
    if method == "dpo":
        return Recipe(method="dpo", learning_rate=5e-6, batch_size=1, beta=0.01)
    raise ValueError(f"unknown training method {method!r}; choose one of {', '.join(METHODS)}")
