from __future__ import annotations

import json
from pathlib import Path

import pytest

from bedside.tasks.citeqa import CaseFormatError, read_cases, read_key, score_answers
from bedside.tasks.citeqa.task import SYNTHETIC_CASES

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "external"

XML = """<annotations>
  <case id="7">
    <patient_narrative>
I fainted twice. They did a heart catheter test. Was it necessary?
    </patient_narrative>
    <patient_question>
      <phrase id="0" start_char_index="49">
Was it necessary?
      </phrase>
    </patient_question>
    <clinician_question>
Why was cardiac catheterization performed?
    </clinician_question>
    <note_excerpt>...</note_excerpt>
    <note_excerpt_sentences>
      <sentence id="0" paragraph_id="0" start_char_index="0">
History of Present Illness:
      </sentence>
      <sentence id="1" paragraph_id="1" start_char_index="0">
Echo showed LVEF 25%.
      </sentence>
      <sentence id="2" paragraph_id="1" start_char_index="22">
Catheterization was done to exclude ischemic cardiomyopathy.
      </sentence>
    </note_excerpt_sentences>
  </case>
</annotations>
"""

KEY = [
    {
        "case_id": "7",
        "answers": [
            {"sentence_id": "0", "relevance": "not-relevant"},
            {"sentence_id": "1", "relevance": "supplementary"},
            {"sentence_id": "2", "relevance": "essential"},
        ],
    }
]


def test_case_xml_with_a_key(tmp_path: Path) -> None:
    (tmp_path / "cases.xml").write_text(XML, encoding="utf-8")
    (tmp_path / "key.json").write_text(json.dumps(KEY), encoding="utf-8")
    [case] = read_cases(tmp_path / "cases.xml", tmp_path / "key.json")
    assert case.id == "7"
    assert case.narrative.startswith("I fainted twice.")
    assert case.phrases[0].text == "Was it necessary?"
    assert case.narrative[case.phrases[0].start :].startswith("Was it necessary?")
    assert case.clinician_question == "Why was cardiac catheterization performed?"
    assert [s.text for s in case.sentences][2] == "Catheterization was done to exclude ischemic cardiomyopathy."
    assert case.labelled("essential") == ["2"]
    assert case.labelled("essential", "supplementary") == ["1", "2"]


def test_bad_files_name_the_file_and_the_place(tmp_path: Path) -> None:
    (tmp_path / "cases.xml").write_text(XML.replace("</case>", "</caze>"), encoding="utf-8")
    with pytest.raises(CaseFormatError, match=r"cases.xml:\d+:\d+: not well-formed XML"):
        read_cases(tmp_path / "cases.xml")
    bad = json.loads(json.dumps(KEY))
    bad[0]["answers"][1]["relevance"] = "useful"
    (tmp_path / "key.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(CaseFormatError, match=r"key.json: \[0\].answers\[1\].relevance: 'useful' is not one of"):
        read_key(tmp_path / "key.json")
    (tmp_path / "cases.xml").write_text(XML, encoding="utf-8")
    wrong = json.loads(json.dumps(KEY))
    wrong[0]["answers"].append({"sentence_id": "9", "relevance": "essential"})
    (tmp_path / "key.json").write_text(json.dumps(wrong), encoding="utf-8")
    with pytest.raises(CaseFormatError, match=r"key.json: case 7: .*sentences the case does not have: \['9'\]"):
        read_cases(tmp_path / "cases.xml", tmp_path / "key.json")
    lines = SYNTHETIC_CASES.read_text(encoding="utf-8").splitlines()
    (tmp_path / "cases.jsonl").write_text("\n".join([lines[0], '{"id": "x"}']), encoding="utf-8")
    with pytest.raises(CaseFormatError, match=r"cases.jsonl:2: narrative: Field required"):
        read_cases(tmp_path / "cases.jsonl")


def test_the_synthetic_cases_are_complete_and_their_answers_cite_every_essential_sentence() -> None:
    cases = read_cases(SYNTHETIC_CASES)
    assert len(cases) == 10
    for case in cases:
        assert case.relevance is not None
        assert case.reference_answer
        assert set(case.relevance) == set(case.sentence_ids)
        for phrase in case.phrases:
            assert case.narrative[phrase.start : phrase.start + len(phrase.text)] == phrase.text
    scores = score_answers(cases, {c.id: c.reference_answer or "" for c in cases}, metrics=None)
    assert scores.overall_factuality == 100.0
    assert not scores.notes


@pytest.mark.skipif(not EXTERNAL.is_dir(), reason=f"external data not present at {EXTERNAL}")
def test_the_published_formats_read() -> None:
    examples = read_cases(EXTERNAL / "archehr-qa_archehr-qa.github.io" / "website_examples_2025.json")
    assert examples
    assert all(c.sentences and c.reference_answer for c in examples)
    first = examples[0]
    assert first.phrases
    assert "<u>" not in first.narrative
    assert first.narrative[first.phrases[0].start :].startswith(first.phrases[0].text)
    # The site's answers cite its highlighted sentences, which are read as essential: strict factuality 100.
    scores = score_answers(examples, {c.id: c.reference_answer or "" for c in examples}, metrics=None)
    assert scores.overall_factuality == 100.0
    dev = read_cases(EXTERNAL / "soni-sarvesh_archehr-qa" / "data" / "dev" / "archehr-qa.xml")
    assert len(dev) == 20
    assert all(c.clinician_question and not c.sentences for c in dev)  # questions only; notes are on PhysioNet
    test_2026 = read_cases(EXTERNAL / "soni-sarvesh_archehr-qa-2026" / "data" / "subtask_1" / "test" / "archehr-qa.xml")
    assert test_2026
    assert all(c.narrative for c in test_2026)


def test_a_phrase_that_does_not_match_the_narrative_is_an_error(tmp_path: Path) -> None:
    """Offsets or texts that disagree with the narrative used to be scored as if they marked the question."""
    (tmp_path / "cases.xml").write_text(XML.replace('start_char_index="49"', 'start_char_index="40"'))
    with pytest.raises(CaseFormatError, match=r"phrase 0 says 'Was it necessary\?' at character 40, but the"):
        read_cases(tmp_path / "cases.xml")
    (tmp_path / "cases.xml").write_text(XML.replace("Was it necessary?\n      </phrase>", "Was it needed?</phrase>"))
    with pytest.raises(CaseFormatError, match=r"phrase 0 says 'Was it needed\?'"):
        read_cases(tmp_path / "cases.xml")
    [case] = read_cases(SYNTHETIC_CASES)[:1]
    line = case.model_dump()
    line["phrases"] = [{"id": "0", "start": 10**6, "text": "x"}]
    (tmp_path / "cases.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(CaseFormatError, match=r"cases.jsonl:1: .*phrase 0 says 'x' at character 1000000"):
        read_cases(tmp_path / "cases.jsonl")


def test_a_key_that_labels_a_sentence_or_a_case_twice_is_an_error(tmp_path: Path) -> None:
    twice = json.loads(json.dumps(KEY))
    twice[0]["answers"].append({"sentence_id": "1", "relevance": "essential"})
    (tmp_path / "key.json").write_text(json.dumps(twice))
    with pytest.raises(CaseFormatError, match=r"key.json: \[0\].answers\[3\]: sentence 1 is labelled twice"):
        read_key(tmp_path / "key.json")
    (tmp_path / "key.json").write_text(json.dumps(KEY + KEY))
    with pytest.raises(CaseFormatError, match=r"key.json: \[1\]: case 7 is in the key twice"):
        read_key(tmp_path / "key.json")
    (tmp_path / "key.json").write_text(json.dumps([{"case_id": {"id": 7}, "answers": []}]))
    with pytest.raises(CaseFormatError, match="case_id"):
        read_key(tmp_path / "key.json")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"highlighted_evidence_ids": [1, 9]}, r"highlighted_evidence_ids: the example has no sentence\(s\) \['9'\]"),
        ({"answer": "Aspirin was given |1,7|."}, r"answer: cites sentence\(s\) \['7'\] the example does not have"),
    ],
)
def test_website_examples_that_cite_sentences_they_lack_are_an_error(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    example = {
        "example": 1,
        "patient_question_lines": ["My <u>chest hurts</u>."],
        "clinician_question": "Why chest pain?",
        "note_sentences": {"1": "Chest pain.", "2": "Aspirin given."},
        "highlighted_evidence_ids": [1],
        "answer": "Aspirin was given |1|.",
    }
    path = tmp_path / "website_examples.json"
    path.write_text(json.dumps([example]))
    assert len(read_cases(path)) == 1
    path.write_text(json.dumps([example | change]))
    with pytest.raises(CaseFormatError, match=message):
        read_cases(path)
