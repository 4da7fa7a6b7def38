"""Readers for ArchEHR-QA's published formats and bedside's own JSONL.

- Case XML (``<annotations><case id>`` with the narrative, marked question phrases, the clinician's question and,
  where the file has them, ``<note_excerpt_sentences>``), merged with a key JSON (``case_id`` and a relevance
  label per ``sentence_id``).
- The worked examples parsed from the task's website (``website_examples_2025.json``): note sentences, the
  underlined question lines, the sentences highlighted as evidence, and an answer. The site shows which
  sentences the sample answer cites, not the official key, so highlighted sentences are read as ``essential``
  and the others as ``not-relevant``: good enough to exercise the pipeline, not to report scores against.
- bedside's JSONL: one :class:`~bedside.tasks.citeqa.cases.Case` per line (the synthetic demo cases).

Every error names the file and the line, index or field at fault.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypeVar, cast, get_args
from xml.etree import ElementTree

from pydantic import ValidationError

from bedside.inputs import InputError, expect, json_object, parse_xml, read_json, text_lines
from bedside.tasks.citeqa.cases import Case, NoteSentence, Phrase, Relevance, id_order
from bedside.tasks.citeqa.submission import parse_answer

_LABELS = set(get_args(Relevance))
T = TypeVar("T")


class CaseFormatError(InputError):
    """A cases, key or examples file that cannot be read; the message names the file and the place."""


def read_cases(path: str | Path, key: str | Path | None = None) -> list[Case]:
    """Cases from ``.xml`` (with an optional key JSON), ``.jsonl`` (bedside's own) or the website examples ``.json``."""
    path = Path(path)
    if not path.is_file():
        raise CaseFormatError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".xml":
        cases = _read_xml(path)
    elif suffix == ".jsonl":
        cases = _read_jsonl(path)
    elif suffix == ".json":
        cases = _read_website_examples(path)
    else:
        raise CaseFormatError(f"{path}: expected a .xml, .jsonl or website-examples .json file")
    if key is not None:
        cases = _with_key(cases, read_key(key), Path(key))
    if not cases:
        raise CaseFormatError(f"{path}: the file holds no cases")
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise CaseFormatError(f"{path}: case ids repeat: {sorted({i for i in ids if ids.count(i) > 1})}")
    return cases


def read_key(path: str | Path) -> dict[str, dict[str, Relevance]]:
    """The key JSON: case id → sentence id → ``essential`` | ``supplementary`` | ``not-relevant``."""
    path = Path(path)
    data = _load_json(path)
    if not isinstance(data, list):
        raise CaseFormatError(f"{path}: expected a JSON list of {{case_id, answers}} objects")
    key: dict[str, dict[str, Relevance]] = {}
    for i, entry in enumerate(data):
        where = f"{path}: [{i}]"
        if not isinstance(entry, dict) or "case_id" not in entry or not isinstance(entry.get("answers"), list):
            raise CaseFormatError(f"{where}: expected an object with case_id and an answers list")
        labels: dict[str, Relevance] = {}
        for j, answer in enumerate(entry["answers"]):
            if not isinstance(answer, dict) or "sentence_id" not in answer:
                raise CaseFormatError(f"{where}.answers[{j}]: expected an object with sentence_id and relevance")
            label = answer.get("relevance")
            if not isinstance(label, str) or label not in _LABELS:
                raise CaseFormatError(
                    f"{where}.answers[{j}].relevance: {label!r} is not one of {', '.join(sorted(_LABELS))}"
                )
            sentence_id: str | int = _typed(answer["sentence_id"], (str, int), path, i, f"answers[{j}].sentence_id")
            if str(sentence_id) in labels:
                raise CaseFormatError(f"{where}.answers[{j}]: sentence {sentence_id} is labelled twice")
            labels[str(sentence_id)] = cast(Relevance, label)
        case_id: str | int = _typed(entry["case_id"], (str, int), path, i, "case_id")
        if str(case_id) in key:
            raise CaseFormatError(f"{where}: case {case_id} is in the key twice")
        key[str(case_id)] = labels
    if not key:
        raise CaseFormatError(f"{path}: {EMPTY_KEY}")
    return key


def _with_key(cases: list[Case], key: dict[str, dict[str, Relevance]], key_path: Path) -> list[Case]:
    missing = [c.id for c in cases if c.id not in key]
    if missing:
        raise CaseFormatError(f"{key_path}: no labels for case(s) {missing}")
    merged = []
    for case in cases:
        try:
            merged.append(Case.model_validate(case.model_dump() | {"relevance": key[case.id]}))
        except ValidationError as exc:
            raise CaseFormatError(f"{key_path}: case {case.id}: {_first_error(exc)}") from None
    return merged


def _read_xml(path: Path) -> list[Case]:
    root = parse_xml(path, error=CaseFormatError)
    cases = []
    for element in root.iter("case"):
        case_id = element.get("id")
        if not case_id:
            raise CaseFormatError(f"{path}: a <case> has no id attribute")
        narrative = _text(element.find("patient_narrative"))
        if not narrative:
            raise CaseFormatError(f"{path}: case {case_id}: no <patient_narrative>")
        phrases = [
            Phrase(id=p.get("id", str(i)), start=_index(p, path, case_id), text=_text(p))
            for i, p in enumerate(element.iterfind("patient_question/phrase"))
        ]
        sentences = [
            NoteSentence(id=s.get("id", ""), text=_text(s), paragraph_id=s.get("paragraph_id"))
            for s in element.iterfind("note_excerpt_sentences/sentence")
        ]
        try:
            cases.append(
                Case(
                    id=case_id,
                    narrative=narrative,
                    phrases=phrases,
                    clinician_question=_text(element.find("clinician_question")),
                    sentences=sentences,
                )
            )
        except ValidationError as exc:
            raise CaseFormatError(f"{path}: case {case_id}: {_first_error(exc)}") from None
    return cases


def _index(phrase: ElementTree.Element, path: Path, case_id: str) -> int:
    value = phrase.get("start_char_index", "0")
    if not value.strip().isdigit() or len(value) > 12:
        raise CaseFormatError(
            f"{path}: case {case_id}: <phrase> start_char_index {value[:40]!r} is not a character offset"
        )
    return int(value)


def _read_jsonl(path: Path) -> list[Case]:
    cases = []
    for number, line in text_lines(path, error=CaseFormatError):
        data = json_object(line, path=path, line=number, error=CaseFormatError)
        try:
            cases.append(Case.model_validate(data))
        except ValidationError as exc:
            raise CaseFormatError(f"{path}:{number}: {_first_error(exc)}") from None
    return cases


_UNDERLINED = re.compile(r"<u>(.*?)</u>", re.S)
EMPTY_KEY = "no labels: the key holds no cases"


def _cited_ids(answer: str) -> set[str]:
    """The sentence ids an answer cites (``|1|``, ``|1,3|``), as the submission parser reads them."""
    return parse_answer(answer, word_limit=1 << 30).citations


def _read_website_examples(path: Path) -> list[Case]:
    data = _load_json(path)
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise CaseFormatError(f"{path}: expected a JSON list of example objects")
    if data and "answers" in data[0] and "case_id" in data[0]:
        raise CaseFormatError(f"{path}: this is a key file; pass it as the key, with the cases file")
    cases = []
    for i, example in enumerate(data):
        where = f"{path}: [{i}]"
        missing = [f for f in ("patient_question_lines", "note_sentences") if f not in example]
        if missing:
            raise CaseFormatError(f"{where}: missing {', '.join(missing)}")
        lines = _typed(example["patient_question_lines"], list, path, i, "patient_question_lines")
        notes = _typed(example["note_sentences"], dict, path, i, "note_sentences")
        highlighted_ids = _typed(example.get("highlighted_evidence_ids", []), list, path, i, "highlighted_evidence_ids")
        for name in ("clinician_question", "answer"):
            if example.get(name) is not None:
                _typed(example[name], str, path, i, name)
        narrative, phrases = "", list[Phrase]()
        for j, line in enumerate(lines):
            _typed(line, str, path, i, f"patient_question_lines[{j}]")
            narrative += " " if narrative else ""
            plain = _UNDERLINED.sub(lambda m: m.group(1), line)
            for match in _UNDERLINED.finditer(line):
                inner = match.group(1)
                offset = len(narrative) + plain.find(inner)
                phrases.append(Phrase(id=str(len(phrases)), start=offset, text=inner))
            narrative += plain
        for k, v in notes.items():
            _typed(v, str, path, i, f"note_sentences.{k}")
        for j, h in enumerate(highlighted_ids):
            _typed(h, (str, int), path, i, f"highlighted_evidence_ids[{j}]")
        highlighted = {str(h) for h in highlighted_ids}
        lacking = sorted(highlighted - {str(k) for k in notes}, key=id_order)
        if lacking:
            raise CaseFormatError(f"{where}.highlighted_evidence_ids: the example has no sentence(s) {lacking}")
        cited = sorted(_cited_ids(example.get("answer") or "") - {str(k) for k in notes}, key=id_order)
        if cited:
            raise CaseFormatError(f"{where}.answer: cites sentence(s) {cited} the example does not have")
        sentences = [NoteSentence(id=str(k), text=v) for k, v in notes.items()]
        example_id = example.get("example", example.get("case_id", i + 1))
        _typed(example_id, (str, int), path, i, "example")
        try:
            cases.append(
                Case(
                    id=str(example_id),
                    narrative=narrative,
                    phrases=phrases,
                    clinician_question=example.get("clinician_question", ""),
                    sentences=sentences,
                    relevance={s.id: "essential" if s.id in highlighted else "not-relevant" for s in sentences},
                    reference_answer=example.get("answer"),
                )
            )
        except ValidationError as exc:
            raise CaseFormatError(f"{where}: {_first_error(exc)}") from None
    return cases


def _load_json(path: Path) -> Any:
    return read_json(path, error=CaseFormatError)


def _typed(value: Any, kind: type[T] | tuple[type, ...], path: Path, index: int, field: str) -> T:
    """``value`` if it has the JSON type the examples format gives ``field``; else an error naming it."""
    return expect(value, kind, path=path, field=f"[{index}].{field}", error=CaseFormatError)


def _text(element: ElementTree.Element | None) -> str:
    return (element.text or "").strip() if element is not None else ""


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])
