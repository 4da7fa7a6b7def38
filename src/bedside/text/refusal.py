"""Does an answer refuse? A cheap flag for answers that decline instead of answering.

A refusal is a real answer, so it is stored and scored like any other (a content-filter stop, by contrast, is an
error: see :class:`bedside.llm.ContentFilterError`). Scored by a quality metric alone it is a silent zero; the
``refusal`` scorer puts a 1 next to it so a report can count refusals and a reader can filter them out.

The patterns are ours and deliberately narrow: they look only at the opening of the answer (where models put a
refusal) for a first-person statement of inability or an apology followed by one, so an answer that merely
mentions that something "cannot" be done, or apologises for a delay, is not flagged.
"""

from __future__ import annotations

import re

OPENING_CHARS = 240
"""How much of the answer's start is read: a refusal comes first, and reading the whole text would flag answers
that quote one."""

_INABILITY = (
    r"(?:can ?not|can't|won't|will not|am (?:not able|unable) to|am not (?:allowed|permitted) to|must decline to)"
)
_ACT = r"(?:help|assist|provide|answer|comply|do (?:that|this)|share|give|respond|continue|discuss|fulfil)"
_PATTERNS = (
    # "I'm sorry, but I can't help with that."  /  "Sorry, I am unable to provide ..."
    re.compile(rf"^\W*(?:i'm |i am )?(?:so |very |truly )?sorry\b[^.!?\n]{{0,60}}?\b(?:i|we) {_INABILITY}\b"),
    # "I can't assist with this request."  (at the very start)
    re.compile(rf"^\W*(?:unfortunately,? )?(?:i|we) {_INABILITY} {_ACT}\b"),
    # "As an AI language model, I cannot ..."
    re.compile(rf"^\W*as an ai(?: language model| assistant)?,? (?:i|we) {_INABILITY}\b"),
)


def is_refusal(text: str) -> bool:
    """Whether ``text`` opens by declining to answer (an apology with a first-person "can't", or a bare one)."""
    opening = text[:OPENING_CHARS].strip().lower().replace("\u2019", "'")
    return any(pattern.search(opening) for pattern in _PATTERNS)
