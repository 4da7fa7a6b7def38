"""The paper's tables from a stored discharge run, plus what the paper leaves out.

- Table 1 shape, per cell (system × model): L&D, HCC, coverage IRH…FU and average, strategy FR…RE and average,
  Exam ACC (A) and AHRQ ACC — means over every sample of the cell, so pooled over the profile conditions run (the
  paper does not say what its rows average over; bedside pools and says so).
- Table 2 shape: ROUGE-L, BLEURT (absent: no checkpoint ships with bedside), concept F1 (MeSH stand-in for the
  paper's UMLS-F), summary judges A (FL, CO, INF, PER, avg) and B (SC, FAC, REL, CON, avg), Exam ACC (B).
- The exam by setting (dialogue / summary / none) and category, pooled over questions.
- Profile sensitivity (§5): for each of the paper's level pairs and six dimensions, the relative difference
  (S_level − S_baseline) / S_baseline of the cell's means, with a 95% bootstrap interval that resamples cases
  (paired: a case counts under both levels or not at all; seeded, 2,000 resamples), which the paper does not give.
  With three or more models whose names state a size (``7b``, ``0.5B``), the Pearson r between size in billions
  (linear scale, a choice the paper leaves open) and the mean relative difference over the six dimensions.
- The conversation: how it ended, stage reach, doctor messages, drug coverage; simulator fidelity per profile
  (a bedside addition, labelled so); the steps that failed or were skipped, with a cause.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

import numpy as np

from bedside.runs.steps import failures_table
from bedside.runs.task import ReportTable
from bedside.stats.agreement import pearson_r
from bedside.tasks.discharge.judging import COVERAGE_CRITERIA, STRATEGY_CRITERIA, SUMMARY_A_CRITERIA, SUMMARY_B_CRITERIA
from bedside.tasks.discharge.profiles import PAPER_LABELS, SENSITIVITY_PAIRS
from bedside.tasks.discharge.schedules import CLOSING, STAGE_IDS

DIMENSION_SCORERS = {
    "L&D": "ld",
    "HCC": "hcc",
    "Content": "coverage_avg",
    "Strategy": "strategy_avg",
    "L&A": "summary_a_avg",
    "F&C": "summary_b_avg",
}


def _legend(codes: Mapping[str, str]) -> str:
    return "; ".join(f"{code} = {name.replace('_', ' ')}" for code, name in codes.items())


TABLE_ONE_LEGEND = "Columns: L&D = language and delivery; HCC = human-centred communication; " + _legend(
    {**COVERAGE_CRITERIA, **STRATEGY_CRITERIA}
)
TABLE_TWO_LEGEND = "Columns: " + _legend({**SUMMARY_A_CRITERIA, **SUMMARY_B_CRITERIA})
_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*[bB](?![a-zA-Z])")


def _f(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}" if percent else f"{value:.2f}"


def _ok(rows: Sequence[Any]) -> list[Any]:
    return [r for r in rows if r.status == "ok" and r.output]


def _by_cell(rows: Sequence[Any]) -> dict[str, list[Any]]:
    cells: dict[str, list[Any]] = defaultdict(list)
    for row in _ok(rows):
        cells[row.cell].append(row)
    return dict(cells)


def _mean(rows: Sequence[Any], scorer: str) -> float | None:
    values = [r.scores.get(scorer) for r in rows]
    present = [float(v) for v in values if v is not None]
    return fmean(present) if present else None


def table_one(cells: Mapping[str, list[Any]]) -> ReportTable:
    columns = ["cell", "L&D", "HCC", *COVERAGE_CRITERIA, "avg", *STRATEGY_CRITERIA, "avg", "Exam A %", "AHRQ %"]
    scorers = ["ld", "hcc", *(f"coverage_{c.lower()}" for c in COVERAGE_CRITERIA), "coverage_avg"]
    scorers += [*(f"strategy_{c.lower()}" for c in STRATEGY_CRITERIA), "strategy_avg"]
    out = []
    for cell, rows in cells.items():
        values = [_f(_mean(rows, s)) for s in scorers]
        values += [_f(_mean(rows, "exam_acc_dialogue"), True), _f(_mean(rows, "ahrq_acc"), True)]
        out.append([cell, *values])
    return ReportTable(
        "DischargeSim Table 1: the conversation (judges 1.0-5.0; accuracies in %)",
        columns,
        out,
        "Means over every sample of the cell (all profile conditions pooled). Coverage in the paper's column order "
        "(return indicators, medications, diagnosis, post-discharge treatment, tests & treatments, follow-up). "
        "AHRQ % is bedside's ahrq_acc (defined in the docs; the paper gives no definition). "
        + TABLE_ONE_LEGEND
        + "."
        + _unparsed_note(cells, "dialogue", "Exam A %"),
    )


def table_two(cells: Mapping[str, list[Any]]) -> ReportTable:
    columns = ["cell", "ROUGE-L", "BLEURT", "UMLS-F", "concept F1"]
    columns += [*SUMMARY_A_CRITERIA, "avg", *SUMMARY_B_CRITERIA, "avg"]
    columns += ["Exam B %"]
    out = []
    for cell, rows in cells.items():
        values = [_f(_mean(rows, s)) for s in ("rougeL", "bleurt", "concept_f1_umls", "concept_f1")]
        values += [_f(_mean(rows, f"summary_a_{c.lower()}")) for c in (*SUMMARY_A_CRITERIA, "avg")]
        values += [_f(_mean(rows, f"summary_b_{c.lower()}")) for c in (*SUMMARY_B_CRITERIA, "avg")]
        values.append(_f(_mean(rows, "exam_acc_summary"), True))
        out.append([cell, *values])
    return ReportTable(
        "DischargeSim Table 2: the discharge summary",
        columns,
        out,
        "UMLS-F is concept_f1[umls], the paper's metric: it needs the umls extra, the `concept_f1_umls` scorer and "
        "a QuickUMLS index built from your own UMLS release in $BEDSIDE_UMLS_INDEX; concept F1 is "
        "concept_f1[mesh], the offline stand-in. BLEURT needs the bleurt extra, the `bleurt` scorer and a local "
        "checkpoint in $BEDSIDE_BLEURT_CHECKPOINT. None of these ship with bedside: without them the column is "
        "absent (-), never zero. " + TABLE_TWO_LEGEND + "." + _unparsed_note(cells, "summary", "Exam B %"),
    )


def _exam_counts(counts: Sequence[int]) -> tuple[int, int, int]:
    """(correct, questions, unparsed) from a stored per-category entry; runs stored before unparsed answers were
    counted apart have two numbers (their unparsed answers were scored as wrong)."""
    return int(counts[0]), int(counts[1]), int(counts[2]) if len(counts) > 2 else 0


def unparsed_answers(cells: Mapping[str, list[Any]], setting: str) -> dict[str, tuple[int, int, int]]:
    """Per cell with any unparsed exam answer in ``setting``: (unparsed answers, questions asked, samples whose
    every answer was unparsed, i.e. whose exam accuracy is absent)."""
    out: dict[str, tuple[int, int, int]] = {}
    for cell, rows in cells.items():
        unparsed = questions = absent = 0
        for row in rows:
            exam = (row.output.get("extra", {}).get("exam") or {}).get(setting)
            if exam is None:
                continue
            counts = [_exam_counts(c) for c in exam["by_category"].values()]
            unparsed += sum(u for _, _, u in counts)
            questions += sum(t for _, t, _ in counts)
            absent += exam.get("accuracy") is None
        if unparsed:
            out[cell] = (unparsed, questions, absent)
    return out


def _unparsed_note(cells: Mapping[str, list[Any]], setting: str, column: str) -> str:
    found = unparsed_answers(cells, setting)
    if not found:
        return ""
    listed = "; ".join(f"{cell}: {u} of {q}, {a} exam(s) absent" for cell, (u, q, a) in found.items())
    return (
        f" {column}: unparsed exam answers (no option named after the re-asks) are left out of the accuracy, and an "
        f"exam with none readable is absent: {listed}."
    )


def exam_table(cells: Mapping[str, list[Any]]) -> ReportTable:
    categories: list[str] = []
    pooled: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for cell, rows in cells.items():
        for row in rows:
            for setting, exam in (row.output.get("extra", {}).get("exam") or {}).items():
                for category, counts in exam["by_category"].items():
                    if category not in categories:
                        categories.append(category)
                    for key in ((cell, setting, category), (cell, setting, "all")):
                        for index, count in enumerate(_exam_counts(counts)):
                            pooled[key][index] += count
    out = []
    unparsed_rows = []
    for cell in cells:
        for setting in ("dialogue", "summary", "none"):
            if (cell, setting, "all") not in pooled:
                continue
            line = [cell, setting]
            for category in ["all", *categories]:
                correct, total, unparsed = pooled.get((cell, setting, category), (0, 0, 0))
                scored = total - unparsed
                line.append(f"{100 * correct / scored:.1f} ({scored})" if scored else "-")
            unparsed = pooled[(cell, setting, "all")][2]
            line.append(str(unparsed))
            if unparsed:
                unparsed_rows.append(f"{cell}/{setting}: {unparsed} of {pooled[(cell, setting, 'all')][1]}")
            out.append(line)
    note = (
        "dialogue = setting A (Table 1), summary = setting B (Table 2), none = no material (a baseline the paper "
        "does not report; chance is 1/3). Pooled over the answers that named one option, their number in "
        "brackets; an unparsed answer (no option named after the re-asks) is left out and counted in the unparsed "
        "column, and a cell with no readable answer is absent (-), never 0.0. Unparsed answers: "
        + ("; ".join(unparsed_rows) or "none")
        + "."
    )
    return ReportTable(
        "Comprehension exam by setting and category (% correct, answers scored)",
        ["cell", "setting", "all", *categories, "unparsed"],
        out,
        note,
    )


def _relative(high: Sequence[float], low: Sequence[float]) -> float | None:
    base = fmean(low)
    return (fmean(high) - base) / base if base else None


def _paired_values(
    rows: Sequence[Any], scorer: str, dimension: str, level: str, baseline: str
) -> tuple[list[float], list[float]]:
    """Scores under ``level`` and ``baseline`` for the same case with the other dimensions held equal."""
    by_case: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for row in rows:
        value = row.scores.get(scorer)
        profile = row.output.get("extra", {}).get("profile", {})
        if value is None or profile.get(dimension) not in (level, baseline):
            continue
        others = ",".join(f"{k}={v}" for k, v in sorted(profile.items()) if k != dimension)
        by_case[(row.sample["inputs"]["case"]["id"], others)][profile[dimension]] = float(value)
    pairs = [(v[level], v[baseline]) for v in by_case.values() if level in v and baseline in v]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _interval(high: Sequence[float], low: Sequence[float], resamples: int = 2000) -> tuple[float, float] | None:
    if len(high) < 2:
        return None
    rng = np.random.default_rng(0)
    h, lo = np.asarray(high), np.asarray(low)
    picks = rng.integers(0, len(h), size=(resamples, len(h)))
    base = lo[picks].mean(axis=1)
    valid = base != 0
    if not valid.any():
        return None
    ratios = (h[picks].mean(axis=1)[valid] - base[valid]) / base[valid]
    return float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5))


@dataclass(frozen=True)
class Gap:
    """One profile-sensitivity figure: a cell's relative difference on one scorer for one level pair."""

    cell: str
    comparison: str
    scorer: str
    gap: float
    interval: tuple[float, float] | None


def sensitivity_gaps(cells: Mapping[str, list[Any]]) -> list[Gap]:
    """Every (cell, level pair, dimension scorer) with paired cases, with its seeded bootstrap interval."""
    gaps = []
    for cell, rows in cells.items():
        for dimension, level, baseline in SENSITIVITY_PAIRS:
            comparison = f"{PAPER_LABELS[(dimension, level)]} vs {PAPER_LABELS[(dimension, baseline)]}"
            for name, scorer in DIMENSION_SCORERS.items():
                high, low = _paired_values(rows, scorer, dimension, level, baseline)
                gap = _relative(high, low) if high else None
                if gap is not None:
                    gaps.append(Gap(cell, comparison, name, gap, _interval(high, low)))
    return gaps


def sensitivity(cells: Mapping[str, list[Any]]) -> list[ReportTable]:
    out = []
    mean_gap: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    found = {(g.cell, g.comparison, g.scorer): g for g in sensitivity_gaps(cells)}
    for cell in cells:
        for dimension, level, baseline in SENSITIVITY_PAIRS:
            comparison = f"{PAPER_LABELS[(dimension, level)]} vs {PAPER_LABELS[(dimension, baseline)]}"
            line = [cell, comparison]
            gaps = []
            for name in DIMENSION_SCORERS:
                figure = found.get((cell, comparison, name))
                if figure is not None:
                    gaps.append(figure.gap)
                interval = figure.interval if figure else None
                line.append(
                    "-"
                    if figure is None
                    else f"{figure.gap:+.3f}" + (f" [{interval[0]:+.2f}, {interval[1]:+.2f}]" if interval else "")
                )
            if gaps:
                mean_gap[(dimension, level, baseline)][cell] = fmean(gaps)
            if any(v != "-" for v in line[2:]):
                out.append(line)
    tables = []
    if out:
        tables.append(
            ReportTable(
                "Profile sensitivity: relative difference (S_level - S_baseline) / S_baseline [95% CI]",
                ["cell", "comparison", *DIMENSION_SCORERS],
                out,
                "Paired by case (a case counts only when it ran under both levels); CIs resample cases (seeded "
                "bootstrap, 2,000 draws; the paper gives point estimates only). L&A and F&C are the summary judges.",
            )
        )
    sizes = {cell: _size(cell) for cell in cells}
    known = {cell: size for cell, size in sizes.items() if size is not None}
    rows_r = []
    for (dimension, level, baseline), gaps_by_cell in mean_gap.items():
        points = [(known[c], g) for c, g in gaps_by_cell.items() if c in known]
        if len(points) >= 3:
            r = pearson_r([p[0] for p in points], [p[1] for p in points])
            label = f"{PAPER_LABELS[(dimension, level)]} vs {PAPER_LABELS[(dimension, baseline)]}"
            rows_r.append([label, str(len(points)), f"{r.statistic:+.2f}", f"{r.p_value:.3f}"])
    if rows_r:
        tables.append(
            ReportTable(
                "Model size vs mean relative difference (Pearson r)",
                ["comparison", "models", "r", "p"],
                rows_r,
                "Size in billions of parameters read from the model name, linear scale; exclude outliers (the paper "
                "drops Qwen2.5-0.5B) by leaving them out of the run or the report's rows.",
            )
        )
    return tables


def _size(cell: str) -> float | None:
    found = _SIZE.findall(cell.split("/", 2)[-1])
    return float(found[-1]) if found else None


def conversation_table(cells: Mapping[str, list[Any]]) -> ReportTable:
    stages = [*STAGE_IDS, CLOSING]
    out = []
    for cell, rows in cells.items():
        extras = [r.output.get("extra", {}) for r in rows]
        endings = Counter(e.get("termination") for e in extras)
        reach = [sum(s in e.get("stages_reached", []) for e in extras) / len(extras) for s in stages]
        coverage = [e["drug_coverage"] for e in extras if e.get("drug_coverage") is not None]
        out.append(
            [
                cell,
                str(len(rows)),
                ", ".join(f"{k} {v}" for k, v in sorted(endings.items())),
                _f(fmean(e.get("doctor_messages", 0) for e in extras)),
                *(f"{100 * r:.0f}" for r in reach),
                _f(fmean(coverage) if coverage else None),
            ]
        )
    return ReportTable(
        "Conversations: how they ended, % reaching each stage, drug coverage",
        ["cell", "n", "ended", "doctor msgs", *stages, "drug cov."],
        out,
        "drug coverage: share of the case's discharge medicines the doctor named (measured, not enforced).",
    )


def fidelity_table(cells: Mapping[str, list[Any]]) -> ReportTable | None:
    pooled: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for cell, rows in cells.items():
        for row in rows:
            fidelity = row.output.get("extra", {}).get("fidelity")
            if not fidelity:
                continue
            profile = row.strata.get("profile", "none")
            for key in ((cell, profile), (cell, "all")):
                pooled[key].update(fidelity["counts"])
    if not pooled:
        return None
    out = []
    for (cell, profile), counts in sorted(pooled.items(), key=lambda kv: (kv[0][0], kv[0][1] != "all", kv[0][1])):
        informative = counts["entailed"] + counts["contradicted"] + counts["unsupported"]
        out.append(
            [
                cell,
                profile,
                str(sum(counts.values())),
                str(informative),
                _share(counts["unsupported"], informative),
                _share(counts["contradicted"], informative),
            ]
        )
    return ReportTable(
        "Simulator fidelity by profile (bedside addition)",
        ["cell", "profile", "sentences", "informative", "unsupported %", "contradicted %"],
        out,
        "Patient sentences labelled by the run's fidelity checker (the judge role for the llm checker; rules and "
        "MiniLM, no model call, for the combined one) against the patient's knowledge plus what the doctor said "
        "earlier; rates are shares of informative sentences. High rates mean the simulated patient, not the doctor, "
        "is off.",
    )


def _share(count: int, total: int) -> str:
    return f"{100 * count / total:.1f}" if total else "-"


def report_tables(rows: Sequence[Any]) -> list[ReportTable]:
    cells = _by_cell(rows)
    tables: list[ReportTable | None] = []
    if cells:
        tables += [table_one(cells), table_two(cells), exam_table(cells), *sensitivity(cells)]
        tables += [conversation_table(cells), fidelity_table(cells)]
    tables.append(failures_table(rows, "In this task: no summary, no questions or no reference summary."))
    return [t for t in tables if t is not None]
