"""The paper's human validation of MultiSenseEval (§4, App. L): people agree or disagree with a judge's score
and reasoning; each item's verdict is the majority of its annotators (3 in the paper's second round); the
reported number per metric is the share of items whose majority agrees (an agreement rate, not a correlation).

:func:`review_items` exports a stored run's judgements for annotators, blinded (no system or model names; a
seeded shuffle), with what the judge saw: the conversation, or the diagnosis message and the label. Each item
also carries ``id``, ``output`` and ``context``, so the same file uploads as the web app's ``agree`` review.
:func:`human_agreement` reads their labels back. A tie (an even number of annotators split evenly) has no
majority: such items are counted apart, never as agreement or disagreement.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bedside.inputs import InputError, expect
from bedside.jsonlines import json_objects
from bedside.runs.task import Turn
from bedside.tasks.sensemaking.evaluation import CONVERSATION_JUDGES, diagnosis_message
from bedside.tasks.sensemaking.task import JUDGE_SCORERS

CRITERIA = {judge: criterion for judge, criterion in JUDGE_SCORERS.values()}  # metric -> criterion


def _item_id(run_id: str, sample: str, cell: str, metric: str) -> str:
    return hashlib.sha256(f"{run_id}|{cell}|{sample}|{metric}".encode()).hexdigest()[:12]


def review_items(rows: Sequence[Any], *, seed: int = 0) -> list[dict[str, Any]]:
    """One item per (sample, judged metric): the judge's score and reasoning and what it read; blinded."""
    items = []
    for row in rows:
        if row.status != "ok" or not row.output:
            continue
        extra = row.output["extra"]
        transcript = [Turn.model_validate(t) for t in row.output.get("transcript") or []]
        for metric, judgement in (extra.get("judgements") or {}).items():
            criterion = CRITERIA[metric]
            shown: dict[str, str] = (
                {"conversation": row.output["text"]}
                if metric in CONVERSATION_JUDGES
                else {
                    "diagnosis_statement": diagnosis_message(transcript) or "",
                    "true_diagnosis": (extra.get("case", {}).get("diagnosis") or {}).get("label", ""),
                }
            )
            item_id = _item_id(row.run_id, row.sample_id, row.cell, metric)
            judged = shown.get("conversation", shown.get("diagnosis_statement", ""))
            context = "" if "conversation" in shown else f"True diagnosis: {shown['true_diagnosis']}"
            items.append(
                {
                    "item": item_id,
                    "metric": metric,
                    "score": judgement["scores"][criterion],
                    "reasoning": judgement["justifications"][criterion],
                    **shown,
                    # The web app's `agree` review reads the same file: id, what was judged, what it was judged
                    # against (the web export gives back {item, metric, annotator, agree} for human-agreement).
                    "id": item_id,
                    "output": judged,
                    "context": context,
                }
            )
    random.Random(seed).shuffle(items)
    return items


def item_key(rows: Sequence[Any]) -> dict[str, dict[str, str]]:
    """item id -> the unblinded sample, cell and metric, for the person who runs the study."""
    return {
        _item_id(r.run_id, r.sample_id, r.cell, m): {"sample": r.sample_id, "cell": r.cell, "metric": m}
        for r in rows
        if r.status == "ok" and r.output
        for m in (r.output["extra"].get("judgements") or {})
    }


@dataclass(frozen=True)
class MetricAgreement:
    metric: str
    items: int  # items with a majority
    ties: int  # items without one
    agree: int  # items whose majority agrees with the judge
    annotations: int
    annotators: int

    @property
    def rate(self) -> float | None:
        return self.agree / self.items if self.items else None

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "rate": self.rate}


def read_labels(path: Path) -> list[dict[str, Any]]:
    """JSONL: ``{"item": ID, "metric": NAME, "annotator": WHO, "agree": true|false}`` per line."""
    labels = []
    seen: dict[tuple[str, str, str], int] = {}
    spelled: dict[str, tuple[str, int]] = {}
    for number, data in json_objects(path):
        for key in ("item", "metric", "annotator", "agree"):
            if key not in data:
                raise InputError(f"{path}:{number}: missing {key!r}")
        for key in ("item", "annotator"):
            expect(data[key], (str, int), path=path, line=number, field=key)
        if not isinstance(data["agree"], bool):
            raise InputError(f"{path}:{number}: agree must be true or false")
        if data["metric"] not in CRITERIA:
            raise InputError(f"{path}:{number}: unknown metric {data['metric']!r}; choose from {', '.join(CRITERIA)}")
        # One vote per person per item: a second label would silently replace the first (and 1 and "1", or
        # "Ana" and "ana", would count as two items or two people).
        item, annotator = str(data["item"]).strip(), str(data["annotator"]).strip()
        first = spelled.setdefault(annotator.casefold(), (annotator, number))
        if first[0] != annotator:
            raise InputError(
                f"{path}:{number}: annotator {annotator!r} differs from {first[0]!r} (line {first[1]}) only in "
                "case or spaces: spell one person one way"
            )
        vote = (str(data["metric"]), item, annotator)
        if vote in seen:
            raise InputError(
                f"{path}:{number}: {annotator!r} labels item {item!r} on {vote[0]} again (first on line {seen[vote]}): "
                "one label per annotator per item"
            )
        seen[vote] = number
        labels.append({**data, "item": item, "annotator": annotator})
    return labels


def human_agreement(labels: Sequence[Mapping[str, Any]]) -> list[MetricAgreement]:
    """Per metric: the share of items whose annotators' majority agrees with the judge."""
    votes: dict[str, dict[str, dict[str, bool]]] = defaultdict(lambda: defaultdict(dict))
    for label in labels:
        votes[label["metric"]][label["item"]][label["annotator"]] = label["agree"]
    out = []
    for metric in [m for m in CRITERIA if m in votes] + sorted(set(votes) - set(CRITERIA)):
        items = votes[metric]
        agree = ties = 0
        for by_person in items.values():
            yes = sum(by_person.values())
            no = len(by_person) - yes
            if yes == no:
                ties += 1
            elif yes > no:
                agree += 1
        annotators = {person for by_person in items.values() for person in by_person}
        out.append(
            MetricAgreement(
                metric, len(items) - ties, ties, agree, sum(len(v) for v in items.values()), len(annotators)
            )
        )
    return out
