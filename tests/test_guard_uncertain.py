"""The guard's third answer: where its rules cannot vouch for a pair it says uncertain, counts it, and lets a
verifier or the ``uncertain`` option decide (issue 45 item 3)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.judges.verifier import VerifyScope
from bedside.llm import ChatMessage, Completion, get_model
from bedside.tasks.drafting.editjudge import edit_judge
from bedside.tasks.drafting.evaluation import guard_uncertain
from bedside.tasks.drafting.guard import GuardPair, evaluate_guard
from bedside.tasks.drafting.matcher_kinds import make_matcher
from bedside.tasks.drafting.matchers import GuardedMatcher, LexicalMatcher
from bedside.testing import ScriptedServer
from bedside.text import quantities
from bedside.text.alignment import exchanged
from bedside.text.conflicts import ClinicalGuard

SWAPPED = (
    "Keep the wound dry for two days, and after that let water run over it.",
    "Let water run over the wound for two days, and after that keep it dry.",
)
ONE_WORD = (
    "Go straight to labor and delivery if your water breaks.",
    "Go straight to urgent care if your water breaks.",
)


@pytest.fixture
def guard() -> ClinicalGuard:
    return ClinicalGuard(drug_finder=None)  # a fresh reading cache: monkeypatched libraries are really called


def test_a_swap_or_a_small_change_the_rules_cannot_read_is_uncertain_not_agreement(guard: ClinicalGuard) -> None:
    swapped = guard.read(*SWAPPED)
    assert swapped.verdict == "uncertain"
    assert swapped.uncertain == "the same words in another order, which the rules cannot compare"
    changed = guard.read(*ONE_WORD)
    assert changed.verdict == "uncertain"
    assert changed.uncertain == (
        'the sentences differ only in "labor and delivery" / "urgent care", which the rules cannot compare'
    )


@pytest.mark.parametrize(
    ("reference", "candidate", "shown"),
    [
        (
            "Call the clinic first, and go to the emergency room if nobody answers.",
            "Go to the emergency room first, and call the clinic if nobody answers.",
            ("call the clinic ... go to the emergency room", "go to the emergency room ... call the clinic"),
        ),
        (
            "For chest pain, call 911 rather than messaging us here.",
            "For chest pain, message us here rather than calling 911.",
            ("call 911 ... messaging us here", "message us here ... calling 911"),
        ),
        (
            "We will switch you from lisinopril to labetalol.",
            "We will switch you from labetalol to lisinopril.",
            ("lisinopril ... labetalol", "labetalol ... lisinopril"),
        ),
        (  # a preposition moves with its stretch: "rather than on your side" / "rather than flat"
            "Sleep on your side rather than flat on your back.",
            "Sleep flat on your back rather than on your side.",
            ("side ... flat on your back", "flat on your back ... side"),
        ),
        (
            "A mild cough is normal after pneumonia, but coughing up blood needs urgent attention.",
            "Coughing up blood is normal after pneumonia, but a mild cough needs urgent attention.",
            ("mild cough ... coughing up blood", "coughing up blood ... mild cough"),
        ),
    ],
)
def test_two_stretches_that_trade_places_around_the_same_frame_conflict(
    guard: ClinicalGuard, reference: str, candidate: str, shown: tuple[str, str]
) -> None:
    assert guard.read(reference, candidate).verdict == "conflict"
    # "rather than" is also read as a preference (bedside.text.slots); without it, the exchange reading finds it
    reading = ClinicalGuard(drug_finder=None, without=frozenset({"preference"})).read(reference, candidate)
    assert [(c.kind, c.reference, c.candidate) for c in reading.conflicts] == [("exchange", *shown)]
    neither = ClinicalGuard(drug_finder=None, without=frozenset({"exchange", "preference"}))
    assert neither.read(reference, candidate).uncertain


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        (
            "Take amlodipine 5 mg and lisinopril 10 mg once a day.",
            "Take lisinopril 10 mg and amlodipine 5 mg once a day.",
        ),
        (
            "Your cholesterol is fine, but your blood pressure is high.",
            "Your blood pressure is high, but your cholesterol is fine.",
        ),
        ("Take the iron tablet with the antacid.", "Take the antacid with the iron tablet."),
        ("Call us if the pain gets worse.", "If the pain gets worse, call us."),  # the clause moves with its "if"
        ("The nurse will change your dressing on Thursday.", "Your dressing will be changed by the nurse on Thursday."),
        (
            "We sent the prescription for your inhaler to the pharmacy.",
            "The inhaler prescription has been sent to the pharmacy.",
        ),
    ],
)
def test_a_reorder_that_keeps_the_meaning_is_no_exchange(guard: ClinicalGuard, reference: str, candidate: str) -> None:
    assert exchanged(reference, candidate) is None
    assert "exchange" not in {c.kind for c in guard.read(reference, candidate).conflicts}


def test_rewordings_and_same_quantities_still_agree(guard: ClinicalGuard) -> None:
    assert guard.read("Call us if the fever lasts 48 hours.", "Call us if the fever lasts two days.").verdict == "agree"
    assert guard.read("Take it every morning.", "Take it every morning.").verdict == "agree"
    wide = guard.read(
        "Please keep taking your inhaler twice a day until we see you.",
        "Until your next visit, continue using the inhaler morning and evening.",
    )
    assert wide.verdict == "agree"  # differs throughout: the similarity model's call, not a doubt
    assert guard.read("Take it every morning.", "Do not take it every morning.").verdict == "conflict"


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        ("A skin doctor will look at the rash on your arm.", "A dermatologist will look at the rash on your arm."),
        ("Call us right away if the wound opens.", "Call us immediately if the wound opens."),
        ("Your readings show high blood pressure again.", "Your readings show hypertension again."),
    ],
)
def test_a_synonym_is_no_gap(guard: ClinicalGuard, reference: str, candidate: str) -> None:
    """WordNet's synsets: the same thing named otherwise (issue 45)."""
    assert guard.read(reference, candidate).verdict == "agree"


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        ("Give him the syrup once a day after school.", "Give him the syrup once daily after school."),
        ("Soak the foot every other day until it heals.", "Soak the foot every 48 hours until it heals."),
        ("You can drive again in about six weeks.", "You can drive again in about a month and a half."),
        ("Use the cream BID on the patches.", "Use the cream twice a day on the patches."),
    ],
)
def test_one_time_said_two_ways_is_no_gap(guard: ClinicalGuard, reference: str, candidate: str) -> None:
    """The changed words are all words the time reading read, and both sides read as the same times."""
    assert guard.read(reference, candidate).verdict == "agree"


@pytest.mark.parametrize(
    ("reference", "candidate", "kind"),
    [
        ("Soak the foot every other day until it heals.", "Soak the foot every day until it heals.", "time"),
        ("Rest when your counts are lowest, a week after each dose.", "Rest when your counts are highest, a week "
         "after each dose.", "antonym"),
        ("Use two forms of contraception on this drug.", "Use one form of contraception on this drug.", "number"),
        ("Bring 3 of the forms to the visit.", "Bring one of the forms to the visit.", "number"),
    ],
)  # fmt: skip
def test_a_changed_time_a_superlative_opposite_or_a_count_as_one_is_a_conflict(
    guard: ClinicalGuard, reference: str, candidate: str, kind: str
) -> None:
    reading = guard.read(reference, candidate)
    assert reading.verdict == "conflict"
    assert kind in {c.kind for c in reading.conflicts}


def test_a_brand_and_its_generic_are_no_gap() -> None:
    """The MeSH drug recogniser reads a brand as its generic; "Xarelto" is not a WordNet word."""
    brand = "Keep taking the Xarelto every evening with food."
    generic = "Keep taking the rivaroxaban every evening with food."
    assert ClinicalGuard().read(brand, generic).verdict == "agree"
    assert ClinicalGuard(drug_finder=None).read(brand, generic).verdict == "uncertain"  # without the recogniser


@pytest.mark.parametrize(
    ("reference", "candidate"),
    [
        ("Keep taking your statin every evening.", "Keep taking your atorvastatin every evening."),  # class, member
        ("Use your CPAP machine every night.", "Use your BiPAP machine every night."),  # words WordNet lacks
    ],
)
def test_other_words_stay_uncertain(guard: ClinicalGuard, reference: str, candidate: str) -> None:
    assert guard.read(reference, candidate).verdict == "uncertain"


def test_wordnet_synonyms_are_read_through_inflections() -> None:
    from bedside.text.wordnet import lemmas_of, synonymous

    assert ("v", "shrink") in lemmas_of("shrunk")  # an irregular form WordNet lists
    assert ("n", "bone") in lemmas_of("bones")  # a regular one, by morphy's rules
    assert synonymous(["medicines"], ["medications"])
    assert not synonymous(["remove"], ["take"])  # take's seventeenth sense: too far down to vouch for a match
    assert not synonymous(["resting"], ["exercising"])
    assert not synonymous([], ["break"])


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Take one tablet daily. " * 1400, "longer than 2000 characters (32200)"),
        ("120/80 -> 140/90 !!", "no words to read (only numbers or symbols)"),
        ("Tome una tableta dos veces al día con comida, por favor.", "not English"),
        ("每天服用一片药，饭后服用。", "not English"),
    ],
)
def test_a_sentence_the_rules_cannot_read_is_uncertain_on_either_side(
    guard: ClinicalGuard, text: str, why: str
) -> None:
    ours = guard.read(text, "Take one tablet daily.")
    assert ours.verdict == "uncertain"
    assert ours.uncertain is not None
    assert ours.uncertain.startswith(f"the clinician's sentence cannot be read: {why}")
    theirs = guard.read("Take one tablet daily.", text)
    assert theirs.uncertain is not None
    assert theirs.uncertain.startswith(f"the candidate cannot be read: {why}")
    assert guard.conflicts(text, "Take one tablet daily.") == []


def test_a_reading_library_that_raises_makes_the_pair_uncertain(
    guard: ClinicalGuard, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(text: str) -> str:
        raise RuntimeError("parser state corrupted")

    monkeypatch.setattr(quantities, "_words_to_digits", broken)
    reading = guard.read("Take two tablets.", "Take three tablets.")
    assert reading.verdict == "uncertain"
    assert reading.uncertain == ("the number-word reader (text2num) failed: RuntimeError: parser state corrupted")
    assert quantities.normalise_quantities("two tablets") == "two tablets"  # lenient callers keep the words


def test_a_drug_recogniser_that_raises_makes_the_pair_uncertain() -> None:
    def broken(text: str) -> list[str]:
        raise KeyError("dictionary")

    reading = ClinicalGuard(drug_finder=broken).read("Stop the aspirin.", "Stop the aspirin now.")
    assert reading.uncertain == "the drug recogniser failed: KeyError: 'dictionary'"


def _judge(answer: str, scope: VerifyScope = "uncertain") -> tuple[GuardedMatcher, list[str]]:
    """A lexical matcher behind the guard whose verifier is a scripted model answering ``answer``; the prompts it
    was sent are collected."""
    sent: list[str] = []

    async def generate(chat: list[ChatMessage]) -> Completion:
        sent.append(chat[-1].content)
        async with get_model("scripted/verifier", options={"rules": lambda messages: answer}) as model:
            return await model.generate(chat)

    from bedside.judges.verifier import MeaningVerifier

    return GuardedMatcher(LexicalMatcher(threshold=0.3), verifier=MeaningVerifier(generate, scope=scope)), sent


def test_uncertain_matches_are_kept_flagged_or_refused_by_the_option_and_counted() -> None:
    reference, draft = ONE_WORD
    kept = asyncio.run(edit_judge(reference, draft, make_matcher("lexical")))
    assert kept.counts.em == 1
    assert not kept.decisions[0].flagged  # flagged keeps its meaning (an aligned judge answer, a kept conflict)
    assert kept.decisions[0].uncertain is not None
    assert kept.uncertain == 1
    assert kept.to_dict()["guard_uncertain"] == 1
    assert guard_uncertain({"content": kept.to_dict()}) == 1
    refused = asyncio.run(edit_judge(reference, draft, make_matcher("lexical", uncertain="reject")))
    assert refused.counts.em == 0
    assert refused.decisions[0].uncertain is not None
    assert refused.decisions[0].uncertain.endswith(f"(in: {draft})")
    assert refused.matcher == "lexical[uncertain=reject]"
    sure = asyncio.run(edit_judge("Take it every morning.", "Take it every morning.", make_matcher("lexical")))
    assert (sure.counts.em, sure.uncertain) == (1, 0)


@pytest.mark.parametrize(
    ("answer", "matched", "conflict", "uncertain"), [("SAME", 1, False, False), ("different.", 0, True, False),
                                                     ("I am not sure", 1, False, True)]
)  # fmt: skip
def test_a_verifier_decides_only_the_uncertain_pairs(
    answer: str, matched: int, conflict: bool, uncertain: bool
) -> None:
    matcher, sent = _judge(answer)
    assert matcher.name == "lexical[verified]"
    result = asyncio.run(edit_judge(*ONE_WORD, matcher))
    decision = result.decisions[0]
    assert result.counts.em == matched
    assert bool(decision.conflicts) is conflict
    assert (decision.uncertain is not None) is uncertain
    if conflict:
        assert decision.conflicts[0].startswith("verifier: different meaning (the sentences differ only in")
    assert len(sent) == 1
    assert "Clinician's sentence:\n" + ONE_WORD[0] in sent[0]
    asyncio.run(edit_judge("Take it every morning.", "Take it every morning.", matcher))
    asyncio.run(edit_judge("Take it every morning.", "Do not take it every morning.", matcher))
    assert len(sent) == 1  # agreement and conflicts are the rules' to decide: the verifier is not asked


@pytest.mark.parametrize(("answer", "matched"), [("SAME", 1), ("DIFFERENT", 0), ("maybe", 1)])
def test_a_verifier_of_scope_all_decides_every_pair_the_rules_pass(answer: str, matched: int) -> None:
    """A reversal no rule reads passes the guard silently; a verifier asked about every passing pair can refuse it.
    A rule's conflict is still the rules' own (the verifier is not asked)."""
    matcher, sent = _judge(answer, scope="all")
    assert matcher.name == "lexical[verified=all]"
    same = ("Take it every morning.", "Take it every morning.")
    assert matcher.guard.read(*same).uncertain is None  # the rules vouch for it: scope uncertain would not ask
    result = asyncio.run(edit_judge(*same, matcher))
    decision = result.decisions[0]
    assert (result.counts.em, len(sent)) == (matched, 1)
    if answer == "DIFFERENT":
        conflict = "verifier: different meaning (the guard's rules found no conflict) (in: Take it every morning.)"
        assert decision.conflicts == (conflict,)
    elif answer == "maybe":  # no verdict: kept as the matcher decided, and counted uncertain, never a clean match
        assert decision.uncertain is not None
        assert decision.uncertain.startswith("the guard's rules found no conflict; the verifier gave no verdict")
        assert result.uncertain == 1
    else:
        assert (decision.conflicts, decision.uncertain, result.uncertain) == ((), None, 0)
    asyncio.run(edit_judge("Take it every morning.", "Do not take it every morning.", matcher))
    assert len(sent) == 1


def test_a_verifier_scope_is_one_of_two() -> None:
    from bedside.judges.verifier import MeaningVerifier

    async def generate(chat: list[ChatMessage]) -> Completion:
        raise AssertionError("not called")

    with pytest.raises(ValueError, match="verifier scope 'some': choose one of uncertain, all"):
        MeaningVerifier(generate, scope="some")  # type: ignore[arg-type]


def test_guard_eval_counts_uncertain_pairs_apart() -> None:
    pairs = [
        GuardPair("r1", *SWAPPED, match=False, kind="scope"),
        GuardPair("r2", "Take it every morning.", "Do not take it every morning.", match=False, kind="negation"),
        GuardPair("r3", "Rest the knee.", "Rest the knee.", match=False, kind="unreadable difference"),
        GuardPair("p1", "Call us if the fever lasts 48 hours.", "Call us if the fever lasts two days.", True, "p"),
        GuardPair("p2", *ONE_WORD, match=True, kind="p"),
    ]
    evaluated = evaluate_guard(pairs)
    total = evaluated.total
    assert "paraphrases" in {g.group for g in evaluated.groups}  # pairs with no category (it said "first set")
    assert (total.negatives, total.rejected, total.negatives_uncertain, total.passed_silently) == (3, 1, 1, 1)
    assert (total.paraphrases, total.kept, total.paraphrases_uncertain) == (2, 2, 1)


def test_guard_eval_asks_a_verifier_on_the_endpoint_for_the_uncertain_pairs(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    rows = [
        {"id": "r1", "reference": SWAPPED[0], "candidate": SWAPPED[1], "match": False, "kind": "scope"},
        {"id": "p1", "reference": ONE_WORD[0], "candidate": ONE_WORD[1], "match": True, "kind": "synonym"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    rules = [(r"Let water run over the wound", "DIFFERENT"), (r"urgent care", "SAME")]
    base = ["drafting", "guard-eval", "--pairs", str(path), "--json"]
    runner = CliRunner()
    plain = runner.invoke(app, base)
    assert plain.exit_code == 0, plain.output
    found = json.loads(plain.output)["sets"][0]
    assert found["uncertain"].keys() == {"r1", "p1"}
    assert found["matcher"]["reversed_matched"] == 1  # kept by default, flagged
    assert found["matcher"]["reversed_uncertain"] == 1
    with ScriptedServer(rules) as server:
        verified = runner.invoke(app, [*base, "--verifier", server.model_name("verifier"), "--no-cache"])
        asked = server.requests
    assert verified.exit_code == 0, verified.output
    matched = json.loads(verified.output)["sets"][0]["matcher"]
    assert (matched["reversed_matched"], matched["reversed_uncertain"]) == (0, 0)
    assert (matched["paraphrases_matched"], matched["paraphrases_uncertain"]) == (1, 0)
    assert asked == 2
    refused = runner.invoke(app, [*base, "--uncertain", "reject"])
    assert json.loads(refused.output)["sets"][0]["matcher"]["paraphrases_matched"] == 0
    wrong = runner.invoke(app, [*base, "--uncertain", "maybe"])
    assert wrong.exit_code == 1
    assert "--uncertain 'maybe': choose one of keep, reject" in wrong.output


def test_guard_eval_with_verify_scope_all_asks_about_every_pair_the_rules_pass(tmp_path: Path) -> None:
    """A reversal the rules pass silently (the same words) is refused only by a verifier asked about every pair;
    one the rules reject is never sent."""
    path = tmp_path / "pairs.jsonl"
    silent = ("Keep the splint on at night.", "Keep the splint on at night.")
    rows = [
        {"id": "r1", "reference": silent[0], "candidate": silent[1], "match": False, "kind": "unreadable"},
        {"id": "r2", "reference": "Take it every morning.", "candidate": "Do not take it every morning.",
         "match": False, "kind": "negation"},
        {"id": "p1", "reference": ONE_WORD[0], "candidate": ONE_WORD[1], "match": True, "kind": "synonym"},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    rules = [(r"splint", "DIFFERENT"), (r"urgent care", "SAME")]
    base = ["drafting", "guard-eval", "--pairs", str(path), "--json", "--no-cache"]
    runner = CliRunner()
    with ScriptedServer(rules) as server:
        model = server.model_name("verifier")
        uncertain_only = runner.invoke(app, [*base, "--verifier", model])
        asked_uncertain = server.requests
        every = runner.invoke(app, [*base, "--verifier", model, "--verify-scope", "all"])
        asked_all = server.requests - asked_uncertain
    assert uncertain_only.exit_code == 0, uncertain_only.output
    assert every.exit_code == 0, every.output
    assert json.loads(uncertain_only.stdout)["sets"][0]["matcher"]["reversed_matched"] == 1
    matched = json.loads(every.stdout)["sets"][0]["matcher"]
    assert (matched["reversed_matched"], matched["paraphrases_matched"]) == (0, 1)
    assert (asked_uncertain, asked_all) == (1, 2)  # the negation is the rules' conflict: never sent
    said = json.loads(every.stdout)["verifier"]
    assert (said["scope"], said["asked"], said["undecided"]) == ("all", 2, 0)
    with ScriptedServer([(r".", "I cannot say.")]) as mute:
        shown = runner.invoke(
            app, [*base[:-2], "--no-cache", "--verifier", mute.model_name("v"), "--verify-scope", "all"]
        )
    assert shown.exit_code == 0, shown.output
    assert "asked about 2 pair(s), 2 answered neither SAME nor DIFFERENT (left uncertain)" in shown.output
    assert "default matcher behind the guard and the verifier: reversed pairs matched" in shown.output
    alone = runner.invoke(app, [*base, "--verify-scope", "all"])
    assert alone.exit_code == 1
    assert "--verify-scope all says which pairs a verifier decides: name one (--verifier)" in alone.output


def test_a_run_counts_uncertain_decisions_and_asks_the_judge_role_when_told_to_verify(tmp_path: Path) -> None:
    """Through the runner: ``guard_uncertain`` is scored, ``verify: true`` sends the uncertain pair to the judge
    role, whose DIFFERENT refuses the match."""
    import yaml

    from bedside.runs import Store, execute, load_config

    cases = tmp_path / "cases.jsonl"
    case = {
        "id": "m1",
        "message": "My water might be breaking, where do I go?",
        "chart_summary": "G1P0 at 39 weeks.",
        "references": [{"clinician_id": "dr-a", "text": ONE_WORD[0]}],
    }
    cases.write_text(json.dumps(case) + "\n", encoding="utf-8")
    rules = [(r"Clinician's sentence:", "DIFFERENT"), (r"Sentence:", '{"theme": "other"}'), (r"message", ONE_WORD[1])]
    scorers = ["em", "guard_uncertain"]
    results = {}
    with ScriptedServer(rules) as server:
        for name, options in (("kept", {}), ("verified", {"verify": True})):
            config = {
                "name": f"uncertain-{name}",
                "task": "drafting",
                "datasets": {"mine": {"path": str(cases)}},
                "systems": {"z": {"type": "zero_shot", "options": {"matcher": "lexical", **options}}},
                "models": {"system": [server.model_name("drafter")], "judge": [server.model_name("judge")]},
                "scorers": scorers,
                "store": str(tmp_path / "store.sqlite"),
            }
            path = tmp_path / f"{name}.yaml"
            path.write_text(yaml.safe_dump(config), encoding="utf-8")
            loaded = load_config(path)
            before = server.requests
            asyncio.run(execute(loaded, cache=False))
            store = Store(loaded.store)
            try:
                (row,) = store.results(loaded.run_id)
            finally:
                store.close()
            results[name] = (row.scores, server.requests - before)
    kept, verified = results["kept"], results["verified"]
    assert (kept[0]["em"], kept[0]["guard_uncertain"]) == (1.0, 1.0)
    assert (verified[0]["em"], verified[0]["guard_uncertain"]) == (0.0, 0.0)
    assert verified[1] == kept[1] + 1  # one more call: the verifier, for the one uncertain pair


@pytest.mark.parametrize(
    "sentence",
    [
        "I take my tablets every morning. " * 1000,
        "120/80 140/90 !!",
        "Tomo la pastilla dos veces al día con la comida, doctor.",
    ],
)
def test_the_fidelity_checker_says_uncertain_for_a_sentence_it_cannot_read(sentence: str) -> None:
    from bedside.sim.contradiction import label_combined

    (found,) = label_combined([sentence], ["I take lisinopril 10 mg every morning."])
    assert found.label == "uncertain"
    assert found.uncertain is not None
    readable = label_combined(["I take lisinopril 20 mg every morning."], ["I take lisinopril 10 mg every morning."])
    assert readable[0].label == "contradicted"


def test_the_fidelity_checker_says_uncertain_when_a_library_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    from bedside.sim.contradiction import ContradictionRules, label_combined

    def broken(text: str) -> str:
        raise RuntimeError("parser state corrupted")

    monkeypatch.setattr(quantities, "_words_to_digits", broken)
    rules = ContradictionRules(guard=ClinicalGuard(drug_finder=None))
    (found,) = label_combined(["I take two tablets a day."], ["I take 2 tablets a day."], rules=rules)
    assert (found.label, found.uncertain) == (
        "uncertain",
        "the number-word reader (text2num) failed: RuntimeError: parser state corrupted",
    )


def test_leaving_one_kind_out_measures_the_other_rules_and_uncertain_on_that_kind() -> None:
    from bedside.tasks.drafting.guard import leave_one_kind_out

    pairs = [
        GuardPair("a1", "Please stop the aspirin.", "Please continue the aspirin.", match=False, kind="action"),
        GuardPair("a2", "Stop the aspirin and take 2 tablets.", "Continue it as is.", match=False, kind="action"),
        GuardPair("n1", "Take 2 tablets.", "Take 3 tablets.", match=False, kind="number"),
    ]
    guard = ClinicalGuard(drug_finder=None)
    assert guard.read(pairs[0].reference, pairs[0].candidate).verdict == "conflict"
    action, number = leave_one_kind_out(pairs, guard)
    assert (action.kind, action.negatives, action.rejected, action.uncertain, action.silent) == ("action", 2, 1, 1, 0)
    assert (number.kind, number.negatives, number.rejected, number.uncertain) == ("number", 1, 0, 1)
    assert guard.leaving_out(frozenset({"action"})).read(pairs[0].reference, pairs[0].candidate).uncertain


def test_guard_eval_prints_the_leave_one_kind_out_figures() -> None:
    result = CliRunner().invoke(app, ["drafting", "guard-eval", "--no-matcher", "--leave-one-kind-out", "--json"])
    assert result.exit_code == 0, result.output
    own = json.loads(result.output)["sets"][0]
    kinds = {k["kind"]: k for k in own["leave_one_kind_out"]}
    assert set(kinds) == {"action", "drug", "number", "negation", "laterality", "time"}
    assert all(k["rejected"] + k["uncertain"] + k["silent"] == k["negatives"] for k in kinds.values())
    assert sum(k["negatives"] for k in kinds.values()) == 174


def test_calibrate_takes_the_uncertain_policy_and_refuses_another() -> None:
    from bedside.tasks.drafting.matcher_kinds import make_matcher

    assert make_matcher("lexical", uncertain="reject").name == "lexical[uncertain=reject]"
    wrong = CliRunner().invoke(app, ["drafting", "calibrate", "--matcher", "lexical", "--uncertain", "maybe"])
    assert wrong.exit_code == 1
    assert "--uncertain 'maybe': choose one of keep, reject" in wrong.output
