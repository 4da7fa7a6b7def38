"""Drafting systems: zero-shot, thematic, RAG-k, and RAG adapted to one clinician.

- ``zero_shot``: the message and chart, and an instruction to reply as the patient's doctor (the paper's Fig. 7
  criteria in bedside's words, nothing more).
- ``thematic``: the same, plus that good replies are brief and may carry some of the eight themes (Fig. 8).
- ``rag``: the zero-shot instruction with the k (default 5) training cases whose message + chart are nearest to
  this one (MiniLM cosine) and their real clinician replies, as examples before the case (App. D.1).
- ``zero_shot_nudged``, ``thematic_nudged``, ``rag_nudged``: bedside's earlier prompts, which add advice toward
  themes EditJudge measures (say what to do next and when to seek urgent care; ask follow-up questions) and a
  RAG instruction of their own. Kept, named apart, because results with them are not the paper's setting.
- ``clinician_rag``: RAG over one clinician's past replies only, plus a short profile of how often that
  clinician's replies carry each theme; meant to be evaluated against that clinician's replies.

The training pool is a cases file (``pool`` option: bedside JSONL, or a flat table with ``pool_columns``, or
SyPPM with ``pool_format: syppm``; charts
from ``chart_summary`` or rendered from ``pool_records``), or ``demo`` for the demo messages. A pool case with the
same id as the case being drafted is never used, so pointing ``pool`` at the evaluated file itself gives a
leave-one-out pool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from bedside.llm import ChatMessage, Completion, GenerationSettings, Model
from bedside.prompts import render_chat
from bedside.tasks.drafting.cases import PortalMessage
from bedside.tasks.drafting.readers import read_cases
from bedside.tasks.drafting.themes import RESPONSE_THEMES, THEMES, default_theme_classifier, response_themes
from bedside.text.sentences import split_sentences

TEMPLATES = {
    "zero_shot": "drafting/zero_shot.j2",
    "thematic": "drafting/thematic.j2",
    "rag": "drafting/rag.j2",
    "clinician_rag": "drafting/clinician_rag.j2",
    # bedside's first prompts, which add nudges toward the measured themes (next steps, urgent care, follow-up
    # questions) and give RAG its own instruction: kept as separately named systems, not the paper's.
    "zero_shot_nudged": "drafting/zero_shot_nudged.j2",
    "thematic_nudged": "drafting/thematic_nudged.j2",
    "rag_nudged": "drafting/rag_nudged.j2",
}
DEFAULT_K = 5


def _chart(message: PortalMessage) -> str:
    if message.chart_summary is None:
        raise ValueError(f"portal message {message.id} has no chart summary; see with_chart_from()")
    return message.chart_summary


def zero_shot_chat(message: PortalMessage, template: str | Path = TEMPLATES["zero_shot"]) -> list[ChatMessage]:
    return render_chat(template, message=message.message, chart_summary=_chart(message))


async def draft_reply(
    model: Model,
    message: PortalMessage,
    settings: GenerationSettings | None = None,
    *,
    template: str | Path = TEMPLATES["zero_shot"],
) -> Completion:
    """A zero-shot draft outside a run (``bedside draft``)."""
    return await model.generate(
        zero_shot_chat(message, template), settings or GenerationSettings(max_tokens=256, temperature=0.0)
    )


def thematic_chat(message: PortalMessage, template: str | Path = TEMPLATES["thematic"]) -> list[ChatMessage]:
    themes = [t for t in THEMES if t.key in RESPONSE_THEMES]
    return render_chat(template, message=message.message, chart_summary=_chart(message), themes=themes)


@dataclass(frozen=True)
class Example:
    case_id: str
    message: str
    chart_summary: str
    reply: str
    clinician_id: str
    similarity: float


def _key_text(message: PortalMessage) -> str:
    return f"{message.message}\n{message.chart_summary or ''}"


class ReplyPool:
    """Past cases with real replies, searchable by message + chart (one entry per reply)."""

    def __init__(self, cases: Sequence[PortalMessage], clinician_id: str | None = None) -> None:
        from bedside.retrieval.embeddings import EmbeddingIndex

        self.entries = [
            (case, reply)
            for case in cases
            for reply in case.references
            if clinician_id is None or reply.clinician_id == clinician_id
        ]
        self.clinician_id = clinician_id
        self._index = EmbeddingIndex([_key_text(case) for case, _ in self.entries]) if self.entries else None

    def __len__(self) -> int:
        return len(self.entries)

    def nearest(self, message: PortalMessage, k: int = DEFAULT_K) -> list[Example]:
        """The k nearest entries, excluding the case itself (same id), best first."""
        if self._index is None or k <= 0:
            return []
        found = self._index.search(_key_text(message), k + sum(c.id == message.id for c, _ in self.entries))
        examples = []
        for hit in found:
            case, reply = self.entries[hit.index]
            if case.id != message.id:
                examples.append(
                    Example(case.id, case.message, case.chart_summary or "", reply.text, reply.clinician_id, hit.score)
                )
        return examples[:k]

    @cached_property
    def theme_profile(self) -> dict[str, float]:
        """Share of this pool's replies that carry each theme (theme-box fields when given, else classified).

        Computed once per pool: pools are built once per process, and every sample drafted for the clinician
        would otherwise classify all of their replies again."""
        if not self.entries:
            return dict.fromkeys(RESPONSE_THEMES, 0.0)
        classifier = default_theme_classifier()
        sets = []
        for _, reply in self.entries:
            given = reply.given_themes
            if given is None:
                given = response_themes(classifier.predict([s.text for s in split_sentences(reply.text)]))
            sets.append(given)
        return {t: sum(t in s for s in sets) / len(sets) for t in RESPONSE_THEMES}


def rag_chat(
    message: PortalMessage, examples: Sequence[Example], template: str | Path = TEMPLATES["rag"]
) -> list[ChatMessage]:
    return render_chat(template, message=message.message, chart_summary=_chart(message), examples=examples)


def clinician_chat(
    message: PortalMessage,
    examples: Sequence[Example],
    profile: Mapping[str, float],
    template: str | Path = TEMPLATES["clinician_rag"],
) -> list[ChatMessage]:
    names = {t.key: t.name for t in THEMES}
    ordered = sorted(profile.items(), key=lambda item: (-item[1], RESPONSE_THEMES.index(item[0])))
    return render_chat(
        template,
        message=message.message,
        chart_summary=_chart(message),
        examples=examples,
        profile=[(names[key], share) for key, share in ordered],
    )


@cache
def _pool_cases(
    pool: str, columns: tuple[tuple[str, str], ...] | None, records: str | None, layout: str | None = None
) -> list[PortalMessage]:
    return read_cases(pool, dict(columns) if columns else None, records, layout)


@cache
def _reply_pool(
    pool: str,
    columns: tuple[tuple[str, str], ...] | None,
    records: str | None,
    clinician: str | None,
    layout: str | None = None,
) -> ReplyPool:
    return ReplyPool(_pool_cases(pool, columns, records, layout), clinician)


def reply_pool(options: Mapping[str, Any], clinician: str | None = None) -> ReplyPool:
    """The pool a RAG system's options name (built once per process and option set)."""
    pool = options.get("pool")
    if not pool:
        raise ValueError("this system needs options.pool: a cases file with clinician replies, or 'demo'")
    columns = options.get("pool_columns")
    records = options.get("pool_records")
    layout = options.get("pool_format")
    built = _reply_pool(
        str(pool),
        tuple(sorted(columns.items())) if columns else None,
        str(records) if records else None,
        clinician,
        str(layout) if layout else None,
    )
    if not len(built):
        who = f" by clinician {clinician!r}" if clinician else ""
        raise ValueError(f"the pool {pool!r} has no replies{who}")
    return built
