"""Algorithm 1 on hand-built pairs: EM/EA/ED worked out by hand, with a matcher that answers from a table."""

from __future__ import annotations

import asyncio

import pytest

from bedside.llm import ChatMessage, Completion
from bedside.tasks.drafting.editjudge import EditCounts, Match, edit_judge, summarise
from bedside.tasks.drafting.matchers import EmbeddingMatcher, LexicalMatcher, LLMMatcher, align, read_match_answer
from bedside.tasks.drafting.validation import MatchAnnotation, calibrate, judge_agreement, read_annotations


class TableMatcher:
    """Answers each reference sentence from a fixed table (absent = NO MATCH), like a perfect annotator."""

    name = "table"

    def __init__(self, table: dict[str, str]) -> None:
        self.table = table
        self.asked: list[str] = []

    async def match(self, sentence: str, draft: str) -> Match:
        self.asked.append(sentence)
        return Match(self.table.get(sentence))


def judge(reference: str, draft: str, table: dict[str, str]):  # type: ignore[no-untyped-def]
    return asyncio.run(edit_judge(reference, draft, TableMatcher(table)))


DRAFT = "I'm sorry you feel unwell. Rest and drink fluids. Call us if it gets worse. Take care."


def test_all_match() -> None:
    reference = "Sorry you are sick. Please rest and hydrate. Call if worse. Take care."
    table = {
        "Sorry you are sick.": "I'm sorry you feel unwell.",
        "Please rest and hydrate.": "Rest and drink fluids.",
        "Call if worse.": "Call us if it gets worse.",
        "Take care.": "Take care.",
    }
    result = judge(reference, DRAFT, table)
    # 4 reference sentences all matched; nothing of the draft is left.
    assert result.counts == EditCounts(em=4, ea=0, ed=0)
    assert (result.counts.precision, result.counts.recall, result.counts.f1) == (1.0, 1.0, 1.0)
    assert result.remainder == ()


def test_none_match() -> None:
    result = judge("Have you had a fever? Are you eating?", DRAFT, {})
    # 2 additions; all 4 draft sentences must be deleted.
    assert result.counts == EditCounts(em=0, ea=2, ed=4)
    assert result.counts.f1 == 0.0
    assert [d.span for d in result.decisions] == [None, None]


def test_partial_span_leaves_the_rest_of_its_sentence_as_a_deletion() -> None:
    draft = "Rest today, and book a visit for Monday. Take care."
    result = judge("Please rest.", draft, {"Please rest.": "Rest today,"})
    # EM=1. Left: "and book a visit for Monday." and "Take care." -> ED=2.
    assert result.counts == EditCounts(em=1, ea=0, ed=2)
    assert result.remainder == ("and book a visit for Monday.", "Take care.")
    assert result.counts.precision == pytest.approx(1 / 3)
    assert result.counts.recall == 1.0
    assert result.counts.f1 == pytest.approx(0.5)
    decision = result.decisions[0]
    assert draft[decision.start : decision.end] == "Rest today,"


def test_one_span_matching_two_reference_sentences_counts_twice_and_is_removed_once() -> None:
    reference = "Rest at home. Do not go to work. Have you a fever?"
    table = {"Rest at home.": "Rest and drink fluids.", "Do not go to work.": "Rest and drink fluids."}
    result = judge(reference, DRAFT, table)
    # EM=2 (both matched the same draft sentence), EA=1; left: 3 of the 4 draft sentences.
    assert result.counts == EditCounts(em=2, ea=1, ed=3)
    assert result.counts.precision == pytest.approx(2 / 5)
    assert result.counts.recall == pytest.approx(2 / 3)
    assert result.counts.f1 == pytest.approx(2 * 0.4 * (2 / 3) / (0.4 + 2 / 3))
    assert result.decisions[0].start == result.decisions[1].start


def test_duplicate_sentences() -> None:
    draft = "Call us. Rest well. Call us."
    # Two identical reference sentences each claim their own occurrence of the repeated draft sentence.
    both = judge("Call us. Call us.", draft, {"Call us.": "Call us."})
    assert both.counts == EditCounts(em=2, ea=0, ed=1)
    assert both.remainder == ("Rest well.",)
    assert {both.decisions[0].start, both.decisions[1].start} == {0, draft.rindex("Call us.")}
    # One reference sentence removes only the first occurrence: the repeat is still a deletion.
    once = judge("Call us.", draft, {"Call us.": "Call us."})
    assert once.counts == EditCounts(em=1, ea=0, ed=2)
    assert once.remainder == ("Rest well.", "Call us.")


def test_punctuation_left_by_a_cut_is_not_a_sentence() -> None:
    result = judge("Rest.", "Rest and drink fluids.", {"Rest.": "Rest and drink fluids"})
    assert result.counts == EditCounts(em=1, ea=0, ed=0)


def test_span_not_in_draft_is_an_error() -> None:
    with pytest.raises(ValueError, match="not in the draft"):
        judge("Rest.", DRAFT, {"Rest.": "Sleep a lot."})


def test_empty_draft_and_micro_macro() -> None:
    empty = judge("Rest. Drink.", "", {})
    assert empty.counts == EditCounts(em=0, ea=2, ed=0)
    assert empty.counts.precision == 0.0  # 0/0 is 0
    perfect = EditCounts(em=2, ea=0, ed=0)
    half = EditCounts(em=1, ea=1, ed=1)
    summary = summarise([perfect, half, empty])
    # micro pools counts: EM 3, EA 3, ED 1 -> P 3/4, R 3/6.
    assert summary.micro.precision == pytest.approx(0.75)
    assert summary.micro.recall == pytest.approx(0.5)
    assert summary.micro.f1 == pytest.approx(0.6)
    # macro averages per-pair scores: P (1 + .5 + 0)/3, F1 (1 + .5 + 0)/3.
    assert summary.macro.precision == pytest.approx(0.5)
    assert summary.macro.f1 == pytest.approx(0.5)


def test_judgement_round_trips_through_a_dict() -> None:
    from bedside.tasks.drafting.editjudge import EditJudgement

    result = judge("Rest at home. Have you a fever?", DRAFT, {"Rest at home.": "Rest and drink fluids."})
    data = result.to_dict()
    assert (data["em"], data["ea"], data["ed"]) == (1, 1, 3)
    again = EditJudgement.from_dict(data)
    assert again.counts == result.counts
    assert again.decisions == result.decisions


# The LLM judge's answers.


def test_read_match_answer() -> None:
    draft = "Hi Sam. Please call the clinic today. Bye."
    assert read_match_answer("NO MATCH", draft).span is None
    assert read_match_answer(" no match.", draft).span is None
    verbatim = read_match_answer("Please call the clinic today.", draft)
    assert (verbatim.span, verbatim.flagged) == ("Please call the clinic today.", False)
    quoted = read_match_answer('"Please call the clinic today."', draft)
    assert (quoted.span, quoted.flagged) == ("Please call the clinic today.", False)
    paraphrased = read_match_answer("please call our clinic today", draft)
    assert paraphrased.flagged
    assert paraphrased.span == "Please call the clinic today."
    assert paraphrased.answer == "please call our clinic today"
    unrelated = read_match_answer("The draft says nothing like this at all, sorry", draft)
    assert unrelated.span is None
    assert unrelated.flagged


def test_align_snaps_to_words() -> None:
    span, score = align("call the clini", "Hi. Please call the clinic today.")
    assert span == "call the clinic"
    assert score > 90


def test_llm_matcher_against_a_served_model() -> None:
    from bedside.llm import get_model
    from bedside.testing import ScriptedServer

    rules = [(r"Clinician sentence:\s*Please rest\.", "Rest and drink fluids."), (r"Clinician sentence", "NO MATCH")]

    async def main(url: str) -> object:
        async with get_model(url, role="judge", cache=None) as model:

            async def generate(chat: list[ChatMessage]) -> Completion:
                return await model.generate(chat)

            return await edit_judge("Please rest. Any fever?", DRAFT, LLMMatcher(generate))

    with ScriptedServer(rules) as server:
        result = asyncio.run(main(server.model_name("judge")))
        assert server.stats()["requests"] == 2
    assert result.counts == EditCounts(em=1, ea=1, ed=3)  # type: ignore[attr-defined]


# Offline matchers and validation.


def test_offline_matchers_match_whole_draft_sentences() -> None:
    draft = "A dry cough is a common side effect of lisinopril. Your readings look fine."
    for matcher in (EmbeddingMatcher(), LexicalMatcher()):
        found = asyncio.run(matcher.match("Lisinopril often causes a dry cough.", draft))
        assert found.span == "A dry cough is a common side effect of lisinopril.", matcher.name
        missing = asyncio.run(matcher.match("Do you have a fever or chills?", draft))
        assert missing.span is None, matcher.name


def test_judge_agreement_measures() -> None:
    draft = "Rest today. Call us if worse."
    annotations = [
        MatchAnnotation(id="1", sentence="Rest.", draft=draft, gold="Rest today."),
        MatchAnnotation(id="2", sentence="Call if worse.", draft=draft, gold="Call us if worse."),
        MatchAnnotation(id="3", sentence="Fever?", draft=draft, gold=None),
        MatchAnnotation(id="4", sentence="Eating?", draft=draft, gold=None),
    ]
    predictions = [Match("Rest today."), Match("if worse."), Match(None), Match("Rest today.")]
    agreement = judge_agreement(annotations, predictions)
    assert agreement.agreement == 0.75  # 1, 2, 3 right; 4 wrong
    assert agreement.non_match_agreement == 0.5
    assert agreement.match_agreement == 0.5  # only 1 exact
    assert agreement.match_overlap == 1.0  # "if worse." overlaps the gold span


def test_shipped_annotations_and_calibration() -> None:
    annotations = read_annotations()
    assert len(annotations) >= 50
    assert any(a.gold is None for a in annotations)
    assert any(a.gold for a in annotations)
    calibration = calibrate(LexicalMatcher(), annotations)
    assert calibration.held_out is not None
    # The chosen threshold is at least as good as any other: compare with two arbitrary ones.
    for other in (0.1, 0.6):
        predictions = [asyncio.run(LexicalMatcher(other).match(a.sentence, a.draft)) for a in annotations]
        assert calibration.agreement.agreement >= judge_agreement(annotations, predictions).agreement


def test_bad_annotation_line_is_named(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "ann.jsonl"
    path.write_text('{"id": "1", "sentence": "a", "draft": "b c", "gold": "b"}\n{"id": "2", "sentence": "a"}\n')
    with pytest.raises(ValueError, match=r"ann.jsonl:2"):
        read_annotations(path)
    path.write_text('{"id": "1", "sentence": "a", "draft": "b c", "gold": "z"}\n')
    with pytest.raises(ValueError, match=r"ann.jsonl:1: gold span is not verbatim"):
        read_annotations(path)
