"""EditJudge's clinical-safety guard: a draft sentence that conflicts with the clinician's is not a match.

The rules live in :mod:`bedside.text.conflicts` (shared with the simulator fidelity checker); this module holds
what is EditJudge's own: the guard's modes, its labelled pairs and the evaluation ``bedside drafting guard-eval``
prints. Two sets ship, and are always reported apart (issue 45: a checker's figure counts only on text its rules
never saw):

- ``data/guard_pairs.jsonl``, bedside's own: paraphrases and hard negatives of each kind, written with the rules
  in view. A regression set, not an estimate of accuracy.
- ``data/guard_heldout.jsonl``, outside-written: 60 clinically reversed pairs and 40 paraphrases written on
  2026-11-28 by a writer who had never read the rules, measured once before any rule changed and frozen; the
  first round of issue 45's rules was then tuned on its errors, so it is a development set now.
- ``data/guard_heldout_3.jsonl``, outside-written by another writer the same day (60 and 40), kept unread while
  the rules changed and measured once after.
- ``data/guard_heldout_4.jsonl``, outside-written by a third writer (60 and 40), measured once after the guard
  learned to say *uncertain* (:mod:`bedside.text.alignment`): the figure that counts now.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bedside.text.conflicts import (
    CONFLICT_KINDS,
    ClinicalGuard,
    ClinicalSignals,
    Conflict,
    DrugClass,
    DrugMention,
    Instruction,
    PairReading,
    default_guard,
    drug_classes,
)

GuardMode = Literal["reject", "flag", "off"]
GUARD_MODES: tuple[GuardMode, ...] = ("reject", "flag", "off")
UncertainPolicy = Literal["keep", "reject"]
UNCERTAIN_POLICIES: tuple[UncertainPolicy, ...] = ("keep", "reject")
"""What EditJudge does with a match the guard cannot vouch for when no verifier is configured: keep the
matcher's decision (marked uncertain) or refuse it. Counted either way."""


@dataclass(frozen=True)
class GuardPair:
    """One labelled pair: a clinician's sentence, a draft sentence, whether it is a match, and its kind."""

    id: str
    reference: str
    candidate: str
    match: bool
    kind: str  # "paraphrase" or one of CONFLICT_KINDS
    category: str = ""  # what the pair tests beyond its kind ("dose order", "food", ...); "" for the first set


@dataclass(frozen=True)
class GuardSet:
    """A named set of labelled pairs and where its sentences come from."""

    name: str
    provenance: str
    pairs: tuple[GuardPair, ...]
    held_out: bool = False
    """Its errors stay unread: ``guard-eval`` prints its totals only (``--show-held-out-errors`` prints the pairs),
    so the next session tuning the rules cannot tune them on it by accident."""


BUILTIN_SETS = (
    ("bedside's own", "guard_pairs.jsonl", "written with the rules in view: a regression set"),
    (
        "outside-written, dev",
        "guard_heldout.jsonl",
        "written 2026-11-28 by a writer who never read the rules; measured once (rejection 0.483, paraphrases kept "
        "0.500), then issue 45's first round of rules was tuned on its errors: now a development set",
    ),
    (
        "outside-written, dev 2",
        "guard_heldout_3.jsonl",
        "written 2026-11-28 by another writer who never read the rules; measured once after issue 45's first "
        "round (rejection 34/60, paraphrases kept 28/40, 26 of 60 reversed pairs matched), then frozen; its errors "
        "were read on 2026-11-29 and the shared reading's second round drew on them: a development set now",
    ),
    (
        "outside-written, dev 3",
        "guard_heldout_4.jsonl",
        "written 2026-11-28 by a third writer who never read the rules; measured once after the guard learned to "
        "say uncertain (rejection 42/60, paraphrases kept 35/40, 18 of 60 reversed pairs matched), then frozen; "
        "its errors were read on 2026-11-29: a development set now",
    ),
    (
        "outside-written, dev 4",
        "guard_heldout_5.jsonl",
        "written 2026-11-29 by a fourth writer who never read the rules; measured once after negation came to be "
        "read by NegEx (rejection 40/60, paraphrases kept 26/40, 20 of 60 reversed pairs matched), then frozen; "
        "its errors were read afterwards and the second round drew on them: a development set now",
    ),
    (
        "outside-written, dev 5",
        "guard_heldout_6.jsonl",
        "written 2026-11-29 by a fifth writer who never read the rules nor any other set; measured once after the "
        "shared reading's second round (NegEx, pounds, floors, parts of the day), beside the code before it "
        "(rejection 47/60, paraphrases kept 25/40, 13 of 60 reversed pairs matched), then frozen; its errors were "
        "read in the fourth round (clock times, ranges, concentrations): a development set now",
    ),
    (
        "outside-written, dev 6",
        "guard_heldout_7.jsonl",
        "written 2026-11-29 by a sixth writer who never read the rules nor any other set; measured once after the "
        "shared reading's third round (amounts of time in days, rates over a week), beside the code before it "
        "(rejection 35/60, paraphrases kept 22/40, 25 of 60 reversed pairs matched), then frozen; its errors were "
        "read in the fifth round, once an eighth writer's set had been measured: a development set now",
    ),
    (
        "outside-written, dev 7",
        "guard_heldout_8.jsonl",
        "written 2026-11-29 by a seventh writer who never read the rules nor any other set; measured once with the "
        "rules of the third round (f23034f), before any later change (rejection 36/60, paraphrases kept 32/40, 23 "
        "of 60 reversed pairs matched), then frozen; read in the fifth round, where it lost a rejection: a "
        "development set now",
    ),
    (
        "outside-written, dev 8",
        "guard_heldout_20.jsonl",
        "written 2026-11-30 by a nineteenth writer who never read the rules nor any other set; measured once with "
        "the rules of fa1419f, before any change (rejection 49/60 with 10 uncertain and 1 passed silently, "
        "paraphrases kept 37/40 with 20 uncertain; 11 of 60 reversed pairs matched, 1 with --uncertain reject, "
        "which kept 17 of 40 paraphrases), then frozen; that measurement ran on the file, which printed its four "
        "errors: a development set from the start",
    ),
    (
        "outside-written, dev 9",
        "guard_heldout_9.jsonl",
        "written 2026-11-29 by an eighth writer who never read the rules nor any other set; measured with the rules "
        "of the fourth round (0bc086a), before any later change (rejection 37/60, paraphrases kept 35/40, 23 of 60 "
        "reversed pairs matched), and after later rounds with its errors unread, totals only (44/60, 35/40, 16/60 "
        "at ee73d86); its errors were read on 2026-11-30 for the round of kin, prefixes and the negation's "
        "alignment: a development set now",
    ),
    (
        "outside-written, dev 10",
        "guard_heldout_10.jsonl",
        "written 2026-11-29 by a ninth writer who never read the rules nor any other set; measured with the fourth "
        "round's rules (rejection 42/60, paraphrases kept 32/40, 18 of 60 reversed pairs matched), and after later "
        "rounds with its errors unread, totals only (49/60, 33/40, 11/60 at ee73d86); its errors were read on "
        "2026-11-30 for the same round: a development set now",
    ),
    (
        "outside-written, dev 11",
        "guard_heldout_11.jsonl",
        "written 2026-11-29 by a tenth writer who never read the rules nor any other set; measured once with the "
        "fifth round's rules (12172f4), before any later change (rejection 43/60, paraphrases kept 31/40, 17 of 60 "
        "reversed pairs matched), and after later rounds with its errors unread, totals only (49/60, 35/40, 11/60 "
        "at 1e34877); its errors were read on 2026-11-30 for the round of a no's reach, rates and permissions: a "
        "development set now",
    ),
    (
        "outside-written, dev 12",
        "guard_heldout_12.jsonl",
        "written 2026-11-29 by an eleventh writer who never read the rules nor any other set; measured once with "
        "the rules after WordNet's antonyms (834b7b0), before any later change (rejection 47/60, paraphrases kept "
        "27/40, 12 of 60 reversed pairs matched), and after later rounds with its errors unread, totals only "
        "(54/60, 28/40, 6/60 at 1e34877); its errors were read on 2026-11-30 for the same round: a development set "
        "now",
    ),
    (
        "outside-written, dev 13",
        "guard_heldout_13.jsonl",
        "written 2026-11-29 by a twelfth writer who never read the rules nor any other set; measured once with the "
        "rules after refusing actions and Snowball's stems (d18a18b), before any later change (rejection 43/60, "
        "paraphrases kept 26/40, 16 of 60 reversed pairs matched), and after later rounds with its errors unread, "
        "totals only (47/60, 32/40, 13/60 at df9335e); its errors were read on 2026-11-30 for the round of choices, "
        "passives and findings: a development set now",
    ),
    (
        "outside-written, dev 14",
        "guard_heldout_14.jsonl",
        "written 2026-11-29 by a thirteenth writer who never read the rules nor any other set; measured once with "
        "the rules after WordNet's double flips (cfcf7cd), before any later change (rejection 43/60, paraphrases "
        "kept 32/40, 17 of 60 reversed pairs matched), and after later rounds with its errors unread, totals only "
        "(48/60, 35/40, 12/60 at df9335e); its errors were read on 2026-11-30 for the same round: a development set "
        "now",
    ),
    (
        "outside-written, dev 15",
        "guard_heldout_15.jsonl",
        "written 2026-11-29 by a fourteenth writer who never read the rules nor any other set; measured once with "
        "the rules after urgency, routes, certainty and the order of steps (4193931), before any later change "
        "(rejection 45/60, paraphrases kept 28/40, 15 of 60 reversed pairs matched), and after later rounds with "
        "its errors unread, totals only (50/60, 34/40, 10/60 at 561eb61); its errors were read on 2026-11-30 for "
        "the round of who acts, what is kept and what is avoided: a development set now",
    ),
    (
        "outside-written, dev 16",
        "guard_heldout_16.jsonl",
        "written 2026-11-29 by a fifteenth writer who never read the rules nor any other set; measured once with "
        "the rules after the scope round (6ea5ee4), before any later change (rejection 43/60, paraphrases kept "
        "26/40, 17 of 60 reversed pairs matched), and after later rounds with its errors unread, totals only "
        "(46/60, 35/40, 14/60 at 561eb61); its errors were read on 2026-11-30 for the same round: a development "
        "set now",
    ),
    (
        "outside-written, dev 17",
        "guard_heldout_17.jsonl",
        "written 2026-11-29 by a sixteenth writer who never read the rules nor any other set; measured once with "
        "the rules after living alone and someone else's history (182aa8e), before any later change (rejection "
        "38/60, paraphrases kept 32/40, 22 of 60 reversed pairs matched), and after later rounds with its errors "
        "unread, totals only (44/60, 35/40, 16/60 at 5f4f2d0); its errors were read on 2026-11-30 for the round of "
        "unrelated words, alternate days, ages and spoken years: a development set now",
    ),
    (
        "outside-written, dev 18",
        "guard_heldout_18.jsonl",
        "written 2026-11-29 by a seventeenth writer who never read the rules nor any other set; kept sealed through "
        "the exchange round and measured once with its rules (e340556), before any later change (rejection 35/60, "
        "paraphrases kept 33/40, 25 of 60 reversed pairs matched), and after later rounds with its errors unread, "
        "totals only (40/60, 36/40, 20/60 at 5f4f2d0); its errors were read on 2026-11-30 for the same round: a "
        "development set now",
    ),
    (
        "outside-written, dev 19",
        "guard_heldout_19.jsonl",
        "written 2026-11-29 by an eighteenth writer who never read the rules nor any other set, asked for changes "
        "subtler than the common tricks; measured once with the rules after the fidelity round (0ca9e27), before "
        "any later change, and after later rounds with its errors unread, totals only (23/60, 33/40, 37/60 at "
        "80fe826); its errors were read on 2026-11-30 for the round of answers and results: a development set now",
    ),
    (
        "outside-written, dev 20",
        "guard_heldout_21.jsonl",
        "written 2026-11-30 by a twentieth writer who never read the rules nor any other set; kept sealed through "
        "the synonym round and measured with the rules before it (rejection 46/60, 4 passed silently; paraphrases "
        "kept 34/40; 14 of 60 reversed pairs matched, 4 with --uncertain reject, which kept 18 of 40 paraphrases), "
        "part-way through and after it (the same but 22 of 40 paraphrases kept by --uncertain reject), and after "
        "later rounds with its errors unread, totals only (50/60, 37/40, 10/60 at 80fe826); its errors were read on "
        "2026-11-30 for the round of answers and results: a development set now",
    ),
    (
        "outside-written, dev 21",
        "guard_heldout_22.jsonl",
        "written 2026-11-30 by a twenty-first writer who never read the rules nor any other set; measured once with "
        "the synonym round's rules, and after later rounds with its errors unread, totals only (50/60, 34/40, 10/60 "
        "at 38bee85); its errors were read on 2026-11-30 for the round of scores, ranges and days: a development "
        "set now",
    ),
    (
        "outside-written, dev 22",
        "guard_heldout_23.jsonl",
        "written 2026-11-30 by a twenty-second writer who never read the rules nor any other set; measured with "
        "the rules of ee73d86 (rejection 49/60, 6 passed silently; paraphrases kept 31/40; 11 of 60 reversed pairs "
        "matched, 6 with --uncertain reject, which kept 30 of 40 paraphrases) and once after the round of kin, "
        "prefixes and the negation's alignment, drawn from two earlier sets' errors, and after later rounds, totals "
        "only (51/60, 36/40, 9/60 at 38bee85); its errors were read on 2026-11-30 for the round of scores, ranges "
        "and days: a development set now",
    ),
    (
        "outside-written, dev 23",
        "guard_heldout_24.jsonl",
        "written 2026-11-30 by a twenty-third writer who never read the rules nor any other set, asked for the "
        "slips a language model makes when it paraphrases; measured once with the rules of 889e3b8, before any "
        "later change, and after later rounds with its errors unread, totals only (51/60, 30/40, 9/60 at 5bca2e6); "
        "its errors were read on 2026-11-30 for the round of clauses, counts and kin: a development set now",
    ),
    (
        "outside-written, dev 24",
        "guard_heldout_25.jsonl",
        "written 2026-11-30 by a twenty-fourth writer who never read the rules nor any other set (primary care, "
        "children, pregnancy and older adults); measured with the rules of 1e34877 (rejection 50/60, 7 passed "
        "silently; paraphrases kept 29/40; 10 of 60 reversed pairs matched, 7 with --uncertain reject, which kept "
        "27 of 40 paraphrases) and after later rounds with its errors unread, totals only (51/60, 34/40, 9/60 at "
        "5bca2e6); its errors were read on 2026-11-30 for the round of clauses, counts and kin: a development set "
        "now",
    ),
    (
        "outside-written, dev 25",
        "guard_heldout_26.jsonl",
        "written 2026-11-30 by a twenty-fifth writer who never read the rules nor any other set (specialist "
        "follow-up); measured with the rules of 1e34877 (rejection 46/60, 10 passed silently; paraphrases kept "
        "29/40; 14 of 60 reversed pairs matched, 10 with --uncertain reject, which kept 26 of 40 paraphrases) and "
        "after later rounds with its errors unread, totals only (49/60, 31/40, 11/60 at 74afd4b); its errors were "
        "read on 2026-11-30 for the round of sides, counts and reach: a development set now",
    ),
    (
        "outside-written, dev 26",
        "guard_heldout_27.jsonl",
        "written 2026-11-30 by a twenty-sixth writer who never read the rules nor any other set (emergency and "
        "urgent care discharge); measured with the rules of df9335e (rejection 39/60, 15 passed silently; "
        "paraphrases kept 32/40; 21 of 60 reversed pairs matched, 15 with --uncertain reject, which kept 29 of 40 "
        "paraphrases) and after later rounds with its errors unread, totals only (39/60, 32/40, 21/60 at "
        "74afd4b); its errors were read on 2026-11-30 for the round of sides, counts and reach: a development set "
        "now",
    ),
    (
        "outside-written, dev 27",
        "guard_heldout_28.jsonl",
        "written 2026-11-30 by a twenty-seventh writer who never read the rules nor any other set, asked for the "
        "slips a hurried scribe or a summarising model makes (mental health, pain, skin, after surgery); measured "
        "with the rules of df9335e (rejection 39/60, 19 passed silently; paraphrases kept 24/40; 21 of 60 reversed "
        "pairs matched, 19 with --uncertain reject, which kept 24 of 40 paraphrases) and after later rounds with "
        "its errors unread, totals only (41/60, 28/40, 19/60 at 3668f43); its errors were read on 2026-12-01 for "
        "the round of signs, sites and routes: a development set now",
    ),
    (
        "outside-written, dev 28",
        "guard_heldout_29.jsonl",
        "written 2026-11-30 by a twenty-eighth writer who never read the rules nor any other set (eye, ear, nose, "
        "throat and dental care); measured with the rules of 561eb61 (rejection 45/60, 10 passed silently; "
        "paraphrases kept 28/40; 15 of 60 reversed pairs matched, 10 with --uncertain reject, which kept 28 of 40 "
        "paraphrases) and after later rounds with its errors unread, totals only (47/60, 30/40, 13/60 at "
        "3668f43); its errors were read on 2026-12-01 for the round of signs, sites and routes: a development set "
        "now",
    ),
    (
        "outside-written, dev 29",
        "guard_heldout_30.jsonl",
        "written 2026-11-30 by a twenty-ninth writer who never read the rules nor any other set (endocrine, "
        "transplant and immune care); measured with the rules of 561eb61 (rejection 52/60, 5 passed silently; "
        "paraphrases kept 32/40; 8 of 60 reversed pairs matched, 5 with --uncertain reject, which kept 30 of 40 "
        "paraphrases) and after later rounds with its errors unread, totals only (51/60, 32/40, 9/60 at "
        "ecdcb4c); its errors were read on 2026-12-01 for the round of lifted restrictions, asked rates and held "
        "things: a development set now",
    ),
    (
        "outside-written, dev 30",
        "guard_heldout_31.jsonl",
        "written 2026-11-30 by a thirtieth writer who never read the rules nor any other set (heart procedures, "
        "blood thinners, wound, drain and ostomy care); measured with the rules of 5f4f2d0 (rejection 36/60, 18 "
        "passed silently; paraphrases kept 28/40; 24 of 60 reversed pairs matched, 18 with --uncertain reject, "
        "which kept 27 of 40 paraphrases) and after later rounds with its errors unread, totals only (38/60, "
        "30/40, 22/60 at ecdcb4c); its errors were read on 2026-12-01 for the round of lifted restrictions, asked "
        "rates and held things: a development set now",
    ),
    (
        "outside-written, dev 31",
        "guard_heldout_32.jsonl",
        "written 2026-11-30 by a thirty-first writer who never read the rules nor any other set (older adults, "
        "palliative and hospice care, home infusions); measured with the rules of 5f4f2d0 (rejection 49/60, 7 "
        "passed silently; paraphrases kept 36/40; 11 of 60 reversed pairs matched, 7 with --uncertain reject, which "
        "kept 36 of 40 paraphrases) and after later rounds with its errors unread, totals only (52/60, 35/40, 8/60 "
        "at f086308); its errors were read on 2026-12-01 for the round of shares, kinds and parts of the day: a "
        "development set now",
    ),
    (
        "outside-written, dev 32",
        "guard_heldout_33.jsonl",
        "written 2026-11-30 by a thirty-second writer who never read the rules nor any other set (eye care, ear, "
        "nose, throat and dental procedures, sleep medicine); measured with the rules of 80fe826 (rejection 55/60, "
        "3 passed silently; paraphrases kept 34/40; 5 of 60 reversed pairs matched, 3 with --uncertain reject, "
        "which kept 29 of 40 paraphrases) and after later rounds with its errors unread, totals only (56/60, "
        "36/40, 4/60 at f086308); its errors were read on 2026-12-01 for the round of shares, kinds and parts of "
        "the day: a development set now",
    ),
    (
        "outside-written, dev 33",
        "guard_heldout_34.jsonl",
        "written 2026-11-30 by a thirty-third writer who never read the rules nor any other set (transplant and "
        "immunosuppression, infections and their courses of treatment, follow-up of laboratory results); measured "
        "with the rules of 80fe826 (rejection 57/60, 1 passed silently; paraphrases kept 28/40; 3 of 60 reversed "
        "pairs matched, 1 with --uncertain reject, which kept 25 of 40 paraphrases) and after later rounds with its "
        "errors unread, totals only (58/60, 27/40, 2/60 at a065328); its errors were read on 2026-12-02 for the "
        "twelfth round (floors, histories and facts found elsewhere): a development set now",
    ),
    (
        "outside-written, dev 34",
        "guard_heldout_35.jsonl",
        "written 2026-11-30 by a thirty-fourth writer who never read the rules nor any other set (children: "
        "vaccines, fevers, feeding, growth, weight-based doses, ADHD medicines); measured with the rules of 38bee85 "
        "(rejection 50/60, 4 passed silently; paraphrases kept 33/40; 10 of 60 reversed pairs matched, 4 with "
        "--uncertain reject, which kept 27 of 40 paraphrases) and after later rounds with its errors unread, totals "
        "only (51/60, 34/40, 9/60 at a065328); its errors were read on 2026-12-02 for the same round: a development "
        "set now",
    ),
    (
        "outside-written, dev 35",
        "guard_heldout_36.jsonl",
        "written 2026-11-30 by a thirty-fifth writer who never read the rules nor any other set (cancer care: "
        "chemotherapy, radiation, low blood counts, anti-sickness medicines, ports, scans and tumour markers); "
        "measured with the rules of 38bee85 (rejection 53/60, 2 passed silently; paraphrases kept 30/40; 7 of 60 "
        "reversed pairs matched, 2 with --uncertain reject, which kept 26 of 40 paraphrases) and after later rounds "
        "with its errors unread, totals only (53/60, 32/40, 7/60 at 46cf53f); its errors were read on 2026-12-02 "
        "for the thirteenth round: a development set now",
    ),
    (
        "outside-written, dev 36",
        "guard_heldout_37.jsonl",
        "written 2026-11-30 by a thirty-sixth writer who never read the rules nor any other set (mental health, "
        "addiction medicine and pain: antidepressants, sleep aids, opioid tapering, buprenorphine and methadone, "
        "nerve pain, crisis plans); measured with the rules of 5bca2e6 (rejection 50/60, 9 passed silently; "
        "paraphrases kept 32/40; 10 of 60 reversed pairs matched, 9 with --uncertain reject, which kept 29 of 40 "
        "paraphrases) and after later rounds with its errors unread, totals only (51/60, 33/40, 9/60 at 46cf53f); "
        "its errors were read on 2026-12-02 for the same round: a development set now",
    ),
    (
        "outside-written, dev 37",
        "guard_heldout_38.jsonl",
        "written 2026-11-30 by a thirty-seventh writer who never read the rules nor any other set (orthopaedics, "
        "rehabilitation and wound care after surgery: casts, weight bearing, drains, stitches, blood thinners after "
        "a joint replacement, bathing and driving); measured with the rules of 5bca2e6 (rejection 47/60, 6 passed "
        "silently; paraphrases kept 35/40, 31 matched; 13 of 60 reversed pairs matched, 6 with --uncertain "
        "reject, which kept 28 of 40 paraphrases) and after later rounds with its errors unread, totals only (47/60, "
        "36/40, 13/60 at 011bc7f); its errors were read on 2026-12-02 for the fourteenth round: a development set now",
    ),
    (
        "outside-written, dev 38",
        "guard_heldout_39.jsonl",
        "written 2026-11-30 by a thirty-eighth writer who never read the rules nor any other set (ear, nose and "
        "throat, dental and oral surgery aftercare, eye drops, eye surgery and injuries); measured with the rules "
        "of 74afd4b (rejection 53/60, 4 passed silently; paraphrases kept 37/40, 37 matched; 7 of 60 reversed "
        "pairs matched, 4 with --uncertain reject, which kept 33 of 40 paraphrases) and after later rounds with its "
        "errors unread, totals only (55/60, 38/40, 5/60 at 011bc7f); its errors were read on 2026-12-02 for the same "
        "round: a development set now",
    ),
    (
        "outside-written, dev 39",
        "guard_heldout_40.jsonl",
        "written 2026-11-30 by a thirty-ninth writer who never read the rules nor any other set (infections and "
        "antibiotics, vaccines and travel medicine, sexual health: testing, contraception, PrEP); measured with the "
        "rules of 74afd4b (rejection 48/60, 11 passed silently; paraphrases kept 32/40, 32 matched; 12 of 60 "
        "reversed pairs matched, 11 with --uncertain reject, which kept 28 of 40 paraphrases) and after later rounds "
        "with its errors unread, totals only (48/60, 32/40, 12/60 at 4c04c9a); its errors were read on 2026-12-02 "
        "for the fifteenth round: a development set now",
    ),
    (
        "outside-written, dev 40",
        "guard_heldout_41.jsonl",
        "written 2026-12-01 by a fortieth writer who never read the rules nor any other set (women's health and "
        "pregnancy: prenatal care, gestational diabetes, blood pressure in pregnancy, caesarean wounds, "
        "breastfeeding and medicines, postpartum mood and bleeding, contraception, menopause, cervical screening); "
        "measured with the rules of 3668f43 (rejection 41/60, 17 passed silently; paraphrases kept 35/40, 33 "
        "matched; 19 of 60 reversed pairs matched, 17 with --uncertain reject, which kept 29 of 40 paraphrases) and "
        "after later rounds with its errors unread, totals only (43/60, 37/40, 17/60 at 4c04c9a); its errors were "
        "read on 2026-12-02 for the same round: a development set now",
    ),
    (
        "outside-written, held out 36",
        "guard_heldout_42.jsonl",
        "written 2026-12-01 by a forty-first writer who never read the rules nor any other set (digestive and "
        "kidney care: bowel preparation, reflux and ulcer medicines, bowel disease flares, liver disease, gallbladder "
        "and hernia surgery, kidney stones, kidney diet, dialysis access, urinary catheters); measured with the "
        "rules of 3668f43 (rejection 51/60, 6 passed silently; paraphrases kept 31/40, 31 matched; 9 of 60 reversed "
        "pairs matched, 6 with --uncertain reject, which kept 27 of 40 paraphrases), totals only (its errors "
        "unread), frozen",
    ),
    (
        "outside-written, held out 37",
        "guard_heldout_43.jsonl",
        "written 2026-12-01 by a forty-second writer who never read the rules nor any other set (neurology: "
        "epilepsy and rescue plans, stroke prevention, migraine, Parkinson's disease, multiple sclerosis, nerve "
        "pain, driving after a seizure or a stroke, concussion); measured with the rules of 438dc1c (rejection "
        "45/60, 12 passed silently; paraphrases kept 31/40, 31 matched; 15 of 60 reversed pairs matched, 12 with "
        "--uncertain reject, which kept 29 of 40 paraphrases), totals only (its errors unread), frozen",
    ),
    (
        "outside-written, held out 38",
        "guard_heldout_44.jsonl",
        "written 2026-12-01 by a forty-third writer who never read the rules nor any other set (heart and lungs: "
        "inhalers and action plans, home oxygen, heart failure, blood pressure, atrial fibrillation, angina, "
        "cholesterol, cardiac and pulmonary rehabilitation); measured with the rules of 438dc1c (rejection 42/60, "
        "17 passed silently; paraphrases kept 33/40, 33 matched; 18 of 60 reversed pairs matched, 17 with "
        "--uncertain reject, which kept 29 of 40 paraphrases), totals only (its errors unread), frozen",
    ),
    (
        "outside-written, held out 39",
        "guard_heldout_45.jsonl",
        "written 2026-12-01 by a forty-fourth writer who never read the rules nor any other set (diabetes and "
        "hormones: insulin and pumps, low and high sugars, sick-day rules, weekly injections, thyroid tablets, "
        "steroid tapers and steroid cards, osteoporosis medicines, foot, eye and kidney checks); measured with the "
        "rules of ecdcb4c (rejection 49/60, 11 passed silently; paraphrases kept 29/40, 29 matched; 10 of 60 "
        "reversed pairs matched, 10 with --uncertain reject, which kept 24 of 40 paraphrases), totals only (its "
        "errors unread), frozen",
    ),
    (
        "outside-written, held out 40",
        "guard_heldout_46.jsonl",
        "written 2026-12-01 by a forty-fifth writer who never read the rules nor any other set (skin, allergy and "
        "the immune system: eczema and psoriasis treatments, acne medicines, biologics and methotrexate, "
        "rheumatoid arthritis, gout, lupus, hives, food and drug allergy, adrenaline pens, sun and skin checks, "
        "skin biopsies); measured with the rules of ecdcb4c (rejection 41/60, 16 passed silently; paraphrases kept "
        "36/40, 34 matched; 19 of 60 reversed pairs matched, 16 with --uncertain reject, which kept 32 of 40 "
        "paraphrases), totals only (its errors unread), frozen",
    ),
    (
        "outside-written, held out 41",
        "guard_heldout_47.jsonl",
        "written 2026-12-01 by a forty-sixth writer who never read the rules nor any other set (urology and men's "
        "health: prostate tablets, biopsies and PSA, catheters and leg bags, kidney stones, urinary infections, "
        "vasectomy, erectile dysfunction medicines and nitrates, testosterone, blood in the urine); measured with "
        "the rules of b376ea5 (rejection 45/60, 15 passed silently; paraphrases kept 38/40, 37 matched; 15 of 60 "
        "reversed pairs matched, 15 with --uncertain reject, which kept 34 of 40 paraphrases), totals only (its "
        "errors unread), frozen",
    ),
    (
        "outside-written, held out 42",
        "guard_heldout_48.jsonl",
        "written 2026-12-01 by a forty-seventh writer who never read the rules nor any other set (nutrition, weight "
        "and blood: feeding tubes, diet stages after weight-loss surgery, weight-loss medicines, supplement drinks, "
        "iron tablets and infusions, B12 injections, kidney diets, coeliac disease, anaemia follow-up); measured "
        "with the rules of b376ea5 (rejection 37/60, 23 passed silently; paraphrases kept 32/40, 31 matched; 23 of "
        "60 reversed pairs matched, 23 with --uncertain reject, which kept 31 of 40 paraphrases), totals only (its "
        "errors unread), frozen",
    ),
    (
        "outside-written, held out 43",
        "guard_heldout_49.jsonl",
        "written 2026-12-01 by a forty-eighth writer who never read the rules nor any other set (palliative and "
        "end-of-life care at home: pain relief, breathlessness, syringe drivers, anticipatory medicines, mouth care, "
        "pressure areas, hospice contacts, carers' tasks); measured with the rules of f086308 (rejection 50/60, 7 "
        "passed silently; paraphrases kept 33/40, 33 matched; 10 of 60 reversed pairs matched, 7 with --uncertain "
        "reject, which kept 21 of 40 paraphrases), totals only (its errors unread), frozen",
    ),
    (
        "outside-written, held out 44",
        "guard_heldout_50.jsonl",
        "written 2026-12-01 by a forty-ninth writer who never read the rules nor any other set (pregnancy "
        "complications and the weeks after birth: pre-eclampsia, gestational diabetes, reduced baby movements, "
        "bleeding, waters breaking, blood-thinner injections after a caesarean, breastfeeding and medicines, wound "
        "care, postnatal mood); measured with the rules of f086308 (rejection 43/60, 12 passed silently; "
        "paraphrases kept 36/40, 35 matched; 16 of 60 reversed pairs matched, 11 with --uncertain reject, which "
        "kept 25 of 40 paraphrases), totals only (its errors unread), frozen",
    ),
    (
        "outside-written, held out 45",
        "guard_heldout_51.jsonl",
        "written 2026-12-01 by a fiftieth writer who never read the rules nor any other set (older adults with "
        "dementia, delirium and falls: care at home and in care homes, medicines for memory and behaviour, walking "
        "aids, hip fracture recovery, swallowing, carers' instructions); measured with the rules of a065328 "
        "(rejection 46/60, 13 passed silently; paraphrases kept 31/40, 30 matched; 14 of 60 reversed pairs matched, "
        "13 with --uncertain reject, which kept 26 of 40 paraphrases), totals only (its errors unread), frozen",
    ),
    (
        "outside-written, held out 46",
        "guard_heldout_52.jsonl",
        "written 2026-12-01 by a fifty-first writer who never read the rules nor any other set (newborns and young "
        "infants: feeding, jaundice, weight checks, cord care, safe sleep, fever, vaccines, leaving the neonatal "
        "unit, reflux, nappy rash, vitamin D, colic, when to call); measured with the rules of a065328 (rejection "
        "42/60, 12 passed silently; paraphrases kept 27/40, 25 matched; 18 of 60 reversed pairs matched, 12 with "
        "--uncertain reject, which kept 22 of 40 paraphrases), totals only (its errors unread), frozen",
    ),
)
"""(name, file under ``data/``, provenance) of the sets ``guard-eval`` reports by default, each on its own lines."""


def builtin_guard_sets() -> list[GuardSet]:
    """The labelled sets that ship with bedside (:data:`BUILTIN_SETS`). Each provenance starts with its file: the
    sets are named in the order they became development or held-out sets, the files (and pair ids) by writer."""
    return [
        GuardSet(
            name,
            f"data/{file}: {why}",
            tuple(read_guard_pairs(builtin=file)),
            held_out=name.startswith("outside-written, held"),
        )
        for name, file, why in BUILTIN_SETS
    ]


def guard_set_from(path: str | Path) -> GuardSet:
    """The labelled pairs of the file at ``path`` as a set to measure; a copy of a shipped held-out set (the same
    bytes, wherever it lies) is that held-out set, so naming its file does not print the errors that would make it
    a development set."""
    from importlib import resources

    pairs = tuple(read_guard_pairs(path))
    data = Path(path).read_bytes()
    for name, file, why in BUILTIN_SETS:
        if name.startswith("outside-written, held") and (
            (resources.files("bedside.tasks.drafting") / "data" / file).read_bytes() == data
        ):
            return GuardSet(name, f"data/{file}: {why}", pairs, held_out=True)
    return GuardSet(str(path), "your labelled pairs", pairs)


def read_guard_pairs(path: str | Path | None = None, *, builtin: str = "guard_pairs.jsonl") -> list[GuardPair]:
    """Labelled pairs from a JSONL file (fields id, reference, candidate, match, kind, optional category); the
    shipped file ``builtin`` (bedside's own ``guard_pairs.jsonl`` unless named) when no path is given."""
    import json
    from importlib import resources

    if path is None:
        source = f"bedside's {builtin}"
        text = (resources.files("bedside.tasks.drafting") / "data" / builtin).read_text(encoding="utf-8")
    else:
        source = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{source}: cannot read guard pairs: {exc}") from None
    pairs = []
    seen: dict[str, int] = {}
    fields = {f.name for f in dataclasses.fields(GuardPair)}
    required = {f.name for f in dataclasses.fields(GuardPair) if f.default is dataclasses.MISSING}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}, line {number}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not valid JSON ({exc})") from None
        if not isinstance(item, dict):
            raise ValueError(f"{where}: expected an object with {', '.join(sorted(required))}")
        if missing := sorted(required - item.keys()):
            raise ValueError(f"{where}: missing {', '.join(missing)}")
        if unknown := sorted(item.keys() - fields):
            raise ValueError(
                f"{where}: unknown field(s) {', '.join(unknown)}; the fields are {', '.join(sorted(fields))}"
            )
        pair = GuardPair(**item)
        if not isinstance(pair.match, bool):
            raise ValueError(f"{where}: match: {pair.match!r}; give true or false (JSON booleans, not text)")
        if not isinstance(pair.reference, str) or not isinstance(pair.candidate, str):
            side = "reference" if not isinstance(pair.reference, str) else "candidate"
            raise ValueError(f"{where}: {side}: must be text")
        if not pair.reference.strip() or not pair.candidate.strip():
            raise ValueError(f"{where}: {'reference' if not pair.reference.strip() else 'candidate'} is blank")
        if pair.id in seen:
            raise ValueError(f"{where}: id {pair.id!r} is also on line {seen[pair.id]}")
        seen[pair.id] = number
        pairs.append(pair)
    if not pairs:
        raise ValueError(f"{source}: no guard pairs (the file is empty)")
    return pairs


@dataclass(frozen=True)
class GuardScore:
    """How the guard does on one group of labelled pairs: hard negatives rejected (a conflict found), paraphrases
    kept (none found), and, apart, the pairs it found no conflict in but could not vouch for (uncertain)."""

    group: str
    negatives: int
    rejected: int
    paraphrases: int
    kept: int
    negatives_uncertain: int = 0
    """Hard negatives with no conflict that the guard called uncertain: caught for a verifier or review."""
    paraphrases_uncertain: int = 0
    """Paraphrases kept (no conflict) that the guard called uncertain."""

    @property
    def rejection(self) -> float | None:
        """Share of hard negatives with a conflict (None when the group has none)."""
        return self.rejected / self.negatives if self.negatives else None

    @property
    def recall(self) -> float | None:
        """Share of paraphrases without a conflict: what the guard leaves for EditJudge to match."""
        return self.kept / self.paraphrases if self.paraphrases else None

    @property
    def passed_silently(self) -> int:
        """Hard negatives with neither a conflict nor a doubt: the errors nobody is told about."""
        return self.negatives - self.rejected - self.negatives_uncertain


@dataclass(frozen=True)
class GuardEvaluation:
    total: GuardScore
    groups: tuple[GuardScore, ...]  # per category, else per conflict kind (paraphrases without one together)
    missed: tuple[GuardPair, ...]  # hard negatives that passed with no doubt
    rejected: tuple[tuple[GuardPair, tuple[Conflict, ...]], ...]  # paraphrases the guard rejected, and why
    uncertain: tuple[tuple[GuardPair, str], ...] = ()  # pairs of either label the guard called uncertain, and why


def evaluate_guard(pairs: Sequence[GuardPair], guard: ClinicalGuard | None = None) -> GuardEvaluation:
    """The guard's hard-negative rejection and paraphrase recall on labelled pairs, overall and per group, with
    the pairs it called uncertain counted apart."""
    chosen = guard or default_guard()
    missed: list[GuardPair] = []
    rejected: list[tuple[GuardPair, tuple[Conflict, ...]]] = []
    uncertain: list[tuple[GuardPair, str]] = []
    counts: dict[str, list[int]] = {}
    for pair in pairs:
        reading = chosen.read(pair.reference, pair.candidate)
        group = pair.category or (pair.kind if not pair.match else "paraphrases")
        tally = counts.setdefault(group, [0, 0, 0, 0, 0, 0])
        doubt = reading.uncertain is not None
        if doubt:
            uncertain.append((pair, reading.uncertain or ""))
        if pair.match:
            tally[2] += 1
            tally[3] += not reading.conflicts
            tally[5] += doubt
            if reading.conflicts:
                rejected.append((pair, reading.conflicts))
        else:
            tally[0] += 1
            tally[1] += bool(reading.conflicts)
            tally[4] += doubt
            if reading.verdict == "agree":
                missed.append(pair)
    groups = tuple(GuardScore(name, *tally) for name, tally in counts.items())
    total = GuardScore("all", *(sum(g[i] for g in counts.values()) for i in range(6)))
    return GuardEvaluation(total, groups, tuple(missed), tuple(rejected), tuple(uncertain))


@dataclass(frozen=True)
class KindHeldOut:
    """The guard with one kind's rules taken away, on the hard negatives of that kind: what the other rules
    still reject, what it calls uncertain, and what passes silently (a kind the rules were never written for)."""

    kind: str
    negatives: int
    rejected: int
    uncertain: int

    @property
    def silent(self) -> int:
        return self.negatives - self.rejected - self.uncertain


def leave_one_kind_out(pairs: Sequence[GuardPair], guard: ClinicalGuard | None = None) -> list[KindHeldOut]:
    """For each conflict kind the pairs' hard negatives are labelled with: the guard without that kind's rules,
    measured on those negatives (issue 45: figures for kinds the rules never saw)."""
    chosen = guard or default_guard()
    found = []
    for kind in CONFLICT_KINDS:
        negatives = [p for p in pairs if not p.match and p.kind == kind]
        if not negatives:
            continue
        blind = chosen.leaving_out(frozenset({kind}))
        readings = [blind.read(p.reference, p.candidate) for p in negatives]
        found.append(
            KindHeldOut(
                kind,
                len(negatives),
                sum(r.verdict == "conflict" for r in readings),
                sum(r.verdict == "uncertain" for r in readings),
            )
        )
    return found


@dataclass(frozen=True)
class MatchRates:
    """What a matcher behind the guard does with one-sentence pairs: how many clinically reversed candidates it
    still matches (the figure that counts: each is a wrong edit-free sentence) and how many paraphrases it
    matches; of each, how many decisions the guard flagged as uncertain."""

    reversed: int
    reversed_matched: int
    paraphrases: int
    paraphrases_matched: int
    matched_ids: tuple[str, ...]
    """Reversed pairs matched, and paraphrases left unmatched."""
    reversed_uncertain: int = 0
    """Reversed pairs whose decision (match or not) the guard could not vouch for."""
    paraphrases_uncertain: int = 0


def matcher_rates(pairs: Sequence[GuardPair], matcher: Any) -> MatchRates:
    """:func:`match_rates` outside an event loop."""
    return asyncio.run(match_rates(pairs, matcher))


async def match_rates(pairs: Sequence[GuardPair], matcher: Any) -> MatchRates:
    """Each pair's reference sentence matched against its candidate as a one-sentence draft by ``matcher`` (an
    EditJudge matcher: EditJudge's default is ``GuardedMatcher(EmbeddingMatcher())``)."""
    found = [await matcher.match(p.reference, p.candidate) for p in pairs]
    reversed_pairs = [(p, m) for p, m in zip(pairs, found, strict=True) if not p.match]
    paraphrases = [(p, m) for p, m in zip(pairs, found, strict=True) if p.match]
    return MatchRates(
        reversed=len(reversed_pairs),
        reversed_matched=sum(m.span is not None for _, m in reversed_pairs),
        paraphrases=len(paraphrases),
        paraphrases_matched=sum(m.span is not None for _, m in paraphrases),
        matched_ids=tuple(p.id for p, m in reversed_pairs if m.span is not None)
        + tuple(p.id for p, m in paraphrases if m.span is None),
        reversed_uncertain=sum(getattr(m, "uncertain", None) is not None for _, m in reversed_pairs),
        paraphrases_uncertain=sum(getattr(m, "uncertain", None) is not None for _, m in paraphrases),
    )


__all__ = [
    "BUILTIN_SETS",
    "CONFLICT_KINDS",
    "GUARD_MODES",
    "UNCERTAIN_POLICIES",
    "ClinicalGuard",
    "ClinicalSignals",
    "Conflict",
    "DrugClass",
    "DrugMention",
    "GuardEvaluation",
    "GuardMode",
    "GuardPair",
    "GuardScore",
    "GuardSet",
    "Instruction",
    "KindHeldOut",
    "MatchRates",
    "PairReading",
    "UncertainPolicy",
    "builtin_guard_sets",
    "default_guard",
    "drug_classes",
    "evaluate_guard",
    "leave_one_kind_out",
    "match_rates",
    "matcher_rates",
    "read_guard_pairs",
]
