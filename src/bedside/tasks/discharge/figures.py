"""DischargeSim's figures for the HTML report, from the profile-sensitivity gaps of :mod:`.tables` (this module sits
above it: the task asks here for its plots, there for its tables).

- **Profile sensitivity** (:func:`report_plots`, one plot per cell): per level pair, the relative difference on each
  dimension with its 95% interval.

- **Variability** (Figs. 7, 10, 12): per profile dimension (health literacy, education, emotion), the sample
  standard deviation *across models* of each level pair's relative difference, per scored dimension (L&D, HCC,
  Content, Strategy, L&A, F&C). Models are the cells of one dataset and system; two or more must have the gap.
- **Size correlation** (Figs. 9, 11, 13): within one model family (the model name with its size taken out, e.g.
  ``Qwen2.5-…-Instruct``), the Pearson r between size in billions (read from the name, linear scale: the paper does
  not say which) and each relative difference; three or more sized models are needed. The paper drops
  Qwen2.5-0.5B as an outlier; with four or more models the figure shows r over every size and r without the
  family's smallest model side by side, so the exclusion is visible rather than silent.
- **Fig. 8**: the scatter of size against the mean HL2-vs-HL1 relative difference over the six dimensions, with r.

Each figure is drawn only when the run supports it; otherwise :class:`~bedside.runs.task.AbsentPlot` says why.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean, stdev
from typing import Any

from bedside.runs.task import AbsentPlot, ReportPlot
from bedside.stats.agreement import pearson_r
from bedside.tasks.discharge.profiles import PAPER_LABELS, SENSITIVITY_PAIRS
from bedside.tasks.discharge.tables import DIMENSION_SCORERS, Gap, _by_cell, _ok, sensitivity_gaps

PROFILE_DIMENSIONS = {"literacy": "health literacy", "education": "education", "emotion": "emotional style"}
PAPER_FIGURES = {
    "literacy": ("Fig. 7", "Fig. 9"),
    "education": ("Fig. 10", "Fig. 11"),
    "emotion": ("Fig. 12", "Fig. 13"),
}
COMPARISONS: dict[str, list[str]] = defaultdict(list)
for _dimension, _level, _baseline in SENSITIVITY_PAIRS:
    COMPARISONS[_dimension].append(f"{PAPER_LABELS[(_dimension, _level)]} vs {PAPER_LABELS[(_dimension, _baseline)]}")
HEALTH_LITERACY = COMPARISONS["literacy"][0]

_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*[bB](?![a-zA-Z])")


@dataclass(frozen=True)
class CellModel:
    """Where a cell's gaps come from: its dataset and system (the group models are compared within) and model."""

    group: str
    model: str

    @property
    def name(self) -> str:
        """The model's own name: no provider, no endpoint (``Qwen2.5-7B-Instruct``)."""
        return self.model.split("@http", 1)[0].rsplit("/", 1)[-1]

    @property
    def size(self) -> float | None:
        found = _SIZE.findall(self.name)
        return float(found[-1]) if found else None

    @property
    def family(self) -> str | None:
        """The name with its size taken out, lower case (``qwen2.5-*-instruct``); None without a size."""
        if self.size is None:
            return None
        return _SIZE.sub("*", self.name).lower()


def cell_models(cells: Mapping[str, Sequence[Any]]) -> dict[str, CellModel]:
    return {cell: CellModel(f"{rows[0].dataset}/{rows[0].system}", rows[0].model) for cell, rows in cells.items()}


@dataclass(frozen=True)
class Spread:
    group: str
    comparison: str
    dimension: str
    models: int
    sd: float


def cross_model_spread(gaps: Sequence[Gap], models: Mapping[str, CellModel]) -> list[Spread]:
    """Per group, level pair and scored dimension with two or more models: the SD of their relative differences."""
    values: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for gap in gaps:
        values[(models[gap.cell].group, gap.comparison, gap.scorer)].append(gap.gap)
    return [
        Spread(group, comparison, dimension, len(found), stdev(found))
        for (group, comparison, dimension), found in values.items()
        if len(found) >= 2
    ]


@dataclass(frozen=True)
class SizeCorrelation:
    group: str
    family: str
    comparison: str
    dimension: str
    """A scored dimension, or ``mean`` for the mean over the six."""
    sizes: tuple[float, ...]
    gaps: tuple[float, ...]
    r: float
    p: float
    without_smallest: bool


def _correlation(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float] | None:
    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    found = pearson_r(xs, ys)
    return found.statistic, found.p_value


def size_correlations(gaps: Sequence[Gap], models: Mapping[str, CellModel]) -> list[SizeCorrelation]:
    """Pearson r of size vs relative difference within each family of three or more sized models; with four or
    more, also without the family's smallest model (the paper's Qwen2.5-0.5B exclusion)."""
    points: dict[tuple[str, str, str, str], dict[float, float]] = defaultdict(dict)
    means: dict[tuple[str, str, str], dict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
    for gap in gaps:
        model = models[gap.cell]
        if model.family is None or model.size is None:
            continue
        points[(model.group, model.family, gap.comparison, gap.scorer)][model.size] = gap.gap
        means[(model.group, model.family, gap.comparison)][model.size].append(gap.gap)
    for (group, family, comparison), gaps_by_size in means.items():
        complete = {size: fmean(v) for size, v in gaps_by_size.items() if len(v) == len(DIMENSION_SCORERS)}
        points[(group, family, comparison, "mean")] = complete
    out = []
    for (group, family, comparison, dimension), gap_by_size in points.items():
        ordered = sorted(gap_by_size.items())
        for without_smallest in (False, True):
            chosen = ordered[1:] if without_smallest else ordered
            if without_smallest and len(ordered) < 4:
                continue
            xs, ys = [s for s, _ in chosen], [g for _, g in chosen]
            found = _correlation(xs, ys)
            if found is not None:
                out.append(
                    SizeCorrelation(
                        group, family, comparison, dimension, tuple(xs), tuple(ys), *found, without_smallest
                    )
                )
    return out


def _matplotlib() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _grouped_bars(axis: Any, comparisons: Sequence[str], value: Any) -> None:
    """Bars per scored dimension (x), one colour per level pair; ``value(comparison, dimension)`` or None."""
    dimensions = list(DIMENSION_SCORERS)
    width = 0.8 / max(1, len(comparisons))
    for index, comparison in enumerate(comparisons):
        xs = [i + index * width for i, d in enumerate(dimensions) if value(comparison, d) is not None]
        ys = [value(comparison, d) for d in dimensions if value(comparison, d) is not None]
        axis.bar(xs, ys, width=width, label=comparison)
    axis.set_xticks([i + 0.4 - width / 2 for i in range(len(dimensions))], dimensions, fontsize=8)
    axis.legend(fontsize=7)


def variability_plots(gaps: Sequence[Gap], models: Mapping[str, CellModel]) -> list[ReportPlot]:
    spreads = cross_model_spread(gaps, models)
    groups = sorted({m.group for m in models.values()})
    out: list[ReportPlot] = []
    for dimension, label in PROFILE_DIMENSIONS.items():
        figure_name = PAPER_FIGURES[dimension][0]
        title = f"Cross-model variability, {label} ({figure_name} shape)"
        for group in groups:
            mine = {(s.comparison, s.dimension): s for s in spreads if s.group == group}
            comparisons = [c for c in COMPARISONS[dimension] if any(key[0] == c for key in mine)]
            name = f"{title}: {group}" if len(groups) > 1 else title
            if not comparisons:
                have = sum(1 for m in models.values() if m.group == group)
                out.append(
                    AbsentPlot(
                        name,
                        f"needs the {label} level pairs scored in two or more models; {have} model(s) ran, and a "
                        "level pair counts for a model only when its cases ran under both levels",
                    )
                )
                continue
            plt = _matplotlib()
            figure, axis = plt.subplots(figsize=(7, 3.2))

            def sd(comparison: str, scored: str, _mine: Mapping[tuple[str, str], Spread] = mine) -> float | None:
                found = _mine.get((comparison, scored))
                return None if found is None else found.sd

            _grouped_bars(axis, comparisons, sd)
            models_n = max(s.models for s in mine.values())
            axis.set_ylabel("SD across models of the relative difference", fontsize=8)
            axis.set_title(f"{label}: {models_n} models", fontsize=9)
            from bedside.runs.report import png_base64

            out.append((name, png_base64(figure)))
    return out


def size_plots(gaps: Sequence[Gap], models: Mapping[str, CellModel]) -> list[ReportPlot]:
    found = size_correlations(gaps, models)
    families = sorted({(c.group, c.family) for c in found})
    sized = defaultdict(set)
    for model in models.values():
        if model.family is not None:
            sized[(model.group, model.family)].add(model.size)
    most = max((len(s) for s in sized.values()), default=0)
    reason = (
        f"needs three or more models of one family whose names state a size (e.g. Qwen2.5-7B-Instruct); the largest "
        f"family here has {most}, and each needs its cases scored under both levels of a pair"
    )
    out: list[ReportPlot] = []
    if not families:
        for dimension, label in PROFILE_DIMENSIONS.items():
            out.append(
                AbsentPlot(f"Model size vs relative difference, {label} ({PAPER_FIGURES[dimension][1]} shape)", reason)
            )
        out.append(AbsentPlot("Model size vs mean health-literacy gap (Fig. 8 shape)", reason))
        return out
    from bedside.runs.report import png_base64

    plt = _matplotlib()
    for group, family in families:
        mine = [c for c in found if (c.group, c.family) == (group, family)]
        suffix = f": {family}" + (f" ({group})" if len({g for g, _ in families}) > 1 else "")
        for dimension, label in PROFILE_DIMENSIONS.items():
            title = f"Model size vs relative difference, {label} ({PAPER_FIGURES[dimension][1]} shape){suffix}"
            comparisons = [c for c in COMPARISONS[dimension] if any(x.comparison == c for x in mine)]
            if not comparisons:
                out.append(AbsentPlot(title, f"no {label} level pair was scored in three or more sized models"))
                continue
            panels = [False, True] if any(c.without_smallest for c in mine) else [False]
            figure, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 3.2), squeeze=False)
            for axis, without in zip(axes[0], panels, strict=True):
                table = {(c.comparison, c.dimension): c for c in mine if c.without_smallest == without}

                def r(
                    comparison: str, scored: str, _t: Mapping[tuple[str, str], SizeCorrelation] = table
                ) -> float | None:
                    hit = _t.get((comparison, scored))
                    return None if hit is None else hit.r

                _grouped_bars(axis, comparisons, r)
                axis.axhline(0.0, color="#444", linewidth=0.8)
                axis.set_ylim(-1.05, 1.05)
                axis.set_ylabel("Pearson r with size (B)", fontsize=8)
                n = max((len(c.sizes) for c in table.values()), default=0)
                axis.set_title(("without the smallest model" if without else "every size") + f", n = {n}", fontsize=9)
            out.append((title, png_base64(figure)))
        scatter = [c for c in mine if c.comparison == HEALTH_LITERACY and c.dimension == "mean"]
        title = f"Model size vs mean health-literacy gap (Fig. 8 shape){suffix}"
        if not scatter:
            out.append(AbsentPlot(title, "needs HL2 vs HL1 scored on all six dimensions in three or more sized models"))
            continue
        every = next(c for c in scatter if not c.without_smallest)
        figure, axis = plt.subplots(figsize=(5, 3.4))
        axis.scatter(every.sizes, every.gaps, color="#4c78a8")
        lines = [f"every size: r = {every.r:+.2f}, p = {every.p:.2g}"]
        trimmed = next((c for c in scatter if c.without_smallest), None)
        if trimmed is not None:
            axis.scatter(every.sizes[:1], every.gaps[:1], color="#e45756", label="left out (smallest)")
            axis.legend(fontsize=7)
            lines.append(f"without the smallest: r = {trimmed.r:+.2f}, p = {trimmed.p:.2g}")
        axis.set_xlabel("parameters (billions, linear)")
        axis.set_ylabel("mean relative difference, HL2 vs HL1", fontsize=8)
        axis.set_title("; ".join(lines), fontsize=8)
        out.append((title, png_base64(figure)))
    return out


def report_figures(cells: Mapping[str, Sequence[Any]], gaps: Sequence[Gap]) -> list[ReportPlot]:
    """The variability and size figures, or why each is absent."""
    models = cell_models(cells)
    return [*variability_plots(gaps, models), *size_plots(gaps, models)]


def report_plots(rows: Sequence[Any]) -> list[ReportPlot]:
    """Profile sensitivity as plots, one per cell: per level pair, the relative difference on each dimension with
    its 95% interval; then the cross-model variability and size-correlation figures (:func:`report_figures`), or why
    each is absent. (title, base64 PNG) or :class:`AbsentPlot`; none without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    from bedside.runs.report import png_base64

    cells = _by_cell(_ok(rows))
    gaps = sensitivity_gaps(cells)
    plots: list[ReportPlot] = []
    for cell in dict.fromkeys(g.cell for g in gaps):
        mine = [g for g in gaps if g.cell == cell]
        comparisons = list(dict.fromkeys(g.comparison for g in mine))
        scorers = [name for name in DIMENSION_SCORERS if any(g.scorer == name for g in mine)]
        figure, axes = plt.subplots(figsize=(7, 0.6 + 0.5 * len(comparisons) * max(1, len(scorers)) / 3))
        height = 0.8 / max(1, len(scorers))
        for index, name in enumerate(scorers):
            points = [(i, g) for i, c in enumerate(comparisons) for g in mine if g.comparison == c and g.scorer == name]
            ys = [i + index * height for i, _ in points]
            xs = [g.gap for _, g in points]
            errors = [
                [g.gap - g.interval[0] if g.interval else 0.0 for _, g in points],
                [g.interval[1] - g.gap if g.interval else 0.0 for _, g in points],
            ]
            axes.barh(ys, xs, height=height, xerr=errors, capsize=2, label=name)
        axes.axvline(0.0, color="#444", linewidth=0.8)
        axes.set_yticks([i + 0.4 - height / 2 for i in range(len(comparisons))], comparisons, fontsize=7)
        axes.invert_yaxis()
        axes.set_xlabel("relative difference (S_level - S_baseline) / S_baseline, 95% CI")
        axes.legend(fontsize=6, loc="best")
        axes.set_title(cell, fontsize=8)
        plots.append((f"Profile sensitivity: {cell}", png_base64(figure)))
    plots += report_figures(cells, gaps)
    return plots
