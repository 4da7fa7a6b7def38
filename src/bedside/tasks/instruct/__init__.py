"""Clinician instructions over long patient records (MedAlign; seed 001).

Cases and their readers are in :mod:`.cases`, :mod:`.labels` and :mod:`.readers`; the taxonomy in
:mod:`.taxonomy` (data: ``data/taxonomy.toml``); instruction-record matching in :mod:`.matching`; prompt budgets in
:mod:`.prompting`; the systems (budgeted, multi-step refinement, RAG extension) in :mod:`.systems`; the analyses
of clinician labels in :mod:`.evaluation`, metrics against clinicians in :mod:`.agreement`, LLM judges in
:mod:`.judging`; the run task in :mod:`.task`.
"""

from bedside.tasks.instruct.cases import Instruction, RecordView, Reference, facts_recall
from bedside.tasks.instruct.labels import ResponseLabel, primary_labels
from bedside.tasks.instruct.readers import (
    InstructDataError,
    read_instructions,
    read_labels_jsonl,
    read_release_gold,
    read_release_reviewed,
    read_relevance,
    read_sample_csv,
)
from bedside.tasks.instruct.taxonomy import TaxonomyError, resolve_category, resolve_subcategory, taxonomy

__all__ = [
    "InstructDataError",
    "Instruction",
    "RecordView",
    "Reference",
    "ResponseLabel",
    "TaxonomyError",
    "facts_recall",
    "primary_labels",
    "read_instructions",
    "read_labels_jsonl",
    "read_release_gold",
    "read_release_reviewed",
    "read_relevance",
    "read_sample_csv",
    "resolve_category",
    "resolve_subcategory",
    "taxonomy",
]
