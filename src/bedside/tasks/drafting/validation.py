"""How well a content matcher agrees with people: the paper's judge-validation measures (its Table 8).

An annotation is one reference sentence, the whole draft, and the draft content a person marked as matching it
(``gold``, verbatim) or None for NO MATCH. Over a set of annotations:

- agreement: the matcher made the same decision (match or NO MATCH) as the person;
- non-match agreement: of the person's NO MATCHes, the share the matcher also called NO MATCH;
- match agreement: of the person's matches, the share where the matcher returned exactly the same span
  (compared after collapsing whitespace);
- match overlap: of the person's matches, the share where the matcher's span and the gold span share at least
  one character of the draft.

bedside ships 309 annotations of its own: ``data/match_annotations.jsonl`` (59: 12 synthetic drafts, 35 matches
incl. partial-sentence spans, 24 NO MATCHes) and ``data/match_annotations_clinical.jsonl`` (250: 25 clinical
drafts, oncology and primary care, written by ``tools/make_editjudge_data.py``: 109 paraphrase matches, 97 hard
negatives that differ from one draft sentence in action, drug, dose, negation, side or time, 44 absent contents).
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from bedside.inputs import InputError, json_object, nonempty, read_text
from bedside.tasks.drafting.editjudge import Match, Matcher, locate
from bedside.tasks.drafting.matchers import GuardedMatcher, SentenceMatcher


class MatchAnnotation(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    sentence: str
    draft: str
    gold: str | None


BUILTIN_ANNOTATIONS = ("match_annotations.jsonl", "match_annotations_clinical.jsonl")


def read_annotations(path: Path | None = None) -> list[MatchAnnotation]:
    """Annotations from a JSONL file (fields id, sentence, draft, gold); bedside's own when ``path`` is None."""
    if path is None:
        data = resources.files("bedside.tasks.drafting") / "data"
        return [a for name in BUILTIN_ANNOTATIONS for a in _parse((data / name).read_text(encoding="utf-8"), name)]
    return _parse(read_text(path), str(path))


def _parse(text: str, name: str) -> list[MatchAnnotation]:
    lines = text.splitlines()
    annotations = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        data = json_object(line, path=name, line=number)
        try:
            annotation = MatchAnnotation.model_validate(data)
        except ValidationError as exc:
            raise InputError(f"{name}:{number}: not a valid match annotation: {exc}") from None
        if annotation.gold is not None and annotation.gold not in annotation.draft:
            raise InputError(f"{name}:{number}: gold span is not verbatim in the draft: {annotation.gold!r}")
        annotations.append(annotation)
    return nonempty(annotations, name, "match annotations")


@dataclass(frozen=True)
class JudgeAgreement:
    """A judge's agreement with the annotations, over the answers it could give.

    An answer the judge gave but that could not be used (``Match.failure``: not in the draft, not a whole unit,
    empty) is not a NO MATCH decision, so it is counted in ``failures`` and left out of every measure; a measure
    whose annotations all went unanswered (or that has no annotation of its kind) is None, never 0.0 or 1.0.
    """

    n: int
    agreement: float | None
    non_match_agreement: float | None
    match_agreement: float | None
    match_overlap: float | None
    failures: int = 0

    def as_dict(self) -> dict[str, float | None]:
        return {
            "agreement": self.agreement,
            "non_match_agreement": self.non_match_agreement,
            "match_agreement": self.match_agreement,
            "match_overlap": self.match_overlap,
        }


def _share(count: int, total: int) -> float | None:
    return count / total if total else None


def _same(a: str, b: str) -> bool:
    return re.sub(r"\s+", " ", a).strip() == re.sub(r"\s+", " ", b).strip()


def _overlap(predicted: str, gold: str, draft: str) -> bool:
    p, g = locate(predicted, draft), locate(gold, draft)
    if p is None or g is None:
        return False
    return p[0] < g[1] and g[0] < p[1]


def judge_agreement(annotations: Sequence[MatchAnnotation], predictions: Sequence[Match]) -> JudgeAgreement:
    if len(annotations) != len(predictions):
        raise ValueError(f"{len(annotations)} annotations but {len(predictions)} predictions")
    if not annotations:
        raise ValueError("no annotations to validate against")
    every = list(zip(annotations, predictions, strict=True))
    pairs = [(a, p) for a, p in every if p.failure is None]  # a failed answer is no decision: absent, counted
    agree = sum((a.gold is None) == (p.span is None) for a, p in pairs)
    non_matches = [p for a, p in pairs if a.gold is None]
    matches = [(a, p) for a, p in pairs if a.gold is not None]
    exact = sum(p.span is not None and _same(p.span, a.gold or "") for a, p in matches)
    overlap = sum(p.span is not None and _overlap(p.span, a.gold or "", a.draft) for a, p in matches)
    return JudgeAgreement(
        n=len(every),
        agreement=_share(agree, len(pairs)),
        non_match_agreement=_share(sum(p.span is None for p in non_matches), len(non_matches)),
        match_agreement=_share(exact, len(matches)),
        match_overlap=_share(overlap, len(matches)),
        failures=len(every) - len(pairs),
    )


async def predict(matcher: Matcher, annotations: Sequence[MatchAnnotation]) -> list[Match]:
    return [await matcher.match(a.sentence, a.draft) for a in annotations]


@dataclass(frozen=True)
class Calibration:
    threshold: float
    agreement: JudgeAgreement  # in-sample: on the annotations the threshold was chosen on
    held_out: JudgeAgreement | None = None  # each draft's annotations judged at a threshold chosen without them


def calibrate(matcher: SentenceMatcher | GuardedMatcher, annotations: Sequence[MatchAnnotation]) -> Calibration:
    """The threshold for ``matcher`` that maximises agreement on ``annotations``, and the measures it gives.

    Each annotation's most similar draft sentence is found once; the candidate thresholds are the midpoints
    between consecutive distinct best scores, and ties go to the higher threshold (the more conservative
    matcher). A guarded matcher's best candidate is its most similar draft sentence that passes the guard, so
    the threshold is chosen for the matcher as it runs. ``held_out`` judges each draft's annotations at the
    threshold chosen on the other drafts' (leave one draft out), the fairer estimate of agreement on new data.
    """
    if not annotations:
        raise ValueError("no annotations to calibrate on")
    best = [matcher.best(a.sentence, a.draft) for a in annotations]
    chosen = best_threshold(annotations, best)
    predictions = [Match(span if span is not None and score >= chosen else None, score=score) for span, score in best]
    held_out = None
    drafts = sorted({a.draft for a in annotations})
    if len(drafts) > 1:
        by_draft: list[Match] = [Match(None)] * len(annotations)
        for draft in drafts:
            inside = [i for i, a in enumerate(annotations) if a.draft == draft]
            outside = [i for i, a in enumerate(annotations) if a.draft != draft]
            threshold = best_threshold([annotations[i] for i in outside], [best[i] for i in outside])
            for i in inside:
                span, score = best[i]
                by_draft[i] = Match(span if span is not None and score >= threshold else None, score=score)
        held_out = judge_agreement(annotations, by_draft)
    return Calibration(round(chosen, 4), judge_agreement(annotations, predictions), held_out)


def best_threshold(annotations: Sequence[MatchAnnotation], best: Sequence[tuple[str | None, float]]) -> float:
    """The threshold on the best candidates' scores that maximises agreement (ties go to the higher one)."""
    scores = sorted({score for _, score in best})
    candidates = [scores[0] - 1e-6, *((a + b) / 2 for a, b in itertools.pairwise(scores))]
    candidates.append(scores[-1] + 1e-6)
    chosen, most = candidates[0], -1
    for threshold in candidates:
        agree = sum(
            (a.gold is not None) == (span is not None and s >= threshold)
            for a, (span, s) in zip(annotations, best, strict=True)
        )
        if agree >= most:
            chosen, most = threshold, agree
    return chosen


def split_by_draft(
    annotations: Sequence[MatchAnnotation], held_out: float = 0.2, seed: int = 0
) -> tuple[list[MatchAnnotation], list[MatchAnnotation]]:
    """Train and held-out annotations, split by draft so no draft is on both sides (seeded, reproducible).

    A fine-tuned judge sees each training draft once per annotated sentence; holding out single annotations
    would leave their drafts in training and flatter the judge. The drafts are shuffled with ``seed`` and the
    first ``round(held_out * drafts)`` (at least one) are held out; file order is kept on both sides.
    """
    if not 0.0 < held_out < 1.0:
        raise ValueError(f"held_out must be between 0 and 1, got {held_out}")
    drafts = list(dict.fromkeys(a.draft for a in annotations))
    if len(drafts) < 2:
        raise ValueError("splitting by draft needs annotations of at least two drafts")
    random.Random(seed).shuffle(drafts)
    count = min(len(drafts) - 1, max(1, round(held_out * len(drafts))))
    chosen = set(drafts[:count])
    return [a for a in annotations if a.draft not in chosen], [a for a in annotations if a.draft in chosen]
