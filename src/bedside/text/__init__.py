"""Text utilities shared by every task: sentence splitting that survives clinical notes, and readability."""

from bedside.text.readability import (
    ReadabilityError,
    ReadabilityUnavailableError,
    TextCounts,
    count_syllables,
    fkgl,
    smog,
    text_counts,
    textstat_smog,
)
from bedside.text.sentences import Sentence, split_sentences

__all__ = [
    "ReadabilityError",
    "ReadabilityUnavailableError",
    "Sentence",
    "TextCounts",
    "count_syllables",
    "fkgl",
    "smog",
    "split_sentences",
    "text_counts",
    "textstat_smog",
]
