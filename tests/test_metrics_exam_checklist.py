"""Multiple-choice exam accuracy and JSON checklist field accuracy."""

from __future__ import annotations

import pytest

from bedside.metrics import ExamQuestion, checklist_accuracy, exam_accuracy, parse_choice

OPTIONS = {"A": "Once a day", "B": "Twice a day", "C": "Only when in pain", "D": "Every other day"}


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("B", "B"),
        ("(b)", "B"),
        ("Answer: C", "C"),
        ("The answer is d", "D"),
        ("B) Twice a day", "B"),
        ("c. only when in pain", "C"),
        ("I should take it twice a day.", "B"),
        ("Once a day or twice a day, I am not sure.", None),
        ("I don't know.", None),
        ("E", None),
    ],
)
def test_parse_choice(answer: str, expected: str | None) -> None:
    assert parse_choice(answer, OPTIONS) == expected


def test_exam_accuracy_scores_only_the_answers_that_name_an_option() -> None:
    """Unparsed and unanswered questions are counted, not scored as wrong; an exam with none readable has no
    accuracy (None), never 0.0."""
    questions = [
        ExamQuestion("q1", "How often do you take metoprolol?", OPTIONS, "B"),
        ExamQuestion("q2", "When do you take oxycodone?", OPTIONS, "C"),
        ExamQuestion("q3", "How often is the dressing changed?", OPTIONS, "A"),
        ExamQuestion("q4", "How often do you weigh yourself?", OPTIONS, "A"),
    ]
    result = exam_accuracy(questions, {"q1": "B", "q2": "A", "q3": "no idea"})
    assert (result.correct, result.total, result.scored, result.accuracy) == (1, 4, 2, 0.5)
    assert result.unparsed == ["q3"]
    assert result.unanswered == ["q4"]
    assert result.chosen == {"q1": "B", "q2": "A", "q3": None, "q4": None}
    garbage = exam_accuracy(questions, {q.id: "I feel fine, thank you." for q in questions})
    assert (garbage.correct, garbage.scored, garbage.accuracy) == (0, 0, None)
    assert garbage.unparsed == ["q1", "q2", "q3", "q4"]


def test_an_answer_key_outside_the_options_is_refused() -> None:
    with pytest.raises(ValueError, match="answer 'E' is not one of"):
        ExamQuestion("q1", "?", OPTIONS, "E")


REFERENCE = {
    "diagnosis": "Community-acquired pneumonia",
    "medications": ["Amoxicillin", "Acetaminophen"],
    "follow_up": {"who": "Dr. Rivera", "when_days": 7},
    "return_if": [{"symptom": "fever above 38.5 C"}, {"symptom": "shortness of breath"}],
    "driving_allowed": True,
}


def test_checklist_exact_and_normalised_per_field() -> None:
    predicted = {
        "diagnosis": "community acquired pneumonia.",
        "medications": ["acetaminophen", "amoxicillin"],
        "follow_up": {"who": "Dr. Rivera", "when_days": 7.0},
        "return_if": [{"symptom": "Fever above 38.5 C"}],
        "driving_allowed": 1,
        "diet": "regular",
    }
    result = checklist_accuracy(predicted, REFERENCE)
    by_path = {f.path: f for f in result.fields}
    assert sorted(by_path) == [
        "diagnosis",
        "driving_allowed",
        "follow_up.when_days",
        "follow_up.who",
        "medications",
        "return_if.0.symptom",
        "return_if.1.symptom",
    ]
    exact = {p for p, f in by_path.items() if f.exact}
    normalised = {p for p, f in by_path.items() if f.normalised}
    assert exact == {"follow_up.who", "follow_up.when_days"}  # 7 == 7.0 in JSON
    assert normalised == exact | {"diagnosis", "medications", "return_if.0.symptom"}
    assert not by_path["return_if.1.symptom"].present
    assert not by_path["driving_allowed"].normalised  # true is not 1
    assert result.extra == ["diet"]
    assert result.exact_accuracy == pytest.approx(2 / 7)
    assert result.normalised_accuracy == pytest.approx(5 / 7)


def test_an_empty_reference_is_an_error() -> None:
    with pytest.raises(ValueError, match="no fields"):
        checklist_accuracy({"a": 1}, {})
