"""Sentence splitting for clinical text, with character offsets into the original string.

It drives both EditJudge (sentences of a reference reply) and citation ids (numbered note sentences), so its
rules are explicit and tested rather than learned. A boundary is placed:

1. at a blank line, always;
2. after ``.``, ``!``, ``?`` or an ellipsis (closing quotes and brackets may follow) when whitespace and then an
   upper-case letter, digit, opening quote/bracket or the end of the text follow — unless the word ending in the
   period is one that never ends a sentence: titles (``Dr.``, ``Mrs.``), ``e.g.``, ``i.e.``, ``vs.``, ``approx.``,
   ``ref.``, ``No.``, ``y.o.``, or a single capital initial (``J. Smith``; but ``98.6 F.`` after a number ends
   one). A lower-case next word never starts a sentence (``b.i.d. with meals``, ``Pt. is stable``), and
   decimals, vitals and ratios (``98.6``, ``132/84``) have no whitespace after the period, so never split;
3. at a line break when the next line starts a list item (``-``, ``*``, ``•``, ``1.``, ``2)``, ``a.``) or when
   the line ends without a continuation (not in a comma, hyphen, ``and``/``or``/``of``/``to``/..., or a
   never-ending abbreviation) and the next line starts with an upper-case letter or digit — notes often put one
   statement per line without a period;
4. never inside a list marker: the ``1.`` of ``1. Stop lisinopril.`` is not a sentence end.

A short heading line ending in ``:`` (at most five words, like ``Plan:``) is joined to what follows rather than
becoming a sentence of its own. Sentences are returned stripped, with their offsets, and empty ones dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NEVER_END = frozenset(
    {
        "dr", "mr", "mrs", "ms", "prof", "st", "sr", "jr", "mt", "rev", "gen", "capt",
        "e.g", "i.e", "eg", "ie", "vs", "v", "viz", "cf", "approx", "appt", "ref", "no", "nos", "fig",
        "y.o", "yo", "yr.o", "inc", "ca", "c",
    }
)  # fmt: skip
"""Words that, followed by a period, do not end a sentence even before a capitalised word (lower-case keys)."""

CONTINUATION_WORDS = frozenset(
    {"and", "or", "of", "to", "the", "a", "an", "with", "for", "in", "on", "at", "by", "from", "but", "as", "per"}
)

_BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")
_TERMINAL = re.compile(r"(?:\.{3}|…|[.!?]+)[\"'”’)\]]*")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*|\d+)$")
_LIST_MARKER = re.compile(r"[ \t]*(?:[-*•‣◦]|\d{1,3}[.)]|[a-zA-Z][.)])\s")
_NEXT_START = re.compile(r"\s+([\"'“‘(\[]?[A-Z0-9])")
_HEADING = re.compile(r"^[^\n.!?]{1,60}:$")
_ONLY_SPACE = re.compile(r"\s*\Z")
_NEXT_LINE_CHAR = re.compile(r"[ \t]*([^ \t])")
_WORD_WINDOW = 100  # longer than any word in NEVER_END, so a cut-off word can never look like one


@dataclass(frozen=True)
class Sentence:
    """One sentence: its text (stripped) and where it sits in the original string (``text[start:end]``)."""

    text: str
    start: int
    end: int


def split_sentences(text: str) -> list[Sentence]:
    """Split ``text`` into sentences with offsets; see the module docstring for the rules."""
    cuts = _boundaries(text)
    spans: list[tuple[int, int]] = []
    previous = 0
    for cut in [*sorted(cuts), len(text)]:
        if cut > previous:
            spans.append((previous, cut))
            previous = cut
    spans = _join_headings(text, spans)
    sentences = []
    for start, end in spans:
        chunk = text[start:end]
        stripped = chunk.strip()
        if stripped:
            lead = len(chunk) - len(chunk.lstrip())
            sentences.append(Sentence(stripped, start + lead, start + lead + len(stripped)))
    return sentences


def _boundaries(text: str) -> set[int]:
    cuts = {m.end() for m in _BLANK_LINE.finditer(text)}
    for match in _TERMINAL.finditer(text):
        if _ends_sentence(text, match.start(), match.end()):
            cuts.add(match.end())
    position = text.find("\n")
    while position != -1:
        if _line_break_ends_sentence(text, position):
            cuts.add(position + 1)
        position = text.find("\n", position + 1)
    return cuts


def _ends_sentence(text: str, punct_start: int, punct_end: int) -> bool:
    # Every look here is anchored at a position or bounded by a small window: slicing the rest of the text
    # per candidate made splitting quadratic in the text's length.
    if _ONLY_SPACE.match(text, punct_end):
        return True
    if not _NEXT_START.match(text, punct_end):
        return False
    if text[punct_start] != ".":
        return True
    if text.startswith("...", punct_start) or text[punct_start] == "…":
        return True
    window_start = max(0, punct_start - _WORD_WINDOW)
    word_match = _WORD_BEFORE.search(text[window_start:punct_start])
    if word_match is None:
        return True
    word = word_match.group(1)
    if word.lower().rstrip(".") in NEVER_END:
        return False
    word_start = window_start + word_match.start()
    if word.isdigit() and _starts_line(text, word_start):
        return False  # a list marker such as "1." at the start of a line
    if len(word) == 1 and word.isupper():
        before = _last_non_space(text, word_start)
        return before is not None and before.isdigit()  # "98.6 F." ends; an initial "J." does not
    return True


def _starts_line(text: str, position: int) -> bool:
    """Whether only spaces or tabs stand between the start of the line and ``position``."""
    i = position - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    return i < 0 or text[i] == "\n"


def _last_non_space(text: str, position: int) -> str | None:
    i = position - 1
    while i >= 0 and text[i].isspace():
        i -= 1
    return text[i] if i >= 0 else None


def _line_break_ends_sentence(text: str, newline: int) -> bool:
    line_start = text.rfind("\n", 0, newline) + 1
    line = text[line_start:newline].rstrip()
    if not line or _ONLY_SPACE.match(text, newline + 1):
        return False
    if _LIST_MARKER.match(text, newline + 1):
        return True
    next_char = _NEXT_LINE_CHAR.match(text, newline + 1)
    if next_char is None or not (next_char.group(1).isupper() or next_char.group(1).isdigit()):
        return False
    if line.endswith((",", "-", ";", "/", "(")):
        return False
    last_word = line.split()[-1].lower()
    return last_word not in CONTINUATION_WORDS and last_word.rstrip(".") not in NEVER_END


def _join_headings(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    joined: list[tuple[int, int]] = []
    carry: int | None = None
    for start, end in spans:
        chunk = text[start:end].strip()
        begin = carry if carry is not None else start
        if _HEADING.match(chunk) and len(chunk.split()) <= 5 and "\n\n" not in text[start:end].rstrip():
            carry = begin
            continue
        joined.append((begin, end))
        carry = None
    if carry is not None:
        joined.append((carry, spans[-1][1]))
    return joined
