"""Short sentences in another language are not read as English (issue 45: bad input is uncertain, never a guess).

Before py3langid and the lexicon, a sentence under eight words in a Latin-alphabet language passed the English
check: the rules found nothing they knew in it and the guard had nothing to object to.
"""

from __future__ import annotations

import pytest

from bedside.sim.contradiction import ContradictionRules, label_combined
from bedside.text import language
from bedside.text.alignment import unreadable
from bedside.text.conflicts import ClinicalGuard


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Tome dos pastillas al día.", "es"),
        ("Prenez un comprimé le matin.", "fr"),
        ("Ich habe seit gestern Kopfschmerzen.", "de"),
        ("Estou com dor de cabeça há dois dias.", "pt"),
        ("Uminom ng isang tableta tuwing umaga.", "tl"),
        ("Tôi bị đau đầu từ hôm qua.", "vi"),
        ("每天服用一片药，饭后服用。", "zh"),
    ],
)
def test_a_short_sentence_in_another_language_is_named(text: str, code: str) -> None:
    assert language.foreign_language(text) == code
    assert unreadable(text) == f"not English (py3langid reads {code!r}): the rules read English only"


@pytest.mark.parametrize(
    "text",
    [
        "Take amlodipine 10 mg and lisinopril 5 mg once a day.",  # py3langid alone: Tagalog
        "Any fevers?",  # py3langid alone: Malagasy
        "Take sertraline 50 mg and trazodone 100 mg at bedtime.",
        "I'm 72.",
        "Um, I've been taking the metformin, y'know, twice daily.",
        "BP 130/80, HR 72, SpO2 98% on RA.",
    ],
)
def test_short_clinical_english_stays_english(text: str) -> None:
    assert language.foreign_language(text) is None
    assert unreadable(text) is None


def test_the_lexicon_reads_inflections_by_wordnets_rules() -> None:
    for word in ("allergies", "swollen", "worse", "taking", "tablets", "bigger", "mice", "doctor's", "you've"):
        assert language.is_english_word(word), word
    for word in ("pastillas", "medianoche", "kopfschmerzen", "tabletku"):
        assert not language.is_english_word(word), word


def test_a_guard_pair_and_a_patient_sentence_in_another_language_are_uncertain() -> None:
    reading = ClinicalGuard().read("Take one tablet twice a day.", "Tome una tableta dos veces al día.")
    assert reading.verdict == "uncertain"
    assert reading.uncertain == (
        "the candidate cannot be read: not English (py3langid reads 'es'): the rules read English only"
    )
    (label,) = label_combined(["Vivo sola desde hace dos años."], ["I live alone."], rules=ContradictionRules())
    assert label.label == "uncertain"
    assert label.uncertain is not None
    assert label.uncertain.startswith("not English")


def test_a_language_reader_that_fails_makes_the_pair_uncertain(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> object:
        raise language.LanguageReaderFailed("py3langid's model cannot be loaded: OSError: truncated file")

    monkeypatch.setattr(language, "_identifier", broken)
    language.foreign_language.cache_clear()
    try:
        reading = ClinicalGuard().read("Take one tablet daily.", "Tome una tableta dos veces al día, por favor.")
    finally:
        language.foreign_language.cache_clear()
    assert reading.verdict == "uncertain"
    assert reading.uncertain == (
        "the candidate cannot be read: the language reader failed: py3langid's model cannot be loaded: OSError: "
        "truncated file"
    )
