"""Sentence splitting on clinical text: the rules in bedside.text.sentences, case by case, plus properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bedside.text import split_sentences


def texts(text: str) -> list[str]:
    return [s.text for s in split_sentences(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Seen by Dr. Smith today. Doing well.", ["Seen by Dr. Smith today.", "Doing well."]),
        (
            "Started metformin 500 mg b.i.d. with meals. Recheck A1c.",
            ["Started metformin 500 mg b.i.d. with meals.", "Recheck A1c."],
        ),
        ("Take 1 tab p.o. q.d. Return in 2 weeks.", ["Take 1 tab p.o. q.d.", "Return in 2 weeks."]),
        ("BP 132/84, HR 72. Temp 98.6 F. Follow up.", ["BP 132/84, HR 72.", "Temp 98.6 F.", "Follow up."]),
        ("Hgb 10.2 g/dL (ref. 12.0-15.5). Stable.", ["Hgb 10.2 g/dL (ref. 12.0-15.5).", "Stable."]),
        ("Pt. is stable vs. prior. Discharged.", ["Pt. is stable vs. prior.", "Discharged."]),
        ("Plavix e.g. Clopidogrel is fine. Ok.", ["Plavix e.g. Clopidogrel is fine.", "Ok."]),
        ("A 58 y.o. Female with HTN. No distress.", ["A 58 y.o. Female with HTN.", "No distress."]),
        ("Seen by J. Smith, MD. Plan below.", ["Seen by J. Smith, MD.", "Plan below."]),
        ("Is it the pill? Yes! \"Stop it.\" (Call us.) Thanks.",
         ["Is it the pill?", "Yes!", "\"Stop it.\"", "(Call us.)", "Thanks."]),
        ("Weight 82.5 kg. BMI 27.1. SpO2 97% on RA.", ["Weight 82.5 kg.", "BMI 27.1.", "SpO2 97% on RA."]),
        ("Wait... Then it improved.", ["Wait...", "Then it improved."]),
        ("no period at the end", ["no period at the end"]),
    ],
)  # fmt: skip
def test_abbreviations_decimals_and_punctuation(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


def test_line_broken_note_with_list_and_heading() -> None:
    note = (
        "HPI: 58 y.o. F w/ HTN.\n"
        "She reports cough x2 weeks\n"
        "Denies fever.\n"
        "\n"
        "Plan:\n"
        "1. Stop lisinopril.\n"
        "2. Start losartan 25 mg daily.\n"
        "3) Recheck BMP in 1 wk\n"
        "- Call if worse"
    )
    assert texts(note) == [
        "HPI: 58 y.o. F w/ HTN.",
        "She reports cough x2 weeks",
        "Denies fever.",
        "Plan:\n1. Stop lisinopril.",
        "2. Start losartan 25 mg daily.",
        "3) Recheck BMP in 1 wk",
        "- Call if worse",
    ]


def test_wrapped_lines_are_joined_when_the_sentence_continues() -> None:
    note = (
        "The patient was seen in clinic and\nreports improvement. Lab results from\n"
        "March were normal, with\nCreatinine at baseline."
    )
    assert texts(note) == [
        "The patient was seen in clinic and\nreports improvement.",
        "Lab results from\nMarch were normal, with\nCreatinine at baseline.",
    ]


def test_blank_lines_always_split() -> None:
    assert texts("Assessment stable\n\nplan unchanged") == ["Assessment stable", "plan unchanged"]


def test_offsets_point_into_the_original_text() -> None:
    text = "  Dr. Lee saw her.\n\n  BP 120/80.  "
    for sentence in split_sentences(text):
        assert text[sentence.start : sentence.end] == sentence.text
    assert [s.start for s in split_sentences(text)] == [2, 22]


def test_empty_and_blank_text() -> None:
    assert split_sentences("") == []
    assert split_sentences(" \n\n \t") == []


ALPHABET = st.sampled_from([*"abc XYZ.!?\n\t,:;-()'\"0123456789", "Dr. ", "b.i.d. ", "1. ", "e.g. ", "\n\n"])


@given(st.lists(ALPHABET, max_size=80).map("".join))
def test_sentences_are_ordered_disjoint_and_cover_all_text(text: str) -> None:
    sentences = split_sentences(text)
    covered = 0
    previous_end = 0
    for sentence in sentences:
        assert sentence.text
        assert sentence.text == sentence.text.strip()
        assert text[sentence.start : sentence.end] == sentence.text
        assert sentence.start >= previous_end
        previous_end = sentence.end
        covered += len("".join(sentence.text.split()))
    assert covered == len("".join(text.split()))  # no non-space character is lost or duplicated
