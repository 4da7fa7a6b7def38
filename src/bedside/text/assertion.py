"""Which words a sentence says hold, and which it says do not: negation read by negspacy's NegEx.

"No fever but a bad cough" and "fever but no cough" are both negative sentences; a checker that only asks
*whether* a sentence is negated sees no difference between them. Which words a negation reaches is a solved
problem with a maintained lexicon: NegEx (Chapman et al., 2001) as implemented by `negspacy`_, with its clinical
term set (``en_clinical``: preceding cues such as "denies", "negative for", "free of", "never had"; following
cues such as "was ruled out"; pseudo-negations such as "no increase", "not only"; and the words that end a
negation's reach, such as "but", "however", "aside from").

bedside reads every content word of a sentence (a word of letters that is not part of a cue, not a time word,
which the time rules read, and not a spaCy stop word, save those a clinical sentence turns on: "put", "up",
"call", "empty", "side"...) as a NegEx target and keeps, per word stem, whether the sentence negates it. Two
sentences disagree in polarity when a word one of them negates is one the other affirms
(:func:`polarity_flips`): "you are still contagious" against "you are no longer contagious", "the biopsy was
negative for cancer" against "the biopsy showed cancer". A word only one side mentions says nothing either way.

bedside adds to the term set only what its own sentences need, listed here so a reader sees every departure from the
library: a negation also ends at "so", "then", "until", "unless", "if", "when", "because" and "since" ("it is not
contagious, so he can go back to school": school is not negated), and at "before", "after", "while", "during",
"following", a semicolon ("do not wait for clinic; phone the unit now") and a comma that opens a clause of its own
(", it", ", you"...: "once it no longer hurts, it is okay to run"; ", or has blue lips"), and "no longer", "none",
"nothing", "neither", "nor", "not any more", "clear of" ("the lungs were clear of pneumonia"), "free from", "off the
drink", "fails to" ("if the vomiting fails to settle" is "does not settle") and the contractions the term set lacks
("haven't", "won't", "shouldn't"...) are preceding cues, and
"without" negates what follows but does not alone make a sentence negative (the with/without slot reads it). "not
yet" is a preceding cue ("not yet osteoporosis"), so "yet" ends a negation only as ", yet" (the term set's bare
"yet" cut "not yet" short); "doing nothing" is a pseudo-negation ("sitting there doing nothing" is at rest), and so
are "not gonna lie", "not great" (how a patient says how they are), "can't sleep without it", ", not much" tacked on
(how much, not no: "it doesn't hurt much" keeps its "no") and "does not matter" (either is fine). A cue inside a
longer one ("not" in "not yet") counts once. The subject of a negated passive is negated too ("aspirin should never
be given": NegEx reaches forward only), and the "long" of "as long as" is no content word.

spaCy is imported on first use (about 2 s), so commands that never compare sentences do not pay for it.

.. _negspacy: https://github.com/jenojp/negspacy
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_EXTRA_TERMINATION = (
    "so", "then", "until", "unless", "if", "when", "because", "since", "so that", "before", "after", "while", "during",
    "following", ";", ", yet", ", it", ", you", ", we", ", i", ", he", ", she", ", they", ", this", ", that",
    ", or is", ", or has", ", or are", ", or have", ", or seems", ", or becomes", ", or gets", ", or feels",
    ", or looks", ", or starts", ", and is", ", and has",
)  # fmt: skip
"""Where a negation's reach ends besides NegEx's own: a clause of time or condition says when, and is not
negated with it ("do not eat after midnight before your operation" negates eating, not the operation); and a
comma that opens a clause of its own ("once it no longer hurts, it is okay to run": running is not negated),
where a comma before a list's next item ("no fever, chills or cough") carries the negation on; so does a list's
last item when it is a clause of its own (", or has blue lips" after "cannot speak in full sentences")."""
_EXTRA_PRECEDING = (
    "no longer", "none", "none of", "nothing", "nobody", "not any more", "not anymore", "not yet", "nor", "neither",
    "haven't", "hasn't", "hadn't", "won't", "wouldn't", "shouldn't", "mustn't", "needn't", "clear of", "free from",
    "off the drink", "off the booze", "fails to", "failed to", "fail to", "failing to",
)  # fmt: skip
_PSEUDO = (
    "doing nothing", "not gonna lie", "not going to lie", "not great", "not so great", "not too great",
    "not brilliant", "can't sleep without", "cannot sleep without", "can't manage without", "can't do without",
    "couldn't do without", "can't go without", "can't live without", ", not much", ", not a lot", ", not that much",
    "does not matter", "doesn't matter", "no matter", "haven't let up", "hasn't let up", "won't let up",
    "didn't let up", "not let up", "haven't really let up", "hasn't really let up", "not long after",
    "not long before", "not loads", "not hugely", "not massively",
)  # fmt: skip
"""Phrases with a cue that negate nothing: "sitting there doing nothing" is at rest, "I'm not gonna lie" only
says that what follows is true, "not great" is how a patient says how they are, "can't sleep without it" says
it is used every night, ", not much" or ", not a lot" tacked on says how much ("a couple of times a month, not
much"), "not loads" or "not hugely" how much ("better, not loads but better"), "hasn't let up" says it goes on,
"not long after" says soon after, and "it does not matter whether" says that either is fine
("nothing to worry about" keeps its "no", weighed against a warning)."""
_FOLLOWING = ("off limits", "off-limits")
"""A cue the term set lacks that negates what comes before it: "driving is off limits for a week"."""
_PLACE_WORDS = frozenset(re.findall(r"\w+", "on in inside into at from within under over near around of"))
"""Prepositions that hang a place or a source on a negated word ("no cancer in the biopsy")."""
_RAISED_CUES = frozenset({"no", "nothing", "none"})
"""Cues that negate the object of the verb before them: "showed no", "needs nothing", said as well "did not show
any", "does not need anything"."""
_RUN_BREAKS = frozenset({"and", "or", "nor", "but", "then", ",", ";"})
"""Words that end a negated stretch's hold on what follows: "don't drive or drink" negates drink in its own right."""
FUNCTION_WORDS = frozenset(
    re.findall(
        r"\w+",
        "a an the and or but of to in on at for by from your you we i it its is are was be been will would can could "
        "may might this that these those our my me us as so do does did have has had any some please there their "
        "they he she him her his them what which who",
    )
)
"""Words that carry how a sentence is put rather than what it says: never a NegEx target here, and what
:mod:`bedside.text.alignment` passes over when it looks for the words two sentences differ in."""
_WITHOUT = frozenset({"without"})
"""A cue that negates the words after it ("a full day without a fever" negates fever) but does not by itself make
a sentence negative: "switch to a medicine without this side effect" says what the medicine is (the with/without
slot of :mod:`bedside.text.slots` compares it)."""
_KEPT_STOP_WORDS = frozenset(
    re.findall(
        r"\w+",
        "put up down off out call empty full side back front top bottom keep take give go get make see show move using",
    )
)
"""spaCy stop words a clinical sentence turns on ("put it up", "call us", "an empty stomach", "not using the
inhaler", whose "use" spaCy keeps): read as content."""
_TIME_WORDS = frozenset(
    re.findall(
        r"\w+",
        "minute minutes hour hours day days week weeks month months year years today tonight tomorrow yesterday "
        "morning afternoon evening night bedtime midnight noon daily weekly",
    )
)
"""Times are read and compared by the time rules (:mod:`bedside.text.conflicts`), not as negated words."""
_NOT_CONTENT = (
    FUNCTION_WORDS
    | _TIME_WORDS
    | frozenset(
        re.findall(r"\w+", "longer anymore also just really still yet even very much ok okay yes yeah um uh er")
    )
)
_LETTERS = re.compile(r"^[a-z][a-z'-]*$")
_lock = threading.Lock()


@lru_cache(maxsize=65536)
def word_stem(word: str) -> str:
    """A word's Snowball (Porter 2) English stem, lower case ("allergies" → "allergi", "running" → "run"): to pair a
    word with its inflections across two sentences, never shown to a user."""
    return str(_snowball().stem(word.lower().replace("’", "'")))


@lru_cache(maxsize=1)
def _snowball() -> Any:
    from nltk.stem.snowball import SnowballStemmer

    return SnowballStemmer("english")


@dataclass(frozen=True)
class Polarity:
    """The stems of the content words a sentence negates, and of those it affirms (a word said both ways, as in
    "no fever today, fever yesterday", is in both)."""

    negated: frozenset[str]
    affirmed: frozenset[str]
    spelled: tuple[tuple[str, str], ...] = ()
    """(stem, the word as the sentence wrote it), to show a user the word rather than its stem."""
    negative: bool = False
    """The sentence holds a negation cue, whether or not a content word follows it ("No, never have"); "without"
    alone does not count."""
    cues: int = 0
    """How many negation cues the sentence holds ("without" not counted): "don't let it get wet and don't remove it"
    has two."""
    attached: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Negated stems a cue reaches only through a place or source attached to an earlier negated word, each with
    the negated words before it: "no pneumonia on the chest x-ray" gives (chest, (pneumonia,)), (x, (pneumonia,
    chest)), (ray, ...); not across "and", "or" or a comma ("don't drive or drink": drink is negated in its own
    right)."""
    before_no: frozenset[str] = frozenset()
    """Affirmed stems said just before a "no" that negates what follows them: "the MRI showed no sign of a stroke"
    gives show; the same as "did not show any sign of a stroke", where the "not" sits on the verb."""

    def word(self, stem: str) -> str:
        return next((word for s, word in self.spelled if s == stem), stem)


NOT_NEGATIVE = Polarity(frozenset(), frozenset())
"""The reading of a sentence that negates nothing and affirms nothing (a default)."""


class _Reader:
    """spaCy's blank English tokenizer and negspacy's NegEx, built once per process."""

    def __init__(self) -> None:
        import spacy
        from negspacy.negation import Negex
        from negspacy.termsets import termset

        terms = termset("en_clinical")
        terms.remove_patterns({"termination": ["yet"]})
        terms.add_patterns({"pseudo_negations": list(_PSEUDO)})
        terms.add_patterns(
            {
                "termination": list(_EXTRA_TERMINATION),
                "preceding_negations": list(_EXTRA_PRECEDING),
                "following_negations": list(_FOLLOWING),
            }
        )
        self.nlp: Any = spacy.blank("en")
        self.sentencizer: Any = self.nlp.add_pipe("sentencizer")
        self.negex: Any = Negex(self.nlp, "bedside_negex", terms.get_patterns(), extension_name="bedside_negated")

    def read(self, text: str) -> Polarity:
        from spacy.tokens import Span

        doc = self.sentencizer(self.nlp.make_doc(text.lower().replace("’", "'")))
        preceding, following, _ = self.negex.process_negations(doc)
        cue_tokens = {i for _, start, end in (*preceding, *following) for i in range(start, end)}
        # "as long as" is a condition, not a length: its "long" is no content word
        cue_tokens |= {t.i for t in doc[1:-1] if t.text == "long" and doc[t.i - 1].text == doc[t.i + 1].text == "as"}
        doc.ents = [
            Span(doc, token.i, token.i + 1, label="WORD")
            for token in doc
            if token.i not in cue_tokens
            and (not token.is_stop or token.text in _KEPT_STOP_WORDS)
            and token.text not in _NOT_CONTENT
            and _LETTERS.match(token.text)
        ]
        self.negex.negex(doc)
        for subject_start, subject_end in _passive_subjects(doc, preceding):
            for ent in doc.ents:
                if subject_start <= ent.start < subject_end:
                    ent._.bedside_negated = True
        negated = {word_stem(e.text) for e in doc.ents if e._.bedside_negated}
        affirmed = {word_stem(e.text) for e in doc.ents if not e._.bedside_negated}
        spelled = tuple(dict((word_stem(e.text), e.text) for e in doc.ents).items())
        spans = {(start, end) for _, start, end in (*preceding, *following)}
        # "not yet" also holds the cue "not": one "no", counted once
        outer = [(a, b) for a, b in spans if not any(o <= a and b <= f and (o, f) != (a, b) for o, f in spans)]
        counted = [cue for cue in (doc[a:b].text for a, b in sorted(outer)) if cue not in _WITHOUT]
        starts = sorted(a for a, _ in outer)
        attached: list[tuple[str, tuple[str, ...]]] = []
        run: list[str] = []  # the negated words of the current cue's stretch
        through = False  # whether the current word hangs off an earlier one by a preposition
        last: Any = None
        for ent in doc.ents:
            cue = max((start for start in starts if start < ent.start), default=-1)
            if not ent._.bedside_negated or last is None or cue > last.start:
                run, through = [], False
            if not ent._.bedside_negated:
                last = None
                continue
            if run:
                between = [t.text for t in doc[last.start : ent.start]]
                if any(word in _RUN_BREAKS for word in between):
                    through = False
                elif any(word in _PLACE_WORDS for word in between):
                    through = True
                if through:
                    attached.append((word_stem(ent.text), tuple(run)))
            run.append(word_stem(ent.text))
            last = ent
        content = {ent.start: ent for ent in doc.ents if not ent._.bedside_negated}
        before_no = frozenset(
            word_stem(content[start - 1].text)
            for _, start, _end in preceding
            if start - 1 in content and doc[start].text in _RAISED_CUES
        )
        return Polarity(
            frozenset(negated),
            frozenset(affirmed),
            spelled,
            bool(counted),
            len(counted),
            tuple(attached),
            before_no,
        )


_MODALS = frozenset({"should", "must", "can", "will", "may", "could", "would", "might", "shall"})
_CLAUSE_OPENERS = frozenset({",", ";", ":", "since", "because", "so", "but", "and", "if", "when", "while", "as"})


def _passive_subjects(doc: Any, preceding: list[tuple[Any, int, int]]) -> list[tuple[int, int]]:
    """(start, end) token spans of the subjects of a negated passive ("aspirin should never be given", "antibiotics
    will not be needed") or of a thing said to be unsafe ("live vaccines are not safe for you"): NegEx negates what
    follows its cue, and here the thing refused comes before it."""
    spans = []
    for _, start, end in preceding:
        if start < 1 or end >= len(doc):
            continue
        unsafe = doc[start - 1].text in _COPULAS and doc[end].text in _NOT_FOR_YOU  # "live vaccines are not safe"
        if not unsafe and (doc[start - 1].text not in _MODALS or end + 1 >= len(doc) or doc[end].text != "be"):
            continue
        if not unsafe and not doc[end + 1].text.isalpha():
            continue
        # a list ("live vaccines such as MMR and yellow fever are not safe") is the subject as a whole
        openers = _CLAUSE_OPENERS - {"and", "as"} if unsafe else _CLAUSE_OPENERS
        opener = max((t.i for t in doc[: start - 1] if t.text in openers), default=-1)
        spans.append((opener + 1, start - 1))
    return spans


_COPULAS = frozenset({"is", "are", "was", "were"})
_NOT_FOR_YOU = frozenset({"safe", "suitable", "recommended", "advised", "allowed", "permitted", "appropriate"})
"""What a thing "is not" when the patient must not have it ("is not safe for you", "are not recommended")."""


@lru_cache(maxsize=1)
def _reader() -> _Reader:
    return _Reader()


@lru_cache(maxsize=8192)
def read_polarity(text: str) -> Polarity:
    """Which content words ``text`` negates and which it affirms."""
    reader = _reader()
    with _lock:  # a spaCy pipeline is not safe to share between threads mid-call
        return reader.read(text)


def polarity_flips(reference: Polarity, candidate: Polarity) -> frozenset[str]:
    """The word stems one sentence negates and the other affirms (and does not also negate), save those a "no"
    reaches only as the place or source of a word both sentences negate (:attr:`Polarity.attached`): "no
    pneumonia on your chest x-ray" against "the x-ray showed no sign of pneumonia" negates the x-ray only because
    NegEx's reach runs on to the end of the clause; both say no to pneumonia. Nor a verb one sentence negates and
    the other says just before its "no" (:attr:`Polarity.before_no`), where both negate something else too."""
    return _flips(reference, candidate) | _flips(candidate, reference)


def _flips(negating: Polarity, affirming: Polarity) -> frozenset[str]:
    flips = negating.negated & (affirming.affirmed - affirming.negated)
    trailing = {stem for stem, earlier in negating.attached if any(word in affirming.negated for word in earlier)}
    # the "no" moved from the verb to its object: "did not show any sign of a stroke" and "showed no evidence of a
    # stroke" both say no to the stroke
    raised = {stem for stem in flips & affirming.before_no if (negating.negated & affirming.negated) - {stem}}
    return frozenset(flips - trailing - raised)


__all__ = ["FUNCTION_WORDS", "NOT_NEGATIVE", "Polarity", "polarity_flips", "read_polarity", "word_stem"]
