"""The instruct task's report tables: systems × context lengths, and correctness by instruction category.

Also the cell a result row is reported in (:func:`report_cell`, :func:`context_label`), which the plots
(:mod:`.plots`) share; the task (:mod:`.task`) sits above both.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from bedside.runs.task import ReportTable


def _mean(values: list[float], digits: int = 3) -> str:
    return f"{sum(values) / len(values):.{digits}f}" if values else "-"


def report_cell(row: Any) -> tuple[str, str, int]:
    """(system kind, model, context tokens): the cell a result row is reported in, by the tables and the plots."""
    extra = row.output.get("extra", {})
    return str(extra.get("system_kind", row.system)), row.model, int(extra.get("context", 0))


def context_label(kind: str, context: int) -> str:
    """A cell's context as shown: multi-step refinement reads the whole record ("unbounded", the paper's †)."""
    return "unbounded" if kind.startswith("refine") else str(context)


def report_tables(rows: Sequence[Any]) -> list[ReportTable]:
    """Systems × context lengths (paper systems first, extensions labelled), and correctness by category."""
    cells: dict[tuple[str, str, int], list[Any]] = defaultdict(list)
    errors: dict[tuple[str, str], int] = defaultdict(int)
    judge_failed: dict[tuple[str, str], int] = defaultdict(int)
    for row in rows:
        if row.status != "ok" or not row.output:
            errors[(row.system, row.model)] += 1
            continue
        if row.output.get("extra", {}).get("judge_error"):
            judge_failed[(row.system, row.model)] += 1
        cells[report_cell(row)].append(row)
    ordered = sorted(cells, key=lambda c: ("extension" in c[0], c[0], c[1], c[2]))
    body = []
    for kind, model, context in ordered:
        group = cells[(kind, model, context)]
        extras = [r.output["extra"] for r in group]

        def scores(name: str, group: list[Any] = group) -> list[float]:
            return [v for r in group if (v := r.scores.get(name)) is not None]

        body.append(
            [
                kind,
                model,
                context_label(kind, context),
                str(len(group)),
                _mean(scores("facts_correct")),
                _mean(scores("judge_correct")),
                _mean(scores("facts_recall")),
                _mean(scores("truncated")),
                _mean([float(e["prompt_tokens"]) for e in extras if "prompt_tokens" in e], digits=1),  # whole tokens
                str(sum(int(e.get("step_errors", 0)) for e in extras)),
                ",".join(sorted({str(e.get("record_view")) for e in extras})),
            ]
        )
    tables = [
        ReportTable(
            title="Instructions: systems × context length",
            columns=[
                "system",
                "model",
                "context",
                "n",
                "facts correct",
                "judge correct",
                "facts recall",
                "truncated",
                "prompt tokens",
                "MR step errors",
                "view",
            ],
            rows=body,
            note="Paper systems first; rows marked (extension) were not in the paper. MR's context is unbounded "
            "(the paper's 32,768†). Failed samples by system/model: "
            + (", ".join(f"{s}/{m}: {n}" for (s, m), n in sorted(errors.items())) or "none")
            + ". Judge failures (no valid verdict after the re-asks: judge correct absent for that sample, never "
            "0): " + (", ".join(f"{s}/{m}: {n}" for (s, m), n in sorted(judge_failed.items())) or "none") + ".",
        )
    ]
    # One column per system and model: pooling a grid's models into one column would hide what differs.
    by_category: dict[tuple[str, str], list[float]] = defaultdict(list)
    for row in rows:
        if row.status == "ok" and (v := row.scores.get("facts_correct")) is not None:
            by_category[(row.strata.get("category", "(none)"), f"{row.system} / {row.model}")].append(v)
    if by_category:
        systems = sorted({s for _, s in by_category})
        categories = sorted({c for c, _ in by_category})
        tables.append(
            ReportTable(
                title="Facts correct by instruction category",
                columns=["category", *systems],
                rows=[[c, *(_mean(by_category.get((c, s), [])) for s in systems)] for c in categories],
                note="Columns: system / model; each cell the mean of facts correct over its instructions.",
            )
        )
    return tables
