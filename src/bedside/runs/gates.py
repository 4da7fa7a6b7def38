"""Pass/fail gates for CI: ``bedside run CONFIG --fail-under rougeL=0.3`` exits non-zero when a metric falls short,
and ``bedside compare OLD NEW --fail-if-worse content_f1:0.02`` when the new run is not shown to be no worse.

**Absolute** (``--fail-under``): a gate is ``metric=minimum``. It holds when, in every cell of the run, the
metric's mean (the report's: per sample, epochs averaged first, samples stored as errors left out) is at least
the minimum. A cell where the metric is absent (no sample scored it: every judgement failed, no references)
fails the gate: an absent number cannot pass for a measured one. A gate naming a metric the run does not compute
is an error, not a pass.

**Nothing scored** (``bedside run``, always): a run whose samples finished but where a declared scorer (each of the
config's ``scorers``; without them, the task's headline metric) has no score in any sample exits non-zero, as a
run with errors does: every judge failing, or no reference anywhere, must not pass CI as "0 errors".

**Relative** (``--fail-if-worse METRIC[:MARGIN]``, on a comparison): a non-inferiority test on the paired
bootstrap 95% interval of B − A. It passes when the interval's lower end is at least −MARGIN (default 0): B is
shown to be worse than A by less than MARGIN, if at all. With ``lower_is_better`` (an error rate) the interval's
upper end must be at most +MARGIN. Every pair of cells is checked; a pair where no sample both answered scored
the metric fails (a model that failed every sample, or whose endpoint was down, cannot be shown no worse), and
so does a metric no paired sample scored. So does a pair where B failed (or never ran) samples A answered: the
paired figures leave those samples out, and a model that fails a sixth of its calls would pass on the rest
(``--allow-errors`` gates on the samples both answered only). A
margin of 0 asks for B at least as good as A within the interval's resolution: identical outputs pass, and a
small sample whose interval is wide fails (the test cannot show what the data do not).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bedside.runs.report import Comparison, MetricComparison, build_report, headline_metric
from bedside.runs.store import Store


class GateError(ValueError):
    """A gate that cannot be read, or that names a metric the run does not compute."""


@dataclass(frozen=True)
class Gate:
    metric: str
    minimum: float


@dataclass(frozen=True)
class GateResult:
    cell: str
    metric: str
    minimum: float
    mean: float | None
    n: int

    @property
    def passed(self) -> bool:
        return self.mean is not None and self.mean >= self.minimum


def parse_gate(text: str) -> Gate:
    """``metric=minimum`` (the metric name may itself hold ``=``-free brackets: ``concept_f1[mesh]=0.2``)."""
    metric, sep, value = text.rpartition("=")
    if not sep or not metric.strip():
        raise GateError(f"--fail-under {text!r}: expected METRIC=MINIMUM, e.g. rougeL=0.3")
    try:
        minimum = float(value)
    except ValueError:
        raise GateError(f"--fail-under {text!r}: {value!r} is not a number") from None
    if minimum != minimum:
        raise GateError(f"--fail-under {text!r}: the minimum is not a number")
    return Gate(metric.strip(), minimum)


def check_gates(store: Store, run_id: str, gates: Sequence[Gate]) -> list[GateResult]:
    """Every gate in every cell of ``run_id``; raises :class:`GateError` for a metric the run has not scored."""
    report = build_report(store, run_id)
    results = []
    for gate in gates:
        if gate.metric not in report.metrics:
            raise GateError(
                f"--fail-under {gate.metric}: the run has no metric {gate.metric!r}; "
                f"its metrics: {', '.join(report.metrics) or 'none'}"
            )
        for cell in report.cells:
            found = next((m for m in cell.metrics if m.metric == gate.metric), None)
            mean = None if found is None or found.n == 0 else found.mean
            results.append(GateResult(cell.cell, gate.metric, gate.minimum, mean, found.n if found else 0))
    return results


@dataclass(frozen=True)
class WorseGate:
    metric: str
    margin: float = 0.0


@dataclass(frozen=True)
class WorseResult:
    gate: WorseGate
    passed: bool
    reason: str
    """One line: what was compared and why it passed or failed."""


def parse_worse_gate(text: str) -> WorseGate:
    """``METRIC`` or ``METRIC:MARGIN`` (MARGIN a number ≥ 0, on the metric's own scale)."""
    metric, sep, value = text.rpartition(":")
    if not sep:
        metric, value = text, "0"
    metric = metric.strip()
    if not metric:
        raise GateError(f"--fail-if-worse {text!r}: expected METRIC[:MARGIN], e.g. content_f1:0.02")
    try:
        margin = float(value)
    except ValueError:
        raise GateError(f"--fail-if-worse {text!r}: the margin {value!r} is not a number") from None
    if not margin >= 0:
        raise GateError(f"--fail-if-worse {text!r}: the margin must be a number ≥ 0")
    return WorseGate(metric, margin)


def check_worse(
    comparison: Comparison, gates: Sequence[WorseGate], *, lower_is_better: bool = False, allow_errors: bool = False
) -> list[WorseResult]:
    """Each gate on every pair of cells compared, in the comparison's order (see the module docstring)."""
    results: list[WorseResult] = []
    for gate in gates:
        if not allow_errors:
            results.extend(
                WorseResult(
                    gate,
                    False,
                    f"{pair.cell_b} vs {pair.cell_a}: B failed {pair.failed_b} of the samples A answered, which "
                    "the paired figures leave out, so B cannot be shown no worse (--allow-errors gates on the "
                    "samples both answered)",
                )
                for pair in comparison.pairs
                if pair.paired and pair.failed_b
            )
        rows = [c for c in comparison.rows if c.metric == gate.metric]
        if not rows:
            scored = sorted({c.metric for c in comparison.rows})
            results.append(
                WorseResult(
                    gate,
                    False,
                    f"{gate.metric}: no paired sample scored it, so B cannot be shown no worse "
                    f"(metrics compared: {', '.join(scored) or 'none'})",
                )
            )
            continue
        for pair in comparison.pairs:
            found = [r for r in rows if (r.cell_a, r.cell_b) == (pair.cell_a, pair.cell_b)]
            if not found:
                results.append(
                    WorseResult(
                        gate,
                        False,
                        f"{pair.cell_b} vs {pair.cell_a}: no sample both answered scored {gate.metric} "
                        f"({pair.paired} answered by both), so B cannot be shown no worse",
                    )
                )
            results.extend(_within_margin(gate, row, lower_is_better) for row in found)
    return results


def _within_margin(gate: WorseGate, row: MetricComparison, lower_is_better: bool) -> WorseResult:
    bound, limit = (row.high, gate.margin) if lower_is_better else (row.low, -gate.margin)
    passed = bound <= limit if lower_is_better else bound >= limit
    side = "upper" if lower_is_better else "lower"
    verdict = "within" if passed else "beyond"
    return WorseResult(
        gate,
        passed,
        f"{row.cell_b} vs {row.cell_a}: {row.metric} B − A {row.difference:+.4f}, 95% CI "
        f"[{row.low:+.4f}, {row.high:+.4f}], n = {row.n}: the {side} end is {verdict} the margin "
        f"{limit:+g} ({'lower' if lower_is_better else 'higher'} is better)",
    )


def unscored(store: Store, run_id: str) -> list[str]:
    """Declared scorers (the config's ``scorers``, else the task's headline metric) that scored no sample, in a
    run where some sample finished."""
    run = store.run(run_id)
    rows = [r for r in store.results(run["id"]) if r.status == "ok"]
    if not rows:
        return []  # nothing finished: the errors say why
    headline = headline_metric(run["task"])
    names = list(run["config"].get("scorers") or []) or ([headline] if headline else [])
    return [
        name
        for name in names
        if not any(v is not None for r in rows for m, v in r.scores.items() if m.split("[", 1)[0] == name)
    ]
