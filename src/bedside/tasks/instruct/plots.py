"""The instruct task's plots in the HTML run report (``bedside report RUN --format html``).

- Correctness by context length (the paper's context-length finding, Table 3 by context): per system and model,
  the mean of each correctness scorer the run has (``facts_correct`` on synthetic cases, ``judge_correct`` from
  the rubric judge) at each context; refine's context is "unbounded" as in the report table.
- Response lengths (Table S15 / Figure S7 shape): per system, model and context, the distribution of response
  lengths in whitespace words, the box drawn at the 25th/50th/75th percentiles and whiskers at the minimum and
  maximum (the paper's 0/25/50/75/100 percentiles, there in cl100k tokens).

Each plot is (title, base64 PNG). Without matplotlib (the ``report`` extra) there are none, as for other tasks.
"""

from __future__ import annotations

import inspect
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from bedside.runs.report import png_base64
from bedside.tasks.instruct.tables import context_label, report_cell

CORRECTNESS = ("facts_correct", "judge_correct")


def _cell(row: Any) -> tuple[str, str, str]:
    kind, model, context = report_cell(row)
    return kind, model, context_label(kind, context)


def _context_order(context: str) -> tuple[int, int]:
    return (1, 0) if not context.isdigit() else (0, int(context))


def report_plots(rows: Sequence[Any]) -> list[tuple[str, str]]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    ok = [r for r in rows if r.status == "ok" and r.output]
    if not ok:
        return []
    plots = []
    scorers = [name for name in CORRECTNESS if any(r.scores.get(name) is not None for r in ok)]
    if scorers:
        contexts = sorted({_cell(r)[2] for r in ok}, key=_context_order)
        figure, axes = plt.subplots(1, len(scorers), figsize=(5 * len(scorers), 3.6), squeeze=False)
        for axis, scorer in zip(axes[0], scorers, strict=True):
            values: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
            for row in ok:
                if (value := row.scores.get(scorer)) is not None:
                    kind, model, context = _cell(row)
                    values[(kind, model)][context].append(float(value))
            for (kind, model), by_context in sorted(values.items()):
                xs = [contexts.index(c) for c in contexts if c in by_context]
                ys = [sum(by_context[c]) / len(by_context[c]) for c in contexts if c in by_context]
                axis.plot(xs, ys, marker="o", label=f"{kind} · {model}")
            axis.set_xticks(range(len(contexts)), contexts, fontsize=8)
            axis.set_ylim(-0.05, 1.05)
            axis.set_xlabel("context (tokens; evenly spaced, not to scale)")
            axis.set_ylabel(f"mean {scorer}")
            axis.legend(fontsize=6, loc="best")
        plots.append(("Correctness by context length", png_base64(figure)))
    lengths: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for row in ok:
        lengths[_cell(row)].append(len(str(row.output.get("text") or "").split()))
    cells = sorted(lengths, key=lambda c: ("extension" in c[0], c[0], c[1], _context_order(c[2])))
    figure, axis = plt.subplots(figsize=(7, 0.8 + 0.4 * len(cells)))
    # matplotlib 3.10 replaced ``vert`` by ``orientation``; the report extra allows older releases
    sideways = (
        {"orientation": "horizontal"}
        if "orientation" in inspect.signature(axis.boxplot).parameters
        else {"vert": False}
    )
    axis.boxplot([lengths[c] for c in cells], whis=(0, 100), **sideways)
    axis.set_yticks(range(1, len(cells) + 1), [f"{k} · {m} · {c}" for k, m, c in cells], fontsize=7)
    axis.invert_yaxis()
    axis.set_xlabel("response length (whitespace words); box 25/50/75%, whiskers min and max")
    plots.append(("Response lengths", png_base64(figure)))
    return plots
