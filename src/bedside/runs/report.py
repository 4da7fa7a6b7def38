"""Reports from a stored run: tables with bootstrap CIs, strata, errors and usage; Markdown and one HTML file.

Per cell and metric, each sample's value is first averaged over its epochs (repeats), then the mean over
samples gets a seeded percentile bootstrap 95% interval (10,000 resamples over samples). Samples stored as
errors are not in the means; they are counted beside them, with their causes. Samples with an answer the
endpoint cut off (``finish_reason: length``) are in the means and counted in a ``truncated`` column. A metric
that did not apply to a sample (None) is left out of that metric's mean, and ``n`` says how many samples it
covers.

``compare`` pairs two runs' samples (same dataset, sample id and epoch) within matched cells (the same cell id,
or, where each run has exactly one cell per dataset and system, those) and reports, per metric, the mean
difference B − A with a paired bootstrap 95% interval and p-value.
"""

from __future__ import annotations

import base64
import dataclasses
import html
import io
import json
import re
from collections import Counter, defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean, stdev
from typing import Any

from bedside.metrics.catalog import is_share, on_percent_scale
from bedside.private_files import private_dir, replace_private, write_private_text
from bedside.runs.pairing import CellKey, PairingError, Selection, baseline_pairs, pair_cells
from bedside.runs.registry import resolve_task
from bedside.runs.store import ResultRow, Store, iter_jsonl
from bedside.runs.task import AbsentPlot, ReportTable, Task
from bedside.stats import bootstrap_ci, holm, paired_bootstrap, paired_effect_size
from bedside.stats.proportions import wilson_interval
from bedside.stats.rounding import rounded

SMALL_N = 20
"""Fewer paired samples than this and ``compare`` warns: a bootstrap over so few pairs gives intervals that are
too narrow and p-values that are too small."""


@dataclass(frozen=True)
class MetricSummary:
    metric: str
    n: int
    mean: float
    low: float
    high: float


@dataclass
class CellReport:
    cell: str
    samples: int
    ok: int
    errors: int
    dataset: str = ""
    system: str = ""
    model: str = ""
    truncated: int = 0
    """Samples (ok ones) with at least one answer cut off at the token limit."""
    retried: int = 0
    """Samples (ok ones) stored as errors first and answered on ``--retry-errors``."""
    metrics: list[MetricSummary] = field(default_factory=list)
    strata: dict[str, dict[str, list[MetricSummary]]] = field(default_factory=dict)  # key -> value -> metrics
    error_causes: Counter[str] = field(default_factory=Counter)


@dataclass
class RunReport:
    run: dict[str, Any]
    cells: list[CellReport]
    usage: dict[str, dict[str, float]]
    metrics: list[str]
    tables: list[ReportTable] = field(default_factory=list)  # the task's own (see ReportTable)
    task_plots: list[tuple[str, str]] = field(default_factory=list)
    """The task's own plots (title, base64 PNG), from an optional ``report_plots(rows)``; HTML only."""
    absent_plots: list[AbsentPlot] = field(default_factory=list)
    """The task's figures this run cannot support, with the reason (in both formats)."""
    notes: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    """Per stored metric, whose scorer produced it and what text it scores (see :mod:`bedside.runs.scorers`)."""
    sent: list[str] = field(default_factory=list)
    """Per role, the generation settings the run's calls sent and the model the endpoint said answered
    (:func:`sent_lines` over every stored call)."""
    percent_scale: set[str] = field(default_factory=set)
    """Metrics stored on 0-100 (the catalog's, and those the task's ``percent_scale`` names): the generic tables
    show them divided by 100, so each table has one scale."""


def _per_sample(rows: Sequence[ResultRow], metric: str) -> list[float]:
    by_sample: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        value = row.scores.get(metric)
        if row.status == "ok" and value is not None:
            by_sample[row.sample_id].append(float(value))
    return [fmean(values) for _, values in sorted(by_sample.items())]


def _summaries(rows: Sequence[ResultRow], metrics: Sequence[str], seed: int) -> list[MetricSummary]:
    """Each metric's mean over samples with its 95% interval: the seeded percentile bootstrap, or for a share (a
    metric the catalog marks as scoring each sample 0 or 1: accuracy, exact match, the refusal rate) the Wilson
    score interval. A bootstrap of 5 correct of 5 is [1, 1], which ranked a model "surely" above one at 0.44
    [0.22, 0.67]; Wilson's is [0.57, 1]."""
    out = []
    for metric in metrics:
        values = _per_sample(rows, metric)
        if not values:
            continue
        if is_share(metric) and all(v in (0.0, 1.0) for v in values):
            hits = int(sum(values))
            low, high = wilson_interval(hits, len(values)) or (0.0, 1.0)
            out.append(MetricSummary(metric, len(values), hits / len(values), low, high))
        else:
            interval = bootstrap_ci(values, seed=seed)
            out.append(MetricSummary(metric, len(values), interval.estimate, interval.low, interval.high))
    return out


def never_run(report: RunReport) -> int:
    """Samples the run planned that it stored nothing for (a run cut short, an endpoint down)."""
    planned: dict[str, int] = report.run.get("planned") or {}
    stored = {c.cell: c.ok + c.errors for c in report.cells}
    return sum(max(0, total - stored.get(cell, 0)) for cell, total in planned.items())


def retried_after_error(rows: Sequence[ResultRow]) -> int:
    """The answered samples among ``rows`` that were stored as errors first (answered on ``--retry-errors``): a
    retry mends the mean, not the model's record."""
    return sum(r.status == "ok" and bool((r.failure or {}).get("retried_after_error")) for r in rows)


def error_causes(rows: Sequence[ResultRow]) -> Counter[str]:
    """The error rows among ``rows`` counted by cause: the error's first line, at most 200 characters (a cause
    repeated in every sample is one entry with its count, not a wall of identical lines)."""
    return Counter(((r.error or "").splitlines() or ["(no message)"])[0][:200] for r in rows if r.status == "error")


def build_report(store: Store, run_id: str) -> RunReport:
    run = store.run(run_id)
    rows = store.results(run["id"])
    seed = int(run["config"].get("seed", 0))
    metrics = metric_order({m for r in rows for m in r.scores}, declared_scorers(run))
    cells = []
    by_cell: dict[str, list[ResultRow]] = defaultdict(list)
    for row in rows:
        by_cell[row.cell].append(row)
    for cell, cell_rows in by_cell.items():
        report = CellReport(
            cell,
            dataset=cell_rows[0].dataset,
            system=cell_rows[0].system,
            model=cell_rows[0].model,
            samples=len({r.sample_id for r in cell_rows}),
            ok=sum(r.status == "ok" for r in cell_rows),
            errors=sum(r.status == "error" for r in cell_rows),
            truncated=sum(r.status == "ok" and truncated(r) for r in cell_rows),
            retried=retried_after_error(cell_rows),
            metrics=_summaries(cell_rows, metrics, seed),
            error_causes=error_causes(cell_rows),
        )
        keys = sorted({k for r in cell_rows for k in r.strata})
        for key in keys:
            groups: dict[str, list[ResultRow]] = defaultdict(list)
            for r in cell_rows:
                groups[r.strata.get(key, "(none)")].append(r)
            report.strata[key] = {value: _summaries(g, metrics, seed) for value, g in sorted(groups.items())}
        cells.append(report)
    notes = []
    planned: dict[str, int] = run.get("planned") or {}
    for cell, total in planned.items():  # a cell the run never reached is a row that says so, never a gap
        if cell not in by_cell:
            dataset, system, model = cell_parts(cell)
            cells.append(CellReport(cell, 0, 0, 0, dataset=dataset, system=system, model=model))
        stored = len({(r.sample_id, r.epoch) for r in by_cell.get(cell, [])})
        if stored < total:
            notes.append(f"{cell}: {stored} of its {total} planned samples stored (run status: {run.get('status')})")
    notes += [
        f"{c.cell}: {c.retried} of its {c.ok} answered samples failed first and were answered on --retry-errors"
        for c in cells
        if c.retried
    ]
    usage: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for row in rows:
        for role, counts in row.usage.items():
            for name, value in counts.items():
                usage[role][name] += float(value)
    run_report = RunReport(run, cells, {role: dict(c) for role, c in usage.items()}, metrics, notes=notes)
    run_report.percent_scale = {m for m in metrics if on_percent_scale(m)}
    run_report.sent = sent_lines([call for row in rows for call in row.calls or []])
    _add_task_tables(run_report, rows)
    return run_report


def _methods(report: RunReport, task: Task) -> None:
    """The methods note: per stored metric, the implementation the scorer rule picks and the text it scores."""
    from bedside.runs.scorers import resolve_scorers

    try:
        report.methods = [r.line() for r in resolve_scorers(task, report.metrics)]
    except ValueError as exc:  # a store from an older bedside may hold a name this one does not know
        report.notes.append(f"scorer methods left out: {exc}")


@dataclass(frozen=True)
class OverModels:
    """A system's metric across the models of a grid: the mean and sample standard deviation of the per-model
    means, as the seed papers report an adaptation over several models (e.g. EditJudge's Tables 4 and 13-15)."""

    dataset: str
    system: str
    metric: str
    models: int
    mean: float
    std: float
    of: int = 0
    """Models the system ran on in the grid: a model that scored nothing on the metric is left out of the mean,
    and the table says "2 of 3"."""


def over_models(report: RunReport) -> list[OverModels]:
    """Per (dataset, system) run on two models or more, and per metric: mean ± std over the models."""
    groups: dict[tuple[str, str], list[CellReport]] = defaultdict(list)
    for cell in report.cells:
        groups[(cell.dataset, cell.system)].append(cell)
    out = []
    for (dataset, system), cells in sorted(groups.items()):
        if len(cells) < 2:
            continue
        for metric in report.metrics:
            means = [m.mean for c in cells for m in c.metrics if m.metric == metric]
            if len(means) >= 2:
                out.append(OverModels(dataset, system, metric, len(means), fmean(means), stdev(means), len(cells)))
    return out


def truncated(row: ResultRow) -> bool:
    """Whether an answered sample had an answer cut off at ``max_tokens`` (or by the repetition guard)."""
    return any((counts or {}).get("truncated", 0) for counts in row.usage.values())


def _add_task_tables(report: RunReport, rows: Sequence[ResultRow]) -> None:
    """The task's own tables, when it defines ``report_tables``; a task that cannot be loaded is noted, not fatal."""
    try:
        task = resolve_task(report.run["task"])
    except (ValueError, ImportError) as exc:
        report.notes.append(f"task tables left out: {exc}")
        return
    _methods(report, task)
    report.percent_scale |= set(getattr(task, "percent_scale", ())) & set(report.metrics)
    make = getattr(task, "report_tables", None)
    if make is not None:
        report.tables = list(make(rows))
    draw = getattr(task, "report_plots", None)
    if draw is not None:
        for plot in draw(rows):
            if isinstance(plot, AbsentPlot):
                report.absent_plots.append(plot)
            else:
                report.task_plots.append(plot)


def declared_scorers(run: dict[str, Any]) -> list[str]:
    """The scorers in the order the run declares them: the config's ``scorers`` as written, else the task's
    ``default_scorers`` (a task lists its primary metric first)."""
    configured = list(run["config"].get("scorers") or [])
    if configured:
        return configured
    try:
        return list(resolve_task(run["task"]).default_scorers)
    except (ValueError, ImportError):
        return []


def sent_lines(calls: Sequence[dict[str, Any]]) -> list[str]:
    """One line per role and distinct request settings in call timelines: how many calls sent them, and which
    model (and build: the endpoint's ``system_fingerprint``) the endpoint said answered ('system ×3:
    {"max_tokens": 300, "temperature": 0.05}, answered by gpt-x (fingerprint fp_44709d6fcb)'). Calls stored
    before settings were recorded say so."""
    groups: Counter[tuple[str, str, str, str]] = Counter()
    for call in calls:
        if "role" not in call:
            continue  # the "left out" count
        sent = call.get("sent")
        settings = "settings not recorded" if sent is None else json.dumps(sent, sort_keys=True)
        if error := call.get("error"):  # no answer kept, so no model reported it: name the model it was sent to
            kind = str(error).split(":", 1)[0]
            attempts = int(call.get("attempts") or 1)
            tries = f" after {attempts} requests" if attempts > 1 else ""
            model, fingerprint = f"failed: {kind} from {call.get('model') or 'its model'}{tries}", ""
        else:
            model, fingerprint = str(call.get("reported_model") or ""), str(call.get("fingerprint") or "")
        groups[(str(call["role"]), settings, model, fingerprint)] += 1
    return [
        f"{role} ×{count}: {settings}"
        + (f", {model}" if model.startswith("failed:") else f", answered by {model}" if model else "")
        + (f" (fingerprint {fingerprint})" if fingerprint else "")
        for (role, settings, model, fingerprint), count in sorted(groups.items())
    ]


def headline_metric(task: str) -> str | None:
    """The metric a task reports first (its ``headline_metric``, else its first default scorer), or None: the
    leaderboard's default and the report's sort key."""
    try:
        found = resolve_task(task)
    except (ValueError, ImportError):
        return None
    declared = getattr(found, "headline_metric", None) or next(iter(getattr(found, "default_scorers", ())), None)
    return str(declared) if declared else None


def metric_order(present: set[str] | Sequence[str], declared: Sequence[str]) -> list[str]:
    """Report columns in a deliberate order: the declared scorers' metrics in declaration order (a scorer's
    variants ``name[...]`` right after it), then any other metric, alphabetically."""
    position = {name: i for i, name in reversed(list(enumerate(declared)))}

    def key(metric: str) -> tuple[int, str]:
        base = metric.split("[", 1)[0]
        return (position.get(metric, position.get(base, len(declared))), metric)

    return sorted(set(present), key=key)


def _fmt(summary: MetricSummary, percent: Collection[str]) -> str:
    d = 100.0 if summary.metric in percent else 1.0
    return f"{rounded(summary.mean / d)} [{rounded(summary.low / d)}, {rounded(summary.high / d)}] (n={summary.n})"


def _column(metric: str, percent: Collection[str]) -> str:
    return f"{metric} (÷100)" if metric in percent else metric


def scale_note(metrics: Sequence[str], percent: Collection[str]) -> str:
    """What scale the report's tables use, said once above the first."""
    divided = [m for m in metrics if m in percent]
    note = (
        "Scale: scores that are proportions are shown on 0-1 (1 = best match or all correct); counts and grades "
        "(words, reading grades) are shown as they are."
    )
    if divided:
        note += (
            f" {', '.join(divided)} (0-100 in their libraries, in the store, in `--json` and in the task's own "
            "tables) are shown divided by 100, marked (÷100)."
        )
    return note


def markdown(report: RunReport) -> str:
    run = report.run
    lines = [
        f"# Run {run['id']}",
        "",
        f"Task `{run['task']}`; created {run['created_at']:%Y-%m-%d %H:%M} UTC; status {run['status']}; "
        f"bedside {run['bedside_version']} (commit {run['git_commit'] or 'unknown'}), Python {run['python_version']}.",
        "",
        "Means over samples (each sample's epochs averaged first) with seeded percentile bootstrap 95% intervals "
        "(Wilson score intervals for a share: accuracy, exact match, the refusal rate). "
        "Errors are never in the means; `hit max_tokens` counts samples kept with an answer cut off at max_tokens.",
        "",
        "## Results by cell",
        "",
    ]
    if report.methods:
        methods = ["## Methods: scorers", "", "Which implementation produced each metric, and what text it scores:", ""]
        lines[-2:-2] = [*methods, *(f"- {line}" for line in report.methods), ""]
    if report.sent:
        sent = [
            "## Methods: requests sent",
            "",
            "Per role, the generation settings the calls sent (after each model alias's options) and the model "
            "the endpoint said answered:",
            "",
        ]
        lines[-2:-2] = [*sent, *(f"- `{line}`" for line in report.sent), ""]
    percent = report.percent_scale
    lines += [scale_note(report.metrics, percent), ""]
    header = ["cell", "ok", "errors", "hit max_tokens", *(_column(m, percent) for m in report.metrics)]
    cells, best = _by_headline(report)
    if best is not None:
        lines += [
            f"Cells sorted by `{best[0]}`, the task's headline metric (higher is better); ★ marks the best mean "
            f"(each, when tied) of the cells that answered at least {MIN_COMPLETE:.0%} of their planned samples, "
            "with more than one scored, as `bedside leaderboard` ranks them; the cells below that follow, "
            "unstarred. A cell whose interval overlaps the best one's is not shown to differ from it: "
            "`bedside compare` tests differences on paired samples.",
            "",
        ]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for cell in cells:
        by_metric = {m.metric: _fmt(m, percent) for m in cell.metrics}
        if best is not None and cell.cell in best[1]:
            by_metric[best[0]] = "★ " + by_metric[best[0]]
        lines.append(
            "| "
            + " | ".join(
                [
                    cell.cell,
                    str(cell.ok),
                    str(cell.errors),
                    str(cell.truncated),
                    *(by_metric.get(m, "-") for m in report.metrics),
                ]
            )
            + " |"
        )
    spread = over_models(report)
    if spread:
        lines += [
            "",
            "## Over models",
            "",
            "Mean ± sample standard deviation of the per-model means, for each system run on several models.",
            "",
            "| dataset | system | metric | models | mean ± std |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {o.dataset} | {o.system} | {_column(o.metric, percent)} | "
            f"{o.models if o.models == o.of else f'{o.models} of {o.of}'} | "
            f"{rounded(o.mean / (d := 100.0 if o.metric in percent else 1.0))} ± {rounded(o.std / d)} |"
            for o in spread
        ]
    for table in report.tables:
        lines += ["", f"## {table.title}", ""]
        if table.note:
            lines += [table.note, ""]
        lines += ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
        lines += ["| " + " | ".join(row) + " |" for row in table.rows]
    if report.task_plots:
        lines += ["", f"The HTML report also holds the task's plots: {'; '.join(t for t, _ in report.task_plots)}."]
    if report.absent_plots:
        lines += ["", "## Figures not drawn", ""]
        lines += [f"- {plot.title}: {plot.reason}." for plot in report.absent_plots]
    for note in report.notes:
        lines += ["", f"Note: {note}"]
    for cell in report.cells:
        for key, groups in cell.strata.items():
            lines += [
                "",
                f"## {cell.cell}: by {key}",
                "",
                "| " + " | ".join([key, *(_column(m, percent) for m in report.metrics)]) + " |",
                "|" + "---|" * (len(report.metrics) + 1),
            ]
            for value, summaries in groups.items():
                by_metric = {m.metric: _fmt(m, percent) for m in summaries}
                lines.append("| " + " | ".join([value, *(by_metric.get(m, "-") for m in report.metrics)]) + " |")
    lines += ["", "## Errors", ""]
    if any(cell.errors for cell in report.cells):
        for cell in report.cells:
            for cause, count in cell.error_causes.most_common():
                lines.append(f"- {cell.cell}: {count} × {cause}")
    elif unrun := never_run(report):
        lines.append(f"None stored, but {unrun} planned samples were never run (the notes above say where).")
    else:
        lines.append("None.")
    lines += [
        "",
        "## Usage by role",
        "",
        "Summed over the samples this run stored (cache hits cost nothing; cost needs a price in the model's "
        "config, and a model without one counts 0). A sample reused from another run carries that run's usage: "
        "`bedside run` prints what it sent itself.",
        "",
        "| role | calls | cache hits | truncated | tokens in | tokens out | cost |",
        "|---|---|---|---|---|---|---|",
    ]
    for role, counts in sorted(report.usage.items()):
        cost = counts.get("cost", 0.0)
        lines.append(
            f"| {role} | {counts.get('calls', 0):.0f} | {counts.get('cache_hits', 0):.0f} | "
            f"{counts.get('truncated', 0):.0f} | "
            f"{counts.get('prompt_tokens', 0):.0f} | {counts.get('completion_tokens', 0):.0f} | "
            f"{f'{cost:.4f}' if cost else '-'} |"
        )
    return "\n".join(lines) + "\n"


def plots(report: RunReport) -> list[tuple[str, str]]:
    """(metric, base64 PNG) per metric: cell means with their intervals. Empty without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    images = []
    for metric in report.metrics:
        points = [(c.cell, m) for c in report.cells for m in c.metrics if m.metric == metric]
        if not points:
            continue
        figure, axes = plt.subplots(figsize=(6, 0.5 + 0.45 * len(points)))
        labels = [cell for cell, _ in points]
        means = [m.mean for _, m in points]
        errors = [[m.mean - m.low for _, m in points], [m.high - m.mean for _, m in points]]
        axes.barh(range(len(points)), means, xerr=errors, color="#4c78a8", capsize=3)
        axes.set_yticks(range(len(points)), labels, fontsize=7)
        axes.set_xlabel(f"{metric} (mean, 95% CI)")
        axes.invert_yaxis()
        images.append((metric, png_base64(figure)))
    return images


def png_base64(figure: Any) -> str:
    """A finished matplotlib figure as a base64 PNG for the HTML report (tight layout, 100 dpi); closes it, so a
    report with many plots does not hold every figure in memory."""
    import matplotlib.pyplot as plt

    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


MIN_COMPLETE = 0.9
"""The share of a cell's planned samples it must have answered (not stored as errors) to be ranked or starred."""


def answered_share(cell: CellReport, planned: dict[str, int]) -> float:
    """The share of the samples ``cell``'s run planned for it that it answered (errors and samples never run count
    against it)."""
    total = max(planned.get(cell.cell, 0), cell.ok + cell.errors)
    return cell.ok / total if total else 0.0


def _by_headline(report: RunReport) -> tuple[list[CellReport], tuple[str, frozenset[str]] | None]:
    """The report's cells sorted by the task's headline metric, best first: the cells that may be ranked (as
    ``bedside leaderboard`` ranks: at least :data:`MIN_COMPLETE` of their planned samples answered, more than one
    scored), then the others, then cells without it; and (metric, the rankable cells with the best mean: ties
    all), or the cells as they are and None when fewer than two cells scored the headline metric. A model that
    failed a third of its calls is never starred for the answers it did give."""
    metric = headline_metric(report.run["task"])
    if metric is None or metric not in report.metrics:
        return list(report.cells), None

    headline = {
        c.cell: found
        for c in report.cells
        if (found := next((m for m in c.metrics if m.metric == metric and m.n), None))
    }
    if len(headline) < 2:
        return list(report.cells), None  # one cell is no ranking
    planned: dict[str, int] = report.run.get("planned") or {}
    scored = sorted((c for c in report.cells if c.cell in headline), key=lambda c: -headline[c.cell].mean)
    rankable = [c for c in scored if answered_share(c, planned) >= MIN_COMPLETE and headline[c.cell].n > 1]
    ordered = rankable + [c for c in scored if c not in rankable] + [c for c in report.cells if c.cell not in headline]
    top = max((headline[c.cell].mean for c in rankable), default=None)
    return ordered, (metric, frozenset(c.cell for c in rankable if headline[c.cell].mean == top))


_CODE = re.compile(r"`([^`]+)`")


def _inline(text: str) -> str:
    """Markdown text as HTML: escaped, with `code` spans as <code> (never literal backticks)."""
    return _CODE.sub(r"<code>\1</code>", html.escape(text))


def html_page(report: RunReport) -> str:
    """One self-contained HTML file: the Markdown tables as HTML, plots embedded as data URLs."""
    body = []
    in_table = False
    for line in markdown(report).splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if set("".join(cells)) <= {"-"}:
                continue
            if not in_table:
                body.append("<table><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in cells) + "</tr>")
                in_table = True
            else:
                body.append("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in cells) + "</tr>")
            continue
        if in_table:
            body.append("</table>")
            in_table = False
        if line.startswith("## "):
            body.append(f"<h2>{_inline(line[3:])}</h2>")
        elif line.startswith("# "):
            body.append(f"<h1>{_inline(line[2:])}</h1>")
        elif line.startswith("- "):
            body.append(f"<p>• {_inline(line[2:])}</p>")
        elif line:
            body.append(f"<p>{_inline(line)}</p>")
    if in_table:
        body.append("</table>")
    images = plots(report)
    if report.task_plots:
        body.append("<h2>Task plots</h2>")
        body += [
            f'<figure><img alt="{html.escape(t)}" src="data:image/png;base64,{b64}"><figcaption>{html.escape(t)}'
            "</figcaption></figure>"
            for t, b64 in report.task_plots
        ]
    if images:
        body.append("<h2>Plots</h2>")
        body += [
            f'<figure><img alt="{html.escape(m)}" src="data:image/png;base64,{b64}"></figure>' for m, b64 in images
        ]
    else:
        body.append("<p><em>Plots need matplotlib (pip install 'bedside[report]').</em></p>")
    style = (
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.25em .5em;font-size:.9em}th{background:#f4f4f4}"
    )
    title = html.escape(f"bedside run {report.run['id']}")
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>{style}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )


def report_json(report: RunReport) -> dict[str, Any]:
    """The report as JSON-able data (``bedside report --json``): the same numbers as the Markdown tables, unrounded.

    ``cells``: per cell its counts and per metric ``{metric, n, mean, low, high}``, with ``strata`` (key → value →
    the same); ``over_models``; ``tables``: the task's own tables as printed (title, columns, rows, note);
    ``usage`` by role; ``methods`` (per metric, the scorer the resolution rule picked and the text it scores);
    ``notes``. Plots are left out (HTML only).
    """
    run = report.run
    return {
        "run": {
            "id": run["id"],
            "task": run["task"],
            "status": run["status"],
            "created_at": f"{run['created_at']:%Y-%m-%dT%H:%M:%S}",
            "bedside_version": run["bedside_version"],
            "git_commit": run["git_commit"],
        },
        "metrics": list(report.metrics),
        "percent_scale": sorted(report.percent_scale),
        "methods": list(report.methods),
        "sent": list(report.sent),
        "cells": [
            {
                "cell": c.cell,
                "dataset": c.dataset,
                "system": c.system,
                "model": c.model,
                "samples": c.samples,
                "ok": c.ok,
                "errors": c.errors,
                "truncated": c.truncated,
                "metrics": [dataclasses.asdict(m) for m in c.metrics],
                "strata": {
                    key: {value: [dataclasses.asdict(m) for m in summaries] for value, summaries in groups.items()}
                    for key, groups in c.strata.items()
                },
                "error_causes": dict(c.error_causes),
            }
            for c in report.cells
        ],
        "over_models": [dataclasses.asdict(o) for o in over_models(report)],
        "tables": [dataclasses.asdict(t) for t in report.tables],
        "usage": report.usage,
        "notes": list(report.notes),
    }


def write_report(store: Store, run_id: str, folder: Path, *, follow_symlinks: bool = False) -> tuple[Path, Path]:
    """The Markdown and HTML files, 0600, in a 0700 folder (an existing one of this user's is tightened, see
    :func:`~bedside.private_files.private_dir`): reports quote samples and errors. A symbolic link where a file
    goes is refused unless ``follow_symlinks``."""
    report = build_report(store, run_id)
    private_dir(folder, tighten=True, follow_symlinks=follow_symlinks)
    md, page = folder / f"{report.run['id']}.md", folder / f"{report.run['id']}.html"
    write_private_text(md, markdown(report), follow_symlinks=follow_symlinks)
    write_private_text(page, html_page(report), follow_symlinks=follow_symlinks)
    return md, page


@dataclass
class MetricComparison:
    cell_a: str
    cell_b: str
    metric: str
    n: int
    mean_a: float
    mean_b: float
    difference: float
    low: float
    high: float
    p_value: float
    p_holm: float = 1.0
    """``p_value`` adjusted by Holm's method over every comparison of the call (all cells and metrics): the
    figure to read when several metrics are compared at once."""
    effect_size: float | None = None
    """Cohen's d_z (paired): the mean difference over the differences' standard deviation; None if undefined."""
    small_n: bool = False
    """Fewer than :data:`SMALL_N` paired samples: the bootstrap interval and p are unreliable."""


@dataclass(frozen=True)
class CellPair:
    """Two cells :func:`compare` paired, and how many samples both answered (0: nothing to compare, which a gate
    must not read as "no worse")."""

    cell_a: str
    cell_b: str
    paired: int
    failed_b: int = 0
    """Samples A answered that B stored as errors or never ran: left out of every paired figure, so a model that
    fails calls would otherwise read as no worse."""
    failed_a: int = 0
    """Samples B answered that A stored as errors or never ran."""


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare` found: a row per paired cells and metric, and every pair of cells it was asked about
    (those with no sample both answered have no rows)."""

    rows: list[MetricComparison]
    pairs: list[CellPair]

    @property
    def unpaired(self) -> list[CellPair]:
        return [p for p in self.pairs if p.paired == 0]

    @property
    def one_sided(self) -> list[CellPair]:
        """Pairs compared on fewer samples than one side answered: the other side failed (or never ran) some."""
        return [p for p in self.pairs if p.paired and (p.failed_a or p.failed_b)]


def compare(
    store: Store,
    run_a: str,
    run_b: str | None = None,
    *,
    a: Selection | None = None,
    b: Selection | None = None,
    baseline: str | None = None,
    seed: int = 0,
) -> Comparison:
    """Per paired cells (:mod:`bedside.runs.pairing`: two runs, or cells of one run selected by ``a``/``b``, or
    every model against ``baseline``) and metric, B − A over the samples both scored, with a paired bootstrap
    CI; p-values Holm-adjusted over every row returned. The cells are those the runs planned as well as those
    they stored: a model whose endpoint was down is a pair with nothing to compare, never one left out."""
    run_a_row = store.run(run_a)
    run_b_row = store.run(run_b) if run_b is not None else run_a_row
    id_a, id_b = run_a_row["id"], run_b_row["id"]
    rows_a = store.results(id_a)
    rows_b = rows_a if id_b == id_a else store.results(id_b)
    cells_a, cells_b = _cell_keys(rows_a, run_a_row), _cell_keys(rows_b, run_b_row)
    if baseline is not None:
        if id_b != id_a or a or b:
            raise PairingError("--baseline compares the models of one run: give one run and no --a/--b")
        pairs = baseline_pairs(cells_a, baseline)
    else:
        if id_b == id_a and not a and not b:
            raise PairingError(
                "one run against itself: select its cells with --a/--b (e.g. --a model=X --b model=Y) or "
                "compare every model with --baseline MODEL"
            )
        pairs = pair_cells(cells_a, cells_b, a, b, same_run=id_a == id_b)
    out = []
    compared = []
    for cell_a, cell_b in pairs:
        index_b = {(r.sample_id, r.epoch): r for r in rows_b if r.cell == cell_b and r.status == "ok"}
        paired = [
            (r, index_b[(r.sample_id, r.epoch)])
            for r in rows_a
            if r.cell == cell_a and r.status == "ok" and (r.sample_id, r.epoch) in index_b
        ]
        answered_a = {(r.sample_id, r.epoch) for r in rows_a if r.cell == cell_a and r.status == "ok"}
        compared.append(
            CellPair(cell_a, cell_b, len(paired), len(answered_a - index_b.keys()), len(index_b.keys() - answered_a))
        )
        metrics = sorted({m for ra, rb in paired for m in ra.scores if m in rb.scores})
        for metric in metrics:
            values = [
                (float(x), float(y))
                for ra, rb in paired
                if (x := ra.scores.get(metric)) is not None and (y := rb.scores.get(metric)) is not None
            ]
            if not values:
                continue
            xs = [x for x, _ in values]
            ys = [y for _, y in values]
            result = paired_bootstrap(xs, ys, seed=seed)
            out.append(
                MetricComparison(
                    cell_a,
                    cell_b,
                    metric,
                    len(values),
                    fmean(xs),
                    fmean(ys),
                    result.difference,
                    result.low,
                    result.high,
                    result.p_value,
                    effect_size=paired_effect_size(xs, ys),
                    small_n=len(values) < SMALL_N,
                )
            )
    for row, adjusted in zip(out, holm([r.p_value for r in out]), strict=True):
        row.p_holm = adjusted
    return Comparison(out, compared)


def _cell_keys(rows: Sequence[ResultRow], run: Mapping[str, Any]) -> list[CellKey]:
    """The cells ``rows`` hold, and those the run planned but stored nothing for (``dataset/system/model``)."""
    keys = [CellKey(r.cell, r.dataset, r.system, r.model) for r in rows]
    stored = {k.cell for k in keys}
    for cell in run.get("planned") or {}:
        if cell not in stored:
            keys.append(CellKey(cell, *cell_parts(cell)))
    return keys


def cell_parts(cell: str) -> tuple[str, str, str]:
    """dataset, system and model of a cell id (``dataset/system/model``; the model may hold a ``/`` itself), for a
    cell a run planned but stored no row of."""
    dataset, _, rest = cell.partition("/")
    system, _, model = rest.partition("/")
    return dataset, system, model


def export_jsonl(rows: Sequence[ResultRow], path: Path, *, follow_symlinks: bool = False) -> int:
    """One JSON object per result row, written as a 0600 file (rows hold prompts and outputs); a symbolic link
    at ``path`` is refused unless ``follow_symlinks``; complete or not
    at all (:func:`~bedside.private_files.replace_private`)."""
    with replace_private(path, follow_symlinks=follow_symlinks) as handle:
        for line in iter_jsonl(rows):
            handle.write(line + "\n")
    return len(rows)


def export_parquet(rows: Sequence[ResultRow], path: Path, *, follow_symlinks: bool = False) -> None:
    """Dicts and lists become JSON strings. The file is opened 0600 by bedside and handed to pyarrow, so it is
    never readable by others, not even between pyarrow creating it and a chmod."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError("Parquet export needs pyarrow (pip install 'bedside[export]')") from None
    import json

    columns: dict[str, list[Any]] = defaultdict(list)
    for row in rows:
        for name, value in row.__dict__.items():
            columns[name].append(json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else value)
    table = pa.table(dict(columns))
    with replace_private(path, binary=True, follow_symlinks=follow_symlinks) as handle:
        pq.write_table(table, handle)
