"""Fitting a record's XML timeline into a model's context window.

:func:`fit` keeps the most recent events that fit a token budget, after reserving tokens for the answer (256
by default), as MedAlign truncates an EHR to a model's context: the oldest events go first. :func:`chunks`
cuts the whole timeline into consecutive pieces, in time order, each inside the budget, for multi-step
refinement over a record longer than any one context.

Both cut only between events and re-open the visit and day an event sits in, so every piece is a well-formed
``<record>`` document. The one exception is an event that is larger than the budget by itself (a very long
note): its text is cut at a token boundary inside a ``<note>`` marked ``truncated="true"`` (by :func:`fit`,
keeping the end of the note) or split into ``part="i/n"`` notes (by :func:`chunks`), which stay well-formed.

Cost: :func:`fit` tokenizes only the events it walks back over (about the budget's worth, plus one batch), so
fitting a 1.5-million-character record to 32k tokens does not tokenize the whole record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from xml.sax.saxutils import escape, unescape

from bedside.records.model import Record
from bedside.records.timeline import Block, assemble, timeline_blocks
from bedside.text.tokens import Tokenizer

DEFAULT_RESERVE = 256
_BATCH = 64
_NOTE = re.compile(r"^(<note[^>]*)>\n(.*)\n</note>$", re.DOTALL)


class FitError(ValueError):
    """The budget cannot hold even an empty record after the reserve."""


@dataclass(frozen=True)
class Fitted:
    """Text that fits, with what it took to get there."""

    text: str
    tokens: int
    budget: int
    events_kept: int
    events_dropped: int
    truncated_event: bool = False  # the one kept event is the end of a note too long to keep whole


def _available(tokenizer: Tokenizer, budget: int, reserve: int) -> int:
    available = budget - reserve - tokenizer.count(assemble([]))
    if available <= 0:
        raise FitError(f"a budget of {budget} tokens with {reserve} reserved leaves no room for the record")
    return available


def _frame_cost(tokenizer: Tokenizer, block: Block) -> int:
    """Tokens for opening and closing this block's visit and day (plus line breaks)."""
    return tokenizer.count(f"{block.visit}\n{block.day}\n</day>\n</visit>\n")


def _note_end(block: Block, tokenizer: Tokenizer, tokens: int) -> Block | None:
    """The end of a note that is too long to keep whole, marked as cut; None for any other event."""
    match = _NOTE.match(block.body)
    if match is None:
        return None
    opening, text = match.group(1), unescape(match.group(2))
    overhead = tokenizer.count(f'{opening} truncated="true">\n\n</note>')
    room = tokens - overhead
    if room <= 0:
        return None
    kept = tokenizer.tail(text, room)
    return Block(block.visit, block.day, f'{opening} truncated="true">\n{escape(kept)}\n</note>', block.element)


def fit(
    record: Record,
    tokenizer: Tokenizer,
    budget: int,
    *,
    reserve: int = DEFAULT_RESERVE,
    at: datetime | None = None,
) -> Fitted:
    """The most recent part of the record's timeline that fits ``budget - reserve`` tokens."""
    blocks = timeline_blocks(record, at)
    return fit_blocks(blocks, tokenizer, budget, reserve=reserve)


def fit_blocks(blocks: list[Block], tokenizer: Tokenizer, budget: int, *, reserve: int = DEFAULT_RESERVE) -> Fitted:
    available = _available(tokenizer, budget, reserve)
    kept: list[Block] = []
    used = 0
    frame: tuple[str, str] | None = None
    index = len(blocks)
    truncated = False
    done = False
    while index > 0 and not done:
        batch = blocks[max(0, index - _BATCH) : index]
        costs = tokenizer.count_many([f"{b.body}\n" for b in batch])
        for block, cost in zip(reversed(batch), reversed(costs), strict=True):
            extra = _frame_cost(tokenizer, block) if (block.visit, block.day) != frame else 0
            if used + cost + extra > available:
                if not kept:  # the most recent event alone is too large: keep its end
                    cut = _note_end(block, tokenizer, available - extra - 1)
                    if cut is not None:
                        kept.append(cut)
                        truncated = True
                done = True
                break
            kept.append(block)
            used += cost + extra
            frame = (block.visit, block.day)
            index -= 1
    kept.reverse()
    text = assemble(kept)
    tokens = tokenizer.count(text)
    while tokens > budget - reserve and kept:  # separate counts can undercount joins by a token or two
        kept.pop(0)
        text = assemble(kept)
        tokens = tokenizer.count(text)
    if blocks and not kept:
        raise FitError(
            f"a budget of {budget} tokens with {reserve} reserved holds not even part of the most recent event"
        )
    return Fitted(
        text=text,
        tokens=tokens,
        budget=budget,
        events_kept=len(kept),
        events_dropped=len(blocks) - len(kept),
        truncated_event=truncated,
    )


def chunks(
    record: Record,
    tokenizer: Tokenizer,
    budget: int,
    *,
    reserve: int = DEFAULT_RESERVE,
    at: datetime | None = None,
) -> list[str]:
    """The whole timeline as consecutive well-formed pieces, oldest first, each within ``budget - reserve``."""
    blocks = timeline_blocks(record, at)
    available = _available(tokenizer, budget, reserve)
    costs = tokenizer.count_many([f"{b.body}\n" for b in blocks])
    pieces: list[list[Block]] = [[]]
    used = 0
    frame: tuple[str, str] | None = None
    for block, cost in zip(blocks, costs, strict=True):
        extra = _frame_cost(tokenizer, block) if (block.visit, block.day) != frame else 0
        if used + cost + extra > available and pieces[-1]:
            pieces.append([])
            used, frame = 0, None
            extra = _frame_cost(tokenizer, block)
        if cost + extra > available:
            for part in _split_note(block, tokenizer, available - extra - 1):
                pieces[-1].append(part)
                pieces.append([])
            used, frame = 0, None
            continue
        pieces[-1].append(block)
        used += cost + extra
        frame = (block.visit, block.day)
    texts = [assemble(piece) for piece in pieces if piece]
    for number, text in enumerate(texts, start=1):
        if tokenizer.count(text) > budget - reserve:
            raise FitError(f"chunk {number} came out over the budget; a single event may be too large to split")
    return texts


def _split_note(block: Block, tokenizer: Tokenizer, tokens: int) -> list[Block]:
    match = _NOTE.match(block.body)
    if match is None:
        raise FitError(f"a <{block.element}> event is larger than the whole budget and cannot be split")
    opening, text = match.group(1), unescape(match.group(2))
    room = tokens - tokenizer.count(f'{opening} part="999/999">\n\n</note>')
    if room <= 0:
        raise FitError("the budget is too small to hold any part of a note")
    parts: list[str] = []
    rest = text
    while rest:
        head = tokenizer.head(rest, room) or rest[:1]
        parts.append(head)
        rest = rest[len(head) :]
    return [
        Block(block.visit, block.day, f'{opening} part="{i}/{len(parts)}">\n{escape(p)}\n</note>', block.element)
        for i, p in enumerate(parts, start=1)
    ]


_CHARS_PER_TOKEN_GUESS = 8  # first window: this many characters per token; doubled until the cut falls inside it


def _tail_tokens(text: str, tokenizer: Tokenizer, tokens: int) -> str:
    """``tokenizer.tail`` over a window at the end of ``text``, so a long record is not tokenized whole.

    The window grows (doubling) until the kept suffix starts inside it, so the cut is the one the whole text would
    give except where tokenization across the window's edge differs; the caller re-counts the result."""
    window = max(64, tokens * _CHARS_PER_TOKEN_GUESS)
    while True:
        piece = text[-window:] if window < len(text) else text
        kept = tokenizer.tail(piece, tokens)
        if len(kept) < len(piece) or piece is text:
            return kept
        window *= 2


def _head_tokens(
    text: str, tokenizer: Tokenizer, tokens: int, *, chars_per_token: float = _CHARS_PER_TOKEN_GUESS
) -> str:
    """``tokenizer.head`` over a growing window at the start of ``text`` (see :func:`_tail_tokens`)."""
    window = max(64, int(tokens * chars_per_token))
    while True:
        piece = text[:window] if window < len(text) else text
        kept = tokenizer.head(piece, tokens)
        if len(kept) < len(piece) or piece is text:
            return kept
        window *= 2


def fit_text(text: str, tokenizer: Tokenizer, budget: int, *, reserve: int = DEFAULT_RESERVE) -> Fitted:
    """The most recent ``budget - reserve`` tokens of raw text, cut at a token boundary (MedAlign's own cut).

    The cut ignores the XML: the kept text may start inside an element. This is the paper's behaviour, for
    the raw file text of either XML dialect; :func:`fit` is the well-formed alternative. Only a window at the
    end of the text is tokenized (about the budget's worth), not the whole record.
    """
    available = budget - reserve
    if available <= 0:
        raise FitError(f"a budget of {budget} tokens with {reserve} reserved leaves no room for the record")
    kept = _tail_tokens(text, tokenizer, available)
    tokens = tokenizer.count(kept)
    while tokens > available and kept:  # a suffix can tokenize differently from the same span inside the whole
        kept = kept[1:]
        tokens = tokenizer.count(kept)
    return Fitted(text=kept, tokens=tokens, budget=budget, events_kept=0, events_dropped=0, truncated_event=False)


def text_chunks(text: str, tokenizer: Tokenizer, size: int) -> list[str]:
    """Raw text as consecutive pieces of at most ``size`` tokens, oldest first, cut at token boundaries.

    The pieces join back to exactly ``text``. MedAlign's multi-step refinement chunks the record this way,
    ignoring XML validity. Each cut tokenizes a window of about one chunk, so the cost is linear in the text.
    """
    if size < 1:
        raise FitError("a chunk must hold at least one token")
    pieces: list[str] = []
    rest = text
    ratio = float(_CHARS_PER_TOKEN_GUESS)
    while rest:
        head = _head_tokens(rest, tokenizer, size, chars_per_token=ratio) or rest[:1]
        ratio = max(1.0, 1.1 * len(head) / size)  # the next window: this chunk's density plus a tenth
        while tokenizer.count(head) > size and len(head) > 1:
            head = head[:-1]
        pieces.append(head)
        rest = rest[len(head) :]
    return pieces
