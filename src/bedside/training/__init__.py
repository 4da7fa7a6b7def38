"""LoRA fine-tuning (SFT and DPO) of a local causal LM on bedside's exported training data.

Training needs the ``train`` extra (torch, transformers, peft, trl); this package imports them only inside
:func:`bedside.training.trainer.train`, so reading and checking data works without them.
"""

from bedside.training.data import TrainingDataError, read_dpo, read_sft
from bedside.training.recipe import METHODS, Recipe, paper_recipe

__all__ = ["METHODS", "Recipe", "TrainingDataError", "paper_recipe", "read_dpo", "read_sft"]
