"""One draft against one clinician reply, at both levels, with everything a table or a reviewer needs.

Content level: Algorithm 1 with the chosen matcher. Theme level: every sentence of the reply and of the draft
gets a theme from the same classifier, so both sides go through one labelling path: identical texts always
score Theme Edit-F1 1. ``theme_source="boxes"`` takes the reply's theme set from its theme-box fields instead,
where it has them (the drafts still go through the classifier; the two paths can disagree on the same text, so
this is an option, named in the stored evaluation, not the default). The result is plain JSON
(stored in a run's output), and the tables are computed from stored results without any model call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bedside.tasks.drafting.cases import ClinicianReply
from bedside.tasks.drafting.editjudge import EditCounts, Matcher, edit_judge, reference_sentences
from bedside.tasks.drafting.themes import (
    OTHER,
    RESPONSE_THEMES,
    ThemeCounts,
    pooled,
    response_themes,
    theme_counts,
    theme_proportions,
)
from bedside.text.sentences import split_sentences

Classify = Callable[[Sequence[str]], Awaitable[list[str]]]


async def evaluate_draft(
    draft: str, reference: ClinicianReply, matcher: Matcher, classify: Classify, *, theme_source: str = "classifier"
) -> dict[str, Any]:
    """Content- and theme-level EditJudge of ``draft`` against ``reference``, as JSON-able data."""
    if theme_source not in ("classifier", "boxes"):
        raise ValueError(f"theme_source {theme_source!r}: choose classifier or boxes")
    ref_sentences = reference_sentences(reference.text)
    draft_sentences = [s.text for s in split_sentences(draft)]
    # Themes first: the offline classifier embeds every sentence of both sides in one batch, and the embedding
    # matcher then finds each vector kept (bedside.retrieval.embeddings) instead of embedding sentence by sentence.
    labels = await classify([*ref_sentences, *draft_sentences])
    judgement = await edit_judge(reference.text, draft, matcher)
    ref_labels, draft_labels = labels[: len(ref_sentences)], labels[len(ref_sentences) :]
    given = reference.given_themes if theme_source == "boxes" else None
    ref_themes = sorted(given) if given is not None else sorted(response_themes(ref_labels))
    return {
        "clinician_id": reference.clinician_id,
        "content": judgement.to_dict(),
        "reference_sentence_themes": ref_labels,
        "draft_sentence_themes": draft_labels,
        "reference_themes": ref_themes,
        "draft_themes": sorted(response_themes(draft_labels)),
        "reference_themes_from": "theme fields" if given is not None else "classifier",
    }


def content_counts(evaluation: Mapping[str, Any]) -> EditCounts:
    content = evaluation["content"]
    return EditCounts(em=content["em"], ea=content["ea"], ed=content["ed"])


def matcher_failures(evaluation: Mapping[str, Any]) -> int:
    """Reference sentences of one evaluation whose matcher answer could not be used (0 in results stored before
    failures were recorded)."""
    return sum(d.get("failure") is not None for d in evaluation["content"]["decisions"])


def guard_uncertain(evaluation: Mapping[str, Any]) -> int:
    """Reference sentences of one evaluation whose decision the clinical-safety guard could not vouch for (kept or
    refused by the ``uncertain`` option; 0 in results stored before the guard could say so)."""
    return sum(d.get("uncertain") is not None for d in evaluation["content"]["decisions"])


def matcher_all_failed(evaluation: Mapping[str, Any]) -> bool:
    """Whether no matcher answer of this evaluation could be used: then its content level was not judged at all,
    so its Edit-F1 and counts are absent (every NO MATCH would make them 0.0), and only the failures are counted.
    A draft with some failures keeps its content scores, each failure counted as NO MATCH (and counted)."""
    decisions = evaluation["content"]["decisions"]
    return bool(decisions) and all(d.get("failure") is not None for d in decisions)


def theme_counts_of(evaluation: Mapping[str, Any]) -> dict[str, ThemeCounts]:
    return theme_counts(evaluation["reference_themes"], evaluation["draft_themes"])


def theme_totals(evaluation: Mapping[str, Any]) -> EditCounts:
    total, _ = pooled([theme_counts_of(evaluation)])
    return total.as_edit_counts()


@dataclass(frozen=True)
class LevelScores:
    precision: float | None  # None: nothing of this level was judged (every matcher answer failed)
    recall: float | None
    f1: float | None
    n: int


@dataclass(frozen=True)
class SystemTables:
    """The paper's tables for one group of evaluations (a cell of a run, or the clinicians themselves)."""

    content: LevelScores  # micro
    theme: LevelScores  # micro
    theme_proportions: dict[str, float]  # Table 6: share of drafts carrying each theme
    content_recall_by_theme: dict[str, float | None]  # Table 14: EM share of reference sentences of each theme
    theme_f1_by_theme: dict[str, float | None]  # Table 15
    reference_proportions: dict[str, float]  # Table 6's clinician row, for the same cases
    # Share of reference-sentence decisions whose judge answer was neither NO MATCH nor a verbatim draft span
    # (aligned or unreadable): high values say the LLM judge is not following the task. 0 for offline matchers.
    flagged: float = 0.0
    # Share of reference-sentence decisions where the matcher's answer could not be used at all (a fragment, the
    # whole draft, text not in the draft): counted as NO MATCH, never as a match. 0 for offline matchers.
    matcher_failed: float = 0.0
    # The Other column: share of drafts (references) with at least one sentence of no theme.
    other_proportion: float = 0.0
    reference_other_proportion: float = 0.0


def tables_for(evaluations: Iterable[Mapping[str, Any]]) -> SystemTables:
    items = list(evaluations)
    judged = [e for e in items if not matcher_all_failed(e)]  # content level: drafts the matcher judged at all
    content = sum((content_counts(e) for e in judged), EditCounts())
    theme_total, by_theme = pooled(theme_counts_of(e) for e in items)
    theme = theme_total.as_edit_counts()
    matched: dict[str, list[bool]] = {t: [] for t in RESPONSE_THEMES}
    for e in judged:
        for decision, label in zip(e["content"]["decisions"], e["reference_sentence_themes"], strict=True):
            if label in matched:
                matched[label].append(decision["span"] is not None)
    per_theme_f1: dict[str, float | None] = {}
    for t in RESPONSE_THEMES:
        c = by_theme.get(t)
        per_theme_f1[t] = c.as_edit_counts().f1 if c is not None else None
    decisions = [d for e in items for d in e["content"]["decisions"]]
    return SystemTables(
        content=(
            LevelScores(content.precision, content.recall, content.f1, len(judged))
            if judged
            else LevelScores(None, None, None, 0)
        ),
        theme=LevelScores(theme.precision, theme.recall, theme.f1, len(items)),
        theme_proportions=theme_proportions(e["draft_themes"] for e in items),
        content_recall_by_theme={t: (sum(v) / len(v) if v else None) for t, v in matched.items()},
        theme_f1_by_theme=per_theme_f1,
        reference_proportions=theme_proportions(e["reference_themes"] for e in items),
        flagged=sum(bool(d["flagged"]) for d in decisions) / len(decisions) if decisions else 0.0,
        matcher_failed=sum(d.get("failure") is not None for d in decisions) / len(decisions) if decisions else 0.0,
        other_proportion=_other_share(e["draft_sentence_themes"] for e in items),
        reference_other_proportion=_other_share(e["reference_sentence_themes"] for e in items),
    )


def _other_share(responses: Iterable[Sequence[str]]) -> float:
    flags = [OTHER in labels for labels in responses]
    return sum(flags) / len(flags) if flags else 0.0
