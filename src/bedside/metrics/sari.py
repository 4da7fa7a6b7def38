"""SARI (Xu et al., 2016): how well an output adds, keeps and deletes n-grams relative to its source.

As the ArchEHR-QA scorer uses it (through the common SARI implementation of text-simplification work):

- Text is lowercased and tokenised with sacrebleu's 13a tokenizer; n-grams for n = 1..4 over the tokens.
- With R references, source and output n-gram counts are multiplied by R, and reference counts are summed
  over the references, so an n-gram kept by k of R references earns k/R credit.
- Keep: K = min(source, output) counts. Precision = mean over n-grams g in K of min(K, refs)[g] / K[g];
  recall = Σ min(K, refs) / Σ min(source, refs) (pooled counts). Their F1.
- Delete: D = source minus output (positive part). Precision = mean over g in D of (D minus refs)[g] / D[g].
  Only precision is used, as in the paper, because deletion recall rewards deleting everything.
- Add: A = output n-grams absent from the source (as sets). Precision = |A ∩ refs| / |A|; recall =
  |A ∩ refs| / |refs − source|. Their F1.
- Any precision or recall over an empty set is 1; an F1 whose precision and recall are both 0 is 0.
- SARI = (mean-over-n keep F1 + mean-over-n delete precision + mean-over-n add F1) / 3, times 100.

Corpus SARI is the mean of sentence SARI, which is what published scorers report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

MAX_ORDER = 4


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    return Tokenizer13a()  # type: ignore[no-untyped-call]


def normalise(text: str) -> list[str]:
    """Lowercase, 13a-tokenise, split on spaces."""
    return str(_tokenizer()(text.lower())).split()


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def _scale(counts: Counter[tuple[str, ...]], factor: int) -> Counter[tuple[str, ...]]:
    return Counter({gram: count * factor for gram, count in counts.items()})


def _order_scores(
    source: Counter[tuple[str, ...]],
    output: Counter[tuple[str, ...]],
    references: Counter[tuple[str, ...]],
    n_references: int,
) -> tuple[float, float, float]:
    """(keep F1, delete precision, add F1) for one n-gram order."""
    source_r, output_r = _scale(source, n_references), _scale(output, n_references)

    kept = source_r & output_r
    kept_good = kept & references
    kept_possible = source_r & references
    keep_precision = sum(kept_good[g] / kept[g] for g in kept) / len(kept) if kept else 1.0
    keep_recall = sum(kept_good.values()) / sum(kept_possible.values()) if kept_possible else 1.0

    deleted = source_r - output_r
    deleted_good = deleted - references
    delete_precision = sum(deleted_good[g] / deleted[g] for g in deleted) / len(deleted) if deleted else 1.0

    added = set(output) - set(source)
    added_good = added & set(references)
    addable = set(references) - set(source)
    add_precision = len(added_good) / len(added) if added else 1.0
    add_recall = len(added_good) / len(addable) if addable else 1.0

    return _f1(keep_precision, keep_recall), delete_precision, _f1(add_precision, add_recall)


def sentence_sari(source: str, output: str, references: Sequence[str]) -> float:
    """SARI (0–100) of one output against its source and one or more references."""
    return 100 * _sari(source, output, references)


def _sari(source: str, output: str, references: Sequence[str]) -> float:
    # Averaged in this order (per component over n, then the three) and scaled by 100 only at the end, so the
    # float result is the one the reference scorers print, to the last digit.
    if isinstance(references, str) or not references:
        raise ValueError("references must be a non-empty list of strings")
    source_tokens, output_tokens = normalise(source), normalise(output)
    reference_tokens = [normalise(r) for r in references]
    keep, delete, add = 0.0, 0.0, 0.0
    for n in range(1, MAX_ORDER + 1):
        summed: Counter[tuple[str, ...]] = Counter()
        for tokens in reference_tokens:
            summed.update(_ngrams(tokens, n))
        k, d, a = _order_scores(_ngrams(source_tokens, n), _ngrams(output_tokens, n), summed, len(references))
        keep, delete, add = keep + k, delete + d, add + a
    return (keep / MAX_ORDER + delete / MAX_ORDER + add / MAX_ORDER) / 3


def corpus_sari(sources: Sequence[str], outputs: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """Mean sentence SARI over a set (0–100)."""
    if not (len(sources) == len(outputs) == len(references)):
        raise ValueError(f"{len(sources)} sources, {len(outputs)} outputs, {len(references)} reference lists")
    if not outputs:
        raise ValueError("no outputs to score")
    total = sum(_sari(s, o, r) for s, o, r in zip(sources, outputs, references, strict=True))
    return 100 * total / len(outputs)
