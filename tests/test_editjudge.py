"""Algorithm 1 on hand-built pairs: EM/EA/ED worked out by hand, with a matcher that answers from a table."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

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
    # (Each shares a content word with the span: one that shares none is refused, the test below.)
    reference = "Rest at home. Rest instead of work. Have you a fever?"
    table = {"Rest at home.": "Rest and drink fluids.", "Rest instead of work.": "Rest and drink fluids."}
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


def test_unusable_answers_are_counted_and_left_out_never_agreement() -> None:
    """Issue 35: a judge whose answers could not be used showed non-match agreement 1.000 (a failure is NO MATCH,
    which "agrees" with every annotated NO MATCH). Failed answers are no decision: counted, out of every measure."""
    draft = "Rest today. Call us if worse."
    annotations = [
        MatchAnnotation(id="1", sentence="Rest.", draft=draft, gold="Rest today."),
        MatchAnnotation(id="2", sentence="Fever?", draft=draft, gold=None),
        MatchAnnotation(id="3", sentence="Eating?", draft=draft, gold=None),
    ]
    failed = Match(None, flagged=True, answer="???", failure="answer not found in the draft")
    every_failed = judge_agreement(annotations, [failed] * 3)
    assert every_failed.failures == 3
    assert every_failed.n == 3
    assert every_failed.as_dict() == {
        "agreement": None,
        "non_match_agreement": None,
        "match_agreement": None,
        "match_overlap": None,
    }
    some = judge_agreement(annotations, [Match("Rest today."), failed, Match(None)])
    assert some.failures == 1
    assert some.agreement == 1.0  # over the two usable answers
    assert some.non_match_agreement == 1.0  # one usable NO MATCH annotation, answered NO MATCH
    no_matches = judge_agreement(annotations[:1], [Match("Rest today.")])
    assert no_matches.non_match_agreement is None  # no annotated NO MATCH: absent, not 0.0


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
        other_agreement = judge_agreement(annotations, predictions).agreement
        assert calibration.agreement.agreement is not None
        assert other_agreement is not None
        assert calibration.agreement.agreement >= other_agreement


def test_bad_annotation_line_is_named(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "ann.jsonl"
    path.write_text('{"id": "1", "sentence": "a", "draft": "b c", "gold": "b"}\n{"id": "2", "sentence": "a"}\n')
    with pytest.raises(ValueError, match=r"ann.jsonl:2"):
        read_annotations(path)
    path.write_text('{"id": "1", "sentence": "a", "draft": "b c", "gold": "z"}\n')
    with pytest.raises(ValueError, match=r"ann.jsonl:1: gold span is not verbatim"):
        read_annotations(path)


# What a judge's span must be (issue 19): a whole sentence or clause of the draft, carrying enough content.


def test_a_span_must_be_a_whole_sentence_or_clause_of_the_draft() -> None:
    from bedside.tasks.drafting.matchers import is_unit

    draft = "Hi Sam. Rest today, drink fluids and call us if it gets worse. Take care."
    assert is_unit("Rest today, drink fluids and call us if it gets worse.", draft)  # a sentence
    assert is_unit("Rest today, drink fluids and call us if it gets worse", draft)  # without its full stop
    assert is_unit("Rest today", draft)  # a clause cut at a comma
    assert is_unit("drink fluids", draft)  # cut at the comma and before "and"
    assert is_unit("and call us if it gets worse.", draft)  # a clause may keep its conjunction ...
    assert is_unit("call us if it gets worse", draft)  # ... or drop it
    assert is_unit("drink fluids and call us if it gets worse.", draft)  # a run of whole clauses
    assert is_unit(draft.split(". ")[1] + ".", draft)
    assert not is_unit(draft, draft)  # the whole draft: four sentences
    assert not is_unit("Hi Sam. Rest today", draft)  # across a sentence break
    assert not is_unit("e", draft)
    assert not is_unit("call us", draft)  # part of a clause
    assert not is_unit("est today", draft)  # starts inside a word
    assert not is_unit("", draft)
    one_sentence = "Please rest and drink fluids."
    assert is_unit(one_sentence, one_sentence)  # a one-sentence draft is its own sentence


def test_a_span_must_carry_a_share_of_the_sentence_content() -> None:
    from bedside.tasks.drafting.matchers import MIN_CONTENT_SHARE, content_share, span_failure

    sentence = "Your blood tests came back normal, so no changes are needed."  # 8 content words
    assert content_share("Hi Sam,", sentence) == pytest.approx(2 / 8)
    assert content_share("Your results were all fine.", sentence) == pytest.approx(4 / 8)  # a paraphrase
    assert content_share("Anything at all", "Thanks!") == 1.0  # capped
    draft = "Hi Sam, your results were all fine. Bye."
    assert span_failure("your results were all fine.", sentence, draft) is None
    assert MIN_CONTENT_SHARE == 0.25
    assert span_failure("Bye.", sentence, draft) == "too little of the sentence's content (share 0.12 < 0.25)"
    assert span_failure("Bye.", sentence, draft, min_content_share=0.1) is None
    assert span_failure(draft, sentence, draft) == "not a whole sentence or clause of the draft"


def test_every_human_marked_match_passes_the_span_rules() -> None:
    from bedside.tasks.drafting.matchers import span_failure

    matches = [a for a in read_annotations() if a.gold is not None]
    assert len(matches) == 144
    assert [a.id for a in matches if span_failure(a.gold or "", a.sentence, a.draft) is not None] == []


def test_the_whole_draft_or_a_letter_is_a_matcher_failure_never_a_match() -> None:
    sentence = "Please call the clinic today to book a follow-up visit."  # 7 content words
    draft = "Hi Sam. Please call the clinic today to book a visit. Bye."
    for answer in (draft, "e", '"e"', "Hi Sam. Please call the clinic today", "Bye."):
        found = read_match_answer(answer, draft, sentence=sentence)
        assert found.span is None, answer
        assert found.flagged, answer
        assert found.failure, answer
    assert read_match_answer("e", draft, sentence=sentence).failure == "not a whole sentence or clause of the draft"
    assert "too little" in (read_match_answer("Bye.", draft, sentence=sentence).failure or "")  # 1 of 7
    kept = read_match_answer("Please call the clinic today to book a visit.", draft, sentence=sentence)
    assert (kept.span, kept.flagged, kept.failure) == ("Please call the clinic today to book a visit.", False, None)
    # An aligned paraphrase is held to the same rules: aligned to the whole draft, it fails.
    aligned = read_match_answer("hi sam. please call the clinic today to book a visit. bye", draft, sentence=sentence)
    assert aligned.span is None
    assert aligned.failure == "not a whole sentence or clause of the draft"
    unreadable = read_match_answer("The draft says nothing like this at all, sorry", draft, sentence=sentence)
    assert unreadable.failure == "answer not found in the draft"


def test_matcher_failures_are_counted_per_draft_and_a_draft_with_no_usable_answer_has_no_f1() -> None:
    """Every answer unusable: the decisions count as NO MATCH, but the pair was not judged, so its precision,
    recall and Edit-F1 are absent (None), never 0.0 (issue 35). A pair with some usable answers keeps its F1
    (tests/test_golden_drafting.py, c1)."""
    from bedside.tasks.drafting.editjudge import EditJudgement

    async def whole_draft(chat: list[ChatMessage]) -> Completion:
        return SimpleNamespace(text=DRAFT)  # type: ignore[return-value]  # the matcher reads .text only

    result = asyncio.run(edit_judge("Please rest. Any fever?", DRAFT, LLMMatcher(whole_draft)))
    assert result.counts == EditCounts(em=0, ea=2, ed=4)  # as if the judge had answered NO MATCH twice
    assert result.failures == 2
    data = result.to_dict()
    assert data["matcher_failures"] == 2
    assert not result.judged
    assert (data["precision"], data["recall"], data["f1"]) == (None, None, None)
    assert summarise([result]).counts == []
    assert all(d["failure"] and d["flagged"] and d["answer"] == DRAFT for d in data["decisions"])
    assert EditJudgement.from_dict(data).failures == 2


def test_one_span_matched_to_several_sentences_counts_only_where_it_shares_a_word() -> None:
    """Issue 45: a judge answering any whole draft sentence gave one span to three reference sentences with no word
    in common (Edit-F1 0.75 where every offline matcher gives 0); such matches are refused, and say why."""

    class AnySentence:
        name = "any"

        async def match(self, sentence: str, draft: str) -> Match:
            return Match("Please rest and drink fluids.")

    reference = "Your knee scan is normal. Take ibuprofen twice a day. Please rest this week."
    judged = asyncio.run(edit_judge(reference, "Please rest and drink fluids. Call us.", AnySentence()))
    kept = [d.sentence for d in judged.decisions if d.matched]
    assert kept == ["Please rest this week."]  # shares "rest" with the span
    refused = [d for d in judged.decisions if not d.matched]
    assert len(refused) == 2
    assert all(d.flagged and "matched to 3 reference sentences" in (d.failure or "") for d in refused)
    assert judged.failures == 2
    alone = asyncio.run(edit_judge("Your knee scan is normal.", "Please rest and drink fluids.", AnySentence()))
    assert alone.decisions[0].matched  # one sentence, one span: the matcher's own rules decide
