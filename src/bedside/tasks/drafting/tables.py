"""The paper's tables from a stored drafting run: no model call, everything from the evaluations kept per sample.

- EditJudge (its Tables 4–5): content- and theme-level precision, recall and Edit-F1, micro-averaged (counts
  pooled over the cell's samples and epochs), per cell, with IAP rows;
- theme proportions (Table 6): share of responses carrying each theme, clinicians and each cell;
- content recall per theme (Table 14): of the reference sentences of a theme, the share matched;
- Theme Edit-F1 per theme (Table 15);
- inter-clinician agreement (Table 3): per theme, the share of multi-reply cases where every clinician included
  it (strict inclusion), none did (strict exclusion), and their sum (strict agreement).

- dataset statistics (Table 2): cases, clinicians, words per message and per reply (mean ± std);
- mean ± std over models (Tables 4, 13, 14, 15): per dataset and system (an adaptation), each model's micro
  scores, then their mean and sample standard deviation (n - 1; the paper does not say which), for the
  content/theme P/R/F1 and per theme (content recall, Theme Edit-F1). Shown when a system ran on 2+ models;
- cosine IAA (Table 11): per pair of clinicians, the mean MiniLM cosine of their replies to the same message
  (computed inside the sample, so the table needs no model).

IAP: for every case with ≥ 2 replies, each ordered pair of clinicians (one as reference, the other as draft)
is scored with the cell's matcher; IAP pools those counts over all pairs and cases (micro), like the model rows
it is compared with. One IAP row per dataset and matcher.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bedside.runs.task import ReportTable
from bedside.tasks.drafting.evaluation import SystemTables, matcher_all_failed, tables_for
from bedside.tasks.drafting.themes import RESPONSE_THEMES, THEMES

_LABELS = {t.key: t.label for t in THEMES}
THEME_COLUMNS = [_LABELS[t] for t in RESPONSE_THEMES]
THEME_LEGEND = "Themes: " + "; ".join(f"{t.label} = {t.name}" for t in THEMES if t.key in RESPONSE_THEMES) + "."


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _evaluations(rows: Sequence[Any]) -> tuple[dict[str, list[dict[str, Any]]], dict[tuple[str, str], list[Any]]]:
    """Per cell, its evaluations; per (dataset, matcher), one inter-clinician list per case."""
    by_cell: dict[str, list[dict[str, Any]]] = defaultdict(list)
    inter: dict[tuple[str, str], dict[str, Any]] = defaultdict(dict)
    for row in rows:
        if row.status != "ok" or not row.output:
            continue
        extra = row.output.get("extra", {})
        evaluation = extra.get("editjudge")
        if evaluation is None:
            continue
        by_cell[row.cell].append(evaluation)
        if "inter_clinician" in extra:
            inter[(row.dataset, evaluation["content"]["matcher"])].setdefault(row.sample_id, extra["inter_clinician"])
    return by_cell, {key: list(cases.values()) for key, cases in inter.items()}


def _matcher(evaluations: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(sorted({e["content"]["matcher"] for e in evaluations}))


def _iap_rows(inter: Mapping[tuple[str, str], list[Any]]) -> list[tuple[str, SystemTables]]:
    return [
        (f"IAP: {dataset} ({matcher}, {len(cases)} cases)", tables_for(e for pairs in cases for e in pairs))
        for (dataset, matcher), cases in sorted(inter.items())
    ]


def _iaa(cases: Iterable[list[Mapping[str, Any]]]) -> tuple[int, dict[str, tuple[float, float]]]:
    sets = []
    for pairs in cases:
        by_clinician = {e["clinician_id"]: frozenset(e["reference_themes"]) for e in pairs}
        sets.append(list(by_clinician.values()))
    n = len(sets)
    out = {}
    for theme in RESPONSE_THEMES:
        inclusion = sum(all(theme in s for s in case) for case in sets) / n if n else 0.0
        exclusion = sum(all(theme not in s for s in case) for case in sets) / n if n else 0.0
        out[theme] = (inclusion, exclusion)
    return n, out


def drafting_tables(rows: Sequence[Any]) -> list[ReportTable]:
    by_cell, inter = _evaluations(rows)
    if not by_cell:
        return []
    cells = [(cell, tables_for(evaluations), _matcher(evaluations)) for cell, evaluations in sorted(by_cell.items())]
    unjudged = {cell: sum(map(matcher_all_failed, evaluations)) for cell, evaluations in sorted(by_cell.items())}
    iap = _iap_rows(inter)
    tables = []
    main = [
        [cell, matcher, str(t.content.n), *(_f(v) for v in _level_values(t)), _f(t.matcher_failed), _f(t.flagged)]
        for cell, t, matcher in cells
    ] + [
        [name, "", str(t.content.n), *(_f(v) for v in _level_values(t)), _f(t.matcher_failed), _f(t.flagged)]
        for name, t in iap
    ]
    tables.append(
        ReportTable(
            "EditJudge: content and theme level, micro-averaged",
            [
                "cell",
                "matcher",
                "n",
                "content P",
                "content R",
                "content Edit-F1",
                "theme P",
                "theme R",
                "theme Edit-F1",
                "matcher failed",
                "judge flagged",
            ],
            main,
            "Counts pooled over samples and epochs. IAP rows: each ordered pair of clinicians' replies to the same "
            "message, one as reference and one as draft, pooled the same way (n = pairs). Judge flagged: share of "
            "reference sentences where the LLM judge answered neither NO MATCH nor a verbatim draft span (its answer "
            "was aligned to the draft, or unusable); a high share means the judge model is not doing the task. "
            "Matcher failed: share of reference sentences where the judge's answer could not be used at all (not "
            "in the draft, not a whole sentence or clause of it, or too little of the sentence's content), each "
            "counted as NO MATCH. A sample none of whose matcher answers could be used has no content level (its "
            "content scores are absent, never 0.0): it is left out of the content columns and of n (the samples "
            "judged), and its failures stay in matcher failed. Samples left out so: "
            + ("; ".join(f"{cell}: {k}" for cell, k in unjudged.items() if k) or "none")
            + ".",
        )
    )
    dataset_of = {row.cell: row.dataset for row in rows}
    first_cell: dict[str, SystemTables] = {}
    for cell, t, _ in cells:
        first_cell.setdefault(dataset_of[cell], t)
    proportions = [
        [
            f"clinicians: {dataset}",
            *(_f(v) for v in t.reference_proportions.values()),
            _f(t.reference_other_proportion),
        ]
        for dataset, t in sorted(first_cell.items())
    ]
    proportions += [
        [cell, *(_f(v) for v in t.theme_proportions.values()), _f(t.other_proportion)] for cell, t, _ in cells
    ]
    tables.append(
        ReportTable(
            "Theme proportions: share of responses carrying each theme",
            ["source", *THEME_COLUMNS, _LABELS["other"]],
            proportions,
            "Clinician rows use each case's scored reply, classified like the drafts (or its theme fields with "
            "options.theme_source: boxes). Other: share of responses with a sentence of no theme (greetings, "
            f"sign-offs); it is never a theme of Theme Edit-F1. {THEME_LEGEND}",
        )
    )
    tables.append(
        ReportTable(
            "Content-level recall per theme of the reference sentence",
            ["cell", *THEME_COLUMNS],
            [[cell, *(_f(v) for v in t.content_recall_by_theme.values())] for cell, t, _ in cells]
            + [[name, *(_f(v) for v in t.content_recall_by_theme.values())] for name, t in iap],
            f"A dash (-) where no reference sentence of the theme was seen. {THEME_LEGEND}",
        )
    )
    tables.append(
        ReportTable(
            "Theme-level Edit-F1 per theme",
            ["cell", *THEME_COLUMNS],
            [[cell, *(_f(v) for v in t.theme_f1_by_theme.values())] for cell, t, _ in cells]
            + [[name, *(_f(v) for v in t.theme_f1_by_theme.values())] for name, t in iap],
            f"A dash (-) where the theme was in neither the references nor the drafts. {THEME_LEGEND}",
        )
    )
    agreement_rows = []
    seen_datasets = set()
    for (dataset, _matcher_name), cases in sorted(inter.items()):
        if dataset in seen_datasets:
            continue
        seen_datasets.add(dataset)
        n, per_theme = _iaa(cases)
        for label, index in (("strict inclusion", 0), ("strict exclusion", 1)):
            agreement_rows.append(
                [f"{dataset} ({n} cases)", label, *(_f(per_theme[t][index]) for t in RESPONSE_THEMES)]
            )
        agreement_rows.append(
            [f"{dataset} ({n} cases)", "strict agreement", *(_f(sum(per_theme[t])) for t in RESPONSE_THEMES)]
        )
    if agreement_rows:
        tables.append(
            ReportTable(
                "Inter-clinician agreement on themes (cases with two or more replies)",
                ["dataset", "measure", *THEME_COLUMNS],
                agreement_rows,
                "Share of cases where every clinician's reply included the theme (inclusion), none did (exclusion). "
                + THEME_LEGEND,
            )
        )
    tables.extend(_dataset_statistics(rows))
    tables.extend(_over_models(rows, by_cell))
    tables.extend(_cosine_iaa(rows))
    return tables


def _mean_std(values: Sequence[float | None]) -> str:
    known = [v for v in values if v is not None]
    if not known:
        return "-"
    if len(known) == 1:
        return f"{known[0]:.2f}"
    return f"{statistics.fmean(known):.2f}±{statistics.stdev(known):.2f}"


def _words(text: str) -> int:
    return len(text.split())


def _dataset_statistics(rows: Sequence[Any]) -> list[ReportTable]:
    samples: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for row in rows:
        inputs = (row.sample or {}).get("inputs") or {}
        if "message" in inputs:
            samples[row.dataset].setdefault(row.sample_id, inputs)
    body = []
    for dataset, cases in sorted(samples.items()):
        replies = [r for inputs in cases.values() for r in inputs.get("references", [])]
        messages = [_words(inputs["message"]) for inputs in cases.values()]
        lengths = [_words(r.get("text", "")) for r in replies]
        clinicians = {r.get("clinician_id") for r in replies}
        body.append(
            [
                dataset,
                str(len(cases)),
                str(len(clinicians)),
                str(len(replies)),
                _mean_std([float(m) for m in messages]).replace("±", " ± "),
                _mean_std([float(n) for n in lengths]).replace("±", " ± "),
            ]
        )
    if not body:
        return []
    return [
        ReportTable(
            "Dataset statistics",
            ["dataset", "cases", "clinicians", "replies", "message words", "reply words"],
            body,
            "Words split at whitespace; mean ± sample standard deviation over the cases run (replies: all of them).",
        )
    ]


def _over_models(rows: Sequence[Any], by_cell: Mapping[str, list[dict[str, Any]]]) -> list[ReportTable]:
    where = {row.cell: (row.dataset, row.system, row.model) for row in rows}
    groups: dict[tuple[str, str], list[SystemTables]] = defaultdict(list)
    for cell, evaluations in sorted(by_cell.items()):
        dataset, system, _model = where[cell]
        groups[(dataset, system)].append(tables_for(evaluations))
    groups = {key: value for key, value in groups.items() if len(value) >= 2}
    if not groups:
        return []
    note = "Each model's micro scores, then mean ± sample standard deviation over the models (n in the first column)."
    main = [
        [
            f"{dataset} / {system} ({len(ts)} models)",
            *(_mean_std(list(v)) for v in zip(*map(_level_values, ts), strict=True)),
        ]
        for (dataset, system), ts in sorted(groups.items())
    ]
    recall = [
        [f"{dataset} / {system}", *(_mean_std([t.content_recall_by_theme[k] for t in ts]) for k in RESPONSE_THEMES)]
        for (dataset, system), ts in sorted(groups.items())
    ]
    theme_f1 = [
        [f"{dataset} / {system}", *(_mean_std([t.theme_f1_by_theme[k] for t in ts]) for k in RESPONSE_THEMES)]
        for (dataset, system), ts in sorted(groups.items())
    ]
    levels = ["content P", "content R", "content Edit-F1", "theme P", "theme R", "theme Edit-F1"]
    return [
        ReportTable("EditJudge over models: mean ± std per adaptation", ["dataset / system", *levels], main, note),
        ReportTable(
            "Content-level recall per theme, over models",
            ["dataset / system", *THEME_COLUMNS],
            recall,
            f"{note} {THEME_LEGEND}",
        ),
        ReportTable(
            "Theme-level Edit-F1 per theme, over models",
            ["dataset / system", *THEME_COLUMNS],
            theme_f1,
            f"{note} {THEME_LEGEND}",
        ),
    ]


def _cosine_iaa(rows: Sequence[Any]) -> list[ReportTable]:
    pairs: dict[str, dict[str, dict[tuple[str, str], float]]] = defaultdict(dict)
    for row in rows:
        cosines = ((row.output or {}).get("extra") or {}).get("reply_cosines")
        if row.status == "ok" and cosines:
            pairs[row.dataset].setdefault(row.sample_id, {(c["a"], c["b"]): c["cosine"] for c in cosines})
    tables = []
    for dataset, cases in sorted(pairs.items()):
        by_pair: dict[frozenset[str], list[float]] = defaultdict(list)
        for case in cases.values():
            for (a, b), value in case.items():
                by_pair[frozenset((a, b))].append(value)
        clinicians = sorted({c for pair in by_pair for c in pair})
        body = []
        for a in clinicians:
            cells = []
            for b in clinicians:
                values = by_pair.get(frozenset((a, b)), []) if a != b else [1.0]
                cells.append(_f(statistics.fmean(values)) if values else "-")
            body.append([a, *cells])
        tables.append(
            ReportTable(
                f"Inter-clinician agreement by cosine: {dataset} ({len(cases)} cases)",
                ["clinician", *clinicians],
                body,
                "Mean MiniLM cosine between two clinicians' replies to the same message (whole replies).",
            )
        )
    return tables


def _level_values(t: SystemTables) -> list[float | None]:
    return [t.content.precision, t.content.recall, t.content.f1, t.theme.precision, t.theme.recall, t.theme.f1]
