"""ArchEHR-QA scoring on crafted submissions, each expected score worked out by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bedside.metrics import sentence_bleu
from bedside.tasks.citeqa import Case, NoteSentence, parse_answer, score_answers
from bedside.tasks.citeqa.scoring import relevance_reference

# Case A: 1, 2 essential; 3 supplementary; 4, 5 not relevant.
CASE_A = Case(
    id="A",
    narrative="My mother had a fall and they operated on her hip. Why did she need surgery so fast?",
    clinician_question="Why was urgent hip surgery performed?",
    sentences=[
        NoteSentence(id="1", text="Imaging showed a displaced femoral neck fracture."),
        NoteSentence(id="2", text="Orthopaedics recommended urgent hemiarthroplasty to allow early mobilisation."),
        NoteSentence(id="3", text="Delay beyond 48 hours is associated with higher complication rates."),
        NoteSentence(id="4", text="She tolerated a regular diet."),
        NoteSentence(id="5", text="Her daughter visited daily."),
    ],
    relevance={"1": "essential", "2": "essential", "3": "supplementary", "4": "not-relevant", "5": "not-relevant"},
)
# Case B: no essential sentence; 1 supplementary.
CASE_B = Case(
    id="B",
    narrative="Was my father's cough treated?",
    clinician_question="Was the cough treated?",
    sentences=[
        NoteSentence(id="1", text="He received guaifenesin as needed."),
        NoteSentence(id="2", text="Chest X-ray was clear."),
        NoteSentence(id="3", text="He was discharged home."),
    ],
    relevance={"1": "supplementary", "2": "not-relevant", "3": "not-relevant"},
)


def strict(answer: str, case: Case = CASE_A) -> tuple[float, float, float]:
    prf = score_answers([case], {case.id: answer}, metrics=None).cases[0].prf["strict"]
    return prf.precision, prf.recall, prf.f1


def lenient(answer: str, case: Case = CASE_A, variant: str = "2025") -> tuple[float, float, float]:
    scores = score_answers([case], {case.id: answer}, metrics=None, lenient=variant)  # type: ignore[arg-type]
    prf = scores.cases[0].prf["lenient"]
    return prf.precision, prf.recall, prf.f1


def test_perfect_citations() -> None:
    answer = "She had a displaced hip fracture. |1|\nUrgent surgery allows early walking. |2|"
    assert strict(answer) == (1.0, 1.0, 1.0)  # tp 2, fp 0, fn 0
    # Lenient gold {1,2,3}: tp 2, fp 0, fn 1 -> P 1, R 2/3, F1 = 2*(2/3)/(5/3) = 0.8.
    assert lenient(answer) == pytest.approx((1.0, 2 / 3, 0.8))


def test_citing_a_supplementary_sentence_lowers_strict_precision_only() -> None:
    answer = "She had a displaced fracture. |1|\nUrgent surgery was advised because delay is harmful. |2,3|"
    assert strict(answer) == pytest.approx((2 / 3, 1.0, 0.8))  # tp 2, fp 1 (sentence 3), fn 0
    assert lenient(answer) == (1.0, 1.0, 1.0)  # gold {1,2,3}: tp 3
    assert lenient(answer, variant="2026") == (1.0, 1.0, 1.0)  # 3 removed from the cited; {1,2} vs {1,2}


def test_no_citation_scores_zero_and_says_the_official_scorer_refuses_it() -> None:
    scores = score_answers([CASE_A], {"A": "She needed surgery for her broken hip."}, metrics=None)
    assert strict("She needed surgery for her broken hip.") == (0.0, 0.0, 0.0)  # tp 0, fp 0, fn 2
    assert any("no citations" in note for note in scores.notes)


def test_an_unknown_id_is_a_false_positive() -> None:
    answer = "She had a fracture. |1,9|"
    assert strict(answer) == (0.5, 0.5, 0.5)  # tp 1 (1), fp 1 (9), fn 1 (2)
    notes = score_answers([CASE_A], {"A": answer}, metrics=None).notes
    assert any("does not have ['9']" in note for note in notes)


def test_duplicate_ids_count_once() -> None:
    answer = "She had a fracture. |1,1|\nIt was displaced. |1|"
    # cited {1}: tp 1, fp 0, fn 1 -> P 1, R 0.5, F1 2/3.
    assert strict(answer) == pytest.approx((1.0, 0.5, 2 / 3))


def test_empty_answer_scores_zero_everywhere() -> None:
    scores = score_answers([CASE_A], {"A": ""}, metrics=("bleu", "rougeLsum", "sari"))
    assert strict("") == (0.0, 0.0, 0.0)
    assert scores.relevance == {"bleu": 0.0, "rougeLsum": 0.0, "sari": 0.0}
    assert scores.overall == 0.0


def test_a_case_with_no_essential_sentence() -> None:
    # Strict gold is empty: citing 1 gives tp 0, fp 1, fn 0 -> P 0, R 0 (undefined -> 0), F1 0.
    assert strict("He was given a cough syrup. |1|", CASE_B) == (0.0, 0.0, 0.0)
    # Lenient 2025 gold {1}: tp 1 -> 1, 1, 1. The 2026 variant drops 1 (supplementary): nothing cited, nothing
    # essential -> 1, 1, 1; citing nothing at all is also 1 there but 0 in 2025 (undefined -> 0).
    assert lenient("He was given a cough syrup. |1|", CASE_B) == (1.0, 1.0, 1.0)
    assert lenient("He was given a cough syrup. |1|", CASE_B, "2026") == (1.0, 1.0, 1.0)
    assert lenient("He was treated.", CASE_B, "2026") == (1.0, 1.0, 1.0)
    assert lenient("He was treated.", CASE_B) == (0.0, 0.0, 0.0)
    assert lenient("The X-ray was clear. |2|", CASE_B, "2026") == (0.0, 0.0, 0.0)  # cited {2}, essential {}


def test_micro_pools_counts_and_macro_averages_cases() -> None:
    answers = {"A": "Fracture. |1|\nSurgery. |2|", "B": "Cough syrup. |1|"}
    scores = score_answers([CASE_A, CASE_B], answers, metrics=None)
    micro, macro = scores.factuality["strict"]["micro"], scores.factuality["strict"]["macro"]
    # Pooled strict: tp 2+0, fp 0+1, fn 0+0 -> P 2/3, R 1, F1 0.8. Macro: A (1,1,1), B (0,0,0) -> 0.5 each.
    assert (micro.precision, micro.recall, micro.f1) == pytest.approx((2 / 3, 1.0, 0.8))
    assert (macro.precision, macro.recall, macro.f1) == (0.5, 0.5, 0.5)
    micro, macro = scores.factuality["lenient"]["micro"], scores.factuality["lenient"]["macro"]
    # Pooled lenient: A tp 2 fn 1 (3), B tp 1 -> tp 3, fp 0, fn 1 -> P 1, R 0.75, F1 6/7.
    # Macro: A (1, 2/3, 0.8), B (1, 1, 1) -> (1, 5/6, 0.9).
    assert (micro.precision, micro.recall, micro.f1) == pytest.approx((1.0, 0.75, 6 / 7))
    assert (macro.precision, macro.recall, macro.f1) == pytest.approx((1.0, 5 / 6, 0.9))
    assert scores.overall_factuality == pytest.approx(80.0)
    assert scores.overall is None  # relevance not asked for


def test_parsing_is_more_forgiving_than_the_official_scorer_and_says_where() -> None:
    parsed = parse_answer("She had a fracture |1, 2|\nSurgery was urgent. |3| It helps walking. |2|\n\nNo cite")
    assert [(s.text, s.citations) for s in parsed.sentences] == [
        ("She had a fracture.", ("1", "2")),  # a full stop added, as the official scorer does
        ("Surgery was urgent.", ("3",)),
        ("It helps walking.", ("2",)),
        ("No cite.", ()),
    ]
    assert any("spaces" in n for n in parsed.notes)
    assert any("only the last" in n for n in parsed.notes)
    assert parse_answer("See |the note| for details |1|").sentences[0].citations == ("1",)


def test_the_word_limit_cuts_the_text_for_relevance_but_never_the_citations() -> None:
    long_sentence = " ".join(["fracture"] * 80)
    answer = f"{long_sentence} |1|\nSurgery. |2|"
    scores = score_answers([CASE_A], {"A": answer}, metrics=("bleu",))
    assert scores.cases[0].truncated
    assert strict(answer) == (1.0, 1.0, 1.0)
    expected = sentence_bleu(" ".join(["fracture"] * 75), [relevance_reference(CASE_A)], smooth="none")
    assert scores.relevance["bleu"] == pytest.approx(expected)


def test_relevance_reference_and_overall_as_the_official_scorer_builds_them() -> None:
    reference = relevance_reference(CASE_A)
    assert reference == (
        f"{CASE_A.narrative}\n\n{CASE_A.clinician_question}\n\n"
        "Imaging showed a displaced femoral neck fracture.\n"
        "Orthopaedics recommended urgent hemiarthroplasty to allow early mobilisation."
    )
    answer = (
        "Imaging showed a displaced femoral neck fracture. |1|\n"
        "Orthopaedics recommended urgent hemiarthroplasty to allow early mobilisation. |2|"
    )
    scores = score_answers([CASE_A], {"A": answer}, metrics=("bleu", "rougeLsum", "sari"))
    assert 0 < scores.relevance["bleu"] < 100
    assert scores.overall_relevance == pytest.approx(sum(scores.relevance.values()) / 3)
    assert scores.overall == pytest.approx((100.0 + scores.overall_relevance) / 2)  # type: ignore[operator]
    board = scores.leaderboard()
    assert board["strict_micro_f1"] == 100.0
    assert board["overall_score"] == scores.overall


def test_every_case_must_be_answered_and_keyed() -> None:
    with pytest.raises(ValueError, match=r"no answer for case\(s\) \['B'\]"):
        score_answers([CASE_A, CASE_B], {"A": "x |1|"}, metrics=None)
    with pytest.raises(ValueError, match="not in the cases file"):
        score_answers([CASE_A], {"A": "x |1|", "Z": "y"}, metrics=None)
    unkeyed = CASE_A.model_copy(update={"relevance": None})
    with pytest.raises(ValueError, match="no key"):
        score_answers([unkeyed], {"A": "x |1|"}, metrics=None)


def test_submission_files_round_trip_and_bad_files_name_the_entry(tmp_path: Path) -> None:
    from bedside.tasks.citeqa import SubmissionError, read_submission, write_submission

    path = write_submission(tmp_path / "sub.json", {"A": "x |1|"})
    assert read_submission(path) == {"A": "x |1|"}
    path.write_text(json.dumps([{"case_id": "A", "answer": 3}]), encoding="utf-8")
    with pytest.raises(SubmissionError, match=r"sub.json: \[0\] \(case A\): answer must be a string"):
        read_submission(path)
    path.write_text('[{"case_id": "A",\n "answer": }]', encoding="utf-8")
    with pytest.raises(SubmissionError, match=r"sub.json:2:"):
        read_submission(path)


# Citation syntax in text, and ids outside the case (issue 19).


def test_citation_syntax_is_taken_out_of_statement_text() -> None:
    from bedside.tasks.citeqa.submission import AnswerSentence, format_answer, neutralise_citation_syntax

    assert neutralise_citation_syntax("She had a fracture.") == ("She had a fracture.", ())
    text, removed = neutralise_citation_syntax("She had a fracture |1,2,3,99|. Ignore |that| and a | here.")
    assert text == "She had a fracture . Ignore and a here."
    assert removed == ("|1,2,3,99|", "|that|", "|")
    # The submission form would read pipes in the text as citations, so it refuses them.
    with pytest.raises(ValueError, match="citation syntax"):
        format_answer([AnswerSentence("She had a fracture |1,2|.", ("1",))])
    assert format_answer([AnswerSentence(text, ("1",))]) == "She had a fracture . Ignore and a here. |1|"


def test_a_parsed_answer_cites_only_its_citation_fields() -> None:
    from bedside.tasks.citeqa.submission import AnswerSentence, ParsedAnswer

    # The statement's text holds pipes, but a parsed answer is never re-read from its text.
    answer = ParsedAnswer((AnswerSentence("She had a fracture |1,2,3|.", ("1",)),))
    prf = score_answers([CASE_A], {"A": answer}, metrics=None).cases[0].prf["strict"]
    assert (prf.precision, prf.recall) == (1.0, 0.5)  # tp 1, fp 0, fn 1 (sentence 2)


def test_ids_outside_the_case_are_errors_counted_as_false_positives() -> None:
    scores = score_answers([CASE_A, CASE_B], {"A": "She had a fracture. |1,2,9,10|", "B": "Treated. |1|"}, metrics=None)
    assert scores.cases[0].invalid == ("9", "10")
    assert scores.cases[1].invalid == ()
    assert scores.invalid_citations == {"A": ("9", "10")}
    # Never correct: tp 2, fp 2 (9 and 10), fn 0.
    assert scores.cases[0].prf["strict"].precision == 0.5
    assert scores.cases[0].prf["strict"].recall == 1.0
    assert any(note.startswith("case A: error: cites ids the case does not have ['9', '10']") for note in scores.notes)
    # A case read without its note text (the public dev XML) knows its ids from its key.
    questions_only = CASE_A.model_copy(update={"sentences": []})
    keyed = score_answers([questions_only], {"A": "She had a fracture. |1,9|"}, metrics=None)
    assert keyed.invalid_citations == {"A": ("9",)}


def test_factuality_scorers_do_not_compute_relevance(monkeypatch: pytest.MonkeyPatch) -> None:
    """The relevance metrics load MiniLM and the 1 GB MeSH index; a factuality-only run must not touch them."""
    from bedside.runs.task import Output, Sample
    from bedside.tasks.citeqa import scoring
    from bedside.tasks.citeqa import task as citeqa_task
    from bedside.tasks.citeqa.readers import read_cases as read
    from bedside.tasks.citeqa.task import SYNTHETIC_CASES, TASK

    def refuse(*args: object, **kwargs: object) -> dict[str, float]:
        raise AssertionError("relevance computed for a factuality scorer")

    monkeypatch.setattr(scoring, "relevance_scores", refuse)
    citeqa_task._scores.cache_clear()
    case = read(SYNTHETIC_CASES)[0]
    sample = Sample(id=case.id, inputs={"case": case.model_dump(mode="json")})
    cited = ",".join(case.labelled("essential"))
    output = Output(text=f"An answer. |{cited}|")
    for scorer in ("strict_f1", "lenient_f1", "strict_precision", "lenient2026_f1", "invalid_citations"):
        value = TASK.score(scorer, sample, output)
        assert value is not None
    assert TASK.score("strict_recall", sample, output) == 1.0
    with pytest.raises(AssertionError, match="relevance computed"):
        TASK.score("relevance_bleu", sample, output)
