"""MedAgent's bar charts (spec 004 item 54) for the HTML report: mean ± 95% CI per model.

- **Figure 4**: perceived susceptibility, severity, benefits and conversation flow (1-4), with the paper's "Good"
  line at 3.
- **Figure 5**: hard and soft diagnostic accuracy, in %.

Over the persona instances kept in every cell, as the comparison table (the paper's 1,142 per model are that
intersection). The paper does not say how its intervals were made; bedside's are seeded percentile bootstrap
intervals of the mean (10,000 resamples over conversations, :func:`bedside.stats.bootstrap_ci`), as every other
interval in the report. A figure with no kept conversation scored on its metrics is absent, with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bedside.runs.task import AbsentPlot, ReportPlot
from bedside.stats import bootstrap_ci

FIGURE_4 = {"susceptibility": "Susceptibility", "severity": "Severity", "benefits": "Benefits", "flow": "Flow"}
FIGURE_5 = {"diagnosis_hard": "Hard accuracy", "diagnosis_soft": "Soft accuracy"}
GOOD = 3.0


def mean_intervals(
    kept: Mapping[str, Sequence[Any]], scorers: Sequence[str]
) -> dict[str, dict[str, tuple[float, float, float, int]]]:
    """Per cell and scorer with values: (mean, low, high, n)."""
    out: dict[str, dict[str, tuple[float, float, float, int]]] = {}
    for cell, rows in kept.items():
        for scorer in scorers:
            values = [float(v) for r in rows if (v := r.scores.get(scorer)) is not None]
            if values:
                interval = bootstrap_ci(values, seed=0)
                out.setdefault(cell, {})[scorer] = (interval.estimate, interval.low, interval.high, len(values))
    return out


def _bars(title: str, kept: Mapping[str, Sequence[Any]], metrics: Mapping[str, str], percent: bool) -> ReportPlot:
    found = mean_intervals(kept, list(metrics))
    if not found:
        conversations = sum(len(rows) for rows in kept.values())
        return AbsentPlot(
            title,
            f"no conversation kept in every cell has {', '.join(metrics)} scored ({conversations} kept; the judges "
            "may be switched off or may have failed)",
        )
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bedside.runs.report import png_base64

    scale = 100.0 if percent else 1.0
    cells = list(found)
    width = 0.8 / len(cells)
    figure, axis = plt.subplots(figsize=(1.6 + 1.5 * len(metrics), 3.4))
    for index, cell in enumerate(cells):
        names = [m for m in metrics if m in found[cell]]
        xs = [list(metrics).index(m) + index * width for m in names]
        means = [found[cell][m][0] * scale for m in names]
        errors = [
            [(found[cell][m][0] - found[cell][m][1]) * scale for m in names],
            [(found[cell][m][2] - found[cell][m][0]) * scale for m in names],
        ]
        n = max(found[cell][m][3] for m in names)
        axis.bar(xs, means, width=width, yerr=errors, capsize=3, label=f"{cell} (n = {n})")
    axis.set_xticks([i + 0.4 - width / 2 for i in range(len(metrics))], list(metrics.values()), fontsize=8)
    if percent:
        axis.set_ylabel("% of conversations (mean, 95% CI)", fontsize=8)
        axis.set_ylim(0, 105)
    else:
        axis.axhline(GOOD, color="#444", linestyle="--", linewidth=0.8, label="Good (3)")
        axis.set_ylabel("judge score 1-4 (mean, 95% CI)", fontsize=8)
        axis.set_ylim(0, 4.2)
    axis.legend(fontsize=6, loc="best")
    return title, png_base64(figure)


def report_plots(rows: Sequence[Any]) -> list[ReportPlot]:
    """Figures 4 and 5 (or why each is absent); none without matplotlib."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return []
    from bedside.tasks.sensemaking.tables import _cells, kept_intersection

    cells = _cells(rows)
    if not cells:
        return []
    kept = kept_intersection(cells)
    return [
        _bars("MedAgent Figure 4: HBM metrics and flow by model (mean, 95% CI)", kept, FIGURE_4, percent=False),
        _bars("MedAgent Figure 5: diagnostic accuracy by model (mean, 95% CI)", kept, FIGURE_5, percent=True),
    ]
