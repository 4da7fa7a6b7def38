"""The clinical-safety guard on bedside's labelled pairs, and behind every matcher."""

from __future__ import annotations

import asyncio

import pytest

from bedside.llm import ChatMessage, Completion, get_model
from bedside.tasks.drafting.editjudge import edit_judge
from bedside.tasks.drafting.guard import CONFLICT_KINDS, ClinicalGuard, default_guard, read_guard_pairs
from bedside.tasks.drafting.matcher_kinds import make_matcher
from bedside.tasks.drafting.matchers import EmbeddingMatcher, GuardedMatcher, LexicalMatcher

PAIRS = read_guard_pairs()
NEGATIVES = [p for p in PAIRS if not p.match]
PARAPHRASES = [p for p in PAIRS if p.match]
# The paraphrases the rules cannot see through: "don't stay in bed" vs "avoid bed rest" (a negated verb that is
# not a medication action, against "avoid"); "a 90-day supply" vs "a 90-day refill", two words WordNet relates in
# no way (a refill is "a prescription drug that is provided again"), read as a swap since the seventeenth round.
# Listed so a new miss fails the test.
KNOWN_PARAPHRASE_MISSES = {"c24-4", "c16-2"}


def test_the_labelled_set_is_large_and_half_hard_negatives() -> None:
    assert len(PAIRS) >= 150
    assert len(NEGATIVES) >= 0.45 * len(PAIRS)
    assert {p.kind for p in NEGATIVES} == set(CONFLICT_KINDS)
    assert len({p.id for p in PAIRS}) == len(PAIRS)


def test_every_hard_negative_has_a_conflict() -> None:
    guard = default_guard()
    missed = [p.id for p in NEGATIVES if not guard.conflicts(p.reference, p.candidate)]
    assert missed == []
    # Most are caught for the reason they were written for (the rest for a neighbouring one: "30 minutes" is a
    # time as well as a number).
    same_kind = sum(p.kind in {c.kind for c in guard.conflicts(p.reference, p.candidate)} for p in NEGATIVES)
    assert same_kind / len(NEGATIVES) >= 0.9


def test_paraphrases_pass_the_guard() -> None:
    guard = default_guard()
    rejected = {p.id for p in PARAPHRASES if guard.conflicts(p.reference, p.candidate)}
    assert rejected == KNOWN_PARAPHRASE_MISSES


@pytest.mark.parametrize("matcher", [EmbeddingMatcher(), LexicalMatcher()], ids=["embedding", "lexical"])
def test_guarded_matchers_reject_hard_negatives_and_keep_paraphrases(matcher: EmbeddingMatcher) -> None:
    guarded = GuardedMatcher(matcher)

    async def decide(reference: str, candidate: str, which: object) -> bool:
        return (await which.match(reference, candidate)).span is not None  # type: ignore[attr-defined]

    async def main() -> tuple[list[bool], list[bool], list[bool], list[bool]]:
        bare_neg = [await decide(p.reference, p.candidate, matcher) for p in NEGATIVES]
        guarded_neg = [await decide(p.reference, p.candidate, guarded) for p in NEGATIVES]
        bare_par = [await decide(p.reference, p.candidate, matcher) for p in PARAPHRASES]
        guarded_par = [await decide(p.reference, p.candidate, guarded) for p in PARAPHRASES]
        return bare_neg, guarded_neg, bare_par, guarded_par

    bare_neg, guarded_neg, bare_par, guarded_par = asyncio.run(main())
    assert sum(bare_neg) > len(NEGATIVES) / 2  # the problem: bare matchers call most hard negatives matches
    assert not any(guarded_neg)
    kept = [p.id for p, bare, kept in zip(PARAPHRASES, bare_par, guarded_par, strict=True) if bare and not kept]
    assert set(kept) <= KNOWN_PARAPHRASE_MISSES


def test_examples_from_the_issue() -> None:
    guard = ClinicalGuard()
    assert [c.kind for c in guard.conflicts("Continue omeprazole.", "Increase omeprazole.")] == ["action"]
    assert [c.kind for c in guard.conflicts("Continue aspirin.", "Stop aspirin.")] == ["action"]
    assert guard.conflicts("Please keep taking it for now.", "Please don't stop it on your own yet.") == []
    assert guard.conflicts("Take Tylenol for the pain.", "Take acetaminophen for the pain.") == []
    assert [c.kind for c in guard.conflicts("Take 40 mg of furosemide.", "Take furosemide.")] == ["number"]
    assert [c.kind for c in guard.conflicts("Ice the left knee.", "Ice the right knee.")] == ["laterality"]
    assert guard.conflicts("Call us right away.", "Please call the office immediately.") == []
    assert guard.conflicts("Please call 911 if it gets worse.", "Call 911 if it gets worse.") == []


def test_a_rejected_candidate_falls_back_to_the_next_best_sentence() -> None:
    draft = "Increase your omeprazole to twice a day. Keep taking your omeprazole once a day for now."
    matcher = make_matcher("lexical", threshold=0.3)
    found = asyncio.run(matcher.match("Continue omeprazole once daily.", draft))
    assert found.span == "Keep taking your omeprazole once a day for now."


def test_flag_mode_keeps_the_match_and_lists_the_conflict() -> None:
    draft = "Please stop your aspirin."
    flagged = asyncio.run(make_matcher("lexical", guard="flag").match("Please continue your aspirin.", draft))
    assert flagged.span == draft
    assert flagged.flagged
    assert flagged.conflicts
    assert flagged.conflicts[0].startswith("action")
    rejected = asyncio.run(make_matcher("lexical").match("Please continue your aspirin.", draft))
    assert rejected.span is None
    assert rejected.conflicts
    bare = asyncio.run(make_matcher("lexical", guard="off").match("Please continue your aspirin.", draft))
    assert bare.span == draft
    assert not bare.conflicts
    with pytest.raises(ValueError, match="guard 'maybe'"):
        make_matcher("lexical", guard="maybe")  # type: ignore[arg-type]


def test_the_llm_judge_is_guarded_too() -> None:
    draft = "I'm sorry you are unwell. Stop your aspirin before the procedure."

    def rules(messages: object) -> str:
        return "Stop your aspirin before the procedure."

    async def main(mode: str) -> object:
        async with get_model("scripted/judge", options={"rules": rules}) as model:

            async def generate(chat: list[ChatMessage]) -> Completion:
                return await model.generate(chat)

            matcher = make_matcher("llm", generate, guard=mode)  # type: ignore[arg-type]
            return await edit_judge("Keep taking your aspirin before the procedure.", draft, matcher)

    rejected = asyncio.run(main("reject"))
    assert rejected.counts.em == 0  # type: ignore[attr-defined]
    assert rejected.decisions[0].conflicts  # type: ignore[attr-defined]
    flagged = asyncio.run(main("flag"))
    assert flagged.counts.em == 1  # type: ignore[attr-defined]
    assert flagged.decisions[0].flagged  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["embedding", "lexical"])
def test_identical_clinical_texts_score_one(kind: str) -> None:
    text = (
        "I'm sorry the nausea is worse. Please stop the ondansetron 8 mg and start prochlorperazine 10 mg every "
        "6 hours as needed. Do not take ibuprofen. Ice the left knee twice a day. We will call you tomorrow."
    )
    result = asyncio.run(edit_judge(text, text, make_matcher(kind)))
    assert result.counts.f1 == 1.0
