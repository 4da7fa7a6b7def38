"""Text utilities shared by every task: sentence splitting that survives clinical notes, and readability."""

from bedside.text.readability import ReadabilityError, TextCounts, count_syllables, fkgl, smog, text_counts
from bedside.text.sentences import Sentence, split_sentences

__all__ = [
    "ReadabilityError",
    "Sentence",
    "TextCounts",
    "count_syllables",
    "fkgl",
    "smog",
    "split_sentences",
    "text_counts",
]
