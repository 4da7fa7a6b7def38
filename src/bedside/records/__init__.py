"""The clinical data layer: one typed record, readers into it and renderers out of it."""

from bedside.records.errors import RecordError, RecordWarning
from bedside.records.fhir import bundle_to_record, read_fhir_bundle
from bedside.records.io import detect_format, read_records
from bedside.records.jsonl import iter_records_jsonl, read_records_jsonl, write_records_jsonl
from bedside.records.medalign import read_medalign_xml
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
)

__all__ = [
    "KINDS",
    "Allergy",
    "Code",
    "Component",
    "Condition",
    "Encounter",
    "Immunization",
    "Measurement",
    "Medication",
    "Note",
    "Patient",
    "Procedure",
    "Record",
    "RecordError",
    "RecordWarning",
    "bundle_to_record",
    "detect_format",
    "iter_records_jsonl",
    "read_fhir_bundle",
    "read_medalign_xml",
    "read_records",
    "read_records_jsonl",
    "write_records_jsonl",
]
