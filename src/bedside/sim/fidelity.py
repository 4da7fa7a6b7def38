"""Simulator fidelity: is what the simulated patient says grounded in what it was allowed to know?

A bedside addition (neither seed checks its simulator). Every sentence of every patient turn gets one label:

- ``non_informative``: states no fact (greetings, feelings, questions);
- ``entailed``: follows from the patient's :class:`~bedside.sim.knowledge.Knowledge` *or from anything the
  clinician said earlier in the conversation* (a discharge patient who repeats "so metoprolol twice a day?" is
  not inventing; without this rule the checker floods with false flags);
- ``contradicted``: conflicts with either source;
- ``unsupported``: a fact about the patient or their care that neither source gives.

One judge call per patient turn labels all its sentences (split by bedside's sentence splitter), through the
sample's context under the ``judge`` role, so it is cached and counted like every other call and never runs
inside the conversation loop. The answer must hold exactly one label per sentence (re-asked otherwise).

Cheaper checkers, measured against hand labels by ``bedside sim fidelity-agreement`` and ``bedside sim
fidelity-eval`` (figures in ARCHITECTURE.md and docs/fidelity/simulator.md): ``checker="combined"`` (the demos'
offline checker; :mod:`bedside.sim.contradiction`) reads surface contradictions with EditJudge's guard signals
and labels the rest with MiniLM and a few rules, without a model call; ``checker="embedding"`` labels without a
model call (all-MiniLM-L6-v2 cosine between a sentence and every fact and earlier clinician sentence: at or above
``threshold`` entailed, a question non-informative, anything else unsupported; it cannot see a contradiction),
and ``prefilter=t`` keeps the LLM judge but labels the sentences at or above ``t`` entailed without asking,
sending only the rest (a turn left with none costs no call). The combined checker says ``uncertain`` where its
rules cannot vouch for a sentence (:func:`bedside.sim.contradiction.label_combined`); ``verify=True`` sends those
sentences, and only those, to the judge, so a capable endpoint decides what the rules cannot at the cost of a few
calls, and each such label is marked ``verified``.

Rates use the informative sentences as the denominator: ``unsupported_rate`` and ``contradicted_rate`` are
shares of the sentences that state a fact. Per-stage counts let a task report, for instance, that unsupported
statements cluster in stages where the patient was told to answer creatively.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, create_model

from bedside.llm.types import Role
from bedside.prompts import render_chat
from bedside.runs.task import SampleContext, Turn
from bedside.sim.contradiction import LABELS, JudgedLabel, Label, label_combined
from bedside.sim.knowledge import Knowledge
from bedside.text.sentences import split_sentences

FIDELITY_TEMPLATE = "sim/fidelity.j2"
EMBEDDING_THRESHOLD = 0.6
"""Cosine at or above which the embedding checker (and the pre-filter's suggested value) call a sentence entailed:
the best of 0.40-0.70 on bedside's labelled set (113 sentences), where it also keeps flagged recall above 0.9."""
Checker = Literal["llm", "embedding", "combined"]
CHECKERS: tuple[Checker, ...] = get_args(Checker)


@dataclass(frozen=True)
class LabelledSentence:
    turn: int  # index of the patient turn in the transcript
    stage: str | None
    sentence: str
    label: Label
    verified: bool = False
    """The combined checker could not decide and the judge gave this label (``verify``)."""


@dataclass(frozen=True)
class FidelityReport:
    sentences: list[LabelledSentence] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        found = Counter(s.label for s in self.sentences)
        return {label: found.get(label, 0) for label in LABELS}

    @property
    def verified(self) -> int:
        """Sentences the combined checker left uncertain and the judge labelled."""
        return sum(1 for s in self.sentences if s.verified)

    @property
    def informative(self) -> int:
        return sum(1 for s in self.sentences if s.label != "non_informative")

    def rate(self, label: Label) -> float | None:
        """Share of informative sentences with ``label``; None when the patient stated no fact at all."""
        return self.counts[label] / self.informative if self.informative else None

    def by_stage(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for sentence in self.sentences:
            stage = out.setdefault(sentence.stage or "", dict.fromkeys(LABELS, 0))
            stage[sentence.label] += 1
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "counts": self.counts,
            "informative": self.informative,
            "unsupported_rate": self.rate("unsupported"),
            "contradicted_rate": self.rate("contradicted"),
            "verified": self.verified,
            "by_stage": self.by_stage(),
            "sentences": [
                {"turn": s.turn, "stage": s.stage, "sentence": s.sentence, "label": s.label}
                | ({"verified": True} if s.verified else {})
                for s in self.sentences
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FidelityReport:
        return cls([LabelledSentence(**s) for s in data.get("sentences", [])])


class _Labels(BaseModel):
    model_config = ConfigDict(extra="ignore")
    labels: list[JudgedLabel]


def _answer_model(n: int) -> type[_Labels]:
    return create_model(
        f"FidelityLabels{n}",
        __base__=_Labels,
        labels=(list[JudgedLabel], Field(min_length=n, max_length=n)),
    )


async def check_fidelity(
    transcript: Sequence[Turn],
    knowledge: Knowledge,
    context: SampleContext,
    *,
    role: Role = "judge",
    template: str | Path = FIDELITY_TEMPLATE,
    patient: str = "patient",
    max_repairs: int = 2,
    checker: Checker = "llm",
    threshold: float = EMBEDDING_THRESHOLD,
    prefilter: float | None = None,
    verify: bool = False,
) -> FidelityReport:
    """Label every sentence the patient said in ``transcript``; raises the model layer's errors on failure.

    ``verify`` (combined checker only) sends the sentences the rules leave ``uncertain`` to the judge, one call per
    turn for those sentences only; without it they stay uncertain, counted apart and never guessed."""
    if checker not in CHECKERS:
        raise ValueError(f"fidelity checker must be one of {', '.join(CHECKERS)}, not {checker!r}")
    if verify and checker != "combined":
        raise ValueError(f"verify asks the judge about the combined checker's uncertain sentences, not {checker!r}'s")
    labelled: list[LabelledSentence] = []
    clinician_said: list[str] = []
    for index, turn in enumerate(transcript):
        if turn.role != patient:
            clinician_said.append(turn.content)
            continue
        sentences = [s.text for s in split_sentences(turn.content)]
        if not sentences:
            continue
        labels: dict[int, Label] = {}
        if checker == "combined":
            combined = label_combined(sentences, knowledge.facts, clinician_said)
            labels.update(
                (i, found.label) for i, found in enumerate(combined) if not verify or found.label != "uncertain"
            )
        elif checker == "embedding" or prefilter is not None:
            similar = _similarity(sentences, knowledge.facts, clinician_said)
            cut = threshold if checker == "embedding" else prefilter
            for i, (sentence, score) in enumerate(zip(sentences, similar, strict=True)):
                if checker == "embedding":
                    question = sentence.rstrip().endswith("?")
                    labels[i] = "non_informative" if question else ("entailed" if score >= threshold else "unsupported")
                elif cut is not None and score >= cut:
                    labels[i] = "entailed"
        asked = [i for i in range(len(sentences)) if i not in labels]
        if asked:
            messages = render_chat(
                template,
                facts=knowledge.numbered() or "(none)",
                profile=dict(knowledge.profile),
                clinician_said=list(clinician_said),
                sentences=[sentences[i] for i in asked],
            )
            answer = await context.generate_structured(
                role, messages, _answer_model(len(asked)), max_repairs=max_repairs
            )
            labels.update(zip(asked, answer.value.labels, strict=True))
        labelled.extend(
            LabelledSentence(index, turn.stage, sentence, labels[i], verified=verify and i in asked)
            for i, sentence in enumerate(sentences)
        )
    return FidelityReport(labelled)


def _similarity(sentences: Sequence[str], facts: Sequence[str], clinician_said: Sequence[str]) -> list[float]:
    """Each sentence's highest cosine to a fact or to a sentence the clinician said before."""
    from bedside.retrieval.embeddings import default_embedder

    known = [*facts, *(s.text for said in clinician_said for s in split_sentences(said))]
    if not known:
        return [0.0] * len(sentences)
    embedder = default_embedder()
    scores = embedder.embed(list(sentences)) @ embedder.embed(known).T
    return [float(x) for x in scores.max(axis=1)]
