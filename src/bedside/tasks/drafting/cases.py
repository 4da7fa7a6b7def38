"""Drafting cases: a patient's portal message, the chart beside it, and clinicians' independent replies.

Readers of one format each (:func:`.readers.read_cases` picks one for a file):

- bedside JSONL (one :class:`PortalMessage` per line, ``references`` a list of clinician replies);
- flat CSV or JSONL with a column mapping (``columns={"message": "patient_text", ...}``): one row per reply;
  rows sharing an id become one case with several references;
- the seed paper's SyPPM release (``layout="syppm"``; see :mod:`bedside.tasks.drafting.syppm`);
- TREC LiveQA 2017 medical test questions (consumer questions with expert reference answers; no chart);
- OncQA stage 2 (GPT-4 drafts and the oncologists' edited versions): pairs for EditJudge, not drafting cases.

A reply may carry the paper's theme-box fields (``theme_fields``: theme key → that part of the reply). When it
does, its themes come from the fields that are filled, not from a classifier, and a reply given only as fields
gets its text by joining them in theme order.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from bedside.inputs import InputError, json_object, nonempty, parse_xml, table_dicts, text_lines
from bedside.records import Record
from bedside.records.chart import render_chart_summary
from bedside.records.errors import RecordWarning
from bedside.records.model import Time
from bedside.records.times import utc
from bedside.tasks.drafting.themes import RESPONSE_THEMES


class ClinicianReply(BaseModel):
    """One clinician's reply, written without seeing any draft."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    clinician_id: str = "clinician"
    text: str = ""
    theme_fields: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _text_or_fields(self) -> ClinicianReply:
        unknown = set(self.theme_fields) - set(RESPONSE_THEMES)
        if unknown:
            raise InputError(f"unknown theme field(s) {sorted(unknown)}; themes: {', '.join(RESPONSE_THEMES)}")
        if not self.text.strip():
            parts = [self.theme_fields[t].strip() for t in RESPONSE_THEMES if self.theme_fields.get(t, "").strip()]
            if not parts:
                raise InputError("a reply needs text or at least one filled theme field")
            object.__setattr__(self, "text", " ".join(parts))
        return self

    @property
    def given_themes(self) -> frozenset[str] | None:
        """The themes the clinician marked in the theme box, or None when the reply has no theme fields."""
        if not self.theme_fields:
            return None
        return frozenset(t for t, text in self.theme_fields.items() if text.strip())


class PortalMessage(BaseModel):
    """A patient's portal message, and what a clinician would see beside it.

    The chart summary is given as text, or rendered from the patient's record as of ``sent_at`` (see
    :func:`with_chart_from`). ``sent_at`` is on the records' clock: UTC, a time without an offset taken as UTC.
    ``references`` are clinicians' real replies, when there are any.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    message: str
    chart_summary: str | None = None
    patient_id: str | None = None
    sent_at: Time | None = None
    references: list[ClinicianReply] = Field(default_factory=list)

    @field_validator("message")
    @classmethod
    def _has_text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the message is blank: there is nothing to reply to")
        return value

    def reference_by(self, clinician_id: str) -> ClinicianReply | None:
        return next((r for r in self.references if r.clinician_id == clinician_id), None)


def with_chart_from(messages: list[PortalMessage], records: list[Record]) -> list[PortalMessage]:
    """Fill each message's missing chart summary from its patient's record, as the chart stood when it was sent."""
    by_id = {record.id: record for record in records}
    filled = []
    early: list[str] = []
    for message in messages:
        if message.chart_summary is None:
            record = by_id.get(message.patient_id or "")
            if record is None or message.sent_at is None:
                raise InputError(
                    f"portal message {message.id}: no chart summary, and no record for patient "
                    f"{message.patient_id!r} with a sent_at time to render one from"
                )
            span = record.span()
            if span is not None and utc(message.sent_at) < span[0]:
                early.append(f"{message.id} ({message.sent_at:%Y-%m-%d}, record from {span[0]:%Y-%m-%d})")
            message = message.model_copy(update={"chart_summary": render_chart_summary(record, message.sent_at)})
        filled.append(message)
    if early:  # often a date typo, or the wrong patient: the draft is written against an empty chart
        shown = ", ".join(early[:3]) + (f" and {len(early) - 3} more" if len(early) > 3 else "")
        warnings.warn(
            RecordWarning(
                f"{len(early)} portal message(s) sent before their patient's record begins, drafted against an "
                f"empty chart: {shown}"
            ),
            stacklevel=2,
        )
    return filled


def load_portal_messages(path: Path) -> list[PortalMessage]:
    """Read bedside's JSONL of portal messages; a bad line is reported with its file and line number."""
    messages = []
    for number, line in text_lines(path):
        data = json_object(line, path=path, line=number)
        try:
            messages.append(PortalMessage.model_validate(data))
        except ValidationError as exc:
            from bedside.config_errors import problems

            said = "; ".join(problems(exc, root=PortalMessage))
            raise InputError(f"not a valid portal message: {said}", path=path, line=number) from None
    _check_unique(messages, path)
    return messages


def _check_unique(messages: list[PortalMessage], path: Path) -> None:
    seen: set[str] = set()
    for message in messages:
        if message.id in seen:
            raise InputError(f"{path}: message id {message.id!r} appears twice")
        seen.add(message.id)


# Flat tables with a column mapping.

FIELDS = ("id", "message", "chart_summary", "patient_id", "sent_at", "reference", "clinician_id")


def case_of_row(
    cases: dict[str, dict[str, Any]], where: str, case: dict[str, Any], *, error: type[InputError] = InputError
) -> dict[str, Any]:
    """The case a table row adds to: rows that share an id are one case (a long layout, one reply a row, reads
    the same as a wide one), so they must agree on the message. ``case`` is the new case should the id be new."""
    found = cases.setdefault(case["id"], case)
    if found["message"] != case["message"]:
        raise error(f"{where}: case {case['id']!r} appears with two different messages")
    return found


def validated_cases(
    cases: Mapping[str, dict[str, Any]], path: Path, *, error: type[InputError] = InputError
) -> list[PortalMessage]:
    """The grouped rows as :class:`PortalMessage` cases, an invalid one named by its id."""
    messages = []
    for case in cases.values():
        try:
            messages.append(PortalMessage.model_validate(case))
        except ValidationError as exc:
            raise error(f"{path}: case {case['id']!r}: {exc}") from None
    return messages


def read_table(path: Path, columns: Mapping[str, str] | None = None) -> list[PortalMessage]:
    """Cases from a flat CSV/JSONL table, one row per reply.

    ``columns`` maps bedside's fields (``id``, ``message``, ``chart_summary``, ``patient_id``, ``sent_at``,
    ``reference``, ``clinician_id``, and ``theme.<key>`` for theme-box fields) to the table's column names;
    fields not mapped are looked up under their own name. ``id`` and ``message`` are required; a row without a
    reference adds none. Rows with the same id must agree on the message.
    """
    mapping = {f: f for f in FIELDS} | dict(columns or {})
    unknown = [f for f in mapping if f not in FIELDS and not f.startswith("theme.")]
    if unknown:
        raise InputError(f"column mapping: unknown field(s) {unknown}; fields: {', '.join(FIELDS)}, theme.<key>")
    cases: dict[str, dict[str, Any]] = {}
    for number, row in table_dicts(path):
        where = f"{path}:{number}"

        def get(field: str, row: Mapping[str, Any] = row) -> Any:
            value = row.get(mapping[field])
            return None if value is None or (isinstance(value, str) and not value.strip()) else value

        for required in ("id", "message"):
            if get(required) is None:
                raise InputError(f"{where}: no value in column {mapping[required]!r} (field {required})")
        case = case_of_row(
            cases,
            where,
            {
                "id": str(get("id")),
                "message": str(get("message")),
                "chart_summary": get("chart_summary"),
                "patient_id": get("patient_id"),
                "sent_at": get("sent_at"),
                "references": [],
            },
        )
        fields = {f.removeprefix("theme."): str(get(f)) for f in mapping if f.startswith("theme.") and get(f)}
        if get("reference") is not None or fields:
            reply = {"text": str(get("reference") or ""), "theme_fields": fields}
            if get("clinician_id") is not None:
                reply["clinician_id"] = str(get("clinician_id"))
            try:
                case["references"].append(ClinicianReply.model_validate(reply))
            except ValidationError as exc:
                raise InputError(f"{where}: {exc}") from None
    return validated_cases(cases, path)


# External sets.


def read_liveqa(path: Path) -> list[PortalMessage]:
    """TREC LiveQA 2017 medical test questions: the consumer's subject and message, the reference answers.

    There is no chart: ``chart_summary`` is the empty string. Reference answers get clinician ids ``A1``,
    ``A2``, ... by position; they are not the same person across questions.
    """
    root = parse_xml(path)
    messages: list[PortalMessage] = []
    for question in root.iter("NLM-QUESTION"):
        qid = question.get("qid") or f"Q{len(messages) + 1}"
        original = question.find("Original-Question")
        subject = (original.findtext("SUBJECT") or "").strip() if original is not None else ""
        body = (original.findtext("MESSAGE") or "").strip() if original is not None else ""
        text = f"{subject}\n{body}".strip() if subject and subject not in body else body or subject
        references = [
            ClinicianReply(clinician_id=f"A{i}", text=" ".join(answer.split()))
            for i, answer in enumerate(
                # The file names the element RefAnswer in some questions and ReferenceAnswer in others.
                (a.findtext("ANSWER") or "" for a in question.findall("ReferenceAnswers/*")),
                start=1,
            )
            if answer.strip()
        ]
        if text:
            messages.append(PortalMessage(id=qid, message=text, chart_summary="", references=references))
    if not messages:
        raise InputError(f"{path}: no NLM-QUESTION elements with a message")
    return messages


class EditPair(BaseModel):
    """A draft and the reply a clinician would send instead: EditJudge's input when no drafting is needed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    draft: str
    reference: str
    label: str | None = None


def read_pairs(path: Path) -> list[EditPair]:
    """JSONL pairs with fields ``id``, ``draft``, ``reference`` (and optional ``label``). A file with no pair, a
    repeated id or a blank reference is an error naming the line: a pair with nothing to compare against scores
    nothing, and a repeated id would be reported twice under one name."""
    pairs: list[EditPair] = []
    seen: dict[str, int] = {}
    for number, row in table_dicts(path):
        try:
            pair = EditPair.model_validate(row)
        except ValidationError as exc:
            raise InputError(f"{path}:{number}: not a draft/reference pair: {exc}") from None
        if not pair.reference.strip():
            raise InputError("the reference is blank: nothing to compare the draft with", path=path, line=number)
        if pair.id in seen:
            raise InputError(f"id {pair.id!r} is also on line {seen[pair.id]}", path=path, line=number)
        seen[pair.id] = number
        pairs.append(pair)
    return nonempty(pairs, path, "draft/reference pairs")


def read_oncqa(path: Path) -> list[EditPair]:
    """OncQA stage 2: GPT-4's draft (``raw_response``), the oncologist's edit (``doc_change``), and the
    oncologist's acceptability label (``q3``)."""
    pairs = []
    for number, row in table_dicts(path):
        try:
            pairs.append(
                EditPair(id=str(row["id"]), draft=row["raw_response"], reference=row["doc_change"], label=row["q3"])
            )
        except (KeyError, TypeError, ValidationError) as exc:
            raise InputError(f"{path}:{number}: not an OncQA stage-2 row: {exc}") from None
    return pairs
