"""The official submission format: ``[{"case_id", "answer"}]``, one answer sentence per line, each followed by
the note sentence ids it cites between pipes (``... |2,3|``).

Two parses of an answer (``bedside citeqa score --parse default|official``):

``official`` reads a line as the official 2025 scorer does (its ``load_submission``): the line is split at its
last two pipes; what is between them is the citation list, split at commas with each id kept exactly as
written (``|1, 2|`` cites ``1`` and `` 2``, which matches no sentence); what is before them is the sentence,
earlier ``|ids|`` groups included (``A. |1| B. |2|`` is one sentence ``A. |1| B.`` citing 2); what is after
the last pipe is dropped. So ``|1|4|`` cites 4, and ``Details. |note|`` cites an id ``note``. A line with fewer
than two pipes is a sentence without citations.

``default`` is more forgiving: every ``|ids|`` group on a line counts, each citing the text before it (``A. |1|
B. |2|`` is two cited sentences); ids are stripped of spaces; text in pipes that is not a list of ids
(``|see note|``) is left in the sentence; text after the last group is a sentence of its own. ``|1|4|`` reads
as ``|1|`` followed by the text ``4|``.

Both parses skip blank lines, give a sentence without closing punctuation a full stop, and join the sentences
with spaces into the answer text the relevance metrics see; repeated ids count once. Every line the two parses
read differently gets a note (:attr:`ParsedAnswer.notes`, printed by the score command in either mode), and so
does an answer the official scorer refuses (no citation at all) or crashes on (citations but no text).

Here the pipes *are* the citations, so this parser reads them wherever they stand. A system that answers with
structured statements keeps its citations in a field of their own, and text a model wrote (or copied from a
patient's message or a note) must never become citations on the way to this format:
:func:`neutralise_citation_syntax` takes the pipes out of a statement's text, reporting what it took, and
:func:`format_answer` refuses a statement text that still holds one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from bedside.inputs import InputError, loads_json, read_text
from bedside.private_files import write_private_text

_GROUP = re.compile(r"\|([^|\n]*)\|")
_IDS = re.compile(r"^\s*[A-Za-z0-9_.-]+\s*(,\s*[A-Za-z0-9_.-]+\s*)*,?\s*$")
_ID = re.compile(r"^[A-Za-z0-9_.-]+$")

WORD_LIMIT = 75
ParseMode = Literal["default", "official"]
PARSE_MODES: tuple[ParseMode, ...] = ("default", "official")


class SubmissionError(InputError):
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


def _default_line(line: str) -> list[AnswerSentence]:
    sentences = []
    start = 0
    for m in _GROUP.finditer(line):
        if not _IDS.match(m.group(1)):
            continue  # not ids: stays in the text of the sentence it stands in
        ids = tuple(dict.fromkeys(c.strip() for c in m.group(1).split(",") if c.strip()))
        sentences.append(AnswerSentence(_closed(line[start : m.start()]), ids))
        start = m.end()
    rest = line[start:].strip()
    if rest:
        sentences.append(AnswerSentence(_closed(rest)))
    return sentences


def _official_line(line: str) -> AnswerSentence:
    parts = line.rsplit("|", maxsplit=2)
    if len(parts) < 3:
        return AnswerSentence(_closed(line))
    return AnswerSentence(_closed(parts[-3]), tuple(dict.fromkeys(c for c in parts[-2].split(",") if c.strip())))


def official_words(text: str) -> list[str]:
    """Words as the official scorer counts them for its 75-word cut: split at plain spaces only.

    A tab or a no-break space does not separate words there (``a\tb`` is one word), and a piece that is only
    whitespace is no word.
    """
    return [w for w in text.split(" ") if w.strip()]


def _describe(sentences: Sequence[AnswerSentence]) -> str:
    return "; ".join(f"{s.text!r} citing {list(s.citations)}" for s in sentences) or "nothing"


def _line_difference(number: int, line: str, mine: list[AnswerSentence], theirs: AnswerSentence) -> str | None:
    my_text = " ".join(s.text for s in mine if s.text)
    my_ids = {c for s in mine for c in s.citations}
    if my_text == theirs.text and my_ids == set(theirs.citations):
        return None
    reasons = []
    if line.count("|") > 2:
        groups = sum(1 for s in mine if s.citations)
        if groups > 1:
            reasons.append(f"{groups} citation groups; the official scorer reads only the last, the rest stay text")
        else:
            reasons.append("more than two pipes; the official scorer cites what is between the last two")
    if line.count("|") >= 2 and line.rsplit("|", maxsplit=1)[-1].strip():
        reasons.append("text after the last pipe, which the official scorer drops")
    if any(c != c.strip() for c in theirs.citations):
        reasons.append("spaces around ids, which the official scorer keeps (so they match no sentence)")
    odd = [c for c in theirs.citations if c.strip() and not _ID.match(c.strip())]
    if odd:
        reasons.append(f"the official scorer reads {odd} as ids")
    why = f" ({'; '.join(reasons)})" if reasons else ""
    return (
        f"line {number}: parsed differently{why}: default reads {_describe(mine)}; official reads {_describe([theirs])}"
    )


def parse_answer(answer: str, mode: ParseMode = "default", *, word_limit: int = WORD_LIMIT) -> ParsedAnswer:
    """The answer's sentences and citations as ``mode`` reads them, with a note wherever the parses differ.

    The notes are the same in both modes: each says what the other parse would read.
    """
    if mode not in PARSE_MODES:
        raise ValueError(f"parse mode must be one of {', '.join(PARSE_MODES)}, not {mode!r}")
    default: list[AnswerSentence] = []
    official: list[AnswerSentence] = []
    notes: list[str] = []
    for number, line in enumerate(answer.strip().split("\n"), start=1):
        if not line.strip():
            continue
        mine, theirs = _default_line(line), _official_line(line)
        difference = _line_difference(number, line, mine, theirs)
        if difference:
            notes.append(difference)
        default += mine
        official.append(theirs)
    texts = dict.fromkeys(" ".join(s.text for s in sentences if s.text) for sentences in (default, official))
    for text in texts:
        spaces, anywhere = len(official_words(text)), len(text.split())
        if spaces != anywhere and max(spaces, anywhere) > word_limit:
            notes.append(
                f"{anywhere} words split at any whitespace but {spaces} split at plain spaces, as the official "
                f"scorer splits (tabs and no-break spaces join words there): the {word_limit}-word cut differs"
            )
            break
    default_cites, official_cites = any(s.citations for s in default), any(s.citations for s in official)
    if official_cites and not any(s.text for s in official):
        notes.append(
            "citations but no answer text: the official scorer crashes on such an answer; here its text scores as "
            "an empty answer (relevance 0) and its citations count as read"
        )
    if not default_cites and not official_cites:
        notes.append("no citations: the official scorer refuses a submission with such an answer; scored as 0 here")
    elif not official_cites:
        notes.append("no citations as the official scorer reads it: it refuses a submission with such an answer")
    elif not default_cites:
        notes.append("no citations in the default parse (scored as 0); the official parse finds some")
    sentences = default if mode == "default" else official
    return ParsedAnswer(tuple(s for s in sentences if s.text or s.citations), tuple(notes))


def neutralise_citation_syntax(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` without citation syntax, and the pieces taken out.

    A ``|...|`` group is removed whole (what is inside it is a would-be citation, not prose); a pipe left over
    becomes a space. Without this, a statement written as ``... |1,2,3|`` would cite 1, 2 and 3 once the answer
    is put in the submission format, whatever the system's citation field says.
    """
    found = [m.group(0) for m in _GROUP.finditer(text)]
    cleaned = _GROUP.sub(" ", text)
    found += ["|"] * cleaned.count("|")
    cleaned = cleaned.replace("|", " ")
    return (" ".join(cleaned.split()) if found else text), tuple(found)


def format_answer(sentences: Iterable[AnswerSentence]) -> str:
    """One sentence per line, its citations after it: the official form, which the official scorer reads as is.

    A pipe in a sentence's text would be read back as a citation, so it is an error here; pass model-written
    text through :func:`neutralise_citation_syntax` first.
    """
    lines = []
    for sentence in sentences:
        if "|" in sentence.text:
            raise ValueError(f"a statement's text holds citation syntax ('|'): {sentence.text!r}")
        text = " ".join(sentence.text.split())
        lines.append(f"{text} |{','.join(sentence.citations)}|" if sentence.citations else text)
    return "\n".join(lines)


@dataclass(frozen=True)
class Submission:
    """A submission file's answers (case id → answer text) and what reading it noticed."""

    answers: dict[str, str]
    notes: tuple[str, ...] = ()


def _case_id_lines(text: str) -> list[int]:
    """For each top-level entry of a JSON list, the line of its ``"case_id"`` key (else where the entry starts),
    so an error can point into the file."""
    decoder = json.JSONDecoder()
    lines: list[int] = []
    index = text.index("[") + 1
    while True:
        while index < len(text) and text[index] in " \t\r\n,":
            index += 1
        if index >= len(text) or text[index] == "]":
            return lines
        _, end = decoder.raw_decode(text, index)
        keys = list(re.finditer(r'(?<!\\)"case_id"\s*:', text[index:end]))
        at = index + keys[-1].start() if keys else index
        lines.append(text.count("\n", 0, at) + 1)
        index = end


def load_submission(path: str | Path, parse: ParseMode = "default") -> Submission:
    """A submission JSON, its case ids checked as ``parse`` requires.

    The official scorer compares the case ids as written with its key's, which are strings, so a number
    (``"case_id": 3``) matches no case there: with ``parse="official"`` it is an error naming its line; by
    default it is read as the string and noted. Any other kind of case id is an error either way. A case
    answered twice is an error either way (the official scorer would score both answers).
    """
    if parse not in PARSE_MODES:
        raise ValueError(f"parse mode must be one of {', '.join(PARSE_MODES)}, not {parse!r}")
    path = Path(path)
    text = read_text(path, error=SubmissionError)
    data = loads_json(text, path=path, error=SubmissionError)
    if not isinstance(data, list):
        raise SubmissionError(f"{path}: expected a JSON list of {{case_id, answer}} objects")
    lines = _case_id_lines(text)
    answers: dict[str, str] = {}
    notes: list[str] = []
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or "case_id" not in entry:
            raise SubmissionError(f"{path}: [{i}]: expected an object with case_id and answer")
        raw = entry["case_id"]
        where = f"{path}:{lines[i]}: [{i}]"
        if isinstance(raw, bool) or not isinstance(raw, str | int):
            raise SubmissionError(f"{where}: case_id must be a string, not {json.dumps(raw)}")
        if isinstance(raw, int):
            if parse == "official":
                raise SubmissionError(
                    f"{where}: case_id {raw} is a number; the official scorer refuses it (its key's case ids are "
                    f'strings, so case "{raw}" has no answer there): write "case_id": "{raw}", or use --parse default'
                )
            notes.append(f'{where}: case_id {raw} is a number, read as "{raw}" (the official scorer refuses it)')
        if not isinstance(entry.get("answer"), str):
            raise SubmissionError(f"{path}: [{i}] (case {raw}): answer must be a string")
        case_id = str(raw)
        if case_id in answers:
            raise SubmissionError(f"{where}: case {case_id} answered twice")
        answers[case_id] = entry["answer"]
    if not answers:
        raise SubmissionError(f"{path}: the submission holds no answers")
    return Submission(answers, tuple(notes))


def read_submission(path: str | Path) -> dict[str, str]:
    """case id → answer text, from a submission JSON (read forgivingly: see :func:`load_submission`)."""
    return load_submission(path).answers


def write_submission(path: str | Path, answers: Mapping[str, str] | Sequence[tuple[str, str]]) -> Path:
    """The answers as the official JSON list, 0600: they quote the patients' notes."""
    items = answers.items() if isinstance(answers, Mapping) else answers
    return write_private_text(
        path, json.dumps([{"case_id": k, "answer": v} for k, v in items], indent=2, ensure_ascii=False) + "\n"
    )
