"""The official submission format: ``[{"case_id", "answer"}]``, one answer sentence per line, each followed by
the note sentence ids it cites between pipes (``... |2,3|``).

Parsing, and where it is more forgiving than the official 2025 scorer (each difference is reported in
:attr:`ParsedAnswer.notes`, so a submission that scores differently there can be seen to):

- Ids are stripped of spaces: ``|1, 2|`` cites 1 and 2. The official scorer keeps the space, so its `` 2``
  matches no sentence.
- Every ``|ids|`` group on a line counts, each citing the text before it: ``A. |1| B. |2|`` is two cited
  sentences. The official scorer reads only the last group of a line (it would cite 2 for ``A. |1| B.``).
- An answer with no citation at all scores 0 (the official scorer refuses the whole submission).
- Text in pipes that is not a list of ids (``|see note|``) is left in the sentence and noted.

As the official scorer does: blank lines are skipped; a sentence without closing punctuation gets a full stop;
the answer text used for relevance is the sentences joined by spaces; repeated ids count once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

_GROUP = re.compile(r"\|([^|\n]*)\|")
_IDS = re.compile(r"^\s*[A-Za-z0-9_.-]+\s*(,\s*[A-Za-z0-9_.-]+\s*)*,?\s*$")


class SubmissionError(ValueError):
    """A submission file that cannot be read; the message names the file and the entry."""


@dataclass(frozen=True)
class AnswerSentence:
    text: str
    citations: tuple[str, ...] = ()


@dataclass(frozen=True)
class ParsedAnswer:
    sentences: tuple[AnswerSentence, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def citations(self) -> set[str]:
        return {c for s in self.sentences for c in s.citations}

    @property
    def text(self) -> str:
        """The answer as the relevance metrics see it (before the word limit)."""
        return " ".join(s.text for s in self.sentences if s.text)


def _closed(text: str) -> str:
    text = text.strip()
    return text + "." if text and text[-1] not in ".!?" else text


def parse_answer(answer: str) -> ParsedAnswer:
    sentences: list[AnswerSentence] = []
    notes: list[str] = []
    for number, line in enumerate(answer.strip().split("\n"), start=1):
        if not line.strip():
            continue
        groups = [m for m in _GROUP.finditer(line) if _IDS.match(m.group(1))]
        for m in _GROUP.finditer(line):
            if not _IDS.match(m.group(1)):
                notes.append(f"line {number}: |{m.group(1)}| is not a list of sentence ids; left in the text")
        if len(groups) > 1:
            notes.append(f"line {number}: {len(groups)} citation groups; the official scorer reads only the last")
        start = 0
        for m in groups:
            raw = [c for c in m.group(1).split(",") if c.strip()]
            ids = tuple(dict.fromkeys(c.strip() for c in raw))
            if any(c != c.strip() for c in raw):
                notes.append(f"line {number}: spaces in |{m.group(1)}|; the official scorer would not match those ids")
            sentences.append(AnswerSentence(_closed(line[start : m.start()]), ids))
            start = m.end()
        rest = line[start:].strip()
        if rest:
            sentences.append(AnswerSentence(_closed(rest)))
    if not any(s.citations for s in sentences):
        notes.append("no citations (the official scorer refuses a submission with such an answer; scored as 0 here)")
    return ParsedAnswer(tuple(s for s in sentences if s.text or s.citations), tuple(notes))


def format_answer(sentences: Iterable[AnswerSentence]) -> str:
    """One sentence per line, its citations after it: the official form, which the official scorer reads as is."""
    lines = []
    for sentence in sentences:
        text = " ".join(sentence.text.split())
        lines.append(f"{text} |{','.join(sentence.citations)}|" if sentence.citations else text)
    return "\n".join(lines)


def read_submission(path: str | Path) -> dict[str, str]:
    """case id → answer text, from a submission JSON."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SubmissionError(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise SubmissionError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, list):
        raise SubmissionError(f"{path}: expected a JSON list of {{case_id, answer}} objects")
    answers: dict[str, str] = {}
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or "case_id" not in entry:
            raise SubmissionError(f"{path}: [{i}]: expected an object with case_id and answer")
        if not isinstance(entry.get("answer"), str):
            raise SubmissionError(f"{path}: [{i}] (case {entry['case_id']}): answer must be a string")
        case_id = str(entry["case_id"])
        if case_id in answers:
            raise SubmissionError(f"{path}: [{i}]: case {case_id} answered twice")
        answers[case_id] = entry["answer"]
    return answers


def write_submission(path: str | Path, answers: Mapping[str, str] | Sequence[tuple[str, str]]) -> Path:
    path = Path(path)
    items = answers.items() if isinstance(answers, Mapping) else answers
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps([{"case_id": k, "answer": v} for k, v in items], indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    return path
