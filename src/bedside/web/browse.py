"""Read-only queries behind the viewer, written to stay fast on runs of 100,000 samples.

- Run summaries (cells, samples, errors, cost) take one pass over a run's rows; they are kept in memory and
  recomputed when the run's sample count, error count or status changes (at most every ``SUMMARY_TTL_S``
  while a run is being written).
- The sample browser pages by key (cell, sample id, epoch), never by offset: a page is an index range scan
  from the last key shown. System, model and dataset filters become a set of cells (a cell is one dataset ×
  system × model), so they stay on the primary key; "errors only" walks ``ix_results_run_status_key``; a score
  range probes ``scores`` by primary key per row; a stratum filter reads the strata JSON of the rows scanned.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, case, exists, func, or_, select, tuple_

from bedside.runs.store import ResultRow, Store, _row, results_table, runs_table, scores_table

PAGE_SIZE = 50
SUMMARY_TTL_S = 10.0


@dataclass
class CellSummary:
    cell: str
    dataset: str
    system: str
    model: str
    samples: int = 0
    errors: int = 0


@dataclass
class RunSummary:
    run: dict[str, Any]
    cells: list[CellSummary]
    samples: int
    errors: int
    cost: float
    metrics: list[str]
    strata: dict[str, list[str]]
    made_at: float = field(default_factory=time.time)

    def cells_where(self, dataset: str = "", system: str = "", model: str = "") -> list[str]:
        return [
            c.cell
            for c in self.cells
            if (not dataset or c.dataset == dataset)
            and (not system or c.system == system)
            and (not model or c.model == model)
        ]


class Summaries:
    """Run summaries, cached per run and rebuilt when the run changes (dashboards: :mod:`bedside.web.dashboards`)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._summaries: dict[str, tuple[tuple[Any, ...], RunSummary]] = {}

    def runs(self) -> list[tuple[dict[str, Any], RunSummary]]:
        listed = self.store.runs()
        return [(run, self.summary(run)) for run in reversed(listed)]

    def _version(self, run: dict[str, Any]) -> tuple[Any, ...]:
        return (run["samples"], run["errors"], run["status"], run["updated_at"])

    def summary(self, run: dict[str, Any]) -> RunSummary:
        if "samples" not in run:
            run = next(r for r in self.store.runs() if r["id"] == run["id"])
        version = self._version(run)
        with self._lock:
            cached = self._summaries.get(run["id"])
        if cached and (cached[0] == version or time.time() - cached[1].made_at < SUMMARY_TTL_S):
            return cached[1]
        made = _summarise(self.store, run)
        with self._lock:
            self._summaries[run["id"]] = (version, made)
        return made


def _summarise(store: Store, run: dict[str, Any]) -> RunSummary:
    r = results_table.c
    cells: dict[str, CellSummary] = {}
    cost = 0.0
    metrics: set[str] = set()
    strata: dict[str, set[str]] = defaultdict(set)
    with store.engine.connect() as db:
        query = select(r.cell, r.dataset, r.system, r.model, r.status, r.usage, r.scores, r.strata).where(
            r.run_id == run["id"]
        )
        for row in db.execute(query.execution_options(yield_per=2000)):
            cell = cells.get(row.cell)
            if cell is None:
                cell = cells[row.cell] = CellSummary(row.cell, row.dataset, row.system, row.model)
            cell.samples += 1
            cell.errors += row.status == "error"
            for counts in (row.usage or {}).values():
                cost += float((counts or {}).get("cost", 0.0) or 0.0)
            metrics.update(row.scores or {})
            for key, value in (row.strata or {}).items():
                if len(strata[key]) < 200:
                    strata[key].add(str(value))
    ordered = sorted(cells.values(), key=lambda c: c.cell)
    return RunSummary(
        run=run,
        cells=ordered,
        samples=sum(c.samples for c in ordered),
        errors=sum(c.errors for c in ordered),
        cost=cost,
        metrics=sorted(metrics),
        strata={k: sorted(v) for k, v in sorted(strata.items())},
    )


@dataclass(frozen=True)
class SampleFilter:
    dataset: str = ""
    system: str = ""
    model: str = ""
    stratum: str = ""  # "key=value"
    metric: str = ""
    low: float | None = None
    high: float | None = None
    errors_only: bool = False
    search: str = ""  # words in the sample id, the output text or the error (case-insensitive)
    sort: str = ""  # "METRIC" (ascending) or "-METRIC" (descending); empty: key order

    def active(self) -> bool:
        return any(
            (
                self.dataset,
                self.system,
                self.model,
                self.stratum,
                self.metric,
                self.low is not None,
                self.errors_only,
                self.search,
                self.sort,
            )
        )


@dataclass
class SamplePage:
    rows: list[dict[str, Any]]
    after: tuple[str, str, int] | None  # key of the last row shown, when there may be more
    before: tuple[str, str, int] | None  # key of the first row shown, when there are earlier rows


PREVIEW_CHARS = 200
MAX_SEARCH_CHARS = 200


def _conditions(summary: RunSummary, flt: SampleFilter) -> list[Any] | None:
    """The WHERE conditions of a filter (None when it can match nothing)."""
    r = results_table.c
    conditions: list[Any] = [r.run_id == summary.run["id"]]
    if flt.dataset or flt.system or flt.model:
        cells = summary.cells_where(flt.dataset, flt.system, flt.model)
        if not cells:
            return None
        if len(cells) < len(summary.cells):
            conditions.append(r.cell.in_(cells))
    if flt.errors_only:
        conditions.append(r.status == "error")
    if flt.stratum and "=" in flt.stratum:
        name, _, value = flt.stratum.partition("=")
        conditions.append(r.strata[name].as_string() == value)
    if flt.search.strip():
        words = flt.search.strip()[:MAX_SEARCH_CHARS]
        conditions.append(
            or_(
                r.sample_id.icontains(words, autoescape=True),
                r.output["text"].as_string().icontains(words, autoescape=True),
                r.error.icontains(words, autoescape=True),
            )
        )
    if flt.metric and (flt.low is not None or flt.high is not None):
        s = scores_table.c
        probe = [
            s.run_id == r.run_id,
            s.cell == r.cell,
            s.sample_id == r.sample_id,
            s.epoch == r.epoch,
            s.metric == flt.metric,
        ]
        if flt.low is not None:
            probe.append(s.value >= flt.low)
        if flt.high is not None:
            probe.append(s.value <= flt.high)
        conditions.append(exists().where(and_(*probe)))
    return conditions


def _columns() -> list[Any]:
    r = results_table.c
    preview = func.substr(r.output["text"].as_string(), 1, PREVIEW_CHARS).label("preview")
    return [r.cell, r.sample_id, r.epoch, r.dataset, r.system, r.model, r.status, r.error, r.scores, r.strata, preview]


def sample_page(
    store: Store,
    summary: RunSummary,
    flt: SampleFilter,
    *,
    after: tuple[str, str, int] | None = None,
    before: tuple[str, str, int] | None = None,
    size: int = PAGE_SIZE,
) -> SamplePage:
    """A page of samples in key order, by key (see the module's docstring); each row with a preview of its
    output (the first :data:`PREVIEW_CHARS` characters)."""
    r = results_table.c
    key = tuple_(r.cell, r.sample_id, r.epoch)
    conditions = _conditions(summary, flt)
    if conditions is None:
        return SamplePage([], None, None)
    backwards = before is not None and after is None
    if backwards:
        assert before is not None
        conditions.append(key < tuple_(*before))
        order = [r.cell.desc(), r.sample_id.desc(), r.epoch.desc()]
    else:
        if after is not None:
            conditions.append(key > tuple_(*after))
        order = [r.cell.asc(), r.sample_id.asc(), r.epoch.asc()]
    query = select(*_columns()).where(and_(*conditions)).order_by(*order).limit(size + 1)
    with store.engine.connect() as db:
        found = [dict(row) for row in db.execute(query).mappings()]
    more = len(found) > size
    found = found[:size]
    if backwards:
        found.reverse()
    rows_key = [(f["cell"], f["sample_id"], f["epoch"]) for f in found]
    if backwards:
        return SamplePage(found, rows_key[-1] if found else None, rows_key[0] if (found and more) else None)
    earlier = after is not None and bool(found)
    return SamplePage(found, rows_key[-1] if (found and more) else None, rows_key[0] if earlier else None)


MAX_SORTED_PAGES = 200


def sorted_sample_page(
    store: Store, summary: RunSummary, flt: SampleFilter, page: int, *, size: int = PAGE_SIZE
) -> tuple[list[dict[str, Any]], bool]:
    """A page of samples sorted by a score (``flt.sort``: ``metric`` or ``-metric``; samples without that score
    last), by page number: (rows, whether there is a next page). Pages past :data:`MAX_SORTED_PAGES` are not
    served (an offset scan that deep is slow; narrow the filter instead)."""
    r, s = results_table.c, scores_table.c
    metric = flt.sort.lstrip("-")
    conditions = _conditions(summary, flt)
    if conditions is None or not 0 <= page < MAX_SORTED_PAGES:
        return [], False
    value = (
        select(s.value)
        .where(
            (s.run_id == r.run_id)
            & (s.cell == r.cell)
            & (s.sample_id == r.sample_id)
            & (s.epoch == r.epoch)
            & (s.metric == metric)
        )
        .scalar_subquery()
    )
    ordered = value.desc() if flt.sort.startswith("-") else value.asc()
    query = (
        select(*_columns())
        .where(and_(*conditions))
        .order_by(value.is_(None), ordered, r.cell, r.sample_id, r.epoch)
        .offset(page * size)
        .limit(size + 1)
    )
    with store.engine.connect() as db:
        found = [dict(row) for row in db.execute(query).mappings()]
    return found[:size], len(found) > size


@dataclass
class Failure:
    cell: str
    cause: str
    count: int
    example: str  # one error message of this cause


def failures(store: Store, run_id: str) -> list[Failure]:
    """A run's errors across its grid: per cell and cause (the error's type), how many, with one message."""
    r = results_table.c
    found: dict[tuple[str, str], Failure] = {}
    with store.engine.connect() as db:
        query = select(r.cell, r.error, r.failure).where((r.run_id == run_id) & (r.status == "error"))
        for row in db.execute(query.execution_options(yield_per=2000)):
            message = row.error or ""
            cause = str((row.failure or {}).get("type") or message.split(":", 1)[0] or "unknown")
            entry = found.get((row.cell, cause))
            if entry is None:
                found[(row.cell, cause)] = Failure(row.cell, cause, 1, message[:500])
            else:
                entry.count += 1
    return sorted(found.values(), key=lambda f: (-f.count, f.cell, f.cause))


@dataclass
class CellProgress:
    cell: str
    done: int
    errors: int
    total: int | None = None
    """Samples (× epochs) the cell has in all, when the run recorded its plan (runs from before did not)."""


def progress(store: Store, run_id: str) -> list[CellProgress]:
    """Samples stored so far per cell (and how many are errors), with the run's planned total per cell where
    its runner recorded one: a grouped count on the run's index, cheap enough to poll while the run is being
    written."""
    r = results_table.c
    with store.engine.connect() as db:
        rows = db.execute(
            select(r.cell, func.count(), func.sum(case((r.status == "error", 1), else_=0)))
            .where(r.run_id == run_id)
            .group_by(r.cell)
            .order_by(r.cell)
        ).all()
        planned = db.execute(select(runs_table.c.planned).where(runs_table.c.id == run_id)).scalar() or {}
    stored = {cell: (int(done), int(errors or 0)) for cell, done, errors in rows}
    cells = sorted(set(stored) | set(planned))
    return [CellProgress(cell, *stored.get(cell, (0, 0)), total=planned.get(cell)) for cell in cells]


PACE_WINDOW_S = 60.0
"""How far back the live progress reads a run's pace: the last minute of stored samples."""


def pace(store: Store, run_id: str, window_s: float = PACE_WINDOW_S) -> float | None:
    """Samples stored per second over the run's last ``window_s`` of writing (None until its rows span a second
    or more): what the live progress divides the samples still to do by for its time left."""
    r = results_table.c
    with store.engine.connect() as db:
        last = db.execute(select(func.max(r.finished_at)).where(r.run_id == run_id)).scalar()
        if last is None:
            return None
        count, first = db.execute(
            select(func.count(), func.min(r.finished_at)).where(
                (r.run_id == run_id) & (r.finished_at >= last - timedelta(seconds=window_s))
            )
        ).one()
    span = (last - first).total_seconds()
    return (count - 1) / span if span >= 1 and count > 1 else None


def time_left(cells: list[CellProgress], per_second: float | None) -> str | None:
    """ "about 3 min" for the samples still to do at ``per_second``; None when the plan or the pace is unknown."""
    if per_second is None or per_second <= 0 or not cells or any(c.total is None for c in cells):
        return None
    remaining = sum(max(0, (c.total or 0) - c.done) for c in cells)
    seconds = remaining / per_second
    if seconds < 60:
        return "under a minute"
    if seconds < 3600:
        return f"about {round(seconds / 60)} min"
    return f"about {seconds / 3600:.1f} h"


def one_sample(store: Store, run_id: str, cell: str, sample_id: str, epoch: int) -> ResultRow | None:
    r = results_table.c
    with store.engine.connect() as db:
        found = (
            db.execute(
                select(results_table).where(
                    (r.run_id == run_id) & (r.cell == cell) & (r.sample_id == sample_id) & (r.epoch == epoch)
                )
            )
            .mappings()
            .first()
        )
    return _row(found) if found is not None else None


def matched_cells(a: RunSummary, b: RunSummary) -> list[tuple[str, str]]:
    """Cells to compare, by :mod:`bedside.runs.pairing`'s rule (what ``bedside compare`` pairs): for two runs, the
    same cell ids or else one cell per (dataset, system) in each; for one run, every two cells of the same dataset
    and system (model against model, as ``--a model=X --b model=Y`` would)."""
    from itertools import combinations

    from bedside.runs.pairing import CellKey, PairingError, pair_cells

    keys_a = [CellKey(c.cell, c.dataset, c.system, c.model) for c in a.cells]
    if a.run["id"] == b.run["id"]:
        return [
            (x.cell, y.cell)
            for x, y in combinations(sorted(keys_a, key=lambda c: c.cell), 2)
            if (x.dataset, x.system) == (y.dataset, y.system)
        ]
    try:
        return pair_cells(keys_a, [CellKey(c.cell, c.dataset, c.system, c.model) for c in b.cells])
    except PairingError:
        return []


def paired_rows(
    store: Store,
    run_a: str,
    cell_a: str,
    run_b: str,
    cell_b: str,
    *,
    after: tuple[str, int] | None = None,
    size: int = PAGE_SIZE,
) -> tuple[list[tuple[dict[str, Any], dict[str, Any] | None]], tuple[str, int] | None]:
    """A page of run A's samples in ``cell_a`` with run B's same sample (and epoch) in ``cell_b``, by key."""
    r = results_table.c
    columns = [r.sample_id, r.epoch, r.status, r.error, r.scores, r.output]
    conditions = [r.run_id == run_a, r.cell == cell_a]
    if after is not None:
        conditions.append(tuple_(r.sample_id, r.epoch) > tuple_(*after))
    with store.engine.connect() as db:
        found = [
            dict(x)
            for x in db.execute(
                select(*columns).where(and_(*conditions)).order_by(r.sample_id, r.epoch).limit(size + 1)
            ).mappings()
        ]
        more = len(found) > size
        found = found[:size]
        ids = [f["sample_id"] for f in found]
        others = {
            (x["sample_id"], x["epoch"]): dict(x)
            for x in db.execute(
                select(*columns).where((r.run_id == run_b) & (r.cell == cell_b) & r.sample_id.in_(ids))
            ).mappings()
        }
    pairs = [(f, others.get((f["sample_id"], f["epoch"]))) for f in found]
    return pairs, ((found[-1]["sample_id"], found[-1]["epoch"]) if found and more else None)


def task_sections(task_name: str, row: ResultRow) -> tuple[list[dict[str, Any]], str | None]:
    """The task's own views of one sample, from an optional ``web_sections(row)`` on the task object.

    Each section is data, never HTML: ``{"kind": "highlight", "title", "text", "spans": [{"start", "end",
    "label"}]}``, ``{"kind": "table", "title", "columns", "rows"}`` or ``{"kind": "text", "title", "text"}``;
    the viewer renders and escapes them. A task that cannot be loaded, or whose hook fails, is noted, not fatal.
    """
    from bedside.runs.registry import resolve_task

    try:
        task = resolve_task(task_name)
    except (ValueError, ImportError) as exc:
        return [], f"task views left out: {exc}"
    hook = getattr(task, "web_sections", None)
    if hook is None:
        return [], None
    try:
        return [dict(s) for s in hook(row)], None
    except Exception as exc:  # a task's view must not take the sample page down
        return [], f"task views failed: {type(exc).__name__}"


def highlight_parts(text: str, spans: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """Text cut at the spans' edges: (piece, label or None); overlapping spans keep the first."""
    parts: list[tuple[str, str | None]] = []
    at = 0
    for span in sorted(spans, key=lambda s: (int(s.get("start", 0)), -int(s.get("end", 0)))):
        start, end = max(int(span.get("start", 0)), at), min(int(span.get("end", 0)), len(text))
        if end <= start:
            continue
        if start > at:
            parts.append((text[at:start], None))
        parts.append((text[start:end], str(span.get("label", ""))))
        at = end
    if at < len(text):
        parts.append((text[at:], None))
    return parts


@dataclass
class Timeline:
    """A sample's model calls laid out for the sample page (bars in a 0–1000 wide drawing)."""

    calls: list[dict[str, Any]]
    span: float
    cache_hits: int
    errors: int
    left_out: int
    note: str = ""


def timeline(row: ResultRow) -> Timeline:
    """The sample's call timeline, from what the runner stored (``row.calls``), with each call's bar position.

    Rows stored before timelines were kept have none: the note says so rather than showing an empty chart."""
    stored = row.calls
    if stored is None:
        note = "No call timeline: this sample was stored by a bedside that did not keep one."
        return Timeline([], 0.0, 0, 0, 0, note)
    calls = [dict(c) for c in stored if "start_s" in c]
    left_out = sum(int(c.get("left_out", 0)) for c in stored if "left_out" in c)
    if not calls:
        return Timeline([], 0.0, 0, 0, left_out, "This sample made no model call.")
    first = min(float(c["start_s"]) for c in calls)
    span = max(float(c["end_s"]) for c in calls) - first
    for c in calls:
        start, end = float(c["start_s"]) - first, float(c["end_s"]) - first
        c["x"] = round(1000 * start / span, 1) if span > 0 else 0.0
        c["w"] = max(2.0, round(1000 * (end - start) / span, 1)) if span > 0 else 1000.0
        c["role_class"] = "".join(ch if ch.isalnum() else "-" for ch in str(c.get("role", "")))
        sent = c.get("sent")
        c["sent_text"] = "" if not isinstance(sent, dict) else ", ".join(f"{k} {v}" for k, v in sorted(sent.items()))
    return Timeline(
        calls=calls,
        span=span,
        cache_hits=sum(bool(c.get("cached")) for c in calls),
        errors=sum(bool(c.get("error")) for c in calls),
        left_out=left_out,
    )


@dataclass
class PairedMetric:
    """Run B minus run A on one metric over the samples both scored, with its paired bootstrap interval."""

    metric: str
    n: int
    mean_a: float
    mean_b: float
    difference: float
    low: float
    high: float
    p_value: float


COMPARE_RESAMPLES = 2000


def paired_metrics(
    store: Store,
    run_a: str,
    cell_a: str,
    run_b: str,
    cell_b: str,
    metrics: list[str],
    *,
    seed: int = 0,
    resamples: int = COMPARE_RESAMPLES,
) -> list[PairedMetric]:
    """Per metric, mean(B) − mean(A) over the (sample, epoch) pairs scored in both cells, with the paired
    bootstrap interval and p-value of :func:`bedside.stats.paired_bootstrap` (what ``bedside compare`` reports;
    fewer resamples here, batched, so a page stays quick and small in memory)."""
    from statistics import fmean

    from bedside.stats import paired_bootstrap

    s = scores_table.c
    values: dict[str, dict[tuple[str, int], list[float | None]]] = {m: {} for m in metrics}
    with store.engine.connect() as db:
        for side, (run_id, cell) in enumerate(((run_a, cell_a), (run_b, cell_b))):
            query = select(s.sample_id, s.epoch, s.metric, s.value).where(
                (s.run_id == run_id) & (s.cell == cell) & s.metric.in_(metrics)
            )
            for sample_id, epoch, metric, value in db.execute(query.execution_options(yield_per=5000)):
                values[metric].setdefault((sample_id, epoch), [None, None])[side] = value
    found = []
    for metric in metrics:
        pairs = [(float(a), float(b)) for a, b in values[metric].values() if a is not None and b is not None]
        if not pairs:
            continue
        xs, ys = [a for a, _ in pairs], [b for _, b in pairs]
        result = paired_bootstrap(xs, ys, n_resamples=resamples, seed=seed, batch=100)
        found.append(
            PairedMetric(metric, len(pairs), fmean(xs), fmean(ys), result.difference, result.low, result.high,
                         result.p_value)
        )  # fmt: skip
    return found


MAX_DIFF_WORDS = 3000


def word_diff(a: str, b: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Two texts cut into (piece, changed) parts at word level: in ``a`` the words B dropped or replaced, in
    ``b`` the words it added. Texts past :data:`MAX_DIFF_WORDS` words are compared on their beginning and the
    rest shown unmarked."""
    import difflib
    import re

    def words(text: str) -> list[str]:
        return re.findall(r"\S+\s*", text)

    wa, wb = words(a), words(b)
    head_a, head_b = wa[:MAX_DIFF_WORDS], wb[:MAX_DIFF_WORDS]
    parts_a: list[tuple[str, bool]] = []
    parts_b: list[tuple[str, bool]] = []
    matcher = difflib.SequenceMatcher(a=[w.strip() for w in head_a], b=[w.strip() for w in head_b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if i2 > i1:
            parts_a.append(("".join(head_a[i1:i2]), op != "equal"))
        if j2 > j1:
            parts_b.append(("".join(head_b[j1:j2]), op != "equal"))
    if len(wa) > MAX_DIFF_WORDS:
        parts_a.append(("".join(wa[MAX_DIFF_WORDS:]), False))
    if len(wb) > MAX_DIFF_WORDS:
        parts_b.append(("".join(wb[MAX_DIFF_WORDS:]), False))
    return parts_a, parts_b
