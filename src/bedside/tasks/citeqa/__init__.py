"""Grounded patient QA with sentence citations (ArchEHR-QA; seed 003).

A patient asks about their hospital stay; the answer is short, in the notes' professional register, and every
sentence cites the numbered note sentences that support it. Cases and their readers are in :mod:`.cases` and
:mod:`.readers`, the submission format in :mod:`.submission`, the official factuality/relevance scoring in
:mod:`.scoring`, and the 1-stage, 2-stage and classifier systems in :mod:`.systems`.
"""

from bedside.tasks.citeqa.cases import Case, NoteSentence, Phrase, Relevance
from bedside.tasks.citeqa.readers import CaseFormatError, read_cases, read_key
from bedside.tasks.citeqa.scoring import CiteQAScores, score_answers
from bedside.tasks.citeqa.submission import (
    AnswerSentence,
    ParsedAnswer,
    SubmissionError,
    format_answer,
    parse_answer,
    read_submission,
    write_submission,
)

__all__ = [
    "AnswerSentence",
    "Case",
    "CaseFormatError",
    "CiteQAScores",
    "NoteSentence",
    "ParsedAnswer",
    "Phrase",
    "Relevance",
    "SubmissionError",
    "format_answer",
    "parse_answer",
    "read_cases",
    "read_key",
    "read_submission",
    "score_answers",
    "write_submission",
]
