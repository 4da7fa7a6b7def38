"""The guard's holes found by an outside audit (issue 30): each kind of reversal is not a match under any default
matcher, paraphrases of the same shapes still match, and OncQA's two reversals are caught."""

from __future__ import annotations

import asyncio
import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bedside.llm import ChatMessage, Completion, get_model
from bedside.tasks.drafting.editjudge import Matcher, edit_judge, reference_sentences
from bedside.tasks.drafting.guard import (
    ClinicalGuard,
    default_guard,
    evaluate_guard,
    read_guard_pairs,
)
from bedside.tasks.drafting.matcher_kinds import make_matcher
from bedside.tasks.drafting.matchers import LexicalMatcher
from page_text import line_with

PAIRS = read_guard_pairs()
NEW_KINDS = ("dose order", "implicit polarity", "food", "drug class", "plan", "gerund", "binding")
NEW_NEGATIVES = [p for p in PAIRS if p.category in NEW_KINDS and not p.match]
NEW_PARAPHRASES = [p for p in PAIRS if p.category and p.match]
OFFLINE_MATCHERS = ("embedding", "lexical", "trained")
ONCQA = Path(__file__).resolve().parents[2] / "shared" / "data" / "external" / "AIM-Harvard_OncQA"
ONCQA_STAGE2 = ONCQA / "Data" / "parsed_data" / "stage2.csv"


def test_the_new_hard_negatives_cover_every_hole_with_sixty_or_more() -> None:
    assert len(NEW_NEGATIVES) >= 60
    assert {p.category for p in NEW_NEGATIVES} == set(NEW_KINDS)
    assert all(sum(p.category == kind for p in NEW_NEGATIVES) >= 8 for kind in NEW_KINDS)
    assert len(NEW_PARAPHRASES) >= 30
    assert {p.category for p in NEW_PARAPHRASES} == {*NEW_KINDS, "list numbering", "inability"}


@pytest.fixture(scope="module")
def offline() -> dict[str, Matcher]:
    return {kind: make_matcher(kind) for kind in OFFLINE_MATCHERS}


class EchoJudge:
    """An LLM judge that always answers with the candidate it is handed: the guard must overrule it."""

    def __init__(self) -> None:
        self.answer = ""

    def rules(self, messages: object) -> str:
        return self.answer


@pytest.fixture(scope="module")
def judged_by_llm() -> Any:
    """``decide(reference, draft, answer)``: the guarded llm matcher's span when the judge answers ``answer``."""
    judge = EchoJudge()

    async def decide_all(items: list[tuple[str, str, str]]) -> list[str | None]:
        async with get_model("scripted/judge", options={"rules": judge.rules}) as model:

            async def generate(chat: list[ChatMessage]) -> Completion:
                return await model.generate(chat)

            matcher = make_matcher("llm", generate)
            spans = []
            for reference, draft, answer in items:
                judge.answer = answer
                spans.append((await matcher.match(reference, draft)).span)
            return spans

    return lambda items: asyncio.run(decide_all(items))


@pytest.mark.parametrize("kind", NEW_KINDS)
def test_each_new_kind_of_reversal_is_not_a_match_under_every_default_matcher(
    kind: str, offline: dict[str, Matcher], judged_by_llm: Any
) -> None:
    negatives = [p for p in NEW_NEGATIVES if p.category == kind]

    async def spans(matcher: Matcher) -> list[str | None]:
        return [(await matcher.match(p.reference, p.candidate)).span for p in negatives]

    matched = {
        name: [p.id for p, s in zip(negatives, asyncio.run(spans(m)), strict=True) if s] for name, m in offline.items()
    }
    llm = judged_by_llm([(p.reference, p.candidate, p.candidate) for p in negatives])
    matched["llm"] = [p.id for p, span in zip(negatives, llm, strict=True) if span]
    assert matched == {name: [] for name in (*OFFLINE_MATCHERS, "llm")}
    # Without the guard, similarity calls some of each kind matches: the guard is what rejects them.
    bare = make_matcher("lexical", guard="off")
    bare_spans = asyncio.run(spans(bare))
    assert any(bare_spans)


def test_paraphrases_of_the_same_shapes_pass_the_guard_and_still_match(judged_by_llm: Any) -> None:
    guard = default_guard()
    rejected = {p.id: [str(c) for c in guard.conflicts(p.reference, p.candidate)] for p in NEW_PARAPHRASES}
    assert {k: v for k, v in rejected.items() if v} == {}
    kept = judged_by_llm([(p.reference, p.candidate, p.candidate) for p in NEW_PARAPHRASES])
    assert all(span == p.candidate for p, span in zip(NEW_PARAPHRASES, kept, strict=True))

    async def lexical() -> list[tuple[bool, bool]]:
        bare, guarded = make_matcher("lexical", guard="off"), make_matcher("lexical")
        return [
            ((await bare.match(p.reference, p.candidate)).span is not None,
             (await guarded.match(p.reference, p.candidate)).span is not None)
            for p in NEW_PARAPHRASES
        ]  # fmt: skip

    assert all(guarded for bare, guarded in asyncio.run(lexical()) if bare)


def test_whole_set_rejection_and_recall() -> None:
    result = evaluate_guard(PAIRS)
    assert result.total.rejection == 1.0
    # the known misses: "avoid bed rest", and "a 90-day refill" for "supply" (unrelated words to WordNet)
    assert result.total.kept >= result.total.paraphrases - 2
    assert sorted(p.id for p, _ in result.rejected) == ["c16-2", "c24-4"]
    assert {g.group for g in result.groups} >= {*NEW_KINDS, "list numbering"}


def test_the_instructions_are_aligned_tuples() -> None:
    guard = ClinicalGuard()
    signals = guard.signals("Take metoprolol 25 mg in the morning and 50 mg at night.")
    assert [(i.drug, i.action, i.dose, i.unit, i.time) for i in signals.instructions] == [
        ("metoprolol", "take", "25", "mg", "morning"),
        ("metoprolol", "take", "50", "mg", "evening"),
    ]
    bound = guard.signals("Continue the lisinopril and metformin, but consider stopping your aspirin.")
    assert {(i.drug, i.action) for i in bound.instructions} == {
        ("lisinopril", "continue"),
        ("metformin", "continue"),
        ("aspirin", "stop"),
    }
    # The same sets, another pairing: only the aligned reading tells them apart.
    schedule, swapped = "Take 10 mg in the morning and 20 mg at night.", "Take 20 mg in the morning and 10 mg at night."
    a, b = guard.signals(schedule), guard.signals(swapped)
    assert (a.numbers, a.times) == (b.numbers, b.times)
    assert guard.conflicts(schedule, "Take 20 mg at night and 10 mg in the morning.") == []
    assert [c.kind for c in guard.conflicts(schedule, swapped)] == ["number"]


def test_verb_forms_and_phrases_that_are_not_actions() -> None:
    guard = ClinicalGuard()
    assert guard.signals("I would recommend increasing your omeprazole.").actions == {"increase"}
    assert guard.signals("We are tapering and then discontinuing it.").actions == {"decrease", "stop"}
    assert guard.signals("Take your omeprazole as prescribed.").actions == {"take"}
    assert guard.signals("Aspirin can increase the risk of bleeding.").actions == frozenset()
    assert guard.signals("Lower back pain usually settles.").actions == frozenset()
    # A negation an action phrase consumed is not a negation of the sentence.
    assert not guard.signals("You no longer need the prednisone.").negated
    assert guard.conflicts("Stop the prednisone.", "You no longer need the prednisone.") == []
    # "No more than" is a cap, not a stop, and still differs from a plain dose.
    assert "stop" not in guard.signals("Take no more than 8 tablets a day.").actions
    assert guard.conflicts("Take no more than 8 tablets a day.", "Take 8 tablets a day.")
    # A list marker is not a number; a number after the marker still is.
    assert guard.signals("3. Call us if it gets worse.").numbers == frozenset()
    assert guard.signals("2. Take 2 tablets.").numbers == {"2"}


def test_drug_classes_come_from_the_class_list() -> None:
    guard = ClinicalGuard()
    assert guard.signals("Hold your blood thinners.").classes == {"class:anticoagulant"}
    assert guard.conflicts("Take your statin at night.", "Take the atorvastatin at night.") == []
    assert [c.kind for c in guard.conflicts("Take your statin at night.", "Take the metoprolol at night.")] == ["drug"]
    # A drug in no listed class is never told apart from a class.
    assert guard.conflicts("Take your statin at night.", "Take the ezetimibe at night.") == []


def test_guard_pairs_from_a_file_name_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    good = {"id": "a", "reference": "Stop aspirin.", "candidate": "Continue aspirin.", "match": False, "kind": "action"}
    path.write_text(json.dumps(good) + "\n" + json.dumps({"id": "b", "reference": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"pairs\.jsonl, line 2"):
        read_guard_pairs(path)
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    assert evaluate_guard(read_guard_pairs(path)).total.rejected == 1


def test_guard_eval_on_a_copy_of_a_held_out_file_keeps_its_errors_unread(tmp_path: Path) -> None:
    """Naming a shipped held-out file with --pairs once printed its errors, which made it a development set."""
    from importlib import resources

    from bedside.cli import app

    copy = tmp_path / "pairs.jsonl"
    copy.write_bytes((resources.files("bedside.tasks.drafting") / "data" / "guard_heldout_42.jsonl").read_bytes())
    result = CliRunner().invoke(app, ["drafting", "guard-eval", "--no-matcher", "--pairs", str(copy)])
    assert result.exit_code == 0, result.output
    assert "outside-written, held out 36: a held-out set, totals only" in result.output
    leaked = bool(re.search(r"\bg42-\d{3}\b", result.output))  # a bool: a failure must not print the output
    assert not leaked, "a copy of a held-out file printed its pairs"
    shown = CliRunner().invoke(
        app, ["drafting", "guard-eval", "--no-matcher", "--pairs", str(copy), "--show-held-out-errors"]
    )
    # asked for: a development set from then on (a bool first: a failing assertion would print the output)
    printed = bool(re.search(r"\bg42-\d{3}\b", shown.output))
    assert printed, "asked for, the copy's errors were not shown"
    copy.write_bytes(copy.read_bytes() + b"\n")  # not the same bytes: the user's own pairs, errors shown
    own = CliRunner().invoke(app, ["drafting", "guard-eval", "--no-matcher", "--pairs", str(copy)])
    printed = bool(re.search(r"\bg42-\d{3}\b", own.output))
    assert printed, "a file that is not a shipped held-out set had its errors hidden"


def test_guard_eval_lists_the_uncertain_pairs_when_asked(tmp_path: Path) -> None:
    from bedside.cli import app

    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {"id": "u1", "reference": "Go to urgent care tonight.", "candidate": "Go to the pharmacy tonight.",
         "match": False, "kind": "place"},
        {"id": "k1", "reference": "Take it every morning.", "candidate": "Take it every morning.", "match": True,
         "kind": "same"},
    ]  # fmt: skip
    pairs.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    quiet = CliRunner().invoke(app, ["drafting", "guard-eval", "--no-matcher", "--pairs", str(pairs)])
    assert quiet.exit_code == 0, quiet.output
    assert "uncertain (" not in quiet.output
    shown = CliRunner().invoke(
        app,
        ["drafting", "guard-eval", "--no-matcher", "--pairs", str(pairs), "--show-uncertain"],
        env={"COLUMNS": "300"},
    )
    assert "uncertain (reversed, place) u1: 'Go to urgent care tonight.' / 'Go to the pharmacy tonight.' (the " in (
        shown.output
    )
    assert "k1" not in shown.output.split("uncertain (")[-1]  # the kept pair agrees: not listed


def test_guard_eval_counts_the_pairs_that_pass_silently_per_kind(tmp_path: Path) -> None:
    """A newcomer's trial: the per-kind table showed rejected and uncertain, and left the silent passes (the
    errors nobody is told about) to subtraction."""
    from bedside.cli import app

    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {"id": "s1", "reference": "Keep your epinephrine pen with you at all times.",
         "candidate": "Keep your epinephrine pen in the kitchen drawer at home.", "match": False,
         "kind": "storage"},
        {"id": "r1", "reference": "Take 10 mg every morning.", "candidate": "Take 20 mg every morning.",
         "match": False, "kind": "dose"},
    ]  # fmt: skip
    pairs.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    result = CliRunner().invoke(
        app, ["drafting", "guard-eval", "--no-matcher", "--pairs", str(pairs)], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert "| group | hard negatives rejected | uncertain | passed silently | paraphrases kept |" in result.output
    assert "| storage | 0/1 (0.00) | 0/1 (0.00) | 1/1 (1.00) | - |" in result.output
    assert "| dose | 1/1 (1.00) | 0/1 (0.00) | 0/1 (0.00) | - |" in result.output


def test_guard_eval_lists_the_matchers_own_errors_on_your_pairs(tmp_path: Path) -> None:
    """A newcomer's trial: the matcher line's wrong pairs were named only in --json."""
    from bedside.cli import app

    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {"id": "u1", "reference": "You must have someone stay with you tonight after the sedation.",
         "candidate": "You may have someone stay with you tonight after the sedation.", "match": False,
         "kind": "modality"},
        {"id": "k1", "reference": "Take it every morning.", "candidate": "Take it every morning.", "match": True,
         "kind": "same"},
    ]  # fmt: skip
    pairs.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    result = CliRunner().invoke(app, ["drafting", "guard-eval", "--pairs", str(pairs)], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "reversed pairs matched 1.000 (1/1)" in result.output
    # one line a matcher error; the paraphrase k1 is matched, as it should be, so it is not listed
    assert _matcher_errors(result.output) == [
        "reversed pair matched (modality) by the default matcher u1: 'You must have someone stay with you tonight "
        "after the sedation.' / 'You may have someone stay with you tonight after the sedation.'"
    ]
    refused = CliRunner().invoke(
        app, ["drafting", "guard-eval", "--pairs", str(pairs), "--uncertain", "reject"], env={"COLUMNS": "300"}
    )
    assert refused.exit_code == 0, refused.output
    assert _matcher_errors(refused.output) == []


def _matcher_errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(("reversed pair matched", "paraphrase not"))]


def test_guard_eval_names_a_bad_match_and_says_when_no_kind_can_be_left_out(tmp_path: Path) -> None:
    from bedside.cli import app

    row = {"id": "p1", "reference": "Take it at night.", "candidate": "Take it in the morning.", "kind": "plan"}
    text_match, pairs = tmp_path / "text.jsonl", tmp_path / "pairs.jsonl"
    text_match.write_text(json.dumps({**row, "match": "false"}) + "\n", encoding="utf-8")
    pairs.write_text(json.dumps({**row, "match": False}) + "\n", encoding="utf-8")
    bad = CliRunner().invoke(app, ["drafting", "guard-eval", "--no-matcher", "--pairs", str(text_match)])
    assert bad.exit_code == 1
    assert "line 1: match: 'false'; give true or false (JSON booleans, not text)" in " ".join(bad.output.split())
    result = CliRunner().invoke(
        app, ["drafting", "guard-eval", "--no-matcher", "--pairs", str(pairs), "--leave-one-kind-out"]
    )
    assert result.exit_code == 0, result.output
    assert "no hard negative's kind is one of the rules' kinds (action, drug" in " ".join(result.output.split())


def test_a_long_pair_is_clipped_in_the_listing(tmp_path: Path) -> None:
    from bedside.cli import app

    long = "Take one tablet daily. " * 200
    pairs = tmp_path / "pairs.jsonl"
    row = {"id": "L", "reference": "Take one tablet daily.", "candidate": long, "match": False, "kind": "paste"}
    pairs.write_text(json.dumps(row) + "\n", encoding="utf-8")
    result = CliRunner().invoke(
        app, ["drafting", "guard-eval", "--no-matcher", "--pairs", str(pairs), "--show-uncertain"]
    )
    assert result.exit_code == 0, result.output
    listed = next(line for line in result.output.splitlines() if line.startswith("uncertain (reversed"))
    assert "(4,600 characters)" in listed
    assert len(listed) < 700


def test_guard_eval_command_prints_rejection_and_recall(tmp_path: Path) -> None:
    from bedside.cli import app

    result = CliRunner().invoke(app, ["drafting", "guard-eval", "--no-matcher"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    own = line_with(result.output, "bedside's own: hard-negative rejection")
    assert "1.000 (174/174) [95% CI 0.978-1.000]" in own
    assert "paraphrase recall 0.986 (146/148)" in own
    outside = line_with(result.output, "outside-written, dev 2: hard-negative rejection")  # never pooled
    assert re.search(r"rejection \d\.\d{3} \(\d+/60\) \[95% CI", outside), outside
    # a held-out set's errors stay unread unless asked for: no pair of it is printed
    assert "missed (" in result.output  # the dev set's misses are shown
    leaked = bool(re.search(r"\bg(?:4[2-9]|5[0-2])-\d{3}\b", result.output))  # the held-out pairs stay unread
    assert not leaked, "a held-out set's pairs were printed"
    assert "outside-written, held out 36: a held-out set, totals only" in result.output
    shown = CliRunner().invoke(
        app, ["drafting", "guard-eval", "--no-matcher", "--show-held-out-errors"], env={"COLUMNS": "300"}
    )
    # a bool: no output in a failure
    printed = bool(re.search(r"(?:missed \([^)]+\)|rejected paraphrase) g42-\d{3}", shown.output))
    assert printed, "asked for, the held-out sets' errors were not shown"
    data = json.loads(CliRunner().invoke(app, ["drafting", "guard-eval", "--json"]).output)
    mine, _, theirs, *_ = data["sets"]
    assert [entry["name"] for entry in data["sets"]] == [
        "bedside's own",
        "outside-written, dev",
        "outside-written, dev 2",
        "outside-written, dev 3",
        "outside-written, dev 4",
        "outside-written, dev 5",
        "outside-written, dev 6",
        "outside-written, dev 7",
        "outside-written, dev 8",
        "outside-written, dev 9",
        "outside-written, dev 10",
        "outside-written, dev 11",
        "outside-written, dev 12",
        "outside-written, dev 13",
        "outside-written, dev 14",
        "outside-written, dev 15",
        "outside-written, dev 16",
        "outside-written, dev 17",
        "outside-written, dev 18",
        "outside-written, dev 19",
        "outside-written, dev 20",
        "outside-written, dev 21",
        "outside-written, dev 22",
        "outside-written, dev 23",
        "outside-written, dev 24",
        "outside-written, dev 25",
        "outside-written, dev 26",
        "outside-written, dev 27",
        "outside-written, dev 28",
        "outside-written, dev 29",
        "outside-written, dev 30",
        "outside-written, dev 31",
        "outside-written, dev 32",
        "outside-written, dev 33",
        "outside-written, dev 34",
        "outside-written, dev 35",
        "outside-written, dev 36",
        "outside-written, dev 37",
        "outside-written, dev 38",
        "outside-written, dev 39",
        "outside-written, dev 40",
        "outside-written, held out 36",
        "outside-written, held out 37",
        "outside-written, held out 38",
        "outside-written, held out 39",
        "outside-written, held out 40",
        "outside-written, held out 41",
        "outside-written, held out 42",
        "outside-written, held out 43",
        "outside-written, held out 44",
        "outside-written, held out 45",
        "outside-written, held out 46",
    ]
    # named by the order they became dev or held-out sets; their files and pair ids by writer, said first
    assert data["sets"][7]["provenance"].startswith("data/guard_heldout_8.jsonl: ")
    assert mine["scores"][0]["group"] == "all"
    assert mine["missed"] == []
    assert mine["matcher"]["reversed_matched"] == 0  # the earlier reversed pairs stay unmatched
    assert theirs["pairs"] == 100
    assert theirs["matcher"]["reversed"] == 60
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    failed = CliRunner().invoke(app, ["drafting", "guard-eval", "--pairs", str(bad)])
    assert failed.exit_code != 0
    assert "bad.jsonl, line 1" in failed.output


def _oncqa_row(index: int) -> dict[str, str]:
    with ONCQA_STAGE2.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return rows[index]


@pytest.mark.skipif(not ONCQA_STAGE2.is_file(), reason=f"OncQA data not found at {ONCQA} (../shared/data/external)")
@pytest.mark.parametrize("row", [132, 154], ids=["row132-increasing", "row154-continue-but-stop"])
def test_oncqa_reversals_are_not_matches(row: int, offline: dict[str, Matcher], judged_by_llm: Any) -> None:
    """Rows 132 and 154 of OncQA's stage2.csv (0-based): the oncologist reversed one draft instruction ("continue"
    to "increasing"; one drug of "continue" to "consider stopping"). The text is read here, never stored."""
    item = _oncqa_row(row)
    draft, edit = item["raw_response"], item["doc_change"]
    changed = [s for s in reference_sentences(edit) if s not in draft]
    assert changed  # the oncologist's reversal
    # The draft sentence each reversal rewrote: what a bare matcher matches it to (the problem).
    lexical = LexicalMatcher(threshold=0.0)
    rewrote = {s: lexical.best(s, draft)[0] for s in changed}
    for name, matcher in offline.items():
        judgement = asyncio.run(edit_judge(edit, draft, matcher))
        assert judgement.counts.f1 < 1.0, name
        wrongly = [d.sentence for d in judgement.decisions if d.sentence in changed and d.span == rewrote[d.sentence]]
        assert wrongly == [], name
        bare = asyncio.run(edit_judge(edit, draft, make_matcher(name, guard="off")))
        if name != "trained":  # the trained matcher's own features already say no
            assert any(d.span == rewrote[d.sentence] for d in bare.decisions if d.sentence in changed), name
    # The judge's most likely answer: the draft sentence the oncologist rewrote.
    answers = [(s, draft, rewrote[s] or "") for s in changed]
    assert judged_by_llm(answers) == [None] * len(changed)
    # And the guard names a conflict between each changed sentence and that draft sentence.
    assert all(default_guard().conflicts(s, answer) for s, _, answer in answers)


def test_a_warning_sign_put_as_an_inability_matches_and_its_reversal_does_not(offline: dict[str, Matcher]) -> None:
    """Found by a newcomer trying EditJudge on their own sentences: "trouble breathing" and "you cannot breathe"
    are the same warning sign, not a negation; a reversed condition ("if you can talk" / "if you cannot talk")
    is still one."""
    reference = "If you have swelling of the lips or trouble breathing, call 911."
    draft = "Call 911 if your lips swell or you cannot breathe. Stop taking lisinopril."
    judgement = asyncio.run(edit_judge(reference, draft, offline["embedding"]))
    (decision,) = judgement.decisions
    assert decision.span == "Call 911 if your lips swell or you cannot breathe."
    assert (judgement.counts.em, judgement.counts.ea, judgement.counts.ed) == (1, 0, 1)
    reversed_condition = default_guard().conflicts(
        "If you can talk in full sentences, you can wait for the clinic.",
        "If you cannot talk in full sentences, you can wait for the clinic.",
    )
    assert [(c.kind, c.reference, c.candidate) for c in reversed_condition] == [
        ("negation", "affirmative (talk)", "negated (talk)")
    ]
