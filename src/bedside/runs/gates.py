"""Pass/fail gates for CI: ``bedside run CONFIG --fail-under rougeL=0.3`` exits non-zero when a metric falls short.

A gate is ``metric=minimum``. It holds when, in every cell of the run, the metric's mean (the report's: per
sample, epochs averaged first, samples stored as errors left out) is at least the minimum. A cell where the
metric is absent (no sample scored it: every judgement failed, no references) fails the gate: an absent number
cannot pass for a measured one. A gate naming a metric the run does not compute is an error, not a pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bedside.runs.report import build_report
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
