"""FHIR R4 bundles (as Synthea writes them) into a :class:`~bedside.records.model.Record`.

What is read: Patient, Encounter, Condition, MedicationRequest (with ``medicationReference`` resolved through
the bundle's Medication resources), MedicationAdministration, MedicationStatement, Observation, Procedure,
AllergyIntolerance, Immunization, and notes from DocumentReference and DiagnosticReport base64 attachments.
Synthea writes each note twice (a DocumentReference whose identifier names a DiagnosticReport carrying the same
text); the DiagnosticReport copy is dropped, so a note is counted once.

Billing and administrative resources (Claim, ExplanationOfBenefit, Organization, ...) are skipped silently; any
other resource type is skipped with a :class:`RecordWarning` naming the file, the type and how many. Notes
whose text is empty are skipped with a warning too, and so is every resource the source marks
``entered-in-error`` (its ``status``, or for Condition and AllergyIntolerance its ``verificationStatus``): FHIR
defines such a resource as one that should not have existed, so no view of the record may show it. Other
statuses are kept on the items (``Medication.status``, ``Condition.status``/``verification``,
``Allergy.status``/``verification``) for the views to read (:mod:`bedside.records.chart`).
A missing required field, a time that is not a time or an attachment that does not decode is a
:class:`RecordError` naming the file, the entry and the field.
"""

from __future__ import annotations

import base64
import binascii
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from bedside.inputs import decode, json_type, loads_json
from bedside.records.errors import NoPatientError, RecordError, RecordWarning, read_bounded
from bedside.records.model import (
    KINDS,
    Allergy,
    Code,
    Component,
    Condition,
    Encounter,
    Immunization,
    Measurement,
    Medication,
    Note,
    Patient,
    Procedure,
    Record,
    Setting,
)
from bedside.records.times import parse_fhir_date, parse_fhir_time

DEFAULT_MAX_BYTES = 256 * 1024 * 1024

SKIPPED_QUIETLY = frozenset(
    {
        "Claim",
        "ExplanationOfBenefit",
        "Coverage",
        "Organization",
        "Practitioner",
        "PractitionerRole",
        "Location",
        "Provenance",
        "CareTeam",
        "CarePlan",
        "Device",
        "ImagingStudy",
        "SupplyDelivery",
        "Medication",  # read only to resolve medicationReference
    }
)

VOCABULARIES = {
    "http://snomed.info/sct": "SNOMED",
    "http://loinc.org": "LOINC",
    "http://www.nlm.nih.gov/research/umls/rxnorm": "RxNorm",
    "http://hl7.org/fhir/sid/cvx": "CVX",
    "http://hl7.org/fhir/sid/icd-10-cm": "ICD10CM",
    "http://hl7.org/fhir/sid/icd-10": "ICD10",
    "http://hl7.org/fhir/sid/icd-9-cm": "ICD9CM",
    "http://www.ama-assn.org/go/cpt": "CPT",
    "http://unitsofmeasure.org": "UCUM",
    "http://terminology.hl7.org/CodeSystem/v3-ActCode": "ActCode",
}


# resource type -> (Medication.source, encounter reference, start time fields, dosage field)
_MEDICATION_FIELDS: dict[str, tuple[Literal["order", "administration", "exposure"], str, tuple[str, ...], str]] = {
    "MedicationRequest": ("order", "encounter.reference", ("authoredOn",), "dosageInstruction"),
    "MedicationAdministration": (
        "administration",
        "context.reference",
        ("effectiveDateTime", "effectivePeriod.start"),
        "dosage",
    ),
    "MedicationStatement": (
        "exposure",
        "context.reference",
        ("effectiveDateTime", "effectivePeriod.start", "dateAsserted"),
        "dosage",
    ),
}


def vocabulary(system: str | None) -> str:
    """A short vocabulary name for a FHIR code system URI (unknown URIs keep their last path segment)."""
    if not system:
        return "UNKNOWN"
    if system in VOCABULARIES:
        return VOCABULARIES[system]
    return system.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1] or system


def read_fhir_bundle(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Record:
    """Read one FHIR R4 bundle file holding one patient."""
    path = Path(path)
    text = decode(read_bounded(path, max_bytes), path=path, error=RecordError)
    for nul in ("\x00", "\\u0000"):  # as the JSONL reader: binary data, or text no prompt or store should carry
        at = text.find(nul)
        if at >= 0:
            raise RecordError(
                "holds a NUL character (\\u0000): not text a record can hold",
                path=path,
                where=f"line {text.count(chr(10), 0, at) + 1}",
            )
    bundle = loads_json(text, path=path, error=RecordError)
    return bundle_to_record(bundle, path=path)


def bundle_to_record(bundle: Any, *, path: str | Path | None = None) -> Record:
    """Turn a decoded bundle into a record; ``path`` only names the source in errors."""
    if not isinstance(bundle, dict) or bundle.get("resourceType") != "Bundle":
        found = bundle.get("resourceType") if isinstance(bundle, dict) else type(bundle).__name__
        raise NoPatientError(f"expected a FHIR Bundle, found {found!r}", path=path, where="resourceType")
    entries = bundle.get("entry")
    if not isinstance(entries, list):
        raise RecordError("a Bundle needs an 'entry' list", path=path, where="entry")
    return _BundleReader(entries, path).read()


class _Resource:
    """One resource with accessors that raise a :class:`RecordError` naming the entry and field."""

    def __init__(self, data: dict[str, Any], index: int, path: str | Path | None, full_url: Any = None) -> None:
        self.data = data
        self.full_url = full_url if isinstance(full_url, str) else None
        self.type = str(data.get("resourceType"))
        self.id = str(data.get("id") or f"entry-{index}")
        self._where = f"entry[{index}] {self.type}/{self.id}"
        self._path = path

    def error(self, field: str, message: str) -> RecordError:
        return RecordError(message, path=self._path, where=f"{self._where} field {field!r}")

    @contextmanager
    def guard(self) -> Iterator[None]:
        """A shape the reader did not expect becomes an error naming this entry, not a traceback."""
        try:
            yield
        except RecordError:
            raise
        except (AttributeError, KeyError, TypeError, ValueError, OverflowError, RecursionError) as exc:
            problem = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else f"{type(exc).__name__}: {exc}"
            raise RecordError(f"malformed {self.type}: {problem}", path=self._path, where=self._where) from None

    def run(self, handler: Callable[[_Resource, Record], None], record: Record) -> None:
        with self.guard():
            handler(self, record)

    def get(self, dotted: str) -> Any:
        value: Any = self.data
        for part in dotted.split("."):
            if isinstance(value, list):
                value = value[0] if value else None
            if not isinstance(value, dict):
                return None
            value = value.get(part)
        return value

    def time(self, *fields: str) -> datetime | None:
        """The first of ``fields`` that is present, read as a time."""
        for field in fields:
            value = self.get(field)
            if value is None:
                continue
            if not isinstance(value, str):
                raise self.error(field, f"expected a date/time string, found {type(value).__name__}")
            try:
                return parse_fhir_time(value)
            except ValueError as exc:
                raise self.error(field, _time_problem(value, exc, "a FHIR date/time")) from None
        return None

    def codes(self, field: str, *, required: bool = False) -> tuple[list[Code], str]:
        concept = self.get(field)
        if isinstance(concept, list):  # 0..* CodeableConcepts (Encounter.type): the first one names it
            concept = concept[0] if concept else None
        if concept is None:
            if required:
                raise self.error(field, "required field is missing")
            return [], ""
        if not isinstance(concept, dict):
            raise self.error(field, f"expected a CodeableConcept object, found {type(concept).__name__}")
        return _codeable(concept)

    def reference_id(self, field: str) -> str | None:
        reference = self.get(field)
        return _reference_id(reference) if isinstance(reference, str) else None


def _time_problem(value: str, exc: ValueError, kind: str) -> str:
    """``'x' is not KIND (cause)`` or ``'x' is out of range (...)``, without the value twice."""
    reason = str(getattr(exc, "reason", exc))
    if reason.startswith(repr(value)):
        return reason.replace("is not a time", f"is not {kind}", 1)
    return f"{value!r} is not {kind} ({reason})"


def _codeable(concept: dict[str, Any]) -> tuple[list[Code], str]:
    codes = [
        Code(system=vocabulary(c.get("system")), code=str(c["code"]), display=c.get("display"))
        for c in concept.get("coding") or []
        if isinstance(c, dict) and c.get("code") is not None
    ]
    text = concept.get("text") or next((c.display for c in codes if c.display), "")
    return codes, str(text)


def _reference_id(reference: str) -> str:
    return reference.removeprefix("urn:uuid:").rsplit("/", 1)[-1]


def _value(data: dict[str, Any]) -> tuple[float | str | None, str | None]:
    if "valueQuantity" in data:
        quantity = data["valueQuantity"] or {}
        value = quantity.get("value")
        return (float(value) if isinstance(value, int | float) else value), quantity.get("unit") or quantity.get("code")
    if "valueCodeableConcept" in data:
        return _codeable(data["valueCodeableConcept"] or {})[1] or None, None
    for key in ("valueString", "valueDateTime", "valueTime"):
        if key in data:
            return str(data[key]), None
    for key in ("valueInteger", "valueDecimal"):
        if key in data:
            return float(data[key]), None
    if "valueBoolean" in data:
        return ("true" if data["valueBoolean"] else "false"), None
    return None, None


class _BundleReader:
    def __init__(self, entries: list[Any], path: str | Path | None) -> None:
        self.path = path
        self.resources: list[_Resource] = []
        self.encounter_kinds: dict[str, str] = {}
        self.empty_notes = 0
        self.in_error: Counter[str] = Counter()
        self.withdrawn: list[_Resource] = []  # entered in error: not read, but their links still count
        for index, entry in enumerate(entries):
            resource = entry.get("resource") if isinstance(entry, dict) else None
            if not isinstance(resource, dict) or "resourceType" not in resource:
                raise RecordError("entry has no resource with a resourceType", path=path, where=f"entry[{index}]")
            self.resources.append(_Resource(resource, index, path, entry.get("fullUrl")))
        _check_unique_ids(self.resources, path)
        self.notes_without_data = 0
        self.medications_by_id = {r.id: r for r in self.resources if r.type == "Medication"}

    def read(self) -> Record:
        patients = [r for r in self.resources if r.type == "Patient"]
        if not patients:
            raise NoPatientError("expected exactly one Patient resource, found 0", path=self.path, where="entry")
        if len(patients) != 1:
            raise RecordError(
                f"expected exactly one Patient resource, found {len(patients)}", path=self.path, where="entry"
            )
        with patients[0].guard():
            patient = self._patient(patients[0])
        record = Record(patient=patient, source=str(self.path) if self.path else None)
        handlers: dict[str, Callable[[_Resource, Record], None]] = {
            "Encounter": self._encounter,
            "Condition": self._condition,
            "MedicationRequest": self._medication,
            "MedicationAdministration": self._medication,
            "MedicationStatement": self._medication,
            "Observation": self._observation,
            "Procedure": self._procedure,
            "AllergyIntolerance": self._allergy,
            "Immunization": self._immunization,
            "DocumentReference": self._document_reference,
            "DiagnosticReport": _later,  # notes read in a second pass, once DocumentReferences are known
            "Patient": _later,
        }
        kept = []
        for resource in self.resources:
            if resource.type != "Patient" and _entered_in_error(resource):
                self.in_error[resource.type] += 1
                self.withdrawn.append(resource)
            else:
                kept.append(resource)
        self.resources = kept
        for resource in self.resources:
            resource.run(_check_periods, record)
        for resource in self.resources:  # encounters first: medications read their encounter's class
            if resource.type == "Encounter":
                resource.run(self._encounter, record)
        unknown: Counter[str] = Counter()
        elsewhere: Counter[str] = Counter()
        for resource in self.resources:
            if resource.type == "Encounter":
                continue
            if _about_someone_else(resource, patients[0]):
                elsewhere[resource.type] += 1
                continue
            handler = handlers.get(resource.type)
            if handler is not None:
                resource.run(handler, record)
            elif resource.type not in SKIPPED_QUIETLY:
                unknown[resource.type] += 1
        for kind, count in sorted(self.in_error.items()):
            warnings.warn(
                RecordWarning(f"{self.path or 'bundle'}: skipped {count} {kind} resource(s) marked entered-in-error"),
                stacklevel=4,
            )
        self._diagnostic_report_notes(record)
        if self.empty_notes:
            warnings.warn(
                RecordWarning(f"{self.path or 'bundle'}: skipped {self.empty_notes} empty note(s)"), stacklevel=4
            )
        _warn_consistency(record, self.notes_without_data, self.path)
        for kind, count in sorted(elsewhere.items()):
            warnings.warn(
                RecordWarning(
                    f"{self.path or 'bundle'}: skipped {count} {kind} resource(s) about another patient (their "
                    f"subject is not Patient/{patients[0].id})"
                ),
                stacklevel=4,
            )
        for kind, count in sorted(unknown.items()):
            warnings.warn(
                RecordWarning(f"{self.path or 'bundle'}: skipped {count} {kind} resource(s): not modelled"),
                stacklevel=4,
            )
        return record

    # -------------------------------------------------------------- resources

    def _patient(self, r: _Resource) -> Patient:
        birth = r.get("birthDate")
        if birth is not None and not isinstance(birth, str):  # 123 or true: not a date, and not to be dropped
            raise r.error("birthDate", f"expected a date as text (YYYY-MM-DD), not {json_type(birth)} {birth!r}")
        try:
            birth_date = parse_fhir_date(birth) if birth is not None else None
        except ValueError as exc:
            raise r.error("birthDate", _time_problem(str(birth), exc, "a date")) from None
        race = ethnicity = sex = None
        for extension in r.data.get("extension") or []:
            url = str(extension.get("url", ""))
            if url.endswith("us-core-race") or url.endswith("us-core-ethnicity"):
                text = next(
                    (e.get("valueString") for e in extension.get("extension") or [] if e.get("url") == "text"), None
                )
                if url.endswith("race"):
                    race = text
                else:
                    ethnicity = text
            elif url.endswith("us-core-birthsex"):
                sex = extension.get("valueCode")
        deceased_at = r.time("deceasedDateTime")
        return Patient(
            id=r.id,
            birth_date=birth_date,
            sex=sex,
            gender=_code_text(r, "gender"),
            race=race,
            ethnicity=ethnicity,
            deceased=deceased_at is not None or bool(r.get("deceasedBoolean")),
            deceased_at=deceased_at,
        )

    def _encounter(self, r: _Resource, record: Record) -> None:
        codes, text = r.codes("type")
        reasons = [code for concept in r.data.get("reasonCode") or [] for code in _codeable(concept)[0]]
        kind = r.get("class.code")
        if kind:
            self.encounter_kinds[r.id] = kind
        record.encounters.append(
            Encounter(
                id=r.id,
                codes=codes,
                text=text,
                kind=kind,
                start=r.time("period.start"),
                end=r.time("period.end"),
                location=r.get("location.location.display") or r.get("serviceProvider.display"),
                reasons=reasons,
            )
        )

    def _condition(self, r: _Resource, record: Record) -> None:
        codes, text = r.codes("code", required=True)
        record.conditions.append(
            Condition(
                id=r.id,
                codes=codes,
                text=text,
                encounter_id=r.reference_id("encounter.reference"),
                onset=r.time("onsetDateTime", "onsetPeriod.start", "recordedDate"),
                abatement=r.time("abatementDateTime", "abatementPeriod.end"),
                status=_code_text(r, "clinicalStatus.coding.code"),
                verification=_code_text(r, "verificationStatus.coding.code"),
            )
        )

    def _medication_codes(self, r: _Resource) -> tuple[list[Code], str]:
        if r.get("medicationCodeableConcept") is not None:
            return r.codes("medicationCodeableConcept", required=True)
        reference = r.get("medicationReference.reference")
        if not isinstance(reference, str):
            raise r.error("medication[x]", "neither medicationCodeableConcept nor medicationReference is given")
        target = self.medications_by_id.get(_reference_id(reference))
        if target is None:
            raise r.error("medicationReference", f"{reference!r} names no Medication in this bundle")
        return target.codes("code", required=True)

    def _setting(self, r: _Resource, encounter_id: str | None) -> Setting | None:
        for category in r.data.get("category") or []:
            for coding in category.get("coding") or []:
                if coding.get("code") == "inpatient":
                    return "inpatient"
                if coding.get("code") in ("community", "outpatient", "discharge"):
                    return "outpatient"
        kind = self.encounter_kinds.get(encounter_id or "")
        if kind is None:
            return None
        return "inpatient" if kind in ("IMP", "ACUTE", "NONAC", "SS") else "outpatient"

    def _medication(self, r: _Resource, record: Record) -> None:
        """MedicationRequest, MedicationAdministration and MedicationStatement: same item, fields in other places."""
        source, encounter_field, start_fields, dosage_field = _MEDICATION_FIELDS[r.type]
        codes, text = self._medication_codes(r)
        encounter_id = r.reference_id(encounter_field)
        if source == "administration":  # given in hospital, a single dose quantity
            dose = r.get("dosage.dose")
            dose_text = f"{dose.get('value')} {dose.get('unit', '')}".strip() if isinstance(dose, dict) else None
            setting: Setting | None = "inpatient"
            end = r.time("effectivePeriod.end")
        else:
            dose_text = _dose_text(r.data.get(dosage_field))
            setting = self._setting(r, encounter_id)
            end = r.time(
                "dosageInstruction.timing.repeat.boundsPeriod.end" if source == "order" else "effectivePeriod.end"
            )
        record.medications.append(
            Medication(
                id=r.id,
                codes=codes,
                text=text,
                encounter_id=encounter_id,
                start=r.time(*start_fields),
                end=end,
                dose=dose_text,
                status=_code_text(r, "status"),
                setting=setting,
                source=source,
            )
        )

    def _observation(self, r: _Resource, record: Record) -> None:
        codes, text = r.codes("code", required=True)
        value, unit = _value(r.data)
        components = []
        for index, component in enumerate(r.data.get("component") or []):
            if not isinstance(component, dict) or not isinstance(component.get("code"), dict):
                raise r.error(f"component[{index}].code", "required field is missing")
            c_codes, c_text = _codeable(component["code"])
            c_value, c_unit = _value(component)
            components.append(Component(codes=c_codes, text=c_text, value=c_value, unit=c_unit))
        record.measurements.append(
            Measurement(
                id=r.id,
                codes=codes,
                text=text,
                encounter_id=r.reference_id("encounter.reference"),
                time=r.time("effectiveDateTime", "effectivePeriod.start", "effectiveInstant", "issued"),
                value=value,
                unit=unit,
                category=r.get("category.coding.code"),
                components=components,
            )
        )

    def _procedure(self, r: _Resource, record: Record) -> None:
        codes, text = r.codes("code", required=True)
        start = r.time("performedDateTime", "performedPeriod.start")
        record.procedures.append(
            Procedure(
                id=r.id,
                codes=codes,
                text=text,
                encounter_id=r.reference_id("encounter.reference"),
                start=start,
                end=r.time("performedPeriod.end") or start,
            )
        )

    def _allergy(self, r: _Resource, record: Record) -> None:
        codes, text = r.codes("code", required=True)
        reactions = [
            _codeable(manifestation)[1]
            for reaction in r.data.get("reaction") or []
            for manifestation in reaction.get("manifestation") or []
        ]
        record.allergies.append(
            Allergy(
                id=r.id,
                codes=codes,
                text=text,
                encounter_id=r.reference_id("encounter.reference"),
                recorded=r.time("recordedDate", "onsetDateTime"),
                criticality=_code_text(r, "criticality"),
                reactions=[reaction for reaction in reactions if reaction],
                category=", ".join(_codes_text(r, "category")) or None,
                status=_code_text(r, "clinicalStatus.coding.code"),
                verification=_code_text(r, "verificationStatus.coding.code"),
            )
        )

    def _immunization(self, r: _Resource, record: Record) -> None:
        codes, text = r.codes("vaccineCode", required=True)
        record.immunizations.append(
            Immunization(
                id=r.id,
                codes=codes,
                text=text,
                encounter_id=r.reference_id("encounter.reference"),
                time=r.time("occurrenceDateTime", "recorded"),
            )
        )

    def _document_reference(self, r: _Resource, record: Record) -> None:
        text = self._attachment_text(r, r.data.get("content") or [], "content", nested="attachment")
        if text is None:
            return
        if not text.strip():
            self.empty_notes += 1
            return
        _, note_type = r.codes("type")
        record.notes.append(
            Note(
                id=r.id,
                type=note_type or "note",
                time=r.time("date", "context.period.start"),
                text=text,
                encounter_id=r.reference_id("context.encounter.reference"),
                author=r.get("author.display"),
            )
        )

    def _diagnostic_report_notes(self, record: Record) -> None:
        linked = {  # a withdrawn DocumentReference still names its DiagnosticReport copy, which must not resurface
            _reference_id(str(identifier.get("value", "")))
            for r in [*self.resources, *self.withdrawn]
            if r.type == "DocumentReference"
            for identifier in r.data.get("identifier") or []
            if isinstance(identifier, dict)
        }
        for r in self.resources:
            if r.type != "DiagnosticReport" or r.id in linked or not r.data.get("presentedForm"):
                continue
            text = self._attachment_text(r, r.data["presentedForm"], "presentedForm", nested=None)
            if text is None:
                continue
            if not text.strip():
                self.empty_notes += 1
                continue
            _, note_type = r.codes("code")
            record.notes.append(
                Note(
                    id=r.id,
                    type=note_type or "report",
                    time=r.time("effectiveDateTime", "effectivePeriod.start", "issued"),
                    text=text,
                    encounter_id=r.reference_id("encounter.reference"),
                    author=r.get("performer.display"),
                )
            )

    def _attachment_text(self, r: _Resource, items: list[Any], field: str, *, nested: str | None) -> str | None:
        """The decoded text of the first plain-text attachment, or None when there is none to read (counted in
        ``notes_without_data`` when an attachment had no inline ``data``, e.g. only a ``url``, which is not fetched)."""
        if not isinstance(items, list):
            raise r.error(field, f"expected a list of attachments, found {type(items).__name__}")
        lacking = 0
        for index, item in enumerate(items):
            attachment = item.get(nested) if nested and isinstance(item, dict) else item
            if not isinstance(attachment, dict) or "data" not in attachment:
                lacking += 1
                continue
            content_type = str(attachment.get("contentType") or "text/plain")
            if not content_type.startswith("text/"):
                continue
            where = f"{field}[{index}]{'.' + nested if nested else ''}.data"
            charset = "utf-8"
            for parameter in content_type.split(";")[1:]:
                key, _, value = parameter.strip().partition("=")
                if key.lower() == "charset" and value:
                    charset = value.strip('"')
            try:
                return base64.b64decode(str(attachment["data"]), validate=True).decode(charset)
            except (binascii.Error, ValueError):
                raise r.error(where, f"attachment is not base64-encoded {charset} text") from None
            except LookupError:
                raise r.error(f"{field}[{index}].contentType", f"unknown charset {charset!r}") from None
        self.notes_without_data += bool(lacking)
        return None


_REQUIRED_CODES: dict[tuple[str, str], frozenset[str]] = {
    ("Patient", "gender"): frozenset({"male", "female", "other", "unknown"}),
    ("MedicationRequest", "status"): frozenset(
        {"active", "on-hold", "cancelled", "completed", "entered-in-error", "stopped", "draft", "unknown"}
    ),
    ("MedicationStatement", "status"): frozenset(
        {"active", "completed", "entered-in-error", "intended", "stopped", "on-hold", "unknown", "not-taken"}
    ),
    ("MedicationAdministration", "status"): frozenset(
        {"in-progress", "not-done", "on-hold", "completed", "entered-in-error", "stopped", "unknown"}
    ),
}
"""Codes FHIR R4 binds as *required*: any other value is not a FHIR resource. A typo ("actve") would otherwise
be read as a status the chart does not know, and an active medicine would vanish from the active list."""


def _code_text(r: _Resource, field: str) -> str | None:
    """A FHIR ``code`` field (a status, a category) as text; any other JSON type, or a value outside a required
    binding (:data:`_REQUIRED_CODES`), is an error naming the field."""
    value = r.get(field)
    if value is None:
        return value
    if not isinstance(value, str):
        raise r.error(field, f"expected a code string, found {type(value).__name__}")
    allowed = _REQUIRED_CODES.get((r.type, field))
    if allowed is not None and value not in allowed:
        raise r.error(field, f"{value!r} is not a {r.type}.{field} code (one of {', '.join(sorted(allowed))})")
    return value


def _codes_text(r: _Resource, field: str) -> list[str]:
    """A FHIR ``code`` field of cardinality 0..* (AllergyIntolerance.category) as a list of text."""
    value = r.data.get(field)
    values = value if isinstance(value, list) else [] if value is None else [value]
    if not all(isinstance(item, str) for item in values):
        raise r.error(field, "expected a list of code strings")
    return values


def _entered_in_error(r: _Resource) -> bool:
    """The source withdrew this resource: its status (or verification status) is ``entered-in-error``."""
    return "entered-in-error" in (r.get("status"), r.get("verificationStatus.coding.code"))


# Consistency checks (issue 37): a bundle that contradicts itself is an error naming the entry; one whose
# references point outside it is usable, and read with a warning that counts them.

PERIOD_FIELDS = ("period", "effectivePeriod", "performedPeriod", "context.period", "onsetPeriod", "abatementPeriod")


def _check_unique_ids(resources: list[_Resource], path: str | Path | None) -> None:
    """Two resources of one type with one id make every reference to that id ambiguous."""
    first: dict[tuple[str, str], int] = {}
    for index, resource in enumerate(resources):
        if "id" not in resource.data:
            continue
        seen = first.setdefault((resource.type, resource.id), index)
        if seen != index:
            raise RecordError(
                f"{resource.type}/{resource.id} appears twice (also entry[{seen}])", path=path, where=f"entry[{index}]"
            )


def _check_periods(r: _Resource, record: Record) -> None:
    """A period that ends before it starts is an error naming the field (it would sort and age wrongly)."""
    for field in PERIOD_FIELDS:
        if not isinstance(r.get(field), dict):
            continue
        start, end = r.time(f"{field}.start"), r.time(f"{field}.end")
        if start is None or end is None:
            continue
        try:
            backwards = end < start
        except TypeError:  # a date-time with a zone against one without: no order to check
            continue
        if backwards:
            raise r.error(f"{field}.end", f"the period ends ({end.isoformat()}) before it starts ({start.isoformat()})")


def _warn_consistency(record: Record, notes_without_data: int, path: str | Path | None) -> None:
    where = path or "bundle"
    if notes_without_data:
        warnings.warn(
            RecordWarning(
                f"{where}: skipped {notes_without_data} note(s) whose attachment has no inline data "
                "(an attachment given only by url is not fetched)"
            ),
            stacklevel=5,
        )
    encounters = {e.id for e in record.encounters}
    items = [item for kind in KINDS if kind != "encounters" for item in getattr(record, kind)]
    dangling = sum(1 for item in items if getattr(item, "encounter_id", None) not in (None, *encounters))
    if dangling:
        warnings.warn(
            RecordWarning(f"{where}: {dangling} item(s) refer to an encounter that is not in the bundle"),
            stacklevel=5,
        )


def _about_someone_else(resource: _Resource, patient: _Resource) -> bool:
    """The resource names a subject (or patient) that is not the bundle's patient: a reference to another
    Patient is not this record's, whatever else it says. A patient without an id cannot be told apart."""
    if "id" not in patient.data and patient.full_url is None:
        return False
    reference = resource.get("subject.reference") or resource.get("patient.reference")
    if not isinstance(reference, str) or not reference:
        return False
    if reference in (f"Patient/{patient.id}", patient.full_url, f"urn:uuid:{patient.id}"):
        return False
    kind, _, _ = reference.rpartition("/")
    return (not kind or kind.endswith("Patient")) and re.split(r"[/:]", reference)[-1] != patient.id


def _later(resource: _Resource, record: Record) -> None:
    """Resources read outside the main pass."""


def _dose_text(dosages: Any) -> str | None:
    """Dose instructions as one line: the source's text, else built from its structured dose and timing."""
    if not isinstance(dosages, list) or not dosages or not isinstance(dosages[0], dict):
        return None
    dosage = dosages[0]
    if dosage.get("text"):
        return str(dosage["text"])
    parts = []
    dose = (dosage.get("doseAndRate") or [{}])[0].get("doseQuantity") or {}
    if dose.get("value") is not None:
        parts.append(
            f"{dose['value']:g} {dose.get('unit', '')}".strip() if isinstance(dose["value"], int | float) else ""
        )
    repeat = (dosage.get("timing") or {}).get("repeat") or {}
    if repeat.get("frequency") is not None and repeat.get("period") is not None:
        parts.append(f"{repeat['frequency']} time(s) per {repeat['period']:g} {repeat.get('periodUnit', '')}".strip())
    if dosage.get("asNeededBoolean"):
        parts.append("as needed")
    text = ", ".join(p for p in parts if p)
    return text or None
