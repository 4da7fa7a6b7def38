"""The paper's tables from a stored sensemaking run (spec 004 items 49-55), plus what it leaves out.

Cells are the run's system × model combinations; "model A" is the first cell in the run's order.

- **Table 1**: mean messages per conversation by stage, patient and sensemaker together, each message under the
  stage label of item 38 (a patient message carries the stage of the message it answers; the opening is
  Fostering), over every finished conversation.
- **Exclusions** by cause (incomplete, hard limit, a stagnation end before Responding to Emotions, a failed
  step, a sample error). The paper's 1,142 per model are the persona instances valid for *both* models: the
  comparison tables use that **intersection** across cells and say its size.
- **Unreviewed labels**: the exclusions table counts, per cell, the conversations whose diagnostic-accuracy scores
  rest on a derived diagnosis label nobody has reviewed (spec item 6; :mod:`.cases`), and the comparison's note
  says how many of the compared ones do.
- **Model comparison**: mean (sample SD, ddof 1) per metric; two-sided Mann–Whitney U with model A as the first
  sample (the U the paper reports); Welch's t-test for SMOG (the paper's t does not tell Student from Welch at
  equal n). Accuracies in %.
- **Table 2**: dominant trait × literacy × cell means of the seven metrics, with n.
- **Relative differences** (item 52): trait gaps (A − N)/A for the HBM metrics, SMOG's (O − N)/O, and literacy gaps
  (advanced − basic)/basic on n-weighted pooled means, with the patient-centric composite (mean of the three HBM
  means).
- **Length bins** (Figure 6): metric means by the number of sensemaker messages, bins 5 | 6-9 | 10-15 | ≥ 16 by
  default (the paper names only "5" and "10-15"), with n per bin.
- **SMOG cross-check** (a bedside addition): bedside's SMOG beside textstat's on the same conversations (mean
  difference, Pearson r, Spearman ρ), since the paper names no library and textstat is the likely one.
- **Simulator fidelity** (a bedside addition): unsupported and contradicted rates in the closed-world stages (1-3)
  and in the later ones, per cell.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from statistics import fmean, stdev
from typing import Any

from bedside.runs.steps import failures_table
from bedside.runs.task import ReportTable
from bedside.stats.significance import mann_whitney_u, t_test
from bedside.tasks.sensemaking.personas import LITERACY, TRAITS
from bedside.tasks.sensemaking.stages import stage_infos

METRICS: dict[str, tuple[str, bool]] = {  # scorer -> (column, shown as %)
    "susceptibility": ("Suscept.", False),
    "severity": ("Severity", False),
    "benefits": ("Benefits", False),
    "flow": ("Flow", False),
    "smog": ("SMOG", False),
    "diagnosis_soft": ("Soft %", True),
    "diagnosis_hard": ("Hard %", True),
}
HBM = ("susceptibility", "severity", "benefits")
LENGTH_BINS: tuple[tuple[int, int | None], ...] = ((5, 5), (6, 9), (10, 15), (16, None))


def _f(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.2f}" if percent else f"{value:.2f}"


def _finished(rows: Sequence[Any]) -> list[Any]:
    return [r for r in rows if r.status == "ok" and r.output]


def _cells(rows: Sequence[Any]) -> dict[str, list[Any]]:
    cells: dict[str, list[Any]] = defaultdict(list)
    for row in rows:
        cells[row.cell].append(row)
    return dict(cells)


def _excluded(row: Any) -> str | None:
    if row.status != "ok" or not row.output:
        return "sample_error"
    cause: str | None = row.output.get("extra", {}).get("excluded")
    return cause


def kept_intersection(cells: Mapping[str, list[Any]]) -> dict[str, list[Any]]:
    """Per cell, the rows that are kept (not excluded) *and* whose sample is kept in every cell."""
    kept = {cell: {r.sample_id: r for r in rows if _excluded(r) is None} for cell, rows in cells.items()}
    common = set.intersection(*(set(k) for k in kept.values())) if kept else set()
    return {cell: [by_id[s] for s in sorted(common)] for cell, by_id in kept.items()}


def _values(rows: Sequence[Any], scorer: str) -> list[float]:
    return [float(v) for r in rows if (v := r.scores.get(scorer)) is not None]


def _mean(rows: Sequence[Any], scorer: str) -> float | None:
    values = _values(rows, scorer)
    return fmean(values) if values else None


def messages_table(cells: Mapping[str, list[Any]]) -> ReportTable:
    stages = [s.id for s in stage_infos()]
    out = []
    for cell, rows in cells.items():
        finished = _finished(rows)
        per_stage = [
            fmean(r.output["extra"]["messages_per_stage"].get(stage, 0) for r in finished) if finished else None
            for stage in stages
        ]
        total = fmean(sum(r.output["extra"]["messages_per_stage"].values()) for r in finished) if finished else None
        out.append([cell, str(len(finished)), *(_f(v) for v in per_stage), _f(total)])
    return ReportTable(
        "MedAgent Table 1: mean messages per conversation by stage (patient + sensemaker)",
        ["cell", "n", *(s.title for s in stage_infos()), "overall"],
        out,
        "A patient message counts under the stage of the sensemaker message it answers; the opening under "
        "Fostering. Every finished conversation counts here, excluded ones too.",
    )


def on_unreviewed_label(row: Any) -> bool:
    """Whether the row has a diagnostic-accuracy score that rests on a derived label nobody reviewed."""
    if row.status != "ok" or not row.output:
        return False
    diagnosis = (row.output.get("extra", {}).get("case") or {}).get("diagnosis") or {}
    scored = any(row.scores.get(s) is not None for s in ("diagnosis_hard", "diagnosis_soft"))
    return scored and diagnosis.get("reviewed", True) is False


def exclusions_table(cells: Mapping[str, list[Any]], kept: Mapping[str, list[Any]]) -> ReportTable:
    causes = sorted({c for rows in cells.values() for r in rows if (c := _excluded(r))})
    out = []
    for cell, rows in cells.items():
        counted = Counter(_excluded(r) for r in rows)
        out.append(
            [cell, str(len(rows)), *(str(counted.get(c, 0)) for c in causes), str(counted.get(None, 0)),
             str(len(kept.get(cell, []))), str(sum(on_unreviewed_label(r) for r in rows))]
        )  # fmt: skip
    return ReportTable(
        "Exclusions by cause, and the persona instances compared",
        ["cell", "samples", *causes, "kept", "in all cells", "accuracy on unreviewed labels"],
        out,
        "The comparison uses the persona instances kept in every cell (the paper's 1,142 per model are such an "
        "intersection). 'accuracy on unreviewed labels': finished conversations whose diagnostic accuracy was judged "
        "against a derived label nobody has reviewed (the stored case's diagnosis has reviewed: false).",
    )


def _helper_side(rows: Sequence[Any]) -> str:
    sides = {r.output.get("extra", {}).get("helper_side") for r in rows if r.output}
    if sides == {"helper"}:
        return (
            "Fact extraction, matching and the redundancy filter ran on the run's helper model, the same in every "
            "cell, as the paper held them fixed on GPT-4o."
        )
    if sides == {"system"}:
        return (
            "Fact extraction, matching and the redundancy filter ran on each cell's own system model (the run set no "
            "helper): the cells differ on that side too, which the paper held fixed on GPT-4o."
        )
    return ""


def comparison_table(kept: Mapping[str, list[Any]]) -> ReportTable:
    cells = list(kept)
    out = []
    for scorer, (column, percent) in METRICS.items():
        row = [column]
        for cell in cells:
            values = _values(kept[cell], scorer)
            if not values:
                row.append("-")
                continue
            sd = stdev(values) if len(values) > 1 else 0.0
            row.append(f"{_f(fmean(values), percent)} ({_f(sd, percent)})")
        row.append(_test(scorer, kept[cells[0]], kept[cells[1]]) if len(cells) == 2 else "")
        out.append(row)
    compared = [r for rows in kept.values() for r in rows]
    unreviewed = sum(on_unreviewed_label(r) for r in compared)
    labels = (
        f" {unreviewed} of the {len(compared)} compared conversations have diagnostic accuracy judged against an "
        "unreviewed derived label."
        if unreviewed
        else ""
    )
    side = _helper_side(compared)
    return ReportTable(
        "MultiSenseEval: model comparison, mean (SD)",
        ["metric", *cells, "test (A first)" if len(cells) == 2 else ""],
        out,
        "Two-sided Mann–Whitney U with the first cell as sample A (scipy's U); Welch's t-test for SMOG. SDs are "
        "sample SDs. Only the persona instances kept in every cell." + labels + (f" {side}" if side else ""),
    )


def _test(scorer: str, a_rows: Sequence[Any], b_rows: Sequence[Any]) -> str:
    a, b = _values(a_rows, scorer), _values(b_rows, scorer)
    try:
        if scorer == "smog":
            if _constant(a) and _constant(b):
                return "n/a (no variance)"
            result = t_test(a, b)
            return f"t = {result.statistic:.2f}, p = {result.p_value:.4f}"
        result = mann_whitney_u(a, b)
    except ValueError as exc:
        return f"n/a ({exc})"
    return f"U = {result.statistic:.1f}, p = {result.p_value:.4f}"


def _constant(values: Sequence[float]) -> bool:
    """No spread beyond floating-point noise (a t-test is undefined there)."""
    return max(values) - min(values) <= 1e-9 * max(1.0, abs(fmean(values)))


def persona_table(kept: Mapping[str, list[Any]]) -> ReportTable:
    out = []
    for cell, rows in kept.items():
        for literacy in LITERACY:
            for trait in TRAITS:
                group = [r for r in rows if r.strata.get("trait") == trait and r.strata.get("literacy") == literacy]
                if not group:
                    continue
                values = [_f(_mean(group, s), METRICS[s][1]) for s in METRICS]
                out.append([cell, literacy, trait, str(len(group)), *values])
    return ReportTable(
        "MedAgent Table 2: dominant trait × literacy",
        ["cell", "literacy", "high trait", "n", *(c for c, _ in METRICS.values())],
        out,
    )


def _relative(a: float | None, b: float | None) -> str:
    if a is None or b is None or a == 0:
        return "-"
    return f"{100 * (b - a) / a:+.2f}%"


def _gap(base: float | None, other: float | None) -> str:
    """(base − other) / base, the paper's trait gaps."""
    if base is None or other is None or base == 0:
        return "-"
    return f"{100 * (base - other) / base:+.2f}%"


def relative_table(kept: Mapping[str, list[Any]]) -> ReportTable:
    out = []
    for cell, rows in kept.items():

        def group(trait: str | None = None, literacy: str | None = None, _rows: list[Any] = rows) -> list[Any]:
            return [
                r
                for r in _rows
                if (trait is None or r.strata.get("trait") == trait)
                and (literacy is None or r.strata.get("literacy") == literacy)
            ]

        for literacy in LITERACY:
            a, n, o = group("agreeableness", literacy), group("neuroticism", literacy), group("openness", literacy)
            for scorer in HBM:  # (A − N)/A: how much lower neuroticism scores than agreeableness
                out.append([cell, literacy, f"{scorer}: (A − N)/A", _gap(_mean(a, scorer), _mean(n, scorer))])
            out.append([cell, literacy, "smog: (O − N)/O", _gap(_mean(o, "smog"), _mean(n, "smog"))])
        basic, advanced = group(literacy="basic"), group(literacy="advanced")
        composite = [
            fmean(vs) if (vs := [v for s in HBM if (v := _mean(g, s)) is not None]) and len(vs) == 3 else None
            for g in (basic, advanced)
        ]
        out.append([cell, "all", "patient-centric: (adv − basic)/basic", _relative(composite[0], composite[1])])
        for scorer in ("diagnosis_hard", "diagnosis_soft", "smog"):
            label = f"{scorer}: (adv − basic)/basic"
            out.append([cell, "all", label, _relative(_mean(basic, scorer), _mean(advanced, scorer))])
    return ReportTable(
        "Relative differences by persona (spec 004 item 52)",
        ["cell", "literacy", "difference", "value"],
        out,
        "Trait gaps compare the high-Agreeableness (or Openness) group with the high-Neuroticism one; literacy gaps "
        "use means pooled over every trait (n-weighted); the composite is the mean of the three HBM means.",
    )


def _bin_label(low: int, high: int | None) -> str:
    if high is None:
        return f"≥{low}"
    return str(low) if low == high else f"{low}-{high}"


def length_table(kept: Mapping[str, list[Any]], bins: Sequence[tuple[int, int | None]] = LENGTH_BINS) -> ReportTable:
    out = []
    for cell, rows in kept.items():
        for low, high in bins:
            group = [
                r
                for r in rows
                if low <= r.output["extra"]["sensemaker_messages"]
                and (high is None or r.output["extra"]["sensemaker_messages"] <= high)
            ]
            values = [_f(_mean(group, s), METRICS[s][1]) for s in METRICS]
            out.append([cell, _bin_label(low, high), str(len(group)), *values])
    return ReportTable(
        "Metric means by conversation length (sensemaker messages)",
        ["cell", "messages", "n", *(c for c, _ in METRICS.values())],
        out,
        "Bins are bedside's choice where the paper names only '5' and '10-15'; a complete conversation has 5 to 21 "
        "sensemaker messages.",
    )


def fidelity_table(cells: Mapping[str, list[Any]]) -> ReportTable | None:
    out = []
    for cell, rows in cells.items():
        finished = _finished(rows)
        values = [
            _mean(finished, s)
            for s in ("fidelity_unsupported_closed", "fidelity_unsupported_open", "fidelity_contradicted")
        ]
        if all(v is None for v in values):
            continue
        out.append([cell, str(len(finished)), *(_f(v, True) for v in values)])
    if not out:
        return None
    return ReportTable(
        "Simulator fidelity (bedside addition): patient sentences not grounded in the facts, intent or goal",
        ["cell", "n", "unsupported % (stages 1-3)", "unsupported % (4-5)", "contradicted %"],
        out,
        "Shares of the patient's informative sentences, per conversation then averaged. Stages 1-3 are a closed "
        "world for the patient; from Decision Making on it is told to answer creatively, so unsupported "
        "statements there are expected, not defects.",
    )


def smog_check_table(cells: Mapping[str, list[Any]]) -> ReportTable | None:
    """bedside's SMOG against textstat's, per cell, over finished conversations that have both grades."""
    from bedside.stats.agreement import pearson_r, spearman_rho
    from bedside.text.readability import TEXTSTAT_HINT

    out = []
    for cell, rows in cells.items():
        pairs = [
            (float(r.scores["smog"]), float(r.scores["smog_textstat"]))
            for r in _finished(rows)
            if r.scores.get("smog") is not None and r.scores.get("smog_textstat") is not None
        ]
        if not pairs:
            continue
        ours, theirs = [p[0] for p in pairs], [p[1] for p in pairs]
        varied = len(pairs) > 2 and not _constant(ours) and not _constant(theirs)
        pearson = f"{pearson_r(ours, theirs).statistic:.2f}" if varied else "-"
        spearman = f"{spearman_rho(ours, theirs).statistic:.2f}" if varied else "-"
        out.append(
            [
                cell,
                str(len(pairs)),
                _f(fmean(ours)),
                _f(fmean(theirs)),
                _f(fmean(theirs) - fmean(ours)),
                pearson,
                spearman,
            ]
        )
    has_smog = any(r.scores.get("smog") is not None for rows in cells.values() for r in _finished(rows))
    if not out and not has_smog:
        return None
    note = (
        "One grade per conversation over the sensemaker's messages, both ways. bedside counts syllables by rule "
        "(drug and disease names keep their syllables); textstat uses pyphen's hyphenation and its own sentence "
        "count. Correlations need 3 or more conversations with some spread."
    )
    if not out:
        note += f" No textstat grades in this run: {TEXTSTAT_HINT}, then `bedside report` again."
    return ReportTable(
        "SMOG cross-check (bedside addition): bedside's grader against textstat's on the same conversations",
        ["cell", "n", "SMOG bedside", "SMOG textstat", "textstat − bedside", "Pearson r", "Spearman ρ"],
        out,
        note,
    )


def report_tables(rows: Sequence[Any], *, bins: Sequence[tuple[int, int | None]] = LENGTH_BINS) -> list[ReportTable]:
    cells = _cells(rows)
    tables: list[ReportTable | None] = []
    if cells:
        kept = kept_intersection(cells)
        tables += [messages_table(cells), exclusions_table(cells, kept)]
        if any(kept.values()):
            tables += [comparison_table(kept), persona_table(kept), relative_table(kept), length_table(kept, bins)]
        tables.append(smog_check_table(cells))
        tables.append(fidelity_table(cells))
    tables.append(failures_table(rows))
    return [t for t in tables if t is not None]
