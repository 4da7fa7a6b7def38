"""Themes as data, the offline and LLM sentence classifiers, and Theme Edit-F1's counting."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bedside.llm import get_model
from bedside.tasks.drafting.themes import (
    DEFAULT_C,
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
    shipped_classifier_path,
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


def test_the_shipped_classifier_is_the_one_fitted_on_the_labelled_sentences() -> None:
    """The shipped file (loaded without scikit-learn) predicts what a fresh fit predicts; if the sentences change
    without `python tools/fit_theme_classifier.py`, its provenance check fails here first."""
    import json
    import warnings

    import numpy as np

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a stale file would warn and fit instead of loading
        default_theme_classifier.cache_clear()
        shipped = default_theme_classifier()
    fresh = ThemeClassifier.fit(read_labelled_sentences(), c=DEFAULT_C)
    heldout = Path(shipped_classifier_path()).with_name("theme_heldout.jsonl")
    texts = [json.loads(line)["text"] for line in heldout.read_text(encoding="utf-8").splitlines() if line.strip()]
    agree = np.mean([a == b for a, b in zip(shipped.predict(texts), fresh.predict(texts), strict=True)])
    assert agree >= 0.99, agree  # the same up to floating-point differences between machines' MiniLM runs
    assert shipped.model.labels == fresh.model.labels


def test_a_stale_shipped_classifier_is_refused_and_fitted_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bedside.tasks.drafting import themes

    stale = default_theme_classifier().save(tmp_path / "stale.npz", provenance={"sentences_sha256": "0" * 64})
    with pytest.raises(ValueError, match="fitted on"):
        ThemeClassifier.load(stale, provenance=themes.training_provenance())
    monkeypatch.setattr(themes, "shipped_classifier_path", lambda: stale)
    default_theme_classifier.cache_clear()
    try:
        with pytest.warns(UserWarning, match="stale"):
            fitted = default_theme_classifier()
        assert fitted.predict(["Have you had any fever or chills?"]) == ["symptom_questions"]
    finally:
        default_theme_classifier.cache_clear()


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


# Question themes need a question; held-out draft sentences; one labelling path.


def test_question_form_rule() -> None:
    from bedside.tasks.drafting.themes import is_question

    for question in ("Have you had a fever?", "Are you able to eat.", "How long has this been going on.", "Any lows?"):
        assert is_question(question), question
    for statement in (
        "Nausea is a common side effect of cisplatin.",
        "What you describe is common.",
        "Please let me know if the swelling gets worse.",
        "Will call you tomorrow.",
        "Do not stop the medicine.",
    ):
        assert not is_question(statement), statement


def test_held_out_question_precision_reaches_the_goal() -> None:
    from bedside.tasks.drafting.themes import per_theme_scores, question_precision, read_heldout_sentences

    held = read_heldout_sentences()
    assert len(held) >= 150
    trained = {s.text for s in read_labelled_sentences()}
    assert not trained & {s.text for s in held}  # held out: none of them is a training sentence
    gold, texts = [s.theme for s in held], [s.text for s in held]
    classifier = default_theme_classifier()
    bare = question_precision(per_theme_scores(gold, classifier.without_question_rule().predict(texts)))
    ruled = question_precision(per_theme_scores(gold, classifier.predict(texts)))
    assert ruled >= 0.8  # measured 0.87 (bare model: 0.63)
    assert ruled > bare
    statements = [t for t in texts if not t.endswith("?")]
    assert not {"symptom_questions", "medication_questions"} & set(classifier.predict(statements))


def test_llm_classifier_never_offers_question_themes_for_a_statement() -> None:
    seen: list[str] = []

    def rules(messages):  # type: ignore[no-untyped-def]
        seen.append(messages[-1].content + messages[0].content)
        return '{"theme": "assessment"}'

    async def main() -> list[str]:
        async with get_model("scripted/j", options={"rules": rules}, role="judge") as model:

            async def generate(chat, answer_type):  # type: ignore[no-untyped-def]
                return (await model.generate_structured(chat, answer_type)).value

            return await LLMThemeClassifier(generate).predict(["Nausea is common with cisplatin.", "Any nausea?"])

    assert asyncio.run(main()) == ["assessment", "assessment"]
    statement, question = sorted(seen, key=lambda text: "Any nausea?" in text)
    assert "symptom_questions" not in statement
    assert "symptom_questions" in question


def test_identical_texts_score_theme_f1_one_on_one_labelling_path() -> None:
    from bedside.tasks.drafting.cases import ClinicianReply
    from bedside.tasks.drafting.evaluation import evaluate_draft, theme_totals
    from bedside.tasks.drafting.matcher_kinds import make_matcher

    reply = ClinicianReply(
        clinician_id="dr",
        text="I'm sorry you feel unwell. Have you had a fever? Call 911 if you cannot breathe.",
        theme_fields={"empathy": "I'm sorry you feel unwell.", "planning": "Have you had a fever? Call 911."},
    )
    classifier = default_theme_classifier()

    async def classify(texts):  # type: ignore[no-untyped-def]
        return classifier.predict(texts)

    async def main(source: str) -> dict:  # type: ignore[type-arg]
        return await evaluate_draft(reply.text, reply, make_matcher("lexical"), classify, theme_source=source)

    same_path = asyncio.run(main("classifier"))
    assert theme_totals(same_path).f1 == 1.0
    assert same_path["content"]["f1"] == 1.0
    boxes = asyncio.run(main("boxes"))  # the boxes say "planning" where the classifier reads other themes
    assert boxes["reference_themes_from"] == "theme fields"
    assert theme_totals(boxes).f1 < 1.0
