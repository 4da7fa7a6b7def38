"""A review's meta-evaluation: agreement between annotators, and with the automatic judgement, per task type; the
safety flags annotators raised."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Engine

from bedside.web.review import (
    NO_MATCH,
    RELEVANCE,
    ReviewError,
    review,
)
from bedside.web.review_labels import all_items, all_labels


def label_units(task_type: str, item: dict[str, Any], value: dict[str, Any]) -> dict[str, Any]:
    """A label as categorical units (unit id -> category) for agreement."""
    if task_type == "rank":
        return {f"correct/{i}": o["correct"] for i, o in enumerate(value["outputs"])}
    if task_type == "pairwise":
        return {"preference": str(value["preference"])}
    if task_type == "agree":
        return {"agree": bool(value["agree"])}
    if task_type == "match":
        return {"match": value["span"] is not None, "span": value["span"] or NO_MATCH}
    if task_type == "evidence":
        return {f"rel/{k}": v for k, v in value["relevance"].items()}
    return {}


def _judge_units(task_type: str, item: dict[str, Any]) -> dict[str, Any]:
    judge = (item.get("key") or {}).get("judge")
    if judge is None:
        return {}
    if task_type == "pairwise" and judge in ("A", "B", "tie"):
        return {"preference": "tie" if judge == "tie" else str("AB".index(judge))}
    if task_type == "match":
        span = judge if isinstance(judge, str) and judge != NO_MATCH else None
        return {"match": span is not None, "span": span or NO_MATCH}
    if task_type == "evidence" and isinstance(judge, dict):
        return {f"rel/{k}": v for k, v in judge.items() if v in RELEVANCE}
    return {}


def meta_evaluation(engine: Engine, review_id: str) -> dict[str, Any]:
    """Inter-annotator agreement and judge–human agreement from the labels stored so far, with n and CIs.

    The statistics are :mod:`bedside.stats.reliability`'s (Krippendorff's α, percent agreement, Cohen's or
    Fleiss' κ, Kendall's W and τ between annotators' ranks, judge agreement; percentile bootstrap intervals over
    items, 1,000 resamples, seed 0): this function only turns labels into the units those functions read.
    """
    from bedside.stats import mean_kendall_tau
    from bedside.stats.reliability import judge_agreement, nominal_agreement, rank_agreement, rate_with_ci

    info = review(engine, review_id)
    if info is None:
        raise ReviewError(f"no review {review_id}")
    task_type = info["task_type"]
    items = all_items(engine, review_id)
    labels = all_labels(engine, review_id)
    annotators = sorted({lab["annotator"] for lab in labels})
    # per item: unit -> annotator -> category
    by_item: dict[str, dict[str, dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))
    for lab in labels:
        for unit, category in label_units(task_type, items[lab["item_id"]], lab["value"]).items():
            by_item[lab["item_id"]][unit][lab["annotator"]] = category
    result: dict[str, Any] = {
        "task_type": task_type,
        "labels": len(labels),
        "items_labelled": len({lab["item_id"] for lab in labels}),
        "annotators": annotators,
        "inter": [],
        "judge": [],
        "safety": safety_flags(labels),
    }
    if task_type == "gold":
        result["note"] = "gold replies are free text: no agreement statistic; export them for the drafting task"
        return result

    unit_kinds = sorted({u.split("/")[0] for units in by_item.values() for u in units})
    for kind in unit_kinds:
        groups = [
            [votes for u, votes in units.items() if u.split("/")[0] == kind and len(votes) >= 2]
            for units in by_item.values()
        ]
        result["inter"].extend(nominal_agreement(kind, groups, annotators))
    if task_type == "rank":
        ranks: dict[str, dict[str, list[float]]] = defaultdict(dict)
        for lab in labels:
            ranks[lab["item_id"]][lab["annotator"]] = [float(o["rank"]) for o in lab["value"]["outputs"]]
        if any(len(by) >= 2 for by in ranks.values()):
            result["inter"].extend(rank_agreement(ranks))

    # judge - human
    if task_type == "agree":
        per_item: dict[str, list[bool]] = defaultdict(list)
        for lab in labels:
            per_item[lab["item_id"]].append(bool(lab["value"]["agree"]))
        result["judge"].append(
            rate_with_ci(
                "agreement rate (labels agreeing with the judge)",
                [(sum(v), len(v)) for v in per_item.values()],
                len(labels),
            )
        )
        majority = [(float(sum(v) * 2 > len(v)), 1.0) for v in per_item.values() if sum(v) * 2 != len(v)]
        result["judge"].append(rate_with_ci("agreement rate (item majority, ties left out)", majority, len(majority)))
    elif task_type == "rank":
        human: dict[str, dict[str, float]] = {}
        machine: dict[str, dict[str, float]] = {}
        for lab in labels:
            judge = (items[lab["item_id"]]["key"] or {}).get("judge") or {}
            scores = judge.get("scores") if isinstance(judge, dict) else None
            if not scores:
                continue
            key = f"{lab['item_id']}|{lab['annotator']}"
            human[key] = {str(i): -float(o["rank"]) for i, o in enumerate(lab["value"]["outputs"])}
            machine[key] = {str(i): float(s) for i, s in enumerate(scores) if s is not None}
        if human:
            found = _quiet_tau(lambda: mean_kendall_tau(human, machine))
            taus = [(t, 1.0) for t in (found.per_item.values() if found else []) if t is not None]
            result["judge"].append(
                rate_with_ci("Kendall τ-b, human rank vs judge score (mean over labels)", taus, len(taus))
            )
    else:
        matched: dict[str, list[tuple[str, str, str]]] = defaultdict(list)  # item -> (kind, human, judge)
        for lab in labels:
            judged = _judge_units(task_type, items[lab["item_id"]])
            for unit, category in label_units(task_type, items[lab["item_id"]], lab["value"]).items():
                if unit in judged:
                    matched[lab["item_id"]].append((unit.split("/")[0], str(category), str(judged[unit])))
        for kind in sorted({k for found in matched.values() for k, _, _ in found}):
            pairs = [[(h, j) for k, h, j in found if k == kind] for found in matched.values()]
            result["judge"].extend(judge_agreement(kind, pairs))
    if not result["judge"]:
        result["judge_note"] = "no judgement to compare with (items without a judge)"
    return result


def safety_flags(labels: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The safety flags among ``labels``: how many labels and items carry one, and each flag's note."""
    flagged = [lab for lab in labels if isinstance(lab["value"].get("safety"), dict)]
    return {
        "labels": len(flagged),
        "items_flagged": len({lab["item_id"] for lab in flagged}),
        "flags": [
            {"item": lab["item_id"], "annotator": lab["annotator"], "note": str(lab["value"]["safety"].get("note", ""))}
            for lab in flagged
        ],
    }


def _quiet_tau(compute: Any) -> Any:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return compute()
        except ValueError:
            return None
