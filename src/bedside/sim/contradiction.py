"""The combined fidelity checker: surface contradiction rules, then the embedding pre-filter for the rest.

The embedding checker alone (MiniLM cosine to the facts) cannot see a contradiction: "I take furosemide 80 mg"
is as close to "furosemide 40 mg once a day" as a faithful repeat. This checker labels each patient sentence in
order:

1. **non_informative**: a question (a tag question such as "..., right?" is a statement being checked), or a
   sentence nearer to bedside's small-talk prototypes (``data/small_talk.txt``) than to any fact;
2. **contradicted**: a rule finds a conflict between the sentence and a fact it is *aligned* with (every fact
   at or above ``align`` cosine, nearest first, or else the nearest one if at least ``floor``), or with
   something the clinician stated. Rules are EditJudge's guard signals (:mod:`bedside.text.conflicts`) read
   after number words are written as digits (:mod:`bedside.text.numbers`): a different side of the body; a
   number no fact states against a fact with numbers; a different duration (compared in days), frequency,
   time of day or food timing; an incompatible medication action; the opposite polarity (negated against
   affirmed; "normal", "fine", "without" count as negated) against the nearest fact when it is at least
   ``negation_align`` near; another drug in place of the nearest fact's (at least ``swap`` near), or a drug of
   the same class as a listed one ("warfarin" against "apixaban", both anticoagulants); another relative with
   the same history ("my sister has bipolar disorder" against "my brother has"). A sentence that says it is
   extra ("also", "too") is checked for side and polarity only. A fact that agrees on a number, drug or side
   ends the search; a dose is heard only where a known text gives it in the same unit;
3. **unsupported**: a drug, number or person (mother, neighbour...) no fact or clinician sentence names, or a
   sentence below ``entail`` cosine to every fact and clinician sentence;
4. **entailed**: the rest;

and, before any of these, **uncertain** for a sentence the rules cannot read (longer than 2,000 characters, no
words, not English, a number, unit or drug library that raised): counted apart, never guessed.

Since issue 30's second round: a number is read with the word after it as its unit, so "10 attacks" is compared
with the fact that counts attacks and "5 years ago" says nothing against "a 4 mm stone"; a polarity flip needs
a subject word shared with the fact (or ``negation_unshared`` cosine); months are compared as dates; times
compare within their kind (a duration or rate never against a time of day); opposite patient states and jobs
(``data/meanings.toml``, extendable) are contradictions carried by meaning.

Since issue 45's third round: a spoken answer leaves its subject to the question it answers ("About a month and
a half ago, I think." to "When was your last blood test?"), so when the clinician's last turn asks something,
each sentence is also read after it and a fact is as near as the nearer reading; the clinician's questions
themselves entail nothing (a sentence near "Have you had chest pain?" is not thereby grounded). Amounts of time
compare by what they come to, within a tenth (:mod:`bedside.text.times`: "a month and a half" is "six weeks",
"every other week" is "twice a month"), and a number inside a range a fact gives ("between 5.8 and 6.4") is one
the fact states.

What it can claim: the contradictions it reports are conflicts in these signals, each with the fact it
conflicts with. What it cannot: a contradiction carried by meaning outside the listed states and jobs passes
as unsupported or entailed, and an invented detail close in wording to a fact passes as entailed.
Thresholds were tuned on the dev half of bedside's labelled set only (``bedside sim fidelity-eval``).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any, Literal, get_args

from bedside.sim.household import household, household_conflict
from bedside.text.assertion import word_stem
from bedside.text.conflicts import (
    ClinicalGuard,
    ClinicalSignals,
    actions_agree,
    answered_sides,
    body_parts,
    body_regions,
    default_guard,
    drug_classes,
    with_frequency,
)
from bedside.text.numbers import calendar_terms
from bedside.text.quantities import AGE_AT, BARE_AGE, normalise_quantities, numbers_in_digits, without_ages
from bedside.text.sentences import split_sentences
from bedside.text.slots import slot_conflicts
from bedside.text.times import DAYS, TOLERANCE, in_days, same_time, times_conflict
from bedside.text.wordnet import irregular_verb_bases

JudgedLabel = Literal["non_informative", "entailed", "contradicted", "unsupported"]
"""What a patient sentence is against its facts: the labels a hand labeller or a judge gives."""
Label = Literal["non_informative", "entailed", "contradicted", "unsupported", "uncertain"]
"""A checker's answer: a :data:`JudgedLabel`, or ``uncertain`` where the offline checker cannot read the sentence
(longer than a sentence, no words, not English, a library that failed; issue 45): counted apart, never a guess.
Defined here, below :mod:`bedside.sim.fidelity`, which uses the rules."""
LABELS: tuple[Label, ...] = get_args(Label)
JUDGED_LABELS: tuple[JudgedLabel, ...] = get_args(JudgedLabel)

_TAG_QUESTION = re.compile(r",\s*(?:right|correct|yeah|yes|no|isn't it|is that right|ok(?:ay)?)\s*\?\s*$", re.I)
_PRIVATIVE = re.compile(
    r"\b(?:(?<!can't sleep )(?<!cannot sleep )(?<!can't manage )(?<!can't do )without(?! fail\b)|"
    r"short(?:ness)? of(?! breath\b)|lack of|unable|"
    r"(?<!\blike )(?<!\bas )(?<!\bthan )(?<!\babove )(?<!\bbelow )(?<!\btwice the )(?<!\btimes the )"
    r"(?<!\bdouble the )normal(?! (?:levels?|range|limits?|values?|amount)\b)|"
    r"(?<!\ba )(?<!\bthem )(?<!\bit )"
    r"fine(?! (?:tremor|shak\w*|lines?|rash)\b)|(?:okay|ok)(?!,? but\b)"
    r"|clear(?! (?:fluid|liquid|discharge|drainage|water|urine|mucus|phlegm|snot|blisters?|plastic|tape)\b)"
    r"|negative|unremarkable|sober)\b",
    re.I,
)
"""An absence said without "no" ("without", "short of", "normal"); "without fail" is a "yes", said firmly, "can't
sleep without it" another, "short of breath" a symptom, said plainly, "twice the normal level" and "kicking like
normal" an amount and a way, not an absence, "a fine tremor" a slight one, "I can wiggle them fine" how well,
"clear fluid" what it looks like, "sober since" no drinking, and "it's okay, but" a concession before a
complaint."""
_RESULT_CLAUSE = re.compile(
    r",?\s*\b(?:that|which|(?P<and>and (?:it|they))) (?:was|were|came back|turned out|has been|have been) "
    r"(?:all |completely |totally )?(?:normal|fine|clear|negative|unremarkable)\b",
    re.I,
)
"""A test's result told after it ("I had a colonoscopy two years ago that was normal", "I had my eyes checked
last year and they were fine"): the test was done, and its normal result is no "no" to having had it. An "and it
was fine" only after a test done (:data:`_TEST_DONE`): "Yes, and it came back negative" answers with its result,
and "I've taken Bactrim before and it was fine" says how it was tolerated."""
_TEST_DONE = re.compile(r"\b(?:had|got|did|done|checked|tested|scanned)\b", re.I)


def _without_result(text: str) -> str:
    """``text`` without a test's normal result told after the test (:data:`_RESULT_CLAUSE`)."""
    return _RESULT_CLAUSE.sub(
        lambda m: " " if not m.group("and") or _TEST_DONE.search(text, 0, m.start()) else m.group(), text
    )


_NUMBER = re.compile(r"(?<![\w/.])\d+(?:\.\d+)?")
_PERSON = re.compile(
    r"\b(?:mother|mom|mum|father|dad|sister|brother|wife|husband|partner|son|daughter|friend|neighbou?r|boss"
    r"|girlfriend|boyfriend|aunt|uncle|grandmother|grandfather|grandma|grandpa|granny|gran|grandad|nana|cousin"
    r"|colleague|niece|nephew|grandson|granddaughter|stepson|stepdaughter|stepmother|stepfather|stepmum|stepdad)\b",
    re.I,
)
_CANNOT_HAVE = re.compile(
    r"\b(?:can't|cannot|can not|couldn't|unable to|not allowed to) (?:take|have|use|tolerate|touch|eat|be given)\b|"
    r"\b(?:makes?|made) me\b|\b(?:doesn't|does not|didn't|did not|don't|do not) agree with me\b|\bdisagrees? with me\b",
    re.I,
)
_ALLERGY = re.compile(r"\ballerg|\bintoleran|\breacti", re.I)
"""An allergy is said as what the patient cannot have ("Bactrim, I can't take that one" against "allergic to
trimethoprim-sulfamethoxazole"): that "not" is the allergy, no flip of it."""
_ONLY_THAT = re.compile(r",?\s*\b(?:nothing else|that'?s (?:it|all))\W*$", re.I)
"""An answer closed off at its end ("Just latex, nothing else."): its "nothing" negates no fact. Not "nobody else"
("My aunt, nobody else" says no one else in the family has it)."""
_OWN_AGE = re.compile(
    r"^\W*(?:i am|i'm|i turned)\s+\d{1,3}(?:\s+years?\s+old\b|(?=\s*(?:[,.;!?]|$)|\s+(?:and|now|but|so|with)\b))",
    re.I,
)
"""A sentence that opens on the patient's own age ("I'm 35.", "I am 29 years old and ...", its number in digits):
two of them compare ages whatever was asked."""
_NOT_LONG_AGO = re.compile(r"\bnot (?:that |too |so |very )?long (?:ago|back|to go|left)\b", re.I)
""""Not that long ago" says when, "not long to go now" how far along: neither says no."""
_NOT_KNOWING = re.compile(
    r",?\s*\b(?:and |but )?(?:i|we) (?:do not|don't|dont|did not|didn't) (?:really |even )?know "
    r"(?:why|how|what|where)\b[^,;:.]*|"
    r",?\s*\b(?:and |but )?(?:i'm|i am|we're|we are) not (?:really )?sure (?:why|how|what)\b[^,;:.]*",
    re.I,
)
""""I've been crying most days and I don't really know why": the "no" is of knowing the cause, not of the crying."""
_NOT_EVEN_A_SPAN = re.compile(r"\bnot even (?:a|an|one|\d+) (?:hours?|days?|weeks?|months?|years?)\b", re.I)
""""Not even a week yet" says how long (under a week), not no."""
_BACKGROUND_CLAUSE = re.compile(r"(?<=[\w,] )(?<!\band )(?<!\bor )\b(?:when|because|'cause)\b[^,;:.]*", re.I)
"""A clause after the sentence's own that gives its when or its why ("I went to the ER last spring when I couldn't
breathe", "I came in because I couldn't breathe"): a "no" inside it is not the sentence's. Not a clause that opens
the sentence, whose main clause may follow without a comma, nor one that is an item of a list ("bright lights, and
when I don't get enough sleep"), nor "since", which also says from when ("the bloating's gone since I stopped
gluten")."""
_SCOPED_NONE = re.compile(r"\bfor (?:the|my|his|her|your|their) \w+|\bdiet\b|\bwhat i eat\b", re.I)
"""A "none" said of one condition's treatment ("I just watch what I eat, no pills for the sugar"): not of every
medicine."""
_NO_MEDICINES = re.compile(
    r"\b(?:no|not on any|not taking any|(?:don't|do not|doesn't|does not) take any|(?:i'm|i am) not on|"
    r"(?:i'm|i am) off all)\s+(?:(?P<regular>regular|daily|long-term|prescribed|prescription|repeat)\s+)?"
    r"(?:medicines?|medications?|meds|tablets|pills|drugs|treatment)\b",
    re.I,
)
"""A patient who takes no medicine ("I take no regular medicines", "I'm not on any medication at all")."""
_BUT_FOR = re.compile(r"\b(?:except|apart from|other than|besides|but|only|aside from)\b", re.I)
_MEDICINE_FORM = re.compile(
    r"\b(?:tablets?|pills?|capsules?|inhalers?|injections?|medicines?|medications?|meds)\b",
    re.I,
)
_TAKING = re.compile(r"\b(?:take|takes|taking|took|on|use|uses|using|used)\b", re.I)
_EVERY = re.compile(r"\b(?:every|each|daily|regularly|nightly)\b", re.I)
_FAMILY = re.compile(r"\b(?:family|relatives?)\b", re.I)
"""A fact about the whole family ("no one in my family has died suddenly") speaks of the uncle a sentence names."""
_EXTRA = re.compile(
    r"\b(?:also|too|as well|another|(?<!\bevery )(?<!\beach )other|extra|plus|besides|in addition|on top of)\b", re.I
)
"""A sentence that adds to what is known ("I also take ..."): not "every other week", which is how often."""
_ABOUT_SOMEONE_ELSE = re.compile(
    r"^\W*(?:(?:um|uh|er|erm|well|yeah|yes|so|oh|and|but|no),?\s+)*(?:my|our)\s+(?:\w+\s+)?" + _PERSON.pattern,
    re.I,
)
"""A sentence whose subject is another person ("my mum had a clot on her lung"): its "no" or "yes" is theirs, not
said against the patient's own facts (ConText's experiencer, read from the sentence's first words)."""


@dataclass(frozen=True)
class CombinedThresholds:
    """The combined checker's cosines (MiniLM), chosen on the dev half of the labelled set."""

    entail: float = 0.5
    """At or above: entailed (when no rule fired); below: unsupported."""
    align: float = 0.55
    """Facts at or above this cosine are compared by the rules, besides the nearest fact."""
    negation_align: float = 0.25
    """A polarity flip counts only against a fact at least this near (negation is common in paraphrase)."""
    small_talk: float = 0.35
    """A sentence at least this near a small-talk prototype, and nearer to it than to any fact, states nothing."""
    negation_unshared: float = 0.45
    """A polarity flip against a fact that shares no subject word with the sentence needs this cosine."""
    measure_unshared: float = 0.42
    """A number or a duration against a fact that shares no subject word with the sentence nor its question needs
    this cosine: "I get up four times a night to pee" says nothing against "finasteride 5 mg daily" (0.27), while
    "Twenty milligrams." answers "What dose are you on?" of the nearest fact (0.41 on the dev sets of 2026-11-30;
    chosen there, with 16 false contradictions of 20 below it)."""
    floor: float = 0.25
    """The nearest fact is compared only when at least this near (below, the sentence is about something else)."""
    swap: float = 0.6
    """A nearest fact this near that names another drug, with no "also", makes the sentence a wrong drug."""


@dataclass(frozen=True)
class FactConflict:
    """A contradiction found by a rule: which kind, and the fact (or clinician sentence) it conflicts with."""

    kind: str
    fact: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind} against {self.fact!r}: {self.detail}"


@lru_cache(maxsize=1)
def small_talk_prototypes() -> tuple[str, ...]:
    """bedside's small-talk sentences (written for bedside; one per line, # for comments)."""
    text = (resources.files("bedside.sim") / "data" / "small_talk.txt").read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


@lru_cache(maxsize=1)
def _small_talk_vectors() -> Any:
    from bedside.retrieval.embeddings import default_embedder

    return default_embedder().embed(list(small_talk_prototypes()))


def is_question(sentence: str) -> bool:
    """A question asks rather than states; "so twice a day, right?" states something and checks it."""
    text = sentence.strip()
    return text.endswith("?") and not _TAG_QUESTION.search(text)


@lru_cache(maxsize=1)
def _class_of() -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    for drug_class in drug_classes():
        for member in drug_class.members:
            found.setdefault(member, set()).add(drug_class.key)
    return {drug: frozenset(keys) for drug, keys in found.items()}


def _classes(signals: ClinicalSignals) -> frozenset[str]:
    keys = {c.removeprefix("class:") for c in signals.classes}
    for drug in signals.drugs:
        keys |= _class_of().get(drug, frozenset())
    return frozenset(keys)


def _sets_conflict(a: frozenset[str], b: frozenset[str]) -> bool:
    return bool(a) and bool(b) and not (a <= b or b <= a)


class ContradictionRules:
    """Surface contradictions between a patient sentence and the facts it is aligned with."""

    def __init__(
        self,
        guard: ClinicalGuard | None = None,
        thresholds: CombinedThresholds | None = None,
        *,
        without: frozenset[str] = frozenset(),
    ) -> None:
        self.guard = guard or default_guard()
        self.thresholds = thresholds or CombinedThresholds()
        self.without = without
        """Conflict kinds whose rules are left out (:func:`leave_one_kind_out`): the search goes on past them."""

    def leaving_out(self, kinds: frozenset[str]) -> ContradictionRules:
        """The same rules without those that find ``kinds`` of conflict."""
        return ContradictionRules(self.guard, self.thresholds, without=self.without | kinds)

    def signals(self, text: str) -> ClinicalSignals:
        return self.guard.signals(text)

    def negated(self, text: str) -> bool:
        """The guard's negation, a "no" an action took in ("I have never tried to hurt myself": never try; "I'm not
        using anything": avoid, with nothing named), or an absence said another way: "without", "short of",
        "normal", "fine"; outside a clause that only says when or why (:data:`_BACKGROUND_CLAUSE`)."""
        text = _NOT_EVEN_A_SPAN.sub("under that", _NOT_LONG_AGO.sub("recently", _ONLY_THAT.sub(" ", text)))
        text = _NOT_KNOWING.sub(" ", text)
        text = _BACKGROUND_CLAUSE.sub(" ", text)
        text = _without_result(text)
        signals = self.signals(text)
        return signals.negated or bool(signals.refused) or "avoid" in signals.actions or bool(_PRIVATIVE.search(text))

    def named_drugs(self, texts: Sequence[str]) -> frozenset[str]:
        """Every drug and drug class the texts name (classes as ``class:key``)."""
        found: set[str] = set()
        for text in texts:
            signals = self.signals(text)
            found |= signals.drugs | signals.classes
        return frozenset(found)

    def find(
        self, sentence: str, known: Sequence[str], similarity: Sequence[float], asked: str = ""
    ) -> FactConflict | None:
        """The first conflict between ``sentence`` and an aligned known sentence (facts, then what the clinician
        said), nearest first; None when the rules see none. A fact that agrees with the sentence on a number,
        drug or side ends the search: the sentence has found its fact. ``asked``: the clinician's question the
        sentence answers; an answer that names no drug is about the one drug the question names ("What dose of
        carbimazole are you on?" "Forty milligrams.")."""
        if not known:
            return None
        limits = self.thresholds
        order = sorted(range(len(known)), key=lambda i: -similarity[i])
        near = [i for i in order if similarity[i] >= limits.align]
        aligned = near or [i for i in order[:1] if similarity[i] >= limits.floor]
        mine = self.signals(sentence)
        if asked and not mine.drugs and len(topic := self.signals(asked).drugs) == 1:
            mine = replace(mine, drugs=topic)
        if asked and not mine.sides and (sides := answered_sides(asked, sentence)):
            mine = replace(mine, sides=sides)
        quantities = _quantities(sentence)
        # a number said of one drug is not heard in another drug's fact ("40 mg" of carbimazole, of propranolol)
        same_drug = [
            k for k in known if not (mine.drugs and (theirs := self.signals(k).drugs) and not theirs & mine.drugs)
        ]
        unheard = _unheard_in(sentence, same_drug)
        extra = bool(_EXTRA.search(sentence))
        near = [i for i in order if similarity[i] >= limits.floor]
        if "meaning" not in self.without and (meaning := self._meaning(sentence, known, near)):
            return meaning
        if "person" not in self.without and (person := _other_person(sentence, known, asked)):
            return person
        if "medicines" not in self.without and (medicines := self._medicines(sentence, mine, known)):
            return medicines
        if "household" not in self.without and (home := household(sentence, asked)):
            homes = [(text, stated) for text in known if (stated := household(text))]
            for text, stated in homes:
                if why := household_conflict(home, stated):
                    return FactConflict("household", text, why)
            if homes:
                return None  # the sentence has found its fact: the same household said another way
        about_someone_else = bool(_ABOUT_SOMEONE_ELSE.search(sentence))
        rates = frozenset(t for t in mine.times if "/" in t)
        bounds = _time_bounds(sentence)
        # "Going on six years now." to "How long have you been sober?": how long, and no subject to say yes or no
        # of (not a rate: "I go three times a week now" to "Have you started dialysis?" says yes)
        bare_time = (
            bool(mine.times)
            and not any("/" in t or t.startswith("every ") for t in mine.times)  # "three times a week" does it
            and not _content(numbers_in_digits(sentence)) - _HEDGES
            and not self.negated(sentence)
        )
        ordinals = _ordinals(sentence)
        # an age at an event that a known text gives ("Since I was seven." with "diabetes since I was 7") has found
        # its fact: it says nothing against another event's age
        my_ages = {t for t in mine.times if t.startswith("aged ")}
        ages_heard = bool(my_ages) and my_ages <= {t for k in known for t in self.signals(k).times}
        for rank, i in enumerate(aligned):
            # "I can't sleep" and "I have insomnia": one state said two ways, not a flip; its times may still differ
            # ("I quit smoking two years ago" against "I stopped smoking ten years ago")
            same = _same_state(sentence, known[i])
            fact = self.signals(known[i])
            if mine.drugs and fact.drugs and not mine.drugs & fact.drugs:
                if rank == 0 and similarity[i] >= limits.swap and not extra and "drug" not in self.without:
                    return FactConflict("drug", known[i], f"{_show(mine.drugs)} in place of {_show(fact.drugs)}")
                continue  # another drug's fact: its numbers and times say nothing about this one
            found = self._conflicts(
                mine,
                fact,
                quantities,
                _quantities(known[i]),
                first=rank == 0,
                extra=extra,
                unheard=unheard if _measure_conflict(unheard, _measures(known[i])) else frozenset(),
                negated=(self.negated(sentence), self.negated(known[i])),
                someone_else=about_someone_else and not _PERSON.search(known[i]) and not _FAMILY.search(known[i]),
                intolerance=bool(_CANNOT_HAVE.search(sentence) and _ALLERGY.search(known[i])),
                cosine=similarity[i],
                shared=bool(_content(f"{asked} {sentence}") & _content(known[i])),
                answered=bool(_content(f"{asked} {sentence}") & _content(known[i]))
                or bool(fact.drugs and not mine.drugs and _WHEN_ASKED.search(asked) and _ANY_MEDICINE.search(asked)),
                own_ages=_own_age(sentence) and _own_age(known[i]),
                calendars=(calendar_terms(sentence), calendar_terms(known[i])),
                parts_apart=_parts_apart(sentence, known[i]),
                bounds=bounds,
                purposes_apart=_purposes_apart(sentence, known[i], (mine, fact)),
                bare_time=bare_time,
                ordinals=(ordinals, _ordinals(known[i])),
                ages_heard=ages_heard,
            )
            conflict = next(  # the first of a kind not left out
                (c for c in found if c[0] not in self.without and not (same and c[0] in ("negation", "action"))), None
            )
            if conflict and conflict[0] == "time" and self._times_stated(sentence, mine, known, near, i):
                continue  # "two times a week, before soccer": the albuterol fact says it, not the daily inhaler's
            if conflict and conflict[0] == "time" and self._times_told(sentence, mine, known, near, i):
                continue  # "about eight months ago": the transplant's eight months, not three years of dialysis
            if conflict:
                return FactConflict(conflict[0], known[i], conflict[1])
            if same:
                return None
            if (
                _agree(_measures(sentence), _measures(known[i]))
                or (mine.drugs & fact.drugs)
                or (mine.sides & fact.sides)
                # "twice a week, before soccer": the albuterol's twice a week; not where an amount is yet unheard
                or (rates and rates <= fact.times and not unheard)
            ):
                return None
        if (
            not extra
            and "time" not in self.without
            and (rate := self._rate_asked(asked, mine, known, similarity, near))
        ):
            return rate
        if not extra and "number" not in self.without and (counted := self._counted(unheard, known, near)):
            return counted
        return None if "drug" in self.without else self._wrong_drug(sentence, mine, known)

    def _medicines(self, sentence: str, mine: ClinicalSignals, known: Sequence[str]) -> FactConflict | None:
        """A patient who says they take no medicine against a fact that names one they take, or one who names a
        medicine they take against a fact that says they take none ("I take a blood pressure tablet every morning"
        against "I take no medicines"). A fact that says "no regular medicines" is gainsaid only by a medicine taken
        on a schedule; one with an exception ("no medicines apart from my inhaler") by none."""
        if _ABOUT_SOMEONE_ELSE.search(sentence) or _EXTRA.search(sentence):
            return None
        says_none = bool(_NO_MEDICINES.search(sentence)) and not _SCOPED_NONE.search(sentence)
        takes = not says_none and self._takes_a_medicine(sentence, mine)
        if not says_none and not takes:
            return None
        for text in known:
            if _ABOUT_SOMEONE_ELSE.search(text) or _PERSON.search(text):
                continue
            if says_none and self._takes_a_medicine(text, self.signals(text)):
                return FactConflict("medicines", text, "a medicine taken vs none")
            scoped = _BUT_FOR.search(text) or _SCOPED_NONE.search(text)
            if takes and (none := _NO_MEDICINES.search(text)) and not scoped:
                if none.group("regular") and not any("/" in t for t in mine.times) and not _EVERY.search(sentence):
                    continue
                return FactConflict("medicines", text, "none vs a medicine taken")
        return None

    def _takes_a_medicine(self, text: str, signals: ClinicalSignals) -> bool:
        """Whether a text says its speaker takes a medicine: a drug or a form of one with a verb of taking, no "no"
        and no allergy."""
        return (
            bool(signals.drugs or _MEDICINE_FORM.search(text))
            and bool(_TAKING.search(text))
            and not _NO_MEDICINES.search(text)
            and not _ALLERGY.search(text)
            and not self.negated(text)
        )

    def _times_stated(
        self, sentence: str, mine: ClinicalSignals, known: Sequence[str], near: Sequence[int], skip: int
    ) -> bool:
        """Whether the sentence, which gives a rate, shares no word with ``known[skip]`` (a time against it) but
        does with a near fact that gives every time the sentence gives: the sentence has found its fact further
        down ("two times a week, before soccer" is the rescue inhaler's, not the daily one's)."""
        words = _content(sentence) - _content(" ".join(mine.time_words))
        if not any("/" in time for time in mine.times) or words & _content(known[skip]):
            return False  # a rate only: "in the morning with my coffee" says nothing of which fact it is
        return any(
            i != skip and words & _content(known[i]) and mine.times <= self.signals(known[i]).times for i in near
        )

    def _times_told(
        self, sentence: str, mine: ClinicalSignals, known: Sequence[str], near: Sequence[int], skip: int
    ) -> bool:
        """Whether a near fact other than ``known[skip]`` gives every time the sentence gives (spans in days, days
        of the week): the sentence tells that fact's time ("It was about eight months ago" against "a transplant
        eight months ago"), which the time of another fact aligned above it does not gainsay ("on haemodialysis for
        three years before the transplant"). Not a sentence that gives a rate or shares a word with ``known[skip]``
        ("I quit smoking about two years ago" is about "I stopped smoking ten years ago", whatever else happened two
        years ago), nor a fact of another drug: "the folic acid every day except Sunday" is no methotrexate "on
        Sundays"."""
        words = _content(sentence) - _content(" ".join(mine.time_words))
        if any("/" in t for t in mine.times) or words & _content(known[skip]):
            return False
        told = in_days(frozenset(t for t in mine.times if _time_kind(t) != "part"))
        if not told:
            return False
        for i in near:
            if i == skip:
                continue
            fact = self.signals(known[i])
            if mine.drugs and fact.drugs and not mine.drugs & fact.drugs:
                continue
            if told <= in_days(fact.times):
                return True
        return False

    def _rate_asked(
        self,
        asked: str,
        mine: ClinicalSignals,
        known: Sequence[str],
        similarity: Sequence[float],
        near: Sequence[int],
    ) -> FactConflict | None:
        """An answer to "how often" that gives a rate, against the one near fact that gives one, aligned or not:
        "It's once a month" to "How often is the treatment?" against "I have immunotherapy every three weeks",
        which the answer's other words ("every four weeks") may leave below the alignment."""
        if not _HOW_OFTEN.search(asked):
            return None
        rates = _rates(mine)
        if not any("/" in t for t in rates):
            return None
        found = []
        for i in near:
            fact = self.signals(known[i])
            if similarity[i] < self.thresholds.measure_unshared or (
                mine.drugs and fact.drugs and not mine.drugs & fact.drugs
            ):
                continue
            theirs = _rates(fact)
            if any("/" in t for t in theirs):
                found.append((i, theirs))
        if len(found) != 1:
            return None  # no fact gives a rate, or several do: which one the answer is about is not known
        i, theirs = found[0]
        if times_conflict(rates, theirs):
            return FactConflict("time", known[i], f"{_show(theirs)} vs {_show(rates)}")
        return None

    @staticmethod
    def _counted(unheard: frozenset[tuple[str, str]], known: Sequence[str], near: Sequence[int]) -> FactConflict | None:
        """A number the sentence gives a thing ("10 attacks") against a near fact that gives the same thing
        another number ("3 attacks"), wherever that fact ranks: the number is aligned by what it counts. Time
        units are left to the duration rules ("5 years ago" and "29 years old" count different things)."""
        for value, unit in unheard:
            if not unit or unit in DAYS or unit in ("hour", "minute", "second", "times"):
                continue
            for i in near:
                theirs = {v for v, u in _measures(known[i]) if u == unit}
                if theirs and value not in theirs:
                    return FactConflict("number", known[i], f"{_show(frozenset(theirs))} {unit} vs {value} {unit}")
        return None

    def _conflicts(
        self,
        mine: ClinicalSignals,
        fact: ClinicalSignals,
        my_numbers: frozenset[str],
        fact_numbers: frozenset[str],
        *,
        first: bool,
        extra: bool,
        unheard: frozenset[tuple[str, str]],
        negated: tuple[bool, bool],
        someone_else: bool = False,
        intolerance: bool = False,
        own_ages: bool = False,
        cosine: float,
        shared: bool,
        answered: bool = False,
        calendars: tuple[frozenset[str], frozenset[str]],
        parts_apart: bool = False,
        bounds: Sequence[tuple[float, float, float]] = (),
        purposes_apart: bool = False,
        bare_time: bool = False,
        ordinals: tuple[frozenset[int], frozenset[int]] = (frozenset(), frozenset()),
        ages_heard: bool = False,
    ) -> Iterator[tuple[str, str]]:
        """Each conflict the rules see between a sentence and one fact, in the rules' order (kind, detail). Sides
        are compared only where the two name no parts of the body or a region in common ("my right eye" says
        nothing against "my left knee"); a time the sentence gives as a bound ("just over a week ago") agrees with
        a fact's time within it."""
        if not parts_apart and _sets_conflict(mine.sides, fact.sides):
            yield "side", f"{_show(fact.sides)} vs {_show(mine.sides)}"
        # A polarity flip needs a shared subject: "no dry cough" says nothing against "short of breath".
        limits = self.thresholds
        near_enough = cosine >= (limits.negation_align if shared else limits.negation_unshared)
        if (
            first
            and near_enough
            and negated[0] != negated[1]
            and not someone_else
            and not intolerance
            and not purposes_apart
            and not bare_time
        ):
            yield "negation", f"{_polarity(negated[1])} vs {_polarity(negated[0])}"
        if extra:
            return  # "I also take ...": an addition, whose numbers and times describe something else
        # A number or a time needs a subject in common with the fact, the sentence's own or its question's, or
        # else a fact near it: "I get up four times a night to pee" says nothing against "finasteride 5 mg
        # daily", nor "blurry for a few weeks" against "numbness in both feet for six months"
        about_it = answered or cosine >= limits.measure_unshared
        if (
            unheard
            and about_it
            and any(
                theirs and not mine <= theirs
                for mine, theirs in zip(_kinds_apart(my_numbers), _kinds_apart(fact_numbers), strict=True)
            )
        ):
            yield "number", f"{_show(fact_numbers)} vs {_show(my_numbers)}"
        elif about_it and all(ordinals) and not ordinals[0] & ordinals[1]:
            # "It started after my second baby." against "This started after my third baby was born."
            yield "number", f"{_show_ordinals(ordinals[1])} vs {_show_ordinals(ordinals[0])}"
        for kind in ("span", "short", "moment", "part", "age", "age at"):
            # "I'm 35." against "I am 29 years old.": both the patient's own age, compared asked or not
            if (kind == "age at" and ages_heard) or (
                not (kind == "age" and own_ages)
                and (not about_it or (kind in ("moment", "part", "age") and not answered))
            ):
                # "my knuckles are stiff in the mornings" says nothing against "ankle swelling at night"; an answer
                # shares its subject through the question ("When do you take it?" "In the evening.")
                continue
            # "one in the morning and one at night" is twice a day
            mine_kind = in_days(frozenset(t for t in with_frequency(mine.times) if _time_kind(t) == kind))
            fact_kind = in_days(frozenset(t for t in with_frequency(fact.times) if _time_kind(t) == kind))
            if times_conflict(mine_kind, fact_kind) and not _within_bounds(mine_kind, fact_kind, bounds):
                yield "time", f"{_show(fact_kind)} vs {_show(mine_kind)}"
        for kind in ("month:", "weekday:"):
            mine_dates = _weekend_nights(frozenset(c for c in calendars[0] if c.startswith(kind)))
            fact_dates = _weekend_nights(frozenset(c for c in calendars[1] if c.startswith(kind)))
            if _sets_conflict(mine_dates, fact_dates):
                yield "date", f"{_show(fact_dates)} vs {_show(mine_dates)}"
        if _sets_conflict(mine.food, fact.food):
            yield "time", f"{_show(fact.food)} vs {_show(mine.food)}"
        # The guard's slots (bedside.text.slots) on the nearest fact: before or after, with or without, a
        # threshold's direction, clinical opposites. Not "direction" (more, less): a patient's "more" is often
        # about another thing than the fact's; nor "order": a patient tells events in the order they come to mind;
        # nor "actor": its "I" and "we" are the clinician's, and a patient's "I" is the patient; nor a cap or a
        # floor against the same number said plainly: "the highest I saw was 39.2" is what "fever up to 39.2" says.
        if first:
            for kind, theirs, said in slot_conflicts(fact.slots, mine.slots):
                if kind == "comparison" and "=" in {theirs.split()[0], *said.split()[0].split("/")}:
                    continue
                if kind not in ("direction", "order", "actor"):
                    yield kind, f"{theirs} vs {said}"
        # an action needs a subject in common too: "I've started using a cane" says nothing of the aspirin stopped
        if mine.actions and fact.actions and shared and not _patient_actions_agree(mine.actions, fact.actions):
            yield "action", f"{_show(fact.actions)} vs {_show(mine.actions)}"

    def _meaning(self, sentence: str, known: Sequence[str], near: Sequence[int]) -> FactConflict | None:
        """An opposite patient state (``data/meanings.toml``), another organ for one person's cancer, or another job
        than a near fact says."""
        for pair in meaning_pairs():
            mine = pair.side(sentence)
            if mine is None:
                continue
            for i in near:
                theirs = pair.side(known[i])
                if theirs is not None and theirs != mine:
                    return FactConflict("meaning", known[i], f"{pair.name}: opposite states")
        if (mine_sites := _cancer_sites(sentence)) and not _EXTRA.search(sentence):
            for i in near:
                theirs_sites = _cancer_sites(known[i])
                if theirs_sites and not mine_sites & theirs_sites and _people(sentence) == _people(known[i]):
                    return FactConflict("meaning", known[i], f"cancer: {_show(theirs_sites)} vs {_show(mine_sites)}")
        if (my_main := _main_parts(sentence)) and not _EXTRA.search(sentence):
            for i in near:
                if (their_main := _main_parts(known[i])) and not my_main & their_main:
                    return FactConflict("meaning", known[i], f"main site: {_show(their_main)} vs {_show(my_main)}")
        if (my_floor := _floor(sentence)) is not None:
            for text in known:
                if (their_floor := _floor(text)) is not None and their_floor != my_floor:
                    return FactConflict("meaning", text, f"floor: {their_floor} vs {my_floor}")
        my_jobs = _jobs(sentence)
        if my_jobs:
            for text in known:
                their_jobs = _jobs(text)
                if their_jobs and not my_jobs & their_jobs and not _EXTRA.search(sentence):
                    return FactConflict("meaning", text, f"job: {_show(their_jobs)} vs {_show(my_jobs)}")
        return None

    def _wrong_drug(self, sentence: str, mine: ClinicalSignals, known: Sequence[str]) -> FactConflict | None:
        """A drug no known sentence names, of the same class as a drug a known sentence names, not said to be extra.
        A class named alone ("a steroid shot") is no drug: hydrocortisone cream may be one of it."""
        if _EXTRA.search(sentence):
            return None
        listed = self.named_drugs(known)
        new = [d for d in mine.drugs if d not in listed]
        for drug in new:
            classes = _class_of().get(drug, frozenset())
            for text in known:
                theirs = self.signals(text)
                named = {key for other in theirs.drugs for key in _class_of().get(other, frozenset())}
                if classes & named and drug not in theirs.drugs:
                    return FactConflict("drug", text, f"{drug} instead of {_show(theirs.drugs | theirs.classes)}")
        return None


def _rates(signals: ClinicalSignals) -> frozenset[str]:
    """The spans and rates a text gives, in days ("every 3 week" as "0.04762/day"), "as needed" left out."""
    return in_days(frozenset(t for t in signals.times if _time_kind(t) == "span" and t != "as needed"))


_HOW_OFTEN = re.compile(r"\bhow (?:often|many times|frequently)\b", re.IGNORECASE)
"""A question that asks for a rate."""
_ANY_MEDICINE = re.compile(r"\b(?:medicines?|medications?|meds|tablets?|pills?)\b", re.IGNORECASE)
_WHEN_ASKED = re.compile(r"\b(?:when|what time)\b", re.IGNORECASE)
"""A question of when a medicine is taken asks of whatever medicine a fact names: "When do you take your
medicine?" asks of the aripiprazole."""


def _own_age(text: str) -> bool:
    return bool(_OWN_AGE.match(normalise_quantities(text)))


_TYPE_NUMBER = re.compile(r"\btype (\d)\b", re.I)
"""A number that names a kind ("type 2 diabetes"): compared only with another kind's number ("type 1"), never with
an amount ("sugars in the two hundreds")."""


_CALENDAR_YEAR = re.compile(
    r"(?<![\w.,])((?:19|20)\d\d)(?![\w.,]*\d)(?!\s*(?:mg|mcg|g|ml|units?|steps|calories|kcal|feet|ft|metres|meters)\b)",
    re.I,
)
"""A year on the calendar ("a laparoscopy in 2019", "back in, uh, twenty-twenty"): compared only with another year,
never with an amount ("about five years ago")."""
_SPOKEN_CLOCK = re.compile(
    r"(?<![\w.:])(1[0-2]|[1-9])(?::[0-5]\d)?\s*"
    r"(?:o'?clock|(?:in the|this) (?:morning|afternoon|evening)|at night|last night|tonight|[ap]\.?m\b\.?)",
    re.I,
)
"""A time on the clock ("about seven in the morning", "8 pm"): an hour, compared only with another hour, never with
a count ("three times a week")."""
_NEAR = "just |a bit |a little "
_BOUND_WORDS = "over|more than|under|less than|nearly|almost|at least|upwards of"
"""How a number is given as a bound, and the words that bring the bound close to it: one list for a plain number's
bound (:data:`_BOUND`) and a time's (:data:`_TIME_BOUND`)."""
_BOUND = re.compile(rf"\b(?:{_NEAR})?(?:{_BOUND_WORDS})\s+(\d+(?:\.\d+)?)", re.I)
"""A number given as a bound ("over a decade", which is "over 10 years" by now)."""


def _quantities(text: str) -> frozenset[str]:
    """The numbers a text states, number words included, compared by value ("40" and "40.0" agree); a kind's number
    as ``type N``, an hour on the clock as ``clock N``. A bound said beside a plain number is no claim of its own:
    "for over a decade, twelve years or so" states twelve years."""
    said = without_ages(normalise_quantities(text))
    kinds = frozenset(f"type {n}" for n in _TYPE_NUMBER.findall(said))
    kinds |= frozenset(f"clock {n}" for n in _SPOKEN_CLOCK.findall(said))
    kinds |= frozenset(f"year {n}" for n in _CALENDAR_YEAR.findall(said))
    rest = _CALENDAR_YEAR.sub(" ", _SPOKEN_CLOCK.sub(" ", _TYPE_NUMBER.sub(" ", said)))
    plain = _NUMBER.findall(_BOUND.sub(" ", rest))
    numbers = plain if plain else _NUMBER.findall(rest)
    return kinds | frozenset(f"{float(n):g}" for n in numbers)


_TIME_BOUND = re.compile(
    rf"\b(?P<near>{_NEAR}|only )?(?P<bound>{_BOUND_WORDS}|not quite)\s+(?P<n>\d+(?:\.\d+)?|an?)\s+"
    r"(?P<unit>second|minute|hour|day|week|month|year)s?\b",
    re.I,
)
"""A time given as a bound ("just over a week ago", "almost a week", "under a minute")."""


def _time_bounds(text: str) -> tuple[tuple[float, float, float], ...]:
    """(days said, lowest, highest) for each time ``text`` gives as a bound: "over" reaches to three times what
    is said, "just over" to half as much again, "almost" and "nearly" down to six tenths of it; a fact's time
    in that span agrees with it (nine days is "just over a week", six "almost a week")."""
    found = []
    for match in _TIME_BOUND.finditer(normalise_quantities(text)):
        n = match.group("n").lower()
        days = (1.0 if n in ("a", "an") else float(n)) * DAYS[match.group("unit").lower()]
        bound, near = match.group("bound").lower(), bool(match.group("near"))
        if bound in ("over", "more than", "at least", "upwards of"):
            found.append((days, days, days * (1.5 if near else 3.0)))
        elif bound in ("under", "less than"):
            found.append((days, days * (0.6 if near else 0.0), days))
        else:  # nearly, almost, not quite
            found.append((days, days * 0.6, days))
    return tuple(found)


def _within_bounds(mine: frozenset[str], theirs: frozenset[str], bounds: Sequence[tuple[float, float, float]]) -> bool:
    """Every time of the sentence's that no fact time meets is a bound a fact time falls in (labels as
    :func:`~bedside.text.times.in_days` writes them)."""
    if not bounds:
        return False
    fact_days = [float(t.removesuffix(" day")) for t in theirs if t.endswith(" day") and t[0].isdigit()]
    for time in mine:
        if any(same_time(time, other) for other in theirs):
            continue
        if not (time.endswith(" day") and time[0].isdigit()):
            return False
        said = float(time.removesuffix(" day"))
        if not any(
            same_time(f"{said:.4g} day", f"{days:.4g} day")
            and any(low * (1 - TOLERANCE) <= fact <= high * (1 + TOLERANCE) for fact in fact_days)
            for days, low, high in bounds
        ):
            return False
    return True


_MAINLY = re.compile(r"\b(?:main|mainly|mostly|worst|chiefly|most affected)\b", re.I)


def _main_parts(text: str) -> frozenset[str]:
    """The parts of the body a text says are the main or worst ones ("it's mainly my knees and ankles"; "my hands
    and wrists are the main joints affected"): two texts that name none in common disagree on where it is."""
    return body_parts(text) if _MAINLY.search(text) else frozenset()


_PURPOSE = re.compile(r"\bfor (?:my |the |your |his |her |their |a |an )?((?:[a-z'-]+ ){0,2}[a-z'-]+)", re.I)
_NOT_A_PURPOSE = frozenset(
    (
        *("a", "an", "the", "about", "ages", "long", "years", "months", "weeks", "days", "hours", "while", "now"),
        *("then", "it", "them", "that", "this", "few", "several", "some", "over", "nearly", "almost"),
    )
)


def _purposes(text: str) -> frozenset[str]:
    """What a text says something is for ("amlodipine for my blood pressure", "no medication for erections"), as
    subject words; not a span of time ("for three months", "for ages")."""
    found: set[str] = set()
    for match in _PURPOSE.finditer(numbers_in_digits(text)):
        words = match.group(1).lower().split()
        if words and words[0] not in _NOT_A_PURPOSE and not any(ch.isdigit() for ch in words[0]):
            found |= _content(" ".join(words))
    return frozenset(found)


def _purposes_apart(sentence: str, fact: str, drugs: tuple[ClinicalSignals, ClinicalSignals]) -> bool:
    """Both speak of medicines (a word for one, or a drug named: ``drugs``, their readings) and say what theirs is
    for, and not for one thing: "I also take amlodipine for my blood pressure" says nothing against "I have not
    tried any medication for erections"."""
    if not all(_ANY_MEDICINE.search(text) or read.drugs for text, read in zip((sentence, fact), drugs, strict=True)):
        return False
    mine, theirs = _purposes(sentence), _purposes(fact)
    return bool(mine and theirs and not mine & theirs)


_WHICH_ONE = re.compile(
    r"\b(?:after|before|since|following) (?:my|the|her|our|his) (first|second|third|fourth|fifth|sixth) (?:one|baby"
    r"|child|pregnancy|miscarriage|loss|delivery|birth|son|daughter)\b",
    re.I,
)
"""Which of a patient's children, pregnancies or losses something came after or before ("it started after my third
baby", "after the first one I had a D&C"): two texts that time it by different ones disagree. Not "with my first
baby" against "pregnant with my second", which speak of two pregnancies."""


def _ordinals(text: str) -> frozenset[int]:
    return frozenset(_ORDINAL[match.lower()] for match in _WHICH_ONE.findall(text))


def _show_ordinals(ordinals: frozenset[int]) -> str:
    names = {n: word for word, n in _ORDINAL.items()}
    return ", ".join(names[n] for n in sorted(ordinals))


def _parts_apart(sentence: str, fact: str) -> bool:
    """Both name parts of the body, in no region in common: their sides are of different things ("my right eye"
    against "my left knee"; not "my right leg" against "my left calf")."""
    mine, theirs = body_regions(sentence), body_regions(fact)
    return bool(mine and theirs and not mine & theirs)


def _patient_actions_agree(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    """The guard's :func:`~bedside.text.conflicts.actions_agree`, save that a patient who stopped something and one
    who gave it up "for now" tell the same thing: "stop" against "hold" is an instruction's difference (for good
    or for a while), not a patient's."""
    paused = {"stop", "hold"}
    return actions_agree(mine, theirs) or (mine <= paused and theirs <= paused)


def _weekend_nights(days: frozenset[str]) -> frozenset[str]:
    """A weekend's days with its Friday: "a few pints at the weekend" is what "Friday and Saturday nights" says."""
    return days | {"weekday:friday"} if {"weekday:saturday", "weekday:sunday"} <= days else days


def _kinds_apart(numbers: frozenset[str]) -> tuple[frozenset[str], ...]:
    """(amounts, kinds' numbers, hours, years) of :func:`_quantities`: each compared only with its own sort."""
    sorts = [frozenset(n for n in numbers if n.startswith(prefix)) for prefix in ("type ", "clock ", "year ")]
    return (numbers.difference(*sorts), *sorts)


_MEASURE = re.compile(r"(?<![\w/.])(\d+(?:\.\d+)?)\s*([a-z]+)?(?:[ -]([a-z]+))?", re.I)
_COUNTED_THINGS = frozenset(
    re.findall(
        r"\w+",
        "tablet tablets pill pills capsule capsules puff puffs dose doses unit units drop drops injection injections "
        "shot shots spray sprays patch patches sachet sachets infection infections attack attacks episode episodes "
        "seizure seizures stone stones operation operations pregnancy pregnancies miscarriage miscarriages drink "
        "drinks cigarette cigarettes pen pens inhaler inhalers",
    )
)
"""Things counted whose number a word may stand between ("2 Biktarvy tablets", "1 chest infection")."""
_UNIT_NAMES = {
    "milligram": "mg", "milligrams": "mg", "mgs": "mg", "gram": "g", "grams": "g", "kilo": "kg", "kilos": "kg",
    "kilogram": "kg", "kilograms": "kg", "millimetre": "mm", "millimeter": "mm", "centimetre": "cm",
    "centimeter": "cm", "degree": "deg", "degrees": "deg", "min": "minute", "mins": "minute", "hr": "hour",
    "hrs": "hour", "yr": "year", "yrs": "year", "time": "times", "shot": "dose", "shots": "dose",
    "injection": "dose", "injections": "dose", "jab": "dose", "jabs": "dose", "kid": "child", "kids": "child",
    "children": "child", "grandkid": "grandchild", "grandkids": "grandchild", "grandchildren": "grandchild",
}  # fmt: skip
_NOT_UNITS = frozenset(
    re.findall(
        r"\w+",
        "a an and or to of at in on the for over per every each times x more less than about ago old once twice then"
        " but so is was with before after daily that it i you my me when if",
    )
)


_DOSE_UNITS = frozenset(["mg", "mcg", "g", "ml", "unit", "iu"])
"""Units a dose is given in: a dose is heard only where a known text gives the same number in the same unit ("5
mg" of amlodipine is not heard in "five times a day", whose number has no unit)."""


def _measures(text: str) -> frozenset[tuple[str, str]]:
    """Each number with the word after it as its unit ("10 minutes" is ("10", "minute"), "4 mm" ("4", "mm"));
    "" when the next word is not a unit ("a glass or 2 at the weekend"), which agrees with any unit."""
    found = set()
    for value, word, after in _MEASURE.findall(without_ages(normalise_quantities(text))):
        unit = (word or "").lower()
        known_unit = _UNIT_NAMES.get(unit, unit) in _DOSE_UNITS  # "a hundred milligram dose" is 100 mg
        if (
            not known_unit
            and unit not in _COUNTED_THINGS
            and unit not in _NOT_UNITS
            and after.lower() in _COUNTED_THINGS
        ):
            unit = after.lower()  # "2 Biktarvy tablets": the tablets are counted
        unit = "" if unit in _NOT_UNITS else _UNIT_NAMES.get(unit, unit)
        if len(unit) > 3 and unit.endswith("s") and unit not in ("times",):
            unit = unit[:-1]
        found.add((f"{float(value):g}", unit))
    return frozenset(found)


def _units_meet(a: str, b: str) -> bool:
    return not a or not b or a == b


_WRITTEN_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\d.]*\d)")
"""A number as a text writes it, before its unit is converted ("182" of "182 pounds")."""


def _unheard(mine: frozenset[tuple[str, str]], known: Sequence[str]) -> frozenset[tuple[str, str]]:
    """The sentence's numbers no known text states with the same unit ("10 attacks" is unheard when the facts
    say "3 attacks" and "10 minutes"); a number inside a range a known text gives ("between 5.8 and 6.4", "4 to
    6") is heard, and so is a bare number a known text writes, in digits or words, with its unit ("about one
    eighty-two" against "182 pounds", "around four" against "about four kilograms", which the facts hold
    converted)."""
    theirs = frozenset().union(*(_measures(k) for k in known))
    ranges = [r for k in known for r in _ranges(k)]
    written = {f"{float(n):g}" for k in known for n in _WRITTEN_NUMBER.findall(numbers_in_digits(k))}
    aged = {f"{float(n):g}" for k in known for n in _ages_in(normalise_quantities(k))}
    return frozenset(
        (value, unit)
        for value, unit in mine
        if not any(v == value and (u == unit if unit in _DOSE_UNITS else _units_meet(unit, u)) for v, u in theirs)
        and not any(low <= float(value) <= high for low, high in ranges)
        and not any(_same_span((value, unit), (v, u)) for v, u in theirs)
        and not (not unit and value in written)
        and not (value in aged and _may_be_an_age(unit))  # "six years old", "forty-nine" against "when I was 49"
    )


def _may_be_an_age(unit: str) -> bool:
    """A number's unit that an age can be said with: none, years, or a word that is no unit ("49 maybe")."""
    return unit == "year" or (unit not in DAYS and unit not in _DOSE_UNITS and unit not in _COUNTED_THINGS)


def _ages_in(text: str) -> list[str]:
    """The ages a text gives as bare numbers (:data:`BARE_AGE`, :data:`AGE_AT`)."""
    return [n for pattern in (BARE_AGE, AGE_AT) for match in pattern.finditer(text) for n in match.groups() if n]


_EITHER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?: or|,) (\d+(?:\.\d+)?)(?!\w|\.\d)")


def _unheard_in(sentence: str, known: Sequence[str]) -> frozenset[tuple[str, str]]:
    """The numbers ``sentence`` gives that no known text states (:func:`_unheard`), a guess between two heard
    through its other number (:func:`_either_heard`), and a bound a known number falls in (:func:`_bound_heard`)."""
    return _bound_heard(sentence, _either_heard(sentence, _unheard(_measures(sentence), known), known), known)


_MEASURE_BOUND = re.compile(
    rf"\b(?P<near>{_NEAR})?(?P<bound>{_BOUND_WORDS})\s+(?:an? )?(?P<n>\d+(?:\.\d+)?)(?![\d.])", re.I
)


def _bound_span(bound: str, near: bool, said: float) -> tuple[float, float]:
    """The amounts a bound takes in: "over" up to three times what is said ("just over": half as much again),
    "under" down to nothing ("just under": six tenths), "almost" and "nearly" down to six tenths; as for times
    (:func:`_time_bounds`)."""
    if bound in ("over", "more than", "at least", "upwards of"):
        return said, said * (1.5 if near else 3.0)
    if bound in ("under", "less than"):
        return said * (0.6 if near else 0.0), said
    return said * 0.6, said


def _bound_heard(
    sentence: str, unheard: frozenset[tuple[str, str]], known: Sequence[str]
) -> frozenset[tuple[str, str]]:
    """``unheard`` less a number the sentence gives as a bound that a known number of the same unit falls in:
    "almost twenty pounds" against "I've lost 18 pounds", "over a hundred pounds" against "110 pounds"."""
    if not unheard:
        return unheard
    spans = {}
    for match in _MEASURE_BOUND.finditer(without_ages(normalise_quantities(sentence))):
        said = float(match.group("n"))
        spans[f"{said:g}"] = _bound_span(match.group("bound").lower(), bool(match.group("near")), said)
    if not spans:
        return unheard
    theirs = frozenset().union(*(_measures(k) for k in known))
    return frozenset(
        (value, unit)
        for value, unit in unheard
        if not (
            value in spans
            and any(
                _units_meet(unit, u)
                and spans[value][0] * (1 - TOLERANCE) <= float(v) <= spans[value][1] * (1 + TOLERANCE)
                for v, u in theirs
            )
        )
    )


def _either_heard(
    sentence: str, unheard: frozenset[tuple[str, str]], known: Sequence[str]
) -> frozenset[tuple[str, str]]:
    """``unheard`` less a number the sentence gives as one of two guesses whose other a known text states of the
    same thing: "ten or eleven" against "11 regular medicines" is the patient's count, not a new one, and so is
    "fifty, fifty-one maybe" against "at 51"; "three or four cigarettes" is not heard in "three weeks"."""
    if not unheard or not (" or " in sentence.lower() or "," in sentence):
        return unheard
    pairs = _EITHER.findall(normalise_quantities(sentence))
    if not pairs:
        return unheard
    missing = {value for value, _ in unheard}
    given = dict(_measures(sentence))
    theirs = frozenset().union(*(_measures(k) for k in known))
    theirs |= {(f"{float(n):g}", "") for k in known for n in _ages_in(normalise_quantities(k))}
    heard_partner = set()
    for one, other in pairs:
        one, other = f"{float(one):g}", f"{float(other):g}"
        unit = given.get(other, "")  # "3 or 4 cigarettes": the unit said once, after the second
        for value, partner in ((one, other), (other, one)):
            if (
                value in missing
                and partner not in missing
                and any(v == partner and (not unit or not u or u == unit) for v, u in theirs)
            ):
                heard_partner.add(value)
    return frozenset((value, unit) for value, unit in unheard if value not in heard_partner)


def _same_span(one: tuple[str, str], other: tuple[str, str]) -> bool:
    """Two amounts of time that come to the same ("1.5 month" and "6 week"), by :func:`same_time`."""
    if one[1] not in DAYS or other[1] not in DAYS:
        return False
    return same_time(f"{float(one[0]) * DAYS[one[1]]:.4g} day", f"{float(other[0]) * DAYS[other[1]]:.4g} day")


_RANGE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?: ?- ?| to | and )(\d+(?:\.\d+)?)(?![\w.])")


def _ranges(text: str) -> list[tuple[float, float]]:
    """The ranges a text states: "between 5.8 and 6.4", "4 to 6", "20-24"."""
    found = []
    for low, high in _RANGE.findall(normalise_quantities(text)):
        a, b = float(low), float(high)
        if a < b:
            found.append((a, b))
    return found


def _agree(mine: frozenset[tuple[str, str]], theirs: frozenset[tuple[str, str]]) -> bool:
    """Some number both state with units that can meet ("10 minutes" does not agree with "10 attacks")."""
    return any(v == value and _units_meet(unit, u) for value, unit in mine for v, u in theirs)


def _measure_conflict(unheard: frozenset[tuple[str, str]], fact: frozenset[tuple[str, str]]) -> bool:
    """An unheard number can contradict a fact's number only when their units can describe the same thing:
    "5 years ago" says nothing against "a 4 mm stone"."""
    return any(_units_meet(unit, u) for _, unit in unheard for _, u in fact)


_STOP = frozenset(
    """about after again also always and any been before being both but came can cannot could didn does doesn
    doing done down each even ever every feel feels felt few from get gets getting going gone good got had has
    have having here into just know like little lot made make many more most much must never next not now off
    once only other over really right same should since some still such sure take takes taking than that the
    their them then there these they thing things this those through time times told too under very want was
    well went were what when where which while will with without would yeah year years your day days week weeks
    month months night morning tests test last first""".split()  # noqa: SIM905
)


def _content(text: str) -> frozenset[str]:
    """A sentence's subject words (four letters or more, not function words), cut to five letters so "attacks"
    and "attack", "swollen" and "swelling" meet, a verb in -ing as its stem as well ("driving" meets "drive"), and
    an irregular verb as its base ("fell" and "fallen" meet "fall", "driven" "drive"); used to ask whether a
    sentence and a fact speak of one thing."""
    words = [w for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in _STOP]
    found = {w[:5] for w in words}
    found.update(stem[:5] for w in words if w.endswith("ing") and len(stem := word_stem(w)) >= 4)
    found.update(base[:5] for w in words if w != "left" for base in irregular_verb_bases(w) if len(base) >= 4)
    return frozenset(found)


_NOT_ANY_MORE = re.compile(r"\bnot (?:any ?more|any longer|now|nowadays|these days),")
""""Not anymore, I gave up cigarettes": an answer's "not", closed by its comma, negates nothing after it."""


@dataclass(frozen=True)
class MeaningPair:
    """Two opposite patient states, each a list of patterns (``data/meanings.toml``)."""

    name: str
    one: tuple[re.Pattern[str], ...]
    other: tuple[re.Pattern[str], ...]

    def side(self, text: str) -> int | None:
        """0 or 1 for the side the text says (a negation just before a phrase flips it; an answer's "No," is no
        negation of what follows it: "No, this is baby number two"), None if neither or both."""
        sides = set()
        for side, patterns in ((0, self.one), (1, self.other)):
            for pattern in patterns:
                for match in pattern.finditer(text):
                    before = _NOT_ANY_MORE.sub(" ", text[max(0, match.start() - 20) : match.start()].lower())
                    flipped = bool(re.search(r"\b(?:not|never)\b|\bno\b(?!,)|n't\b", before))
                    sides.add(side ^ flipped)
        return sides.pop() if len(sides) == 1 else None


def _load_meanings() -> dict[str, Any]:
    text = (resources.files("bedside.sim") / "data" / "meanings.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


@lru_cache(maxsize=1)
def meaning_pairs() -> tuple[MeaningPair, ...]:
    """bedside's opposite patient states (``sim/data/meanings.toml``)."""

    def compile_all(patterns: Sequence[str]) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(rf"\b{p}\b", re.I) for p in patterns)

    return tuple(
        MeaningPair(str(entry["name"]), compile_all(entry["one"]), compile_all(entry["other"]))
        for entry in _load_meanings().get("pair", [])
    )


_FLOOR = re.compile(
    r"\b(ground|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th))[- ]floor\b",
    re.I,
)
_ORDINAL = {
    "ground": 0, "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10,
}  # fmt: skip


def _floor(text: str) -> int | None:
    """The one floor a text names ("a third-floor flat", "we're on the ground floor"), counted from the ground (0);
    None for none or for several ("from the first floor to the third")."""
    floors = {_ORDINAL[w] if (w := m.lower()) in _ORDINAL else int(w[:-2]) for m in _FLOOR.findall(text)}
    return floors.pop() if len(floors) == 1 else None


def _same_state(sentence: str, fact: str) -> bool:
    """Both say the same side of some pair of opposite states."""
    for pair in meaning_pairs():
        side = pair.side(sentence)
        if side is not None and side == pair.side(fact):
            return True
    return False


@lru_cache(maxsize=1)
def _job_words() -> str:
    return "|".join(sorted(_load_meanings().get("jobs", {}).get("words", []), key=len, reverse=True))


@lru_cache(maxsize=1)
def _job_pattern() -> re.Pattern[str]:
    speaker = r"(?:i'?m|i am|i (?:work|worked)(?: [a-z-]+){0,3}? as|i was|i used to be|work(?:ing)? as)"
    return re.compile(rf"\b{speaker} (?:an? )?((?:[a-z-]+ ){{0,2}}(?:{_job_words()}))\b", re.I)


@lru_cache(maxsize=1)
def _job_word() -> re.Pattern[str]:
    return re.compile(rf"\b(?:{_job_words()})\b", re.I)


def _jobs(text: str) -> frozenset[str]:
    """The jobs a text gives its speaker ("I work as an accountant", "I'm a schoolteacher", "I work from home as
    a software developer", "a retired electrician": up to two words may stand before the job, and each job named
    counts)."""
    return frozenset(job.lower() for said in _job_pattern().findall(text) for job in _job_word().findall(said))


_LONG_UNITS = ("day", "week", "month", "year")
"""Durations a patient's history is told in; minutes and hours ("for twenty minutes") are moments to the rules,
never set against a history's days and years."""


_PARTS_OF_THE_DAY = frozenset({"morning", "midday", "evening", "daytime"})


def _time_kind(label: str) -> str:
    """A span (a duration of days or longer, "90 day", or a rate "2/day", "every 2 week", "as needed", which can
    disagree with each other: "I still smoke a pack a day" against "I stopped two years ago"), a short span ("20
    minute", "2 hour") or a moment ("evening", "tomorrow"); only two of one kind disagree ("for three months"
    says nothing against "at night", nor "about two minutes" against "yesterday afternoon"); or an age ("age
    58 year"), compared only with another age, in answer to a question (a child's age is not the patient's), and
    an age at an event ("aged 19 year": "when I was 19") only with another age at an event. A part
    of the day is a moment compared only with another part of the day: "three in the morning" says nothing against
    "today", nor "a bottle a night" against "Friday and Saturday"."""
    if label.startswith("age "):
        return "age"
    if label.startswith("aged "):
        return "age at"
    if label in _PARTS_OF_THE_DAY:
        return "part"
    if "/" in label or label == "as needed" or label.startswith("every "):
        return "span"
    parts = label.split()
    if len(parts) == 2 and parts[0] not in ("this", "next", "last"):
        if parts[1] in _LONG_UNITS:
            return "span"  # "3 week", "few week"; "this week" is a moment
        if parts[1] in ("hour", "minute", "second"):
            return "short"
    return "moment"


_SAME_PERSON = {
    "mom": "mother", "mum": "mother", "dad": "father", "neighbor": "neighbour", "grandma": "grandmother",
    "granny": "grandmother", "gran": "grandmother", "nana": "grandmother", "grandpa": "grandfather",
    "grandad": "grandfather",
}  # fmt: skip


_CANCER_SITE = re.compile(
    r"\b(breast|ovarian|ovary|prostate|lung|colon|colorectal|bowel|rectal|skin|pancreatic|pancreas|stomach|liver"
    r"|kidney|bladder|cervical|uterine|womb|endometrial|thyroid|brain|bone|throat|mouth|oesophageal|esophageal"
    r"|testicular)\s+cancer\b",
    re.I,
)
_SAME_SITE = {
    "ovary": "ovarian", "colon": "bowel", "colorectal": "bowel", "rectal": "bowel", "pancreas": "pancreatic",
    "womb": "uterine", "endometrial": "uterine", "esophageal": "oesophageal",
}  # fmt: skip
"""One organ said two ways: bowel cancer is colon, rectal or colorectal cancer; womb cancer is endometrial."""


def _cancer_sites(text: str) -> frozenset[str]:
    """The organs a text names a cancer of ("my mum had ovarian cancer"): a person's cancer is of one organ, so
    another organ said of the same person ("my mom had breast cancer") is a contradiction, not a detail."""
    return frozenset(_SAME_SITE.get(site.lower(), site.lower()) for site in _CANCER_SITE.findall(text))


def _people(text: str) -> frozenset[str]:
    return frozenset(_SAME_PERSON.get(p.lower(), p.lower()) for p in _PERSON.findall(text))


def _other_person(sentence: str, known: Sequence[str], asked: str = "") -> FactConflict | None:
    """Another person than a known text names, with the same thing said of them ("my sister has bipolar
    disorder" against "my brother has bipolar disorder", "my mum was on dialysis" against "my father was"): the
    history is someone else's. Not where the sentence also names a person the facts know, nor where it says the
    person is one more ("my father gets them too"), nor where each names a cancer of another organ."""
    mine = _people(sentence)
    if not mine or _EXTRA.search(sentence) or mine & frozenset().union(*(_people(k) for k in known)):
        return None
    said = _content(_PERSON.sub(" ", f"{asked} {sentence}"))  # "My dad's had a few." to "Anyone with kidney stones?"
    sites = _cancer_sites(sentence)
    for text in known:
        if sites and (other_sites := _cancer_sites(text)) and not sites & other_sites:
            continue  # "my dad had prostate cancer" against "my brother had bowel cancer": two histories
        if (theirs := _people(text)) and said & _content(_PERSON.sub(" ", text)):
            return FactConflict("person", text, f"{_show(theirs)} vs {_show(mine)}")
    return None


def new_details(sentence: str, known: Sequence[str], rules: ContradictionRules) -> str | None:
    """What ``sentence`` adds that nothing known states: a drug, a number, or a person; None if nothing."""
    drugs = rules.signals(sentence).drugs - rules.named_drugs(known)
    if drugs:
        return f"drug {_show(drugs)}"
    numbers = _unheard_in(sentence, known)
    if numbers:
        return f"number {_show(frozenset(' '.join(n).strip() for n in numbers))}"
    people = _people(sentence).difference(*(_people(k) for k in known))  # "my mom" is "my mother"
    if people:
        return f"person {_show(frozenset(people))}"
    return None


def _show(values: frozenset[str]) -> str:
    return ", ".join(sorted(values)) or "none"


def _polarity(negated: bool) -> str:
    return "negated" if negated else "affirmative"


@dataclass(frozen=True)
class CombinedLabel:
    label: Label
    conflict: FactConflict | None = None
    """For a contradicted sentence: the rule that fired and the fact it fired against."""
    uncertain: str | None = None
    """For an uncertain sentence: why the rules could not read it."""


def label_combined(
    sentences: Sequence[str],
    facts: Sequence[str],
    clinician_said: Sequence[str] = (),
    *,
    rules: ContradictionRules | None = None,
) -> list[CombinedLabel]:
    """Label a patient turn's sentences against the patient's facts and what the clinician said before."""
    from bedside.retrieval.embeddings import default_embedder

    rules = rules or ContradictionRules()
    limits = rules.thresholds
    said = [s.text for turn in clinician_said for s in split_sentences(turn)]
    # Rules compare with facts and with what the clinician stated; a clinician's question or request asserts nothing.
    statements = [*facts, *(s for s in said if not _asks(s))]
    known = [*facts, *said]
    if not sentences:
        return []
    embedder = default_embedder()
    mine = embedder.embed(list(sentences))
    known_vectors = embedder.embed(known) if known else None
    to_known = mine @ known_vectors.T if known_vectors is not None else None
    to_chat = mine @ _small_talk_vectors().T
    asked = _answered(clinician_said)
    in_context = (
        embedder.embed([f"{asked} {s}" for s in sentences]) @ known_vectors.T
        if asked and known_vectors is not None
        else None
    )
    labelled: list[CombinedLabel] = []
    for i, sentence in enumerate(sentences):
        if why := rules.guard.unreadable(sentence):
            labelled.append(CombinedLabel("uncertain", uncertain=why))
            continue
        scores = [float(x) for x in to_known[i]] if to_known is not None else []
        if in_context is not None:  # the question itself is not a fact its answer can be near
            scores = [
                alone if k >= len(facts) and _asks(known[k]) else max(alone, float(x))
                for k, (alone, x) in enumerate(zip(scores, in_context[i], strict=True))
            ]
        # what the sentence may be entailed by: the facts and what the clinician stated, not their questions
        best = max((x for k, x in enumerate(scores) if k < len(facts) or not _asks(known[k])), default=0.0)
        chat = float(to_chat[i].max())
        if is_question(sentence) or (chat >= limits.small_talk and chat > best):
            labelled.append(CombinedLabel("non_informative"))
            continue
        conflict = rules.find(sentence, statements, _statement_scores(scores, len(facts), said), asked)
        if conflict:
            labelled.append(CombinedLabel("contradicted", conflict))
        elif (best < limits.entail and not _restates_a_measure(sentence, known)) or new_details(sentence, known, rules):
            labelled.append(CombinedLabel("unsupported"))
        else:
            labelled.append(CombinedLabel("entailed"))
    return labelled


_AMOUNT = re.compile(r"\d+(?:\.\d+)?\s*[a-z]*")
"""A number and the word it runs into: "2 weeks", "500 mg"."""


_HEDGES = _content(
    "think guess believe maybe probably perhaps roughly around reckon suppose approximately honestly actually "
    "usually mostly normally coming"
)
"""How sure a patient is of an amount ("twenty-eight weeks, I think"): no claim of its own."""


def _restates_a_measure(sentence: str, known: Sequence[str]) -> bool:
    """A short answer that gives back an amount the facts or the clinician state, in words they use ("About two
    weeks ago now." to "When was the surgery?", with "I had a knee replacement two weeks ago"): entailed however
    far its embedding lies from them, since it says nothing else."""
    said = _measures(sentence)
    if not said or _unheard(said, known):
        return False
    words = _content(_AMOUNT.sub(" ", normalise_quantities(sentence)))  # what it says besides its amounts
    return not words - _content(" ".join(known)) - _HEDGES


_REQUEST = re.compile(
    r"^\W*(?:(?:so|and|ok(?:ay)?|now|right),?\s+)*(?:(?:please|can you|could you)\s+)?(?:tell me|describe|walk me "
    r"through|talk me through)\b",
    re.I,
)
"""A request that asks as a question does ("Tell me about your work."): the patient's turn answers it."""


def _asks(sentence: str) -> bool:
    """A clinician's sentence that asks (a question or a request): it states nothing a patient can contradict."""
    return is_question(sentence) or bool(_REQUEST.match(sentence))


def _answered(clinician_said: Sequence[str]) -> str:
    """The clinician's last turn when it asks something (a question, or a request such as "Tell me about your
    work."): what the patient's turn answers. A spoken answer leaves its subject to the question ("About a month
    and a half ago, I think." to "When was your last blood test?"), so each sentence is also read after it, and a
    fact is as near as the nearer of the two readings."""
    if not clinician_said:
        return ""
    last = clinician_said[-1].strip()
    return last if any(_asks(s.text) for s in split_sentences(last)) else ""


def _statement_scores(scores: Sequence[float], n_facts: int, said: Sequence[str]) -> list[float]:
    """The cosines of the facts and of the clinician's non-question sentences, in ``statements`` order."""
    return [*scores[:n_facts], *(score for s, score in zip(said, scores[n_facts:], strict=True) if not _asks(s))]
