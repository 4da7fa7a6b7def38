"""Scoring outputs against references: lexical, semantic, concept, readability, exam and checklist metrics.

Each metric is a small function with its definition in its module's docstring; :data:`CATALOG` lists them all
with whether each can run on this machine (``bedside metrics list``). Scores keep the scale of the library
that defines them (BLEU 0–100, ROUGE 0–1) and names say which model or dictionary computed them.
"""

from bedside.metrics.catalog import CATALOG, MetricInfo, find_metric
from bedside.metrics.checklist import ChecklistResult, FieldResult, checklist_accuracy
from bedside.metrics.concepts import (
    Concept,
    ConceptExtractor,
    ConceptScore,
    MeshExtractor,
    QuickUMLSExtractor,
    TermListExtractor,
    concept_f1,
    mean_concept_f1,
)
from bedside.metrics.exam import ExamQuestion, ExamResult, exam_accuracy, parse_choice
from bedside.metrics.lexical import (
    ROUGE_TYPES,
    MetricUnavailableError,
    corpus_bleu,
    corpus_chrf,
    mean_rouge,
    meteor_unavailable,
    sentence_bleu,
    sentence_chrf,
    sentence_google_bleu,
    sentence_meteor,
    sentence_rouge,
)
from bedside.metrics.sari import corpus_sari, sentence_sari
from bedside.metrics.semantic import PRF, BertScorer, minilm_bertscore, semantic_similarity
from bedside.text.readability import fkgl, smog

__all__ = [
    "CATALOG",
    "PRF",
    "ROUGE_TYPES",
    "BertScorer",
    "ChecklistResult",
    "Concept",
    "ConceptExtractor",
    "ConceptScore",
    "ExamQuestion",
    "ExamResult",
    "FieldResult",
    "MeshExtractor",
    "MetricInfo",
    "MetricUnavailableError",
    "QuickUMLSExtractor",
    "TermListExtractor",
    "checklist_accuracy",
    "concept_f1",
    "corpus_bleu",
    "corpus_chrf",
    "corpus_sari",
    "exam_accuracy",
    "find_metric",
    "fkgl",
    "mean_concept_f1",
    "mean_rouge",
    "meteor_unavailable",
    "minilm_bertscore",
    "parse_choice",
    "semantic_similarity",
    "sentence_bleu",
    "sentence_chrf",
    "sentence_google_bleu",
    "sentence_meteor",
    "sentence_rouge",
    "sentence_sari",
    "smog",
]
