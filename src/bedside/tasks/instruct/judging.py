"""LLM judges of instruction responses, and their validation against clinician labels.

- Correctness: the rubric ``medalign_correctness`` (C1-C3 as three binary criteria; correct = passes all three)
  through :class:`~bedside.judges.RubricJudge`, so it is data a user can override like every rubric.
- Ranking: all of an instruction's responses in one prompt (``instruct/rank.j2``), blinded behind letters in a
  seeded order per instruction, ranks 1 = best with ties allowed, as MedAlign's clinicians ranked them.

:func:`validate` compares a judge's labels with the clinicians' on the same responses: Cohen's κ and percent
agreement for correctness, and the mean per-instruction Kendall τ-b for ranks (with the same bootstrap CI as
the metrics in :mod:`.agreement`), so an LLM judge is reported on the scale the paper reported metrics on.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, create_model

from bedside.judges import JudgeError, RubricJudge
from bedside.llm import GenerationSettings, Model, ModelError
from bedside.prompts import render_chat
from bedside.stats import cohen_kappa, percent_agreement
from bedside.tasks.instruct.agreement import Agreement, versus_clinicians
from bedside.tasks.instruct.cases import Instruction
from bedside.tasks.instruct.ehr import load_ehr
from bedside.tasks.instruct.labels import ResponseLabel
from bedside.tasks.instruct.prompting import cut_record
from bedside.text.tokens import Tokenizer

CORRECTNESS_RUBRIC = "medalign_correctness"
RANK_TEMPLATE = "instruct/rank.j2"


async def judge_correctness(
    model: Model,
    *,
    instruction: str,
    record: str,
    response: str,
    reference: str | None = None,
    settings: GenerationSettings | None = None,
    epoch: str = "0",
    rubric: str = CORRECTNESS_RUBRIC,
) -> dict[str, Any]:
    """One response judged: ``correct`` plus each criterion's pass/fail and reason (raises JudgeError)."""
    judge = RubricJudge(rubric, model, settings=settings)
    inputs = {"instruction": instruction, "record": record, "response": response or "(empty response)"}
    if reference:
        inputs["reference"] = reference
    judgement = await judge.judge(inputs, epoch=epoch)
    return {
        "correct": judgement.aggregate >= 1,
        "criteria": {name: s.score >= 1 for name, s in judgement.scores.items()},
        "reasons": {name: s.justification for name, s in judgement.scores.items()},
        "attempts": judgement.attempts,
    }


def blinded(models: Sequence[str], *, instruction_id: str, seed: int = 0) -> dict[str, str]:
    """model -> letter, in an order shuffled per instruction (seeded), so position says nothing of the model."""
    order = list(models)
    random.Random(f"{seed}:{instruction_id}").shuffle(order)
    return {model: string.ascii_uppercase[i] for i, model in enumerate(order)}


def _rank_schema(letters: Sequence[str]) -> type[BaseModel]:
    fields: dict[str, Any] = {letter: (int, Field(ge=1, le=len(letters))) for letter in letters}
    return create_model("Ranks", **fields)


async def judge_ranking(
    model: Model,
    *,
    instruction_id: str,
    instruction: str,
    record: str,
    responses: Mapping[str, str],
    settings: GenerationSettings | None = None,
    seed: int = 0,
    template: str = RANK_TEMPLATE,
) -> dict[str, float]:
    """model -> rank given by the judge (1 = best; ties allowed)."""
    letters = blinded(sorted(responses), instruction_id=instruction_id, seed=seed)
    shown = sorted(((letter, responses[m]) for m, letter in letters.items()), key=lambda x: x[0])
    messages = render_chat(template, instruction=instruction, record=record, responses=shown)
    result = await model.generate_structured(messages, _rank_schema([x[0] for x in shown]), settings)
    return {m: float(getattr(result.value, letter)) for m, letter in letters.items()}


@dataclass(frozen=True)
class JudgeValidation:
    n: int
    kappa: float | None
    agreement: float | None
    ranking: Agreement | None


def validate(
    judge_labels: Sequence[ResponseLabel], human_labels: Sequence[ResponseLabel], *, seed: int = 0
) -> JudgeValidation:
    """A judge's correctness and ranks against the clinicians' on the responses both labelled."""
    human = {(x.instruction_id, x.model): x for x in human_labels}
    pairs = [(j, human[(j.instruction_id, j.model)]) for j in judge_labels if (j.instruction_id, j.model) in human]
    if not pairs:
        raise ValueError("the judge and the clinicians labelled no response in common")
    a = [int(j.correct) for j, _ in pairs]
    b = [int(h.correct) for _, h in pairs]
    kappa = cohen_kappa(a, b) if len(set(a) | set(b)) > 1 else None
    ranked = [j for j, _ in pairs if j.rank is not None]
    ranking = None
    if ranked:
        scores: dict[str, dict[str, float]] = {}
        for j in ranked:
            scores.setdefault(j.instruction_id, {})[j.model] = -float(j.rank or 0)
        ranking = versus_clinicians("llm-judge rank", scores, [h for _, h in pairs], seed=seed)
    return JudgeValidation(len(pairs), kappa, percent_agreement([a, b]), ranking)


async def judge_labels(
    model: Model,
    labels: Sequence[ResponseLabel],
    instructions: Mapping[str, Instruction],
    *,
    records: str | None,
    tokenizer: Tokenizer,
    record_tokens: int = 1024,
    settings: GenerationSettings | None = None,
    seed: int = 0,
    on_done: Callable[[str, str | None], None] | None = None,
) -> tuple[list[ResponseLabel], dict[str, str]]:
    """The judge's own labels for the labelled responses (evaluator ``llm-judge``): per instruction, each
    response's correctness and one ranking of them all. Returns the labels and, per failed instruction, why."""
    by_instruction: dict[str, list[ResponseLabel]] = {}
    for label in labels:
        by_instruction.setdefault(label.instruction_id, []).append(label)
    judged: list[ResponseLabel] = []
    failures: dict[str, str] = {}
    for item, group in by_instruction.items():
        try:
            instruction = instructions[item]
            record, _ = cut_record(load_ehr(instruction, records), "paper", tokenizer, record_tokens)
            reference = instruction.primary_reference
            verdicts = [
                await judge_correctness(
                    model,
                    instruction=instruction.question,
                    record=record,
                    response=label.response,
                    reference=reference.text if reference else None,
                    settings=settings,
                )
                for label in group
            ]
            ranks = await judge_ranking(
                model,
                instruction_id=item,
                instruction=instruction.question,
                record=record,
                responses={label.model: label.response or "(empty)" for label in group},
                settings=settings,
                seed=seed,
            )
        except KeyError:
            failures[item] = "not in the instructions file"
        except (JudgeError, ModelError, LookupError, ValueError) as exc:
            failures[item] = f"{type(exc).__name__}: {exc}"
        else:
            judged.extend(
                ResponseLabel(
                    instruction_id=item,
                    model=label.model,
                    response=label.response,
                    evaluator="llm-judge",
                    correct=bool(verdict["correct"]),
                    rank=ranks[label.model],
                )
                for label, verdict in zip(group, verdicts, strict=True)
            )
        if on_done:
            on_done(item, failures.get(item))
    return judged, failures
