"""Note sentences with stable numbers, for tasks whose answers cite the sentences they rest on.

Notes are taken in time order (then by id), sentences in text order, and numbered from 1 across the notes.
The same record therefore always gives the same ids, and an id names one sentence span in one note.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bedside.records.model import Note, Record
from bedside.records.times import EARLIEST
from bedside.text import split_sentences


@dataclass(frozen=True)
class NumberedSentence:
    id: str
    note_id: str
    text: str
    start: int
    end: int


def number_sentences(notes: list[Note]) -> list[NumberedSentence]:
    ordered = sorted(notes, key=lambda n: (n.time or EARLIEST, n.id))
    numbered: list[NumberedSentence] = []
    for note in ordered:
        for sentence in split_sentences(note.text):
            numbered.append(
                NumberedSentence(str(len(numbered) + 1), note.id, sentence.text, sentence.start, sentence.end)
            )
    return numbered


def render_numbered_sentences(record: Record, at: datetime | None = None) -> str:
    """Each note under a header line, each of its sentences on a line of its own: ``[id] text``."""
    notes = (record.as_of(at) if at is not None else record).notes
    by_note: dict[str, list[NumberedSentence]] = {}
    for sentence in number_sentences(notes):
        by_note.setdefault(sentence.note_id, []).append(sentence)
    out = []
    for note in sorted(notes, key=lambda n: (n.time or EARLIEST, n.id)):
        when = note.time.strftime("%Y-%m-%d %H:%M") if note.time else "undated"
        out.append(f"## {note.type} ({when})")
        out.extend(f"[{s.id}] {' '.join(s.text.split())}" for s in by_note.get(note.id, []))
        out.append("")
    return "\n".join(out)
