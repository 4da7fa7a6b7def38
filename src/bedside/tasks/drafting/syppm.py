"""SyPPM: the seed paper's public set of semi-synthetic patient portal messages, as drafting cases.

The release holds 100 portal messages, each with a de-identified chart summary in four sections (Demographics,
Full Active Problem List, Recent Encounters (at most ten), Medications) and a primary care clinician's reply; 40
of them also carry three expert replies, for inter-annotator agreement (IAA) and inter-annotator predictability
(IAP). The release's column names were not available when this reader was written, so every column is read
through a column map (bedside field → column name). **The defaults in** :data:`SYPPM_COLUMNS`,
:data:`SYPPM_SECTIONS` **and** :data:`SYPPM_EXPERTS` **are bedside's guess, not confirmed names**: when a file
lacks one, the error names the missing column, lists the columns the file has, and says how to map them
(``options.columns`` in a run config, ``--column FIELD=COLUMN`` on the command line).

Fields:

- ``id``, ``message``, ``reference`` (the clinician's reply): required;
- the chart, either one column (``chart_summary``) or the four section columns (``demographics``, ``problems``,
  ``encounters``, ``medications``), assembled into one summary under the section headings in the order the paper
  shows them (:func:`assemble_chart`). A one-column chart is used when its column is there; otherwise all four
  section columns must be;
- ``clinician_id``: read when the column is there (default reply id ``clinician``);
- ``expert.<n>``: the extra expert replies, read when their columns are there (defaults ``expert_response_1``
  to ``_3``; map ``expert.4`` and up for more). An empty cell adds nothing, and an expert reply with exactly the
  text of a reply the case already has is not added twice (the primary reply may be repeated as one of the
  three). Expert replies get clinician ids ``expert_<n>``.

Rows that share an id are one case (a long layout with one reply per row reads the same as a wide one); they must
agree on the message. A column named explicitly in the map must be in the file.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bedside.inputs import InputError, require_columns, table_dicts
from bedside.tasks.drafting.cases import ClinicianReply, PortalMessage, case_of_row, validated_cases

SYPPM_COLUMNS: dict[str, str] = {
    "id": "id",
    "message": "message",
    "reference": "response",
}
"""Required fields and bedside's guess at their columns (unconfirmed)."""

SYPPM_CHART = "chart_summary"
"""bedside's guess at the column holding the whole chart summary, when the release has one (unconfirmed)."""

SYPPM_SECTIONS: dict[str, str] = {
    "demographics": "demographics",
    "problems": "problem_list",
    "encounters": "recent_encounters",
    "medications": "medications",
}
"""The chart's four section fields and bedside's guess at their columns (unconfirmed)."""

SECTION_TITLES: dict[str, str] = {
    "demographics": "Demographics",
    "problems": "Full Active Problem List",
    "encounters": "Recent Encounters",
    "medications": "Medications",
}
"""Headings of the assembled chart summary, in the paper's order."""

SYPPM_EXPERTS: dict[str, str] = {f"expert.{n}": f"expert_response_{n}" for n in (1, 2, 3)}
"""The extra expert replies (IAA/IAP) and bedside's guess at their columns (unconfirmed); read when present."""

SYPPM_OPTIONAL: dict[str, str] = {"clinician_id": "clinician_id", **SYPPM_EXPERTS}

HOW_TO_MAP = (
    "SyPPM's column names are bedside's guess; map bedside's fields to your file's columns with options.columns "
    "in the dataset config (e.g. columns: {reference: clinician_response}) or --column FIELD=COLUMN on the command "
    "line. Fields: id, message, reference, chart_summary or demographics, problems, encounters, medications; "
    "optional clinician_id, expert.1, expert.2, ..."
)


class SyPPMError(InputError):
    """A SyPPM file that cannot be read as drafting cases; the message says which column or row and why."""


def assemble_chart(sections: Mapping[str, str]) -> str:
    """One chart summary from the four sections: each heading, a colon, its text; sections in the paper's order,
    separated by a blank line. An empty section reads ``None``."""
    parts = []
    for field, title in SECTION_TITLES.items():
        text = sections.get(field, "").strip()
        parts.append(f"{title}:\n{text or 'None'}")
    return "\n\n".join(parts) + "\n"


def _cell(value: Any, where: str, column: str) -> str:
    """A cell as text: a JSONL list (of lines) is joined one item a line; an object or nested list is an error."""
    if value is None:
        return ""
    if isinstance(value, list):
        if any(isinstance(item, (dict, list)) for item in value):
            raise SyPPMError(f"{where}: column {column!r}: a list of objects or lists, not text")
        return "\n".join(text for item in value if (text := _cell(item, where, column)))
    if isinstance(value, dict):
        raise SyPPMError(f"{where}: column {column!r}: an object, not text")
    return str(value).strip()


def _split_map(columns: Mapping[str, str] | None) -> dict[str, str]:
    given = {str(k): str(v) for k, v in (columns or {}).items()}
    known = {*SYPPM_COLUMNS, SYPPM_CHART, *SYPPM_SECTIONS, "clinician_id"}
    unknown = sorted(f for f in given if f not in known and not _expert_number(f))
    if unknown:
        raise SyPPMError(f"column map: unknown field(s) {', '.join(unknown)}. {HOW_TO_MAP}")
    return given


def _expert_number(field: str) -> int | None:
    prefix, _, number = field.partition(".")
    return int(number) if prefix == "expert" and number.isdigit() and int(number) > 0 else None


def read_syppm(path: str | Path, columns: Mapping[str, str] | None = None) -> list[PortalMessage]:
    """SyPPM cases from a CSV or JSONL file through ``columns`` (bedside field → column; defaults: bedside's
    guess, see the module docstring)."""
    path = Path(path)
    given = _split_map(columns)
    rows = list(table_dicts(path, error=SyPPMError))
    if not rows:
        raise SyPPMError(f"{path}: no rows")
    header: list[str] = []
    for _, row in rows:
        header.extend(k for k in row if k not in header)

    required = {**SYPPM_COLUMNS, **{k: v for k, v in given.items() if k in SYPPM_COLUMNS}}
    chart_column = given.get("chart_summary", SYPPM_CHART)
    sections = {**SYPPM_SECTIONS, **{k: v for k, v in given.items() if k in SYPPM_SECTIONS}}
    explicit_optional = {k: v for k, v in given.items() if k == "clinician_id" or _expert_number(k)}
    require_columns(path, header, {**required, **explicit_optional}, "SyPPM file", error=SyPPMError, how=HOW_TO_MAP)

    use_sections = chart_column not in header
    if use_sections:
        if "chart_summary" in given:
            require_columns(
                path, header, {"chart_summary": chart_column}, "SyPPM file", error=SyPPMError, how=HOW_TO_MAP
            )
        missing = [f"{c!r} (for {f})" for f, c in sections.items() if c not in header]
        if missing:
            raise SyPPMError(
                f"{path}: the SyPPM file has no chart: no column {chart_column!r} (for chart_summary), and of the "
                f"four section columns it lacks {', '.join(missing)}; its columns are {', '.join(header)}. "
                + HOW_TO_MAP
            )
    optional = {k: v for k, v in {**SYPPM_OPTIONAL, **explicit_optional}.items() if v in header}
    experts = sorted((n, optional[f]) for f in optional if (n := _expert_number(f)) is not None)

    cases: dict[str, dict[str, Any]] = {}
    blank: list[int] = []
    for number, row in rows:
        where = f"{path}:{number}"

        def cell(column: str, row: Mapping[str, Any] = row, where: str = where) -> str:
            return _cell(row.get(column), where, column)

        values = {field: cell(column) for field, column in required.items()}
        for field in ("id", "message"):
            if not values[field]:
                raise SyPPMError(f"{where}: no value in column {required[field]!r} (field {field})")
        chart = assemble_chart({f: cell(c) for f, c in sections.items()}) if use_sections else cell(chart_column)
        case = case_of_row(
            cases,
            where,
            {"id": values["id"], "message": values["message"], "chart_summary": chart, "references": []},
            error=SyPPMError,
        )
        replies: list[tuple[str, str]] = []
        if values["reference"]:
            who = cell(optional["clinician_id"]) if "clinician_id" in optional else ""
            replies.append((who or "clinician", values["reference"]))
        else:
            blank.append(number)
        replies.extend((f"expert_{n}", text) for n, column in experts if (text := cell(column)))
        references: list[ClinicianReply] = case["references"]
        for who, text in replies:
            if any(r.text == text for r in references):
                continue
            taken = {r.clinician_id for r in references}
            name, suffix = who, 2
            while name in taken:
                name, suffix = f"{who}_{suffix}", suffix + 1
            references.append(ClinicianReply(clinician_id=name, text=text))
    if blank:  # a reply cell left empty is a case without its reference, which exports and scores then skip
        lines = ", ".join(map(str, blank[:5])) + (f" and {len(blank) - 5} more" if len(blank) > 5 else "")
        warnings.warn(
            SyPPMWarning(
                f"{path}: {len(blank)} row(s) with no reply in column {required['reference']!r} (line {lines})"
            ),
            stacklevel=2,
        )
    return validated_cases(cases, path, error=SyPPMError)


class SyPPMWarning(UserWarning):
    """A SyPPM file read with rows that add nothing (an empty reply): counted and printed, never silent."""
