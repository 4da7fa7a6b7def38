"""Near-duplicate removal of instructions (MedAlign Section 3): no two kept instructions have a ROUGE-L
similarity above 0.7.

The paper does not say in which order duplicates were removed. bedside keeps the first of each group in file
order (greedy): an instruction is kept unless its ROUGE-L F-measure (rouge-score, no stemming, lower-cased
tokens) with an instruction already kept exceeds the threshold. Each removed instruction is reported with the kept
one it duplicates. The cost is quadratic in the number of instructions (the paper's 1,314 take about a minute).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bedside.metrics.lexical import sentence_rouge
from bedside.tasks.instruct.cases import Instruction

THRESHOLD = 0.7


@dataclass(frozen=True)
class Deduplicated:
    kept: list[Instruction]
    removed: dict[str, tuple[str, float]]  # removed id -> (the kept id it duplicates, ROUGE-L)


def deduplicate(instructions: Sequence[Instruction], *, threshold: float = THRESHOLD) -> Deduplicated:
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], not {threshold}")
    kept: list[Instruction] = []
    removed: dict[str, tuple[str, float]] = {}
    for instruction in instructions:
        best: tuple[str, float] | None = None
        for other in kept:
            similarity = sentence_rouge(instruction.question, [other.question])["rougeL"]
            if similarity > threshold and (best is None or similarity > best[1]):
                best = (other.id, similarity)
        if best is None:
            kept.append(instruction)
        else:
            removed[instruction.id] = best
    return Deduplicated(kept, removed)
