"""Drafting cases from a file in any of the formats bedside reads: the one entry point the task, the systems'
example pools and the commands use.

It sits above the single-format readers (:mod:`.cases` for bedside JSONL, mapped tables and LiveQA; :mod:`.syppm`
for the seed paper's release), so that each of those depends only on the case models and never on the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from bedside.data import DEMO_DIR
from bedside.inputs import InputError, nonempty
from bedside.records import read_records
from bedside.tasks.drafting.cases import PortalMessage, load_portal_messages, read_liveqa, read_table, with_chart_from
from bedside.tasks.drafting.syppm import read_syppm

FORMATS = ("auto", "syppm")
"""Values of ``layout`` (``options.format`` in a run config): ``auto`` tells bedside JSONL, a flat table and
LiveQA XML apart by the file; ``syppm`` reads the seed paper's SyPPM release (:mod:`.syppm`)."""


def read_cases(
    source: str | Path,
    columns: Mapping[str, str] | None = None,
    records: str | Path | None = None,
    layout: str | None = None,
) -> list[PortalMessage]:
    """Cases from ``source`` (a file, or ``demo``) read as ``layout`` (one of :data:`FORMATS`; default auto),
    charts filled from ``records`` where missing."""
    layout = layout or "auto"
    if layout not in FORMATS:
        raise InputError(f"cases format {layout!r}: not one of {', '.join(FORMATS)}")
    if str(source) == "demo":
        path, records = DEMO_DIR / "portal_messages.jsonl", records or DEMO_DIR / "cohort.jsonl"
    else:
        path = Path(source)
        if not path.is_file():
            raise InputError(f"{path}: no such cases file")
    if layout == "syppm":
        cases = read_syppm(path, columns)
    elif path.suffix.lower() == ".xml":
        cases = read_liveqa(path)
    elif columns or path.suffix.lower() == ".csv":
        cases = read_table(path, columns)
    else:
        cases = load_portal_messages(path)
    nonempty(cases, path, "cases")
    if any(c.chart_summary is None for c in cases):
        if records is None:
            raise InputError(f"{path}: messages without chart_summary need records to render one from")
        cases = with_chart_from(cases, read_records(Path(records)))
    return cases
