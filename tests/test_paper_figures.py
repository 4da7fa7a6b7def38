"""The papers' figures in the HTML report: DischargeSim's cross-model variability and size-correlation figures,
MedAgent's CI bar charts. Each is drawn when the stored run supports it and otherwise named with the reason."""

from __future__ import annotations

import base64
from pathlib import Path
from statistics import stdev
from typing import Any

import pytest

from bedside.runs import Store
from bedside.runs.report import build_report, html_page, markdown
from bedside.runs.store import ResultRow
from bedside.runs.task import AbsentPlot
from bedside.tasks.discharge.figures import CellModel, cross_model_spread, size_correlations
from bedside.tasks.discharge.tables import DIMENSION_SCORERS, _by_cell, sensitivity_gaps
from bedside.tasks.sensemaking.figures import mean_intervals

pytest.importorskip("matplotlib")

SIZES = (0.5, 1.5, 3.0, 7.0, 14.0)
DOCTOR = "openai-compatible/Qwen2.5-{size:g}B-Instruct@http://127.0.0.1:8000/v1"


def _discharge_row(model: str, case: str, literacy: str, size: float) -> ResultRow:
    # the high-literacy score is (1 + size / 100) times the low one: the gap is size / 100 on every dimension
    base = 2.0 + 0.1 * int(case[-1])
    value = base * (1 + size / 100) if literacy == "high" else base
    cell = f"gold/dischargesim/{model}"
    return ResultRow(
        run_id="r",
        cell=cell,
        sample_id=f"{case}/literacy={literacy}",
        epoch=0,
        dataset="gold",
        system="dischargesim",
        model=model,
        key=f"{cell}/{case}/{literacy}",
        status="ok",
        error=None,
        output={"text": "", "extra": {"profile": {"literacy": literacy}}},
        scores={scorer: value for scorer in DIMENSION_SCORERS.values()},
        usage={},
        strata={"literacy": literacy},
        sample={"id": f"{case}/literacy={literacy}", "inputs": {"case": {"id": case}}},
    )


def _discharge_rows(sizes: tuple[float, ...] = SIZES) -> list[ResultRow]:
    return [
        _discharge_row(DOCTOR.format(size=size), case, literacy, size)
        for size in sizes
        for case in ("c1", "c2", "c3")
        for literacy in ("low", "high")
    ]


def _stored_report(tmp_path: Path, task: str, rows: list[ResultRow]) -> Any:
    store = Store(str(tmp_path / "store.sqlite"))
    try:
        store.begin_run("r", "r", task, {"systems": {}})
        store.write(rows)
        store.finish_run("r", "done")
        return build_report(store, "r")
    finally:
        store.close()


def test_cross_model_spread_and_size_correlation_numbers() -> None:
    cells = _by_cell(_discharge_rows())
    gaps = sensitivity_gaps(cells)
    models = {cell: CellModel("gold/dischargesim", rows[0].model) for cell, rows in cells.items()}
    assert {m.family for m in models.values()} == {"qwen2.5-*-instruct"}
    spreads = {(s.comparison, s.dimension): s for s in cross_model_spread(gaps, models)}
    assert spreads[("HL2 vs HL1", "L&D")].models == 5
    assert spreads[("HL2 vs HL1", "L&D")].sd == pytest.approx(stdev([s / 100 for s in SIZES]))
    found = {(c.dimension, c.without_smallest): c for c in size_correlations(gaps, models)}
    every, trimmed = found[("mean", False)], found[("mean", True)]
    assert every.sizes == SIZES
    assert trimmed.sizes == SIZES[1:]  # the paper leaves Qwen2.5-0.5B out
    assert every.r == pytest.approx(1.0)
    assert trimmed.r == pytest.approx(1.0)
    assert every.p < 0.001


def test_discharge_figures_drawn_when_the_run_supports_them(tmp_path: Path) -> None:
    report = _stored_report(tmp_path, "discharge", _discharge_rows())
    drawn = {title: png for title, png in report.task_plots}
    for title in (
        "Cross-model variability, health literacy (Fig. 7 shape)",
        "Model size vs relative difference, health literacy (Fig. 9 shape): qwen2.5-*-instruct",
        "Model size vs mean health-literacy gap (Fig. 8 shape): qwen2.5-*-instruct",
    ):
        assert base64.b64decode(drawn[title]).startswith(b"\x89PNG"), title
    page = html_page(report)
    assert 'alt="Cross-model variability, health literacy (Fig. 7 shape)"' in page
    # education and emotion levels were not run: those figures are absent, with the reason, in both formats
    absent = {plot.title: plot.reason for plot in report.absent_plots}
    reason = absent["Cross-model variability, education (Fig. 10 shape)"]
    assert "needs the education level pairs scored in two or more models" in reason
    assert (
        "no emotional style level pair was scored in three or more sized models"
        in absent["Model size vs relative difference, emotional style (Fig. 13 shape): qwen2.5-*-instruct"]
    )
    assert "Figures not drawn" in page
    assert "Cross-model variability, education (Fig. 10 shape): needs the education" in page
    assert "Figures not drawn" in markdown(report)


def test_discharge_figures_absent_with_one_model_or_no_sizes(tmp_path: Path) -> None:
    one = _stored_report(tmp_path, "discharge", _discharge_rows((7.0,)))
    assert [t for t, _ in one.task_plots if not t.startswith("Profile sensitivity")] == []
    absent = {plot.title: plot.reason for plot in one.absent_plots}
    assert "1 model(s) ran" in absent["Cross-model variability, health literacy (Fig. 7 shape)"]
    assert "the largest family here has 1" in absent["Model size vs mean health-literacy gap (Fig. 8 shape)"]

    unsized = [
        _discharge_row(f"openai-compatible/{name}@http://x/v1", case, literacy, size)
        for name, size in (("gpt-4o", 1.0), ("gpt-5-mini", 2.0), ("gpt-4.1-mini", 3.0))
        for case in ("c1", "c2")
        for literacy in ("low", "high")
    ]
    report = _stored_report(tmp_path / "unsized", "discharge", unsized)
    titles = [t for t, _ in report.task_plots]
    assert "Cross-model variability, health literacy (Fig. 7 shape)" in titles  # three models, no sizes needed
    assert not any(t.startswith("Model size") for t in titles)
    assert any(isinstance(p, AbsentPlot) and p.title.startswith("Model size") for p in report.absent_plots)


def _sensemaking_row(cell: str, sample: str, scores: dict[str, float | None]) -> ResultRow:
    return ResultRow(
        run_id="r",
        cell=cell,
        sample_id=sample,
        epoch=0,
        dataset="cases",
        system="medagent",
        model=cell.rsplit("/", 1)[-1],
        key=f"{cell}/{sample}",
        status="ok",
        error=None,
        output={
            "text": "",
            "transcript": [],
            "extra": {"messages_per_stage": {}, "excluded": None, "sensemaker_messages": 7},
        },
        scores=dict(scores),
        usage={},
        strata={"trait": "neuroticism", "literacy": "basic"},
        sample={"id": sample, "inputs": {}},
    )


def _sensemaking_rows(judged: bool = True) -> list[ResultRow]:
    rows = []
    for cell, shift in (("cases/medagent/o1", 0.0), ("cases/medagent/r1", 0.5)):
        for index in range(6):
            value = 2.0 + shift + (index % 3) * 0.5
            scores: dict[str, float | None] = {
                "susceptibility": value if judged else None,
                "severity": value if judged else None,
                "benefits": value if judged else None,
                "flow": 3.0 if judged else None,
                "diagnosis_hard": float(index % 2) if judged else None,
                "diagnosis_soft": 1.0 if judged else None,
            }
            rows.append(_sensemaking_row(cell, f"case{index}/neuroticism-basic", scores))
    return rows


def test_medagent_ci_bars(tmp_path: Path) -> None:
    rows = _sensemaking_rows()
    found = mean_intervals({"o1": rows[:6]}, ["susceptibility", "diagnosis_hard"])
    mean, low, high, n = found["o1"]["susceptibility"]
    assert mean == pytest.approx(2.5)
    assert n == 6
    assert low < mean < high
    assert found["o1"]["diagnosis_hard"][0] == pytest.approx(0.5)
    report = _stored_report(tmp_path, "sensemaking", rows)
    drawn = dict(report.task_plots)
    for title in (
        "MedAgent Figure 4: HBM metrics and flow by model (mean, 95% CI)",
        "MedAgent Figure 5: diagnostic accuracy by model (mean, 95% CI)",
    ):
        assert base64.b64decode(drawn[title]).startswith(b"\x89PNG")
    assert 'alt="MedAgent Figure 5: diagnostic accuracy by model (mean, 95% CI)"' in html_page(report)


def test_medagent_ci_bars_absent_without_judgements(tmp_path: Path) -> None:
    report = _stored_report(tmp_path, "sensemaking", _sensemaking_rows(judged=False))
    assert report.task_plots == []
    reasons = {plot.title: plot.reason for plot in report.absent_plots}
    assert (
        "no conversation kept in every cell has susceptibility, severity, benefits, flow scored (12 kept"
        in reasons["MedAgent Figure 4: HBM metrics and flow by model (mean, 95% CI)"]
    )
    assert "MedAgent Figure 5: diagnostic accuracy by model (mean, 95% CI): no conversation" in html_page(report)
