"""What a sentence says in the slots that word overlap cannot see: which way, before or after, with or without.

Two sentences that differ only in "above" and "below", "before" and "after", "with" and "without", "if" and
"unless", or "ice" and "heat" share every other word, and a similarity model scores them as the same sentence;
outside writers found these reversals passing EditJudge's guard by the dozen (issue 45). Each rule here reads one
slot of a sentence as ``(kind, key, value)``:

- **comparison**: a threshold's direction, ``("comparison", "70", "<")`` for "below 70", "under 70", "less
  than 70", "no more than 70", "at most 70", "70 or less", "limit it to 70", "the most you should take is 70",
  "within 15 minutes", "in the next 4 weeks"; ``">"`` for the reverse ("rises past 70"). The key is the number
  compared with (or ``""`` for a comparison with none: "higher than we would like"). A negation earlier in the
  clause turns "more than" round ("don't take more than 3 g" is "at most 3 g").
- **direction**: a change or an amount that goes ``up`` or ``down`` ("goes up", "rises", "bump it up", "more";
  "drops", "falls", "cut it back", "fewer").
- **sequence**: ``before``, ``after`` or ``within`` something, keyed by each content word of it ("before each
  meal", "after 72 hours", "before you stop"); ``with`` a meal ("with the first bite of every meal", "during
  meals"), which is neither before nor after it.
- **scope**: what an amount is counted over, when a sentence names one: ``day`` ("per day", "in a 24-hour
  period", "for the whole day") or ``dose`` ("per dose", "at any one time"), ``meal``, ``week``.
- **count**: how many tablets or capsules of a strength, keyed by the form ("two 500 mg tablets" is
  ``("count", "tablet", "2")``; "a 500 mg tablet" ``"1"``): the dose rules read the strength, not the count before it.
- **with**: ``with`` or ``without`` something ("without the crutches").
- **condition**: ``if`` or ``unless`` something ("only if you are dizzy", "unless you are dizzy",
  "even if you feel well"), whether a condition's signs are joined by ``or`` (``either``) or ``and``
  (``both``), and its scope: "even if" against "only if" (``("condition", "scope", ...)``), whatever their words.
- **opposite**: one side of a pair of clinical opposites from ``data/opposites.toml`` (cold or heat, benign or
  malignant, still or no longer contagious...), each entry citing where the opposition comes from.
- **order**: which of two steps comes first, where a sentence says so ("check your sugar first, and then give the
  insulin", "call 911 after using the EpiPen", "wait for the result before starting"), keyed by each content word
  (stemmed) of either step, valued ``first`` or ``second``. A word in both steps says nothing.

- **exception**: what a step leaves out or is kept to, keyed by each content word of it: ``except`` ("all of
  your vaccines except the MMR", "apart from", "other than") or ``only`` ("only the MMR").
- **modality**: whether a step is required (``must``: "must", "need to", "have to", "make sure you") or
  allowed (``may``: "may", "can", "may want to", "are welcome to"), keyed by its verb (stemmed); a negated one
  ("must not", "can't") is a prohibition, read by the negation rules instead.
- **actor**: who does a step, keyed by its verb (stemmed): ``care`` (we, I, the nurse, your surgeon, Dr Patel,
  the pharmacy), ``patient`` (you, "give yourself") or ``other`` (your husband, your son, your partner, someone;
  "have your husband give it"). Read only where the doer opens a clause ("we will schedule", "you will need to
  schedule", "your partner also needs"), so "we will call you" says nothing about "you".

Two sentences conflict in a slot when they fill the same kind and key with different values and neither also
holds the other's: a sentence that names both sides ("ice, not heat") cannot be aligned and does not conflict.
The phrases read are blanked in the text the rest of the guard reads, so the "no" of "no more than" or "no
longer" is not read again as a negation.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from bedside.text.assertion import word_stem

Slot = tuple[str, str, str]

_NUMBER = r"(?P<n>\d+(?:\.\d+)?)"
_LESS = (
    r"(?:no|not) (?:more|higher|greater|heavier|longer|older|bigger|larger|warmer|hotter) than|"
    r"(?<!no )(?<!not )(?:less|lower|fewer|lighter|shorter|younger|smaller|colder|cooler) than|at most|no later than|"
    r"(?<!goes )(?<!go )(?<!went )(?<!gone )(?<!going )(?<!moves )(?<!move )(?<!got )(?<!get )(?<!gets )"
    r"(?<!getting )(?<!came )(?<!shot )(?<!spiked )(?<!now )(?<!risen )(?<!rose )(?<!climbed )(?<!count is )"
    r"(?<!level is )(?<!levels are )(?<!reading is )(?<!score is )up to|a maximum of|"
    r"maximum of|max of|(?<=the )(?:recommended |advised |safe |daily |weekly )?limit of"
)
_MORE = (
    r"(?:no|not) (?:less|lower|fewer|lighter|shorter|younger|smaller|colder|cooler) than|"
    r"(?<!no )(?<!not )(?:more|higher|greater|heavier|longer|older|bigger|larger|warmer|hotter) than|at least|"
    r"a minimum of|minimum of|exceeds?|(?:no|not) (?:sooner|earlier) than"
)
"""Each plain comparison is read only where no "no"/"not" comes right before it: "no fewer than 8" is a floor,
though "fewer than 8" inside it is a cap."""
_PLAIN_MORE = re.compile(
    r"(?:more|higher|greater|heavier|longer|older|bigger|larger|warmer|hotter) than|exceeds?|above|over"
)
_NEGATION_BEFORE = re.compile(
    r"\b(?:not|never|no|don't|doesn't|shouldn't|mustn't|can't|cannot|won't|avoid|avoiding)\b(?=[^,;:.]*$)"
)
"""A negation earlier in the clause turns a comparison round: "don't lift anything heavier than 10 pounds" is
"10 pounds or less", and so is "avoid lifting anything over 10 pounds"."""
_LESS_BARE = r"below|under|beneath"  # only before a number: "under 100", never "under the tongue"
_MORE_BARE = (  # only before a number: "over 100", never "over the counter"; "past" only after a rise
    r"above|over|(?:(?<=rises )|(?<=rise )|(?<=rising )|(?<=rose )|(?<=goes )|(?<=go )|(?<=gets )|(?<=get )|"
    r"(?<=climbs )|(?<=creeps ))past"
)
_GAP = r"(?:\s+(?!and\b|or\b|but\b)[a-z%°'-]+){0,3}?\s+"
_BARE_GAP = (
    r"(?:\s+(?!(?:and|or|but|for|in|on|at|to|from|with|after|before|during|every|each|per|until|since)\b)"
    r"[a-z%°'-]+){0,3}?\s+"
)
"""Up to three words between "above" or "under" and its number ("above your target of 7"), none that starts
another phrase ("over the wound for 2 days" compares nothing)."""

_COMPARISONS: tuple[tuple[re.Pattern[str], str], ...] = (
    # "one and a half litres a day at most": the cap said after its amount, read before
    # the plain "at most" blanks it
    (
        re.compile(rf"{_NUMBER}(?:\s+[a-z%°'-]+){{0,5}}?\s+(?P<c>at (?:the )?most\b|max(?:imum)?(?=\s*(?:[.,;]|$)))"),
        "<",
    ),
    # "up to once every 4 hours" caps how often, not the 4: it says what "every 4 hours as needed" says
    (re.compile(rf"\b(?P<c>{_LESS})(?!\s+once\b)(?:{_GAP}{_NUMBER})?"), "<"),
    (re.compile(rf"\b(?P<c>{_MORE})(?:{_GAP}{_NUMBER})?"), ">"),
    (re.compile(rf"\b(?P<c>{_LESS_BARE}){_BARE_GAP}{_NUMBER}"), "<"),
    (re.compile(rf"\b(?P<c>{_MORE_BARE}){_BARE_GAP}{_NUMBER}"), ">"),
    (
        re.compile(
            rf"{_NUMBER}(?:\s+[a-z%°'-]+){{0,3}}?\s+(?P<c>or (?:less|lower|fewer|below|under|smaller|younger|colder|"
            r"cooler)|and (?:under|below|younger))\b"
        ),
        "<",
    ),
    # "everyone 6 months and older" is "6 months or above"
    (
        re.compile(
            rf"{_NUMBER}(?:\s+[a-z%°'-]+){{0,3}}?\s+(?P<c>or (?:more|higher|greater|above|over|bigger|older|warmer|"
            r"hotter)|and (?:older|above|over|up)(?! and\b))\b"
        ),
        ">",
    ),
    (re.compile(rf"\b(?P<c>limit)\b(?:\s+[a-z'-]+){{0,4}}?\s+to\s+{_NUMBER}"), "<"),
    # "it can take as long as two weeks to work" is what "up to two weeks" says ("as long as you feel well" is a
    # condition)
    (re.compile(rf"\b(?P<c>as long as)(?:\s+(?:about|around|roughly))?\s+{_NUMBER}"), "<"),
    # "the most you should take in a day is 8": a cap said as what the most is
    (re.compile(rf"\b(?P<c>the (?:most|maximum))\b(?:\s+[a-z0-9'-]+){{0,14}}?\s+(?:is|are)\s+{_NUMBER}"), "<"),
)
_WITHIN = re.compile(rf"\b(?:within (?:the (?:first |next )?)?|in the (?:next|first) ){_NUMBER}\b")
_NOT_WITHIN = re.compile(
    r"\b(?:not|n't|never)\s+(?:[a-z]+\s+)?(?:stop|stops|settle|settles|ease|eases|improve|improves|go away|goes away|"
    r"get better|gets better|clear|clears|heal|heals|resolve|resolves|wear off|wears off)\s+$"
)
"""An end that does not come within a span: what it ends lasts longer ("does not stop within ten minutes")."""
"""A span of time counted from now or from an event ("within 15 minutes of the dose", "in the next 4 weeks") is at
most that long: a cap, as "less than 15 minutes after it" says; its words stay for the sequence rule ("within"
against "after")."""
_UP = re.compile(
    r"\b(?:goes up|go up|going up|went up|gone up|rises?|rising|rose|climbs?|climbing|creeps? up|bump(?:ed|ing)?"
    r"(?: \w+)? up|gains?|gained|gaining|more|(?<!the )(?<!any )extra)\b"
)
_DOWN = re.compile(
    r"\b(?:goes down|go down|going down|went down|gone down|drops?|dropping|dropped|falls?|falling|fell|"
    r"cut(?:ting)?(?: \w+)? back|loses?|lost|losing|fewer|less)\b"
)
_PLAIN_NUMBER = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)(?![\d.]*\d)")
_SCOPE = re.compile(
    r"\b(?:(?:per|each|every|in a|in a whole|for the whole|total for the|for each|in a single|as a single) "
    r"(?P<v>day|24-hour period|24 hour period|1 day period|dose|meal|week)|(?P<once>at any one time|at one time|in "
    r"one go|in one dose|in 1 dose)|(?P<daily>total daily|daily total|in total each day|altogether each day))\b"
)
_SCOPE_VALUE = {"24-hour period": "day", "24 hour period": "day", "1 day period": "day"}
"""How a day is said ("1 day period" is "a 24-hour period" once bedside.text.quantities has read it); a scope said
without "per" (``once``: "at any one time") is a dose, and a "total daily" amount is counted over a day."""
_NEGATIVE_WORD = re.compile(r"\b(?:no|not|non|never|nothing(?! to\b)|without)\b")
"""A "no" inside an opposite's phrase ("no longer contagious", "nothing concerning") belongs to the phrase, not the
sentence; "nothing to worry about" keeps its "no", which the negation rules weigh against a warning."""
_FILLER = frozenset(
    [
        "the",
        "your",
        "a",
        "an",
        "each",
        "every",
        "any",
        "this",
        "that",
        "next",
        "his",
        "her",
        "their",
        "my",
        "our",
        "you",
        "you're",
        "are",
        "is",
        "be",
        "it",
        "its",
        "to",
        "some",
        "being",
        "get",
        "getting",
        "have",
        "having",
        "feel",
        "feeling",
    ]
)
_SEQUENCE = re.compile(
    r"(?<!-)\b(?:(?P<v>before|after|prior to|following|within|during|until|starting|beginning)|"
    r"(?P<w>with)(?: the first (?:bite|mouthful) of)?"
    r"(?= (?:each |every |your |a )?(?:meals?|snacks?|food|breakfast|lunch|dinner|supper)\b))\s+"
    r"(?=(?P<rest>[a-z0-9' -]{0,60}))"
)
"""Before, after or within something; and with (or during) a meal, which is neither before nor after it."""
_WITH = re.compile(r"\b(?P<v>with(?: no| none of)?|without)\s+(?=(?P<rest>[a-z0-9' -]{0,60}))")
"""With or without something; "with no fever" is without one."""
_EXCEPTION = re.compile(
    r"\b(?P<v>except(?: for)?|apart from|other than|but not|excluding|with the exception of|only)\s+"
    r"(?!if\b|when\b|once\b|after\b|before\b|until\b|during\b|for\b|in\b|on\b|at\b)(?=(?P<rest>[a-z0-9' -]{0,60}))"
)
"""Everything but something, or only it: "only if" and "only after" are a condition or a time, read elsewhere."""
_CONDITION = re.compile(
    r"\b(?P<v>only if|even if|even when|unless|except (?:if|when)|if|when|as long as|provided|providing)\s+"
    r"(?=(?P<rest>[a-z0-9' -]{0,60}))"
)
_COUNT = re.compile(
    r"\b(?:(?P<n>\d+(?:\.\d+)?)|an?|one|a single) \d+(?:\.\d+)? ?(?:mg|mcg|g|ml) (?P<form>tablet|pill|capsule)s?\b"
)
"""How many tablets of a strength ("two 500 mg tablets", "a 500 mg tablet"): the count stands before the strength,
where the dose rules, which read the strength, do not look."""
_FORMS = {"pill": "tablet"}
_SHARED_OBJECT = re.compile(r"(?:and|or|and/or) (?:before|after|during|following|prior to) ")
""""Before and after touching the wound": both times are of the same thing, said once, after the second."""
_SEQUENCE_VALUE = {
    "prior to": "before",
    "following": "after",
    "during": "with",
    "until": "before",
    "starting": "after",
    "beginning": "after",
}
""""Until next week" is the time before it, "starting next week" the time after."""
_CONDITION_CLAUSE = re.compile(r"\b(?:if|when|whenever|unless)\b(?P<clause>[^,;:.]*)")
_JOIN = re.compile(r"\b(or|and)\b")
"""Two signs joined in a condition: "call 911 if you notice a droopy face or slurred speech" asks for either,
"... a droopy face and slurred speech" for both."""
_ONE_SIGN = re.compile(
    r"\b(?:is|are|becomes?|gets?|feels?|looks?|turns?|seems?|goes|stays?)\s+(?:very\s+|more\s+)?[a-z]+\s*$"
)
"""Two words that describe one sign ("your calf becomes swollen and painful"), not two signs joined, where the
condition joins another sign too: what stands before the "and" is a linking verb and one word, so a condition that
also says "or you feel short of breath" asks for either of two signs, not both. Alone ("if the wound is red or
warm") the two words are the condition's two signs."""
_THEN = re.compile(r"(?:,|\band)\s+(?:only\s+)?then\b")
"""A second step: ", then" or "and then" ("until then", "by then" are a time, not a step)."""
_STEP_CLAUSE = re.compile(r"\b(?P<v>before|after)\s+(?=you\b|[a-z]+ing\b)")
"""A step said as a clause ("before using the EpiPen", "after you check"), not a time ("before meals")."""
_CLAUSE_END = re.compile(r"[,;:]|\b(?:because|since|so|but|while|unless|if|when|as)\b")
"""Where a "before"/"after" clause ends: its comma, or the next clause's conjunction ("before you are seen since it
can mask a fever")."""
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_PREFERENCE = re.compile(r"\b(?:rather than|instead of)\b|,\s+not\b(?! (?:to|if|when|until|because|only)\b)")
"""One thing chosen over another: "call an ambulance instead of driving to the clinic", "rather than swallowing
it", "a pressure of 10, not 15"."""
_PREFERENCE_END = re.compile(r"[,;:]|\b(?:because|since|so|but|while|unless|if|when|and)\b")
_CHOSEN_START = re.compile(r"[,;:]|\b(?:because|since|so|but|while|unless|if|when)\b")
"""Where the chosen side begins, looking back from the marker: its clause's start ("place it under your tongue and
let it dissolve, rather than swallowing it" chooses both steps)."""
_NOT_A_STEP_WORD = frozenset(
    [
        "first", "then", "only", "and", "or", "but", "so", "please", "also", "will", "can", "could", "should",
        "must", "need", "we", "us", "i", "me", "do", "don't", "not", "if", "how", "much", "many", "what", "right",
        "away", "now", "today", "usual", "wait", "for", "of", "on", "in", "at", "by", "with", "up", "let", "go",
        "come", "make", "sure", "start", "give", "take", "use", "until", "one", "ones",
    ]
)  # fmt: skip
"""Words that name no step of their own (and the commonest verbs of any step: "take", "give", "use"): kept out of
the order keys, which are what each step is about; "one" stands for a noun of the other step ("the new one")."""


_CARE = (
    r"we|i|our (?:office|team|clinic|nurses?|staff|surgeons?|doctors?|pharmacists?)|"
    r"(?:the|your) (?:[a-z]+ )?(?:nurse|doctor|surgeon|pharmacist|pharmacy|clinic|office|team|lab|specialist|"
    r"physiotherapist|physio|therapist|midwife|radiologist|gp|cardiologist|oncologist|dentist|consultant|provider)|"
    r"dr\.? [a-z]+"
)
_OTHER = (
    r"(?:your|the) (?:husband|wife|partner|son|daughter|mother|father|mum|mom|dad|caregiver|carer|child|kids?|"
    r"children|family|friend|sister|brother|baby|parents?|spouse)|someone(?: else)?|a family member|he|she|they"
)
_DOERS = ((_CARE, "care"), (r"you", "patient"), (_OTHER, "other"))
_AUX = (
    r"(?:(?:also|only|then|still|now|just|both|alone|themselves|yourself)\s+)?"
    r"(?:(?:will|'ll|can|could|should|must|may|might|would|shall|is going to|are going to|am going to|has to|"
    r"have to|needs? to|will need to|will have to|do not|don't|does not|doesn't|will not|won't|cannot|can't|"
    r"should not|shouldn't)\s+)?"
    r"(?:(?:also|then|need to|have to|be able to|not|now|just)\s+)?"
)
_CLAUSE_START = r"(?:^|[,;:]\s*|\b(?:and|but|so|then|if|when|that|because|once|until|while|or|please)\s+)"
_ACTOR = tuple(
    (re.compile(rf"{_CLAUSE_START}(?:only\s+)?(?:{who})\s+{_AUX}(?P<verb>[a-z]+)\b"), value) for who, value in _DOERS
)
_GOT_TO_DO = re.compile(rf"\b(?:have|has|ask|let|get)\s+(?:{_OTHER})\s+(?:to\s+)?(?P<verb>[a-z]+)\b")
"""Someone else made to do it: "please have your husband give the glucagon"."""
_SELF = re.compile(r"(?<!your )(?<!the )(?<!a )\b(?P<verb>[a-z]+) yourself\b")
"""The patient named after the verb: "give yourself the injection"."""
_ADVERB = r"(?:(?:always|also|just|now|then|first|gently|carefully|only|still|never|usually|simply)\s+)?"
_IMPERATIVE = re.compile(rf"^\W*(?:please\s+)?{_ADVERB}(?P<verb>[a-z]+)\b|\bplease\s+{_ADVERB}(?P<after>[a-z]+)\b")
"""An instruction's first word, or the word after "please": the patient is to do it ("Please call our nurse on
Monday" against "Our nurse will call you on Monday"). A first word that is no verb ("Your", "If") names no step
the other sentence gives a doer, so it reads as nothing."""
_NOT_A_VERB = frozenset(
    re.findall(
        r"[a-z]+",
        "be is are was were been am have has had do does did not also only then still now just both the a an your "
        "it this that to with for of in on at by and or but so if when one them him her me us always never usually "
        "first gently carefully simply",
    )
)


_MODAL_FILLER = r"(?:(?:also|still|always|just|now|then|really|definitely)\s+)?"
_MODALITY = (
    (
        re.compile(
            r"(?<!\bnot )(?<!\bn't )(?<!\bno )\b(?:must|need to|needs to|have to|has to|are required to|is required to|"
            rf"be sure to|make sure (?:you|to|that you)|it is essential to|it's essential to)\s+{_MODAL_FILLER}"
            r"(?!not\b)(?P<verb>[a-z]+)\b"
        ),
        "must",
    ),
    (
        re.compile(
            rf"\b(?:may want to|might want to|can choose to|may|can|could|might|are welcome to|are free to|it is "
            rf"fine to|it's fine to|it is okay to|it's okay to|it is ok to|it's ok to)\s+{_MODAL_FILLER}"
            r"(?!not\b)(?P<verb>[a-z]+)\b"
        ),
        "may",
    ),
)
"""Required or allowed. "can" is read as allowed: in an instruction it gives leave ("you can shower tomorrow")."""


def _modalities(lowered: str) -> set[Slot]:
    """``("modality", verb stem, "must"|"may")`` for each step said as required or allowed."""
    found: set[Slot] = set()
    for pattern, value in _MODALITY:
        for match in pattern.finditer(lowered):
            verb = match.group("verb")
            if verb not in _NOT_A_VERB and verb not in ("want", "need", "have"):
                found.add(("modality", word_stem(verb), value))
    return found


def _actors(lowered: str) -> set[Slot]:
    """``("actor", verb stem, "care"|"patient"|"other")`` for each step whose doer the sentence names."""
    found: set[Slot] = set()
    readings = [*_ACTOR, (_GOT_TO_DO, "other"), (_SELF, "patient"), (_IMPERATIVE, "patient")]
    for pattern, value in readings:
        for match in pattern.finditer(lowered):
            verb = match.group("verb") or match.groupdict().get("after")
            if verb not in _NOT_A_VERB:
                found.add(("actor", word_stem(verb), value))
    return found


@dataclass(frozen=True)
class OppositePair:
    name: str
    a: tuple[str, ...]
    b: tuple[str, ...]
    source: str
    a_patterns: tuple[str, ...] = ()
    b_patterns: tuple[str, ...] = ()
    """Regular expressions for a side said in too many words to list ("at your next eye appointment", "at your
    next therapy session"), matched on the lower-cased sentence like the phrases."""
    complementary: bool = False
    """Whether the sides exhaust the choice (open or blocked, kept on or taken off), so that a "no" on one side
    says the other; contraries (cold or heat) do not: "no hot tubs" says nothing about cold ones."""


@lru_cache(maxsize=1)
def opposite_pairs() -> tuple[OppositePair, ...]:
    """The clinical opposites in ``data/opposites.toml``, each with its source."""
    text = (resources.files("bedside.text") / "data" / "opposites.toml").read_text(encoding="utf-8")
    return tuple(
        OppositePair(
            entry["name"],
            tuple(entry.get("a", ())),
            tuple(entry.get("b", ())),
            entry["source"],
            tuple(entry.get("a_patterns", ())),
            tuple(entry.get("b_patterns", ())),
            bool(entry.get("complementary", False)),
        )
        for entry in tomllib.loads(text)["pair"]
    )


@lru_cache(maxsize=1)
def _opposite_patterns() -> tuple[tuple[re.Pattern[str], str, str], ...]:
    phrases = [
        (phrase, pair.name, side) for pair in opposite_pairs() for side in ("a", "b") for phrase in getattr(pair, side)
    ]
    phrases.sort(key=lambda found: -len(found[0]))
    patterns = [
        (re.compile(pattern), pair.name, side)
        for pair in opposite_pairs()
        for side in ("a", "b")
        for pattern in getattr(pair, f"{side}_patterns")
    ]
    return tuple((re.compile(rf"\b{re.escape(p)}\b"), name, side) for p, name, side in phrases) + tuple(patterns)


_PHRASE_END = frozenset(
    [
        "and",
        "or",
        "but",
        "so",
        "then",
        "until",
        "for",
        "since",
        "because",
        "while",
        "as",
        "than",
        "to",
        "of",
        "in",
        "on",
        "at",
        "by",
    ]
)


def _keys(rest: str) -> list[str]:
    """The content words of what a slot word governs (up to three, to the next conjunction or preposition),
    singular and without "-ing": "your next doses" gives "dose", "stopping it" "stop", "a 10-pound lifting
    restriction" "10-pound", "lift", "restriction"."""
    keys: list[str] = []
    for word in rest.split():
        word = word.strip("'-")
        if word in _PHRASE_END or len(keys) == 3:
            break
        if not word or word in _FILLER:
            continue
        if word.endswith("ing") and len(word) > 5:
            word = word[:-3]
            if len(word) > 2 and word[-1] == word[-2]:
                word = word[:-1]  # "stopping" -> "stop"
        elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
        keys.append(word)
    return keys


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


_CONTRACTED_NO = re.compile(r"cannot|n['’]t\b")


@lru_cache(maxsize=1)
def _complementary_patterns() -> tuple[tuple[re.Pattern[str], str, str], ...]:
    complementary = {pair.name for pair in opposite_pairs() if pair.complementary}
    return tuple(found for found in _opposite_patterns() if found[1] in complementary)


def complementary_mentions(lowered: str) -> list[tuple[str, str, re.Match[str]]]:
    """``(pair name, side, the match that said it)`` for each side of a complementary pair
    (:attr:`OppositePair.complementary`) that ``lowered`` names without a "no" of its own: where and in which words,
    to tell whether the sentence's "no" reaches them ("don't lie down" says the other side, "stay upright")."""
    return [
        (name, side, match)
        for pattern, name, side in _complementary_patterns()
        for match in pattern.finditer(lowered)
        if not _NEGATIVE_WORD.search(match.group()) and not _CONTRACTED_NO.search(match.group())
    ]


def read_slots(lowered: str) -> tuple[frozenset[Slot], str]:
    """The slots ``lowered`` (a lower-cased sentence) fills, and the sentence with the phrases that said them
    blanked (same length, so offsets hold)."""
    slots: set[Slot] = set()
    for pattern, name, side in _opposite_patterns():
        for match in pattern.finditer(lowered):
            slots.add(("opposite", name, side))
            if _NEGATIVE_WORD.search(match.group()):  # "no longer contagious": not a negation of the sentence
                lowered = _blank(lowered, *match.span())
    compared: set[str] = set()
    for pattern, value in _COMPARISONS:
        for match in pattern.finditer(lowered):
            compared.add(match.group("n") or "")
            said = value
            negation = _NEGATION_BEFORE.search(lowered, 0, match.start("c"))
            if negation and _PLAIN_MORE.fullmatch(match.group("c")):
                said = "<"
                lowered = _blank(lowered, *negation.span())
            slots.add(("comparison", match.group("n") or "", said))
            lowered = _blank(lowered, *match.span("c"))
    for match in _WITHIN.finditer(lowered):
        compared.add(match.group("n"))
        # "bleeding that does not stop within ten minutes" lasts longer than ten minutes
        outlasts = _NOT_WITHIN.search(lowered, max(0, match.start() - 40), match.start())
        slots.add(("comparison", match.group("n"), ">" if outlasts else "<"))
    # A number said plainly is "=": against the same number as a cap or a floor ("8 a day" and "no more than 8
    # a day") the two differ in what they allow.
    slots.update(("comparison", n, "=") for n in set(_PLAIN_NUMBER.findall(lowered)) - compared)
    scopes = {
        "dose" if m.group("once") else "day" if m.group("daily") else _SCOPE_VALUE.get(m.group("v"), m.group("v"))
        for m in _SCOPE.finditer(lowered)
    }
    if len(scopes) == 1:
        slots.add(("scope", "", scopes.pop()))
    for pattern, value in ((_UP, "up"), (_DOWN, "down")):
        if pattern.search(lowered):
            slots.add(("direction", "", value))
    for match in _COUNT.finditer(lowered):
        form = _FORMS.get(match.group("form"), match.group("form"))
        slots.add(("count", form, match.group("n") or "1"))
    slots.update(_order(lowered))
    slots.update(_spacing(lowered))
    slots.update(_coverage(lowered))
    slots.update(_preference(lowered))
    slots.update(_actors(lowered))
    slots.update(_modalities(lowered))
    for clause in _CONDITION_CLAUSE.finditer(lowered):
        joins = [
            (join.group(1), _ONE_SIGN.search(clause.group("clause")[: join.start()]) is not None)
            for join in _JOIN.finditer(clause.group("clause"))
        ]
        for word, one_sign in joins:
            if not (one_sign and len(joins) > 1):  # "red or warm" alone still joins two signs
                slots.add(("joined", "condition", "either" if word == "or" else "both"))
    for pattern, kind in (
        (_SEQUENCE, "sequence"),
        (_WITH, "with"),
        (_CONDITION, "condition"),
        (_EXCEPTION, "exception"),
    ):
        for match in pattern.finditer(lowered):
            value = match.group("v") or match.groupdict().get("w") or ""
            rest = match.group("rest")
            if kind == "sequence":
                value = _SEQUENCE_VALUE.get(value, value)
                if shared := _SHARED_OBJECT.match(rest):
                    rest = rest[shared.end() :]
            elif kind == "condition":
                # "even if you feel well" holds whatever the condition says, "only if you feel unwell" only when it
                # holds: the two reverse each other whatever their conditions' words
                if value.startswith(("even", "only")):
                    slots.add(("condition", "scope", value.split()[0] + " if"))
                value = "unless" if value.startswith(("unless", "except")) else "if"
            elif kind == "exception":
                value = "only" if value == "only" else "except"
            elif kind == "with" and value != "with":
                value = "without"
            slots.update((kind, key, value) for key in _keys(rest))
    return frozenset(slots), lowered


_APART = re.compile(
    r"\b(?:wait|waiting|leave|leaving|allow|allowing|gap of|space|spacing)\b[^,.;]{0,40}?\bbetween\b|"
    r"\bspace (?:them|it|the [a-z]+|your [a-z]+) out\b|\bseparately\b|\bat (?:separate|different) times\b"
)
_TOGETHER = re.compile(
    r"\bat the same time\b(?! (?:each|every|of)\b)|\bsimultaneously\b|\bback[- ]to[- ]back\b|"
    r"\b(?:them|both|these|those|the two(?: [a-z]+)?) (?:in )?together\b|"
    r"\b(?:one )?right after (?:each other|the other)\b|\bin one go\b"
)
"""Two doses or drops given at once. "together" only of the two things ("put them in together"): "because together
they slow your breathing" gives nothing at once."""
_NOT_BEFORE = re.compile(r"\b(?:not|never|no)\b(?:\s+[\w']+){0,5}\s*$|n't(?:\s+[\w']+){0,5}\s*$")
"""A "not" within five words before a "together" in its own clause: "do not put them in at the same time"."""


_ALL_TIMES = re.compile(
    r"\bat all times\b|\ball the time\b|\baround the clock\b|\bday and night\b|\bnight and day\b|"
    r"\b24 hours a day\b|\ball day and (?:all )?night\b|\bevery day, including\b|\b(?:day|night)s? included\b"
)
_SOME_TIMES = re.compile(
    r"\bonly (?:at|during|in|on|when|while|for|overnight|at night)\b|"
    r"\b(?:at night|overnight|during the day|in the daytime|at bedtime|in the (?:morning|evening)s?|on [a-z]+ days|"
    r"when [a-z]+ing) only\b"
)


def _coverage(lowered: str) -> set[Slot]:
    """``("coverage", "", "all"|"some")``: worn, used or kept up at all times ("at all times, including at
    night", "around the clock") or only at some ("at night only", "only during the day")."""
    alls, somes = bool(_ALL_TIMES.search(lowered)), bool(_SOME_TIMES.search(lowered))
    if alls == somes:
        return set()
    return {("coverage", "", "all" if alls else "some")}


def _spacing(lowered: str) -> set[Slot]:
    """``("spacing", "", "apart"|"together")``: two doses or drops kept apart ("wait five minutes between the two
    eye drops") or given at once ("put them in at the same time"); "don't use them together" keeps them apart."""
    found: set[Slot] = set()
    if _APART.search(lowered):
        found.add(("spacing", "", "apart"))
    for match in _TOGETHER.finditer(lowered):
        clause = re.split(r"[,;:]|\b(?:because|since|as|so|but|and)\b", lowered[: match.start()])[-1]
        negated = _NOT_BEFORE.search(clause)
        found.add(("spacing", "", "apart" if negated else "together"))
    return found


def _order(lowered: str) -> set[Slot]:
    """``("order", stem, "first"|"second")`` for each content word of two steps a sentence puts in order: around
    one ", then" / "and then", or one "before"/"after" clause (to its comma or the next clause: "before taking the
    pills, phone us" puts the call first). A sentence with more than one such marker is not read (which step is
    which would be a guess)."""
    thens, clauses = list(_THEN.finditer(lowered)), list(_STEP_CLAUSE.finditer(lowered))
    if len(thens) + len(clauses) != 1:
        return set()
    if thens:
        first, second = lowered[: thens[0].start()], lowered[thens[0].end() :]
    else:  # the clause runs to its comma; the rest of the sentence is the other step, wherever it stands
        marker = clauses[0]
        end = _CLAUSE_END.search(lowered, marker.end())
        stop = end.start() if end else len(lowered)
        clause, rest = lowered[marker.end() : stop], lowered[: marker.start()] + " " + lowered[stop:]
        first, second = (clause, rest) if marker.group("v") == "after" else (rest, clause)
    steps = []
    for part in (first, second):
        words = {word_stem(w) for w in _WORD.findall(part) if w not in _NOT_A_STEP_WORD and w not in _FILLER}
        steps.append(words)
    shared = steps[0] & steps[1]
    return {
        ("order", w, value) for words, value in zip(steps, ("first", "second"), strict=True) for w in words - shared
    }


_SAME_WHEN = {"afterward": "after", "afterwards": "after", "beforehand": "before"}
"""Words of one time said two ways, so that a choice of "after her shots" over "beforehand" meets its reversal,
"before her shots" over "afterward"."""


def _preference(lowered: str) -> set[Slot]:
    """``("preference", stem, "chosen"|"passed over")`` for each content word of what a sentence chooses and of
    what it chooses it over, around one "rather than", "instead of" or ", not": the chosen side runs back to its
    clause's start, the other forward to its clause's end; fronted ("Rather than driving, call an ambulance"),
    the other way round. A sentence with more than one marker is not read, and a word on both sides says
    nothing."""
    markers = list(_PREFERENCE.finditer(lowered))
    if len(markers) != 1:
        return set()
    marker = markers[0]
    starts = [
        m.end()
        for m in _CHOSEN_START.finditer(lowered, 0, marker.start())
        if lowered[m.end() : marker.start()].strip()  # "X, rather than Y": the comma before the marker is no start
    ]
    before = lowered[(starts[-1] if starts else 0) : marker.start()]
    end = _PREFERENCE_END.search(lowered, marker.end())
    after = lowered[marker.end() : end.start() if end else len(lowered)]
    if not _WORD.search(before) and end and end.group() == ",":  # fronted: "Rather than X, do Y"
        rest = _PREFERENCE_END.search(lowered, end.end())
        before, after = lowered[end.end() : rest.start() if rest else len(lowered)], after
    sides = []
    for part in (before, after):
        words = (_SAME_WHEN.get(w, w) for w in _WORD.findall(part))
        sides.append({word_stem(w) for w in words if w not in _NOT_A_STEP_WORD and w not in _FILLER})
    shared = sides[0] & sides[1]
    return {
        ("preference", w, value)
        for words, value in zip(sides, ("chosen", "passed over"), strict=True)
        for w in words - shared
    }


_PEOPLE_WORDS = (
    "child", "children", "baby", "babies", "kid", "kids", "infant", "toddler", "son", "daughter", "partner",
    "husband", "wife", "parent", "patient", "mother", "father",
)  # fmt: skip
_PEOPLE = frozenset(word_stem(word) for word in _PEOPLE_WORDS)
"""People a step is done for or by, keyed as :func:`_preference` keys its words (stemmed)."""


def slot_conflicts(reference: frozenset[Slot], candidate: frozenset[Slot]) -> list[tuple[str, str, str]]:
    """``(kind, reference's value, candidate's value)`` for each slot the two sentences fill differently, where
    neither sentence also fills it the other's way."""
    found = []
    reordered: dict[str, list[str]] = {"first": [], "second": []}
    preferred: dict[str, list[str]] = {"chosen": [], "passed over": []}
    for kind, key, value in sorted(reference):
        theirs = {v for k, s, v in candidate if (k, s) == (kind, key)}
        mine = {v for k, s, v in reference if (k, s) == (kind, key)}
        if theirs and not theirs & mine and len(mine) == 1:
            if kind == "order":  # one conflict for the steps swapped, not one per word of them
                reordered[value].append(key)
                continue
            if kind == "preference":
                if key not in _PEOPLE:  # who a choice is done for is not the choice: "give your child sips rather
                    preferred[value].append(key)  # than ..." / "rather than letting your child gulp ..."
                continue
            shown = f"{key} " if key else ""
            found.append((kind, f"{value} {shown}".strip(), f"{'/'.join(sorted(theirs))} {shown}".strip()))
    if reordered["first"] and reordered["second"]:  # steps swapped move both ways; one noun moved is wording
        steps = " / ".join(" ".join(words) for words in reordered.values() if words)
        found.append(("order", f"{steps} in this order", "the other way round"))
    if preferred["chosen"] or preferred["passed over"]:  # what one sentence chooses, the other passes over
        choice = " over ".join(" ".join(words) or "-" for words in preferred.values())
        found.append(("preference", choice, "the other way round"))
    return found


__all__ = ["OppositePair", "Slot", "complementary_mentions", "opposite_pairs", "read_slots", "slot_conflicts"]
