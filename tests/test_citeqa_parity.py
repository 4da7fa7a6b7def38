"""The two parses of a submission (default and official) on crafted answers, one per quirk of the official 2025
scorer; every expected figure is worked out by hand in the comments.

Case A (as in test_citeqa_scoring): sentences 1 and 2 essential, 3 supplementary, 4 and 5 not relevant. Strict
gold = {1, 2}.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.metrics import sentence_bleu
from bedside.tasks.citeqa import SubmissionError, parse_answer, read_cases, score_answers
from bedside.tasks.citeqa.scoring import CaseScore, relevance_reference
from bedside.tasks.citeqa.submission import load_submission, official_words
from test_citeqa_scoring import CASE_A  # the same five-sentence hip-surgery case

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "external"


def both(answer: str, metrics: tuple[str, ...] = ()) -> tuple[CaseScore, CaseScore, list[str]]:
    """The case scored with each parse, and the parse notes (the same in both modes)."""
    default = score_answers([CASE_A], {"A": answer}, metrics=metrics).cases[0]
    official = score_answers([CASE_A], {"A": answer}, metrics=metrics, parse="official").cases[0]
    assert default.answer.notes == official.answer.notes
    return default, official, list(default.answer.notes)


def strict(row: CaseScore) -> tuple[float, float, float]:
    prf = row.prf["strict"]
    return prf.precision, prf.recall, prf.f1


def test_several_groups_on_a_line_count_only_the_last_officially_and_stay_in_its_text() -> None:
    answer = "Imaging showed a displaced fracture. |1| Orthopaedics recommended urgent hemiarthroplasty. |2|"
    default, official, notes = both(answer, metrics=("bleu", "rougeLsum"))
    # Default: cited {1, 2} = gold: tp 2, fp 0, fn 0 -> 1, 1, 1.
    assert strict(default) == (1.0, 1.0, 1.0)
    # Official: cited {2} only: tp 1, fp 0, fn 1 -> P 1, R 1/2, F1 2/3.
    assert strict(official) == pytest.approx((1.0, 0.5, 2 / 3))
    # The earlier group stays in the official answer text, so BLEU (and ROUGE, SARI) see different texts.
    assert default.relevance_text == (
        "Imaging showed a displaced fracture. Orthopaedics recommended urgent hemiarthroplasty."
    )
    assert official.relevance_text == (
        "Imaging showed a displaced fracture. |1| Orthopaedics recommended urgent hemiarthroplasty."
    )
    reference = [relevance_reference(CASE_A)]
    for row in (default, official):
        assert row.relevance["bleu"] == pytest.approx(sentence_bleu(row.relevance_text, reference, smooth="none"))
    assert 0 < default.relevance["bleu"] != official.relevance["bleu"] > 0
    assert default.relevance["rougeLsum"] != official.relevance["rougeLsum"]
    assert len(notes) == 1
    assert notes[0].startswith("line 1: parsed differently (2 citation groups; the official scorer reads only")


def test_adjacent_groups_cite_the_last_officially() -> None:
    default, official, notes = both("She had a fracture. |1|4|")
    # Default reads |1| (then the text "4|"): cited {1}: tp 1, fp 0, fn 1 -> P 1, R 1/2, F1 2/3.
    assert strict(default) == pytest.approx((1.0, 0.5, 2 / 3))
    # Official splits at the last two pipes: cited {4}: tp 0, fp 1, fn 2 -> 0, 0, 0.
    assert strict(official) == (0.0, 0.0, 0.0)
    assert official.answer.text == "She had a fracture. |1."
    assert any("more than two pipes" in n for n in notes)


def test_text_after_the_last_group_is_dropped_officially() -> None:
    default, official, notes = both("She had a fracture. |1,2| Surgery was urgent.")
    # Both cite {1, 2}: 1, 1, 1; only the text differs.
    assert strict(default) == strict(official) == (1.0, 1.0, 1.0)
    assert default.relevance_text == "She had a fracture. Surgery was urgent."
    assert official.relevance_text == "She had a fracture."
    assert any("text after the last pipe" in n for n in notes)


def test_words_in_pipes_are_ids_officially() -> None:
    answer = "She had a fracture and needed surgery. |1,2|\nDetails are in the chart. |see note|"
    default, official, notes = both(answer)
    # Default leaves |see note| in the text (not a list of ids): cited {1, 2} -> 1, 1, 1.
    assert strict(default) == (1.0, 1.0, 1.0)
    assert default.answer.text == "She had a fracture and needed surgery. Details are in the chart. |see note|."
    # Official cites an id "see note": tp 2, fp 1, fn 0 -> P 2/3, R 1, F1 0.8; and it is an id outside the case.
    assert strict(official) == pytest.approx((2 / 3, 1.0, 0.8))
    assert official.invalid == ("see note",)
    assert any("reads ['see note'] as ids" in n for n in notes)
    # A single word is an id in both parses (an error in both: the case has no sentence "note").
    default, official, _ = both("She had a fracture. |1|\nSee the chart. |note|")
    # cited {1, note}: tp 1, fp 1, fn 1 -> 0.5, 0.5, 0.5 either way.
    assert strict(default) == strict(official) == (0.5, 0.5, 0.5)
    assert default.invalid == official.invalid == ("note",)


def test_spaces_around_ids_are_kept_officially() -> None:
    default, official, notes = both("She had a fracture that needed urgent surgery. |1, 2|")
    assert strict(default) == (1.0, 1.0, 1.0)  # {1, 2}
    # Official cites "1" and " 2"; " 2" matches nothing: tp 1, fp 1, fn 1 -> 0.5, 0.5, 0.5.
    assert strict(official) == (0.5, 0.5, 0.5)
    assert official.invalid == (" 2",)
    assert any("spaces around ids" in n for n in notes)


@pytest.mark.parametrize("joiner", ["\t", "\u00a0"])
def test_tabs_and_no_break_spaces_move_the_word_cut(joiner: str) -> None:
    # 40 pairs "wordN<joiner>wordN" separated by spaces: 80 words at any whitespace, 40 at plain spaces.
    text = " ".join(f"w{i}{joiner}w{i}" for i in range(40))
    assert len(text.split()) == 80
    assert len(official_words(text)) == 40
    default, official, notes = both(f"{text} |1,2|")
    assert strict(default) == strict(official) == (1.0, 1.0, 1.0)  # the cut never touches citations
    # Default cuts to the first 75 whitespace-separated words; the official scorer counts 40 and keeps it all.
    assert default.truncated
    assert default.relevance_text == " ".join(text.split()[:75])
    assert not official.truncated
    assert official.relevance_text == text + "."
    assert any("the 75-word cut differs" in n for n in notes)


def test_the_official_cut_splits_at_plain_spaces() -> None:
    # 80 plain words: both cut to the first 75 and join them with single spaces.
    text = " ".join(f"w{i}" for i in range(80))
    default, official, notes = both(f"{text}  |1|")
    assert default.relevance_text == official.relevance_text == " ".join(f"w{i}" for i in range(75))
    assert not any("cut" in n for n in notes)


def test_an_answer_of_citations_only_scores_as_an_empty_answer_with_a_note() -> None:
    # The official scorer crashes on this answer; here it is an empty answer whose citations count.
    default, official, notes = both("|1,2|", metrics=("bleu", "sari"))
    assert strict(default) == strict(official) == (1.0, 1.0, 1.0)  # {1, 2}
    assert default.relevance == official.relevance == {"bleu": 0.0, "sari": 0.0}
    assert official.relevance_text == ""
    assert any("official scorer crashes" in n for n in notes)


def test_an_answer_citing_nothing_is_refused_officially_and_scores_zero_by_default() -> None:
    scores = score_answers([CASE_A], {"A": "She needed surgery."}, metrics=None)
    assert strict(scores.cases[0]) == (0.0, 0.0, 0.0)  # tp 0, fp 0, fn 2
    assert any("official scorer refuses" in n for n in scores.notes)
    with pytest.raises(ValueError, match="case A: the answer cites nothing"):
        score_answers([CASE_A], {"A": "She needed surgery."}, metrics=None, parse="official")


def test_a_well_formed_answer_reads_the_same_and_gets_no_note() -> None:
    answer = "She had a displaced fracture. |1|\nUrgent surgery allows early walking. |2,3|\n\n"
    default, official, notes = both(answer)
    assert notes == []
    assert default.answer == official.answer
    # cited {1, 2, 3}: tp 2, fp 1, fn 0 -> P 2/3, R 1, F1 0.8.
    assert strict(default) == pytest.approx((2 / 3, 1.0, 0.8))


def test_numeric_case_ids_are_refused_officially_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "sub.json"
    # Line 8 holds the second entry's case id (its answer comes first).
    entries = [
        '  {\n    "case_id": "A",\n    "answer": "x |1|"\n  }',
        '  {\n    "answer": "y |2|",\n    "case_id": 7\n  }',
    ]
    path.write_text("[\n" + ",\n".join(entries) + "\n]\n", encoding="utf-8")
    loaded = load_submission(path)
    assert loaded.answers == {"A": "x |1|", "7": "y |2|"}
    assert loaded.notes == (f'{path}:8: [1]: case_id 7 is a number, read as "7" (the official scorer refuses it)',)
    with pytest.raises(SubmissionError, match=r"sub\.json:8: \[1\]: case_id 7 is a number; the official scorer"):
        load_submission(path, "official")
    path.write_text('[{"case_id": null, "answer": "x"}]', encoding="utf-8")
    with pytest.raises(SubmissionError, match=r"sub\.json:1: \[0\]: case_id must be a string, not null"):
        load_submission(path)
    path.write_text('[{"case_id": "A", "answer": "x"},\n {"case_id": "A", "answer": "y"}]', encoding="utf-8")
    with pytest.raises(SubmissionError, match=r"sub\.json:2: \[1\]: case A answered twice"):
        load_submission(path)


def test_score_command_parses_officially_and_notes_every_difference(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(CASE_A.model_dump_json() + "\n", encoding="utf-8")
    submission = tmp_path / "sub.json"
    answer = "She had a displaced fracture. |1| Urgent surgery was advised. |2|"
    submission.write_text(json.dumps([{"case_id": "A", "answer": answer}]), encoding="utf-8")
    runner = CliRunner()
    base = ["citeqa", "score", str(submission), "--cases", str(cases), "--metrics", "none", "--json"]
    default = json.loads(runner.invoke(app, base).output)
    official = json.loads(runner.invoke(app, [*base, "--parse", "official"]).output)
    assert (default["parse"], official["parse"]) == ("default", "official")
    assert default["strict_micro_recall"] == 100.0  # {1, 2}
    assert official["strict_micro_recall"] == 50.0  # {2}: tp 1, fn 1
    assert official["strict_micro_f1"] == pytest.approx(200 / 3)  # P 1, R 1/2
    assert default["notes"] == official["notes"]
    assert "parsed differently" in default["notes"][0]
    table = runner.invoke(app, [*base[:-1], "--parse", "official"])
    assert table.exit_code == 0, table.output
    assert "official parse" in table.output
    assert "note: case A: line 1: parsed differently" in table.output

    # Every note can be printed: 25 cases, each answer read differently by the two parses.
    many = [CASE_A.model_copy(update={"id": f"A{i}"}) for i in range(25)]
    cases.write_text("".join(c.model_dump_json() + "\n" for c in many), encoding="utf-8")
    submission.write_text(json.dumps([{"case_id": c.id, "answer": answer} for c in many]), encoding="utf-8")
    capped = runner.invoke(app, base[:-1])
    assert capped.output.count("parsed differently") == 20
    assert "... and 5 more notes (--notes 0 prints them all" in capped.output
    every = runner.invoke(app, [*base[:-1], "--notes", "0"])
    assert every.output.count("parsed differently") == 25

    cases.write_text(CASE_A.model_dump_json() + "\n", encoding="utf-8")
    submission.write_text(json.dumps([{"case_id": 7, "answer": answer}]), encoding="utf-8")
    refused = runner.invoke(app, [*base, "--parse", "official"])
    assert refused.exit_code != 0
    assert "sub.json:1: [0]: case_id 7 is a number" in refused.output
    bad = runner.invoke(app, [*base, "--parse", "strict"])
    assert bad.exit_code != 0
    assert "--parse must be default or official" in bad.output


def test_parse_modes_are_checked() -> None:
    with pytest.raises(ValueError, match="parse mode must be one of default, official"):
        parse_answer("x |1|", "lenient")  # type: ignore[arg-type]


@pytest.mark.skipif(not EXTERNAL.is_dir(), reason=f"external data not present at {EXTERNAL}")
def test_the_published_example_answers_read_the_same_both_ways() -> None:
    examples = read_cases(EXTERNAL / "archehr-qa_archehr-qa.github.io" / "website_examples_2025.json")
    answers = {c.id: c.reference_answer or "" for c in examples}
    default = score_answers(examples, answers, metrics=None)
    official = score_answers(examples, answers, metrics=None, parse="official")
    assert default.notes == official.notes == []
    assert default.leaderboard() == official.leaderboard()
