"""Every content matcher by name, and the paper's judge comparison over them: the one module above all the kinds.

:mod:`.matchers` (LLM, embedding, lexical, the guard wrapper), :mod:`.validation` (annotations, agreement,
calibration) and :mod:`.trained_matcher` (built on both) read one way; choosing a kind by name and comparing
judges of every kind need all three, so they live here, and the task and the commands come here for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bedside.tasks.drafting.editjudge import Matcher
from bedside.tasks.drafting.guard import GUARD_MODES, GuardMode, UncertainPolicy
from bedside.tasks.drafting.matchers import (
    EMBEDDING_THRESHOLD,
    LEXICAL_THRESHOLD,
    MATCH_TEMPLATE,
    MIN_CONTENT_SHARE,
    EmbeddingMatcher,
    Generate,
    GuardedMatcher,
    LexicalMatcher,
    LLMMatcher,
    SentenceMatcher,
)
from bedside.tasks.drafting.trained_matcher import TrainedMatcher, leave_one_draft_out, trained_matcher
from bedside.tasks.drafting.validation import JudgeAgreement, MatchAnnotation, calibrate, judge_agreement, predict

if TYPE_CHECKING:
    from bedside.judges.verifier import MeaningVerifier

MATCHERS = ("embedding", "lexical", "trained", "llm")


def make_matcher(
    kind: str,
    generate: Generate | None = None,
    *,
    threshold: float | None = None,
    guard: GuardMode = "reject",
    template: str | Path | None = None,
    model_path: str | Path | None = None,
    min_content_share: float | None = None,
    uncertain: UncertainPolicy = "keep",
    verifier: MeaningVerifier | None = None,
) -> Matcher:
    """A matcher by name, behind the clinical-safety guard unless ``guard="off"``.

    ``llm`` needs ``generate`` (one chat in, one completion out) and takes a judge ``template`` (0-shot by
    default; ``drafting/editjudge_match_fewshot.j2`` is the 5-shot one) and ``min_content_share`` (the smallest
    share of a reference sentence's content a judge's span must carry; default 0.25). ``trained`` loads
    ``model_path`` (a ``.npz`` from ``bedside drafting train-matcher``) or trains on bedside's annotations at
    first use. ``uncertain`` and ``verifier`` say who decides a match the guard cannot vouch for
    (:class:`~bedside.tasks.drafting.matchers.GuardedMatcher`).
    """
    if guard not in GUARD_MODES:
        raise ValueError(f"guard {guard!r}: choose one of {', '.join(GUARD_MODES)}")
    if threshold is not None and not 0.0 <= threshold <= 1.0:  # NaN fails too: a threshold it would match anything
        raise ValueError(f"threshold {threshold}: a matcher's threshold is a similarity from 0 to 1")
    matcher: Matcher
    if kind == "embedding":
        matcher = EmbeddingMatcher(EMBEDDING_THRESHOLD if threshold is None else threshold)
    elif kind == "lexical":
        matcher = LexicalMatcher(LEXICAL_THRESHOLD if threshold is None else threshold)
    elif kind == "trained":
        matcher = trained_matcher(model_path, threshold=threshold)
    elif kind == "llm":
        if generate is None:
            raise ValueError("the llm matcher needs a model (a judge role in a run, or -m MODEL on the command line)")
        share = MIN_CONTENT_SHARE if min_content_share is None else min_content_share
        matcher = LLMMatcher(generate, template=template or MATCH_TEMPLATE, min_content_share=share)
    else:
        raise ValueError(f"unknown matcher {kind!r}; choose one of {', '.join(MATCHERS)}")
    if guard == "off":
        return matcher
    return GuardedMatcher(matcher, mode=guard, uncertain=uncertain, verifier=verifier)


@dataclass(frozen=True)
class JudgeRow:
    """One judge in the paper's judge comparison (its Table 8): measures on the annotations, and held out."""

    name: str
    kind: str  # "threshold", "trained" or the llm judge's template
    agreement: JudgeAgreement
    threshold: float | None = None
    held_out: JudgeAgreement | None = None


async def compare_judges(
    judges: Sequence[tuple[str, Matcher]], annotations: Sequence[MatchAnnotation]
) -> list[JudgeRow]:
    """Every judge on the same annotations, as one table's rows.

    An offline matcher with a threshold is calibrated (the best threshold in-sample, leave-one-draft-out held
    out); the trained matcher is refitted on ``annotations`` and held out by leave-one-draft-out training; an
    LLM judge is asked once per annotation (nothing to fit, so no held-out column).
    """
    rows = []
    for name, judge in judges:
        inner = judge.inner if isinstance(judge, GuardedMatcher) else judge
        guarded = isinstance(judge, GuardedMatcher)
        if isinstance(inner, TrainedMatcher):
            refit = TrainedMatcher.fit(annotations, features=inner.features)
            matcher = (
                GuardedMatcher(refit, judge.guard, judge.mode, uncertain=judge.uncertain, verifier=judge.verifier)
                if isinstance(judge, GuardedMatcher)
                else refit
            )
            calibration = calibrate(matcher, annotations)
            held = leave_one_draft_out(annotations, guarded=guarded, features=inner.features)
            rows.append(JudgeRow(name, "trained", calibration.agreement, calibration.threshold, held.agreement))
        elif isinstance(inner, SentenceMatcher):
            calibration = calibrate(judge, annotations)  # type: ignore[arg-type]
            rows.append(JudgeRow(name, "threshold", calibration.agreement, calibration.threshold, calibration.held_out))
        else:
            template = getattr(inner, "template", "")
            rows.append(JudgeRow(name, str(template), judge_agreement(annotations, await predict(judge, annotations))))
    return rows
