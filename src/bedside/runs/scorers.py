"""Scorers by name: the generic text metrics any task can use, and the task's own.

A scorer maps (sample, output) to a number, or to None when it does not apply (no reference to compare with,
no text to grade); None is stored as "not applicable", never as zero. Reference-based scorers compare
``output.text`` with ``sample.references`` (several allowed).
"""

from __future__ import annotations

from collections.abc import Callable

from bedside.runs.task import Output, Sample, Task

Scorer = Callable[[Sample, Output], float | None]


def _with_references(metric: Callable[[str, list[str]], float]) -> Scorer:
    def score(sample: Sample, output: Output) -> float | None:
        if not sample.references:
            return None
        return metric(output.text, sample.references)

    return score


def _bleu(text: str, refs: list[str]) -> float:
    from bedside.metrics import sentence_bleu

    return sentence_bleu(text, refs)


def _google_bleu(text: str, refs: list[str]) -> float:
    from bedside.metrics.lexical import sentence_google_bleu

    return sentence_google_bleu(text, refs)


def _chrf(word_order: int) -> Callable[[str, list[str]], float]:
    def metric(text: str, refs: list[str]) -> float:
        from bedside.metrics import sentence_chrf

        return sentence_chrf(text, refs, word_order=word_order)

    return metric


def _rouge(kind: str) -> Callable[[str, list[str]], float]:
    def metric(text: str, refs: list[str]) -> float:
        from bedside.metrics import sentence_rouge

        return sentence_rouge(text, refs)[kind]

    return metric


def _cosine(text: str, refs: list[str]) -> float:
    from bedside.metrics import semantic_similarity

    return max(semantic_similarity([text] * len(refs), refs))


def _bertscore(text: str, refs: list[str]) -> float:
    from bedside.metrics import minilm_bertscore

    return minilm_bertscore(text, refs).f1


def _concepts(text: str, refs: list[str]) -> float:
    from bedside.metrics import MeshExtractor, concept_f1

    extractor = MeshExtractor()  # stateless; the dictionaries are loaded once per process
    scores = [concept_f1(text, ref, extractor).f1 for ref in refs]
    defined = [s for s in scores if s is not None]
    return max(defined) if defined else float("nan")


def _readability(kind: str) -> Scorer:
    def score(sample: Sample, output: Output) -> float | None:
        from bedside.text.readability import ReadabilityError, fkgl, smog

        try:
            return smog(output.text) if kind == "smog" else fkgl(output.text)
        except ReadabilityError:
            return None

    return score


def _words(sample: Sample, output: Output) -> float | None:
    return float(len(output.text.split()))


def _refusal(sample: Sample, output: Output) -> float | None:
    """1 where the answer opens by declining (see :mod:`bedside.text.refusal`), else 0: a flag next to the
    quality scores, whose mean is the refusal rate; the answer itself stays an ok output."""
    from bedside.text.refusal import is_refusal

    return 1.0 if is_refusal(output.text) else 0.0


GENERIC: dict[str, Scorer] = {
    "bleu": _with_references(_bleu),
    "google_bleu": _with_references(_google_bleu),
    "chrf": _with_references(_chrf(0)),
    "chrf++": _with_references(_chrf(2)),
    "rouge1": _with_references(_rouge("rouge1")),
    "rouge2": _with_references(_rouge("rouge2")),
    "rougeL": _with_references(_rouge("rougeL")),
    "rougeLsum": _with_references(_rouge("rougeLsum")),
    "cosine": _with_references(_cosine),
    "bertscore_minilm": _with_references(_bertscore),
    "concept_f1[mesh]": _with_references(_concepts),
    "smog": _readability("smog"),
    "fkgl": _readability("fkgl"),
    "words": _words,
    "refusal": _refusal,
}


def score_sample(task: Task, names: list[str], sample: Sample, output: Output) -> dict[str, float | None]:
    """Every named scorer's value for one output (None where it does not apply; NaN becomes None)."""
    scores: dict[str, float | None] = {}
    for name in names:
        value = GENERIC[name](sample, output) if name in GENERIC else task.score(name, sample, output)
        scores[name] = None if value is None or value != value else float(value)
    return scores


def check_scorers(task: Task, names: list[str]) -> None:
    """Fail before the run starts on a scorer name neither bedside nor the task knows."""
    known = set(GENERIC) | set(getattr(task, "scorers", ()))
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown scorer(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
