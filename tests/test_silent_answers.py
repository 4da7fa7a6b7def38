"""Answers that look ok but are not: invisible text, a content-filter stop, a refusal."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bedside.llm import ContentFilterError, EmptyAnswerError, get_model
from bedside.llm.model import has_text
from bedside.runs.scorers import GENERIC
from bedside.runs.task import Output, Sample
from bedside.testing import ScriptedServer
from bedside.text.refusal import is_refusal


def test_text_of_only_zero_width_and_whitespace_characters_is_no_text() -> None:
    assert not has_text("\u200b\u200c\u200d \n\t\u2060\ufeff\u200e")
    assert not has_text("")
    assert has_text("\u200bok")
    assert has_text("é")


@pytest.mark.parametrize(
    ("fault", "error", "cause"),
    [
        ("zero-width", EmptyAnswerError, "only whitespace or invisible characters"),
        ("content-filter", ContentFilterError, "finish_reason: content_filter"),
    ],
)
def test_an_invisible_or_filtered_answer_is_an_error_and_never_cached(
    fault: str, error: type[Exception], cause: str, cache_path: Path
) -> None:
    with ScriptedServer(faults=f"first={fault}") as server:

        async def ask() -> str:
            async with get_model(server.model_name(), cache=cache_path) as model:
                return (await model.generate("how do I take it?")).text

        with pytest.raises(error) as caught:
            asyncio.run(ask())
        assert cause in str(caught.value)
        assert asyncio.run(ask()) == "how do I take it?"  # asked again (nothing was cached), now answered
        assert server.stats()["requests"] == 2


def test_a_content_filter_stop_is_stored_as_an_error_with_its_cause(tmp_path: Path) -> None:
    from bedside.runs import Store, execute, load_config

    with ScriptedServer(faults="content-filter=1.0") as server:
        path = tmp_path / "run.yaml"
        path.write_text(
            "name: filtered\ntask: drafting\ndatasets: {demo: {limit: 2}}\n"
            "systems: {zero_shot: {type: zero_shot, options: {evaluate: false}}}\n"
            f"models: {{system: {server.model_name()}}}\nscorers: [words, refusal]\n"
            f"store: {tmp_path / 'store.sqlite'}\n",
            encoding="utf-8",
        )
        summary = asyncio.run(execute(load_config(path), cache=False))
    store = Store(str(tmp_path / "store.sqlite"))
    try:
        rows = store.results(summary.run_id)
    finally:
        store.close()
    assert [r.status for r in rows] == ["error", "error"]
    assert all("ContentFilterError" in (r.error or "") and "content_filter" in (r.error or "") for r in rows)
    assert all(r.scores == {} for r in rows)  # not scored 0: not scored at all


def test_the_refusal_scorer_flags_a_refusal_without_making_it_an_error() -> None:
    refusals = [
        "I'm sorry, but I can't help with that.",
        "Sorry, I am unable to provide medical advice.",
        "I cannot assist with this request.",
        "As an AI language model, I cannot diagnose you.",
        "Unfortunately, I can\u2019t share that.",
    ]
    answers = [
        "I'm sorry to hear about your pain. Take ibuprofen with food.",
        "You cannot take both drugs together; ask your pharmacist.",
        "Dear patient, your results are normal.",
        "Your question: 'I can't sleep'. Try a regular bedtime.",
    ]
    assert all(is_refusal(t) for t in refusals)
    assert not any(is_refusal(t) for t in answers)
    sample = Sample(id="s", inputs={"question": "q"})
    assert GENERIC["refusal"](sample, Output(text=refusals[0])) == 1.0
    assert GENERIC["refusal"](sample, Output(text=answers[0])) == 0.0
