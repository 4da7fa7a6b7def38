"""The repetition guard: stop a generation that has fallen into a loop, and say so.

Small local models (the embedded SmolLM2) fall into n-gram loops ("I'm glad to have you here" twenty times) and
then spend every remaining token repeating themselves. The guard watches the text as it streams and stops the
generation once its end is the same run of words repeated; the answer is kept, marked with the finish reason
``repetition`` (counted as cut, like ``length``), never passed on as a normal answer.

Choices (the issue leaves them open): loops are found on whitespace-separated words, not model tokens, so the
rule does not depend on a tokenizer; a loop is a period of 1 to ``max_period`` words repeated ``repeats`` times in
a row at the end of the text, covering at least ``min_words`` words (so "no, no, no" is language, a 12-word
stutter is a loop). Words are compared exactly.
"""

from __future__ import annotations

import re

REPETITION = "repetition"
"""The finish reason of an answer the guard cut."""

CUT_FINISH_REASONS = frozenset({"length", REPETITION})
"""Finish reasons of answers that stopped before the model ended them: kept, scored, and counted as cut."""

_SPACE = re.compile(r"\s+")


class RepetitionGuard:
    """Feed it the streamed text piece by piece; :meth:`feed` says when the text has started looping."""

    def __init__(self, *, max_period: int = 30, repeats: int = 3, min_words: int = 12) -> None:
        if max_period < 1 or repeats < 2 or min_words < 1:
            raise ValueError("RepetitionGuard needs max_period >= 1, repeats >= 2 and min_words >= 1")
        self.max_period = max_period
        self.repeats = repeats
        self.min_words = min_words
        self.fired = False
        self._words: list[str] = []
        self._pending = ""

    def feed(self, piece: str) -> bool:
        """Add ``piece`` to the text; ``True`` once the text loops (and from then on)."""
        if self.fired:
            return True
        *done, self._pending = _SPACE.split(self._pending + piece)  # the last part may be a word still growing
        for word in done:
            if word:
                self._words.append(word)
                if self._loops():
                    self.fired = True
                    return True
        return False

    def _loops(self) -> bool:
        words = self._words
        for period in range(1, self.max_period + 1):
            span = period * max(self.repeats, -(-self.min_words // period))  # enough repeats to cover min_words
            if span > len(words):
                continue
            start = len(words) - span
            if all(words[start + i] == words[start + i % period] for i in range(period, span)):
                return True
        return False
