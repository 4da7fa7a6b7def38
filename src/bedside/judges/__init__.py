"""LLM judges defined as data: rubrics (TOML/YAML) rendered through prompt templates, validated structured
answers, juries of several judges and stability over repeated draws."""

from bedside.judges.judge import (
    NOT_AVAILABLE,
    CriterionScore,
    Evidence,
    EvidenceItem,
    JudgeError,
    Judgement,
    PairEvidence,
    RubricJudge,
    SnippetEvidence,
    answer_model,
)
from bedside.judges.jury import (
    Jury,
    JuryError,
    JuryVerdict,
    Spread,
    Stability,
    combine_scores,
    repeat_judgement,
    spread,
)
from bedside.judges.rubric import Criterion, Rubric, RubricError, Scale, load_rubric, rubric_from_file, shipped_rubrics

__all__ = [
    "NOT_AVAILABLE",
    "Criterion",
    "CriterionScore",
    "Evidence",
    "EvidenceItem",
    "JudgeError",
    "Judgement",
    "Jury",
    "JuryError",
    "JuryVerdict",
    "PairEvidence",
    "Rubric",
    "RubricError",
    "RubricJudge",
    "Scale",
    "SnippetEvidence",
    "Spread",
    "Stability",
    "answer_model",
    "combine_scores",
    "load_rubric",
    "repeat_judgement",
    "rubric_from_file",
    "shipped_rubrics",
    "spread",
]
