"""Themes as data, the offline and LLM sentence classifiers, and Theme Edit-F1's counting."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bedside.llm import get_model
from bedside.tasks.drafting.themes import (
    OTHER,
    RESPONSE_THEMES,
    THEME_KEYS,
    LLMThemeClassifier,
    ThemeClassifier,
    ThemeCounts,
    cross_validate,
    default_theme_classifier,
    load_themes,
    pooled,
    read_labelled_sentences,
    theme_counts,
    theme_proportions,
)
from bedside.testing import ScriptedServer


def test_themes_are_the_papers_eight_plus_other() -> None:
    assert len(RESPONSE_THEMES) == 8
    assert THEME_KEYS[-1] == OTHER
    assert "contingency" in RESPONSE_THEMES


def test_bad_theme_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('[[theme]]\nkey = "a"\nlabel = "A"\nname = "A"\ndefinition = "x"\n')
    with pytest.raises(ValueError, match="include 'other'"):
        load_themes(path)


def test_labelled_set_has_thirty_per_theme() -> None:
    sentences = read_labelled_sentences()
    for theme in THEME_KEYS:
        assert sum(s.theme == theme for s in sentences) >= 30, theme


def test_offline_classifier_held_out_f1_and_round_trip(tmp_path: Path) -> None:
    evaluation = cross_validate(read_labelled_sentences())
    assert evaluation.macro_f1 > 0.7  # measured 0.83
    assert set(evaluation.per_theme_f1) == set(THEME_KEYS)
    classifier = default_theme_classifier()
    texts = ["Have you had any fever or chills?", "If you cannot breathe, call 911.", "Best wishes,"]
    assert classifier.predict(texts) == ["symptom_questions", "contingency", "other"]
    path = classifier.save(tmp_path / "themes")
    assert ThemeClassifier.load(path).predict(texts) == classifier.predict(texts)


def test_llm_classifier_answers_with_a_theme_key() -> None:
    rules = [(r"Sentence: Any fever", '{"theme": "symptom_questions"}'), (r"Sentence:", '{"theme": "other"}')]

    async def main(url: str) -> list[str]:
        async with get_model(url, role="judge") as model:

            async def generate(chat, answer_type):  # type: ignore[no-untyped-def]
                return (await model.generate_structured(chat, answer_type)).value

            return await LLMThemeClassifier(generate).predict(["Any fever?", "Hello."])

    with ScriptedServer(rules) as server:
        assert asyncio.run(main(server.model_name("j"))) == ["symptom_questions", "other"]


def test_theme_edit_counts_are_sets_without_other() -> None:
    reference = ["empathy", "symptom_questions", "symptom_questions", "contingency", OTHER]
    draft = ["empathy", "empathy", "assessment", "planning", OTHER, OTHER]
    counts = theme_counts(reference, draft)
    # Sets: ref {emp, symq, cont}, draft {emp, assess, plan}: TP emp; FN symq, cont; FP assess, plan.
    # Repeats (two empathy sentences, two symptom questions) count once; `other` never counts.
    assert counts["empathy"] == ThemeCounts(tp=1)
    assert counts["symptom_questions"] == ThemeCounts(fn=1)
    assert counts["assessment"] == ThemeCounts(fp=1)
    assert OTHER not in counts
    total, by_theme = pooled([counts, theme_counts(["empathy"], ["empathy"])])
    assert total == ThemeCounts(tp=2, fp=2, fn=2)
    assert by_theme["empathy"] == ThemeCounts(tp=2)
    edit = total.as_edit_counts()
    assert (edit.precision, edit.recall, edit.f1) == (0.5, 0.5, 0.5)


def test_theme_proportions() -> None:
    proportions = theme_proportions([["empathy", OTHER], ["empathy", "logistics"], [OTHER]])
    assert proportions["empathy"] == pytest.approx(2 / 3)
    assert proportions["logistics"] == pytest.approx(1 / 3)
    assert proportions["contingency"] == 0.0
