"""Scorers by name: the generic text metrics any task can use, and the task's own.

A scorer maps (sample, output) to a number, or to None when it does not apply (no reference to compare with,
no text to grade); None is stored as "not applicable", never as zero. Generic reference-based scorers compare
``output.text`` with ``sample.references`` (several allowed).

**Resolution, one rule.** A name the task declares in its ``scorers`` is the task's scorer, even when bedside has a
generic scorer of the same name (the task knows which text the metric should read: sensemaking's ``smog`` grades
the sensemaker's messages only, where the generic one would grade the whole rendered conversation; discharge's
``rougeL`` compares the written summary with the case's reference summary, where the generic one finds no
references). Any other name is bedside's generic scorer. A task that takes over a generic name must say what its
scorer reads, in ``scorer_texts``; one that does not is ambiguous, and :func:`resolve_scorers` refuses it before a
run starts (``bedside config check`` and ``bedside run``). Every resolution is visible: config check and the
report's methods note print, per name, whose implementation runs and what text it scores.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

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


def _meteor(text: str, refs: list[str]) -> float:
    from bedside.metrics.lexical import sentence_meteor

    return sentence_meteor(text, refs)


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


def _exact_match(sample: Sample, output: Output) -> float | None:
    from bedside.metrics.classification import exact_match

    return exact_match(output.text, sample.references)


GENERIC: dict[str, Scorer] = {
    "bleu": _with_references(_bleu),
    "google_bleu": _with_references(_google_bleu),
    "meteor": _with_references(_meteor),
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
    "exact_match": _exact_match,
}


_REFERENCE_TEXT = "the output text against the sample's references"
GENERIC_TEXTS: dict[str, str] = {
    "bleu": f"sentence BLEU (sacrebleu) of {_REFERENCE_TEXT}",
    "google_bleu": f"GoogleBLEU of {_REFERENCE_TEXT}",
    "meteor": f"METEOR (nltk, WordNet 3.0 synonyms) of {_REFERENCE_TEXT}",
    "chrf": f"chrF of {_REFERENCE_TEXT}",
    "chrf++": f"chrF++ of {_REFERENCE_TEXT}",
    "rouge1": f"ROUGE-1 F1 of {_REFERENCE_TEXT}",
    "rouge2": f"ROUGE-2 F1 of {_REFERENCE_TEXT}",
    "rougeL": f"ROUGE-L F1 of {_REFERENCE_TEXT}",
    "rougeLsum": f"ROUGE-Lsum F1 of {_REFERENCE_TEXT}",
    "cosine": f"MiniLM cosine of {_REFERENCE_TEXT} (best reference)",
    "bertscore_minilm": f"BERTScore-style F1 (MiniLM) of {_REFERENCE_TEXT}",
    "concept_f1[mesh]": f"MeSH concept F1 of {_REFERENCE_TEXT} (best reference)",
    "smog": "SMOG grade of the whole output text",
    "fkgl": "Flesch-Kincaid grade of the whole output text",
    "words": "whitespace words in the output text",
    "refusal": "1 where the output text opens by declining, else 0 (a flag; the rate is its mean)",
    "exact_match": "1 where the output text equals a reference after normalising case, spaces and edge "
    "punctuation, else 0 (accuracy is its mean)",
}
"""What each generic scorer reads: printed by config check and the report's methods note."""


@dataclass(frozen=True)
class ScorerResolution:
    """Which implementation a scorer name runs, and what it scores."""

    name: str
    implementation: str  # "bedside" (generic) or the task's name
    text: str
    overrides_generic: bool = False
    better: str = "higher"
    """Which way is better: "higher", "lower", or "" for a count with no better direction (``words``)."""

    def line(self) -> str:
        """One line for config check and the methods note, e.g. ``smog: sensemaking, SMOG over ...; lower is
        better``."""
        taken = " (the task's own, over bedside's generic one)" if self.overrides_generic else ""
        direction = f"; {self.better} is better" if self.better else ""
        return f"{self.name}: {self.implementation}{taken}, {self.text}{direction}"


GENERIC_LOWER_IS_BETTER = frozenset({"smog", "fkgl", "refusal"})
"""Generic metrics where lower is better: a reading grade for patients, a refusal rate."""
NO_DIRECTION = frozenset({"words"})


def direction(task: Task, name: str) -> str:
    """ "higher", "lower" (the task's ``lower_is_better`` names, and the generic ones) or "" (a plain count)."""
    base = name.split("[", 1)[0]
    if base in NO_DIRECTION or name in getattr(task, "no_direction", ()):
        return ""
    lower = set(getattr(task, "lower_is_better", ())) | GENERIC_LOWER_IS_BETTER
    return "lower" if base in lower or name in lower else "higher"


def _task_scorers(task: Task) -> tuple[str, ...]:
    return tuple(getattr(task, "scorers", ()))


def resolve_scorers(task: Task, names: Sequence[str]) -> list[ScorerResolution]:
    """Each name's implementation under the module's rule; ValueError on an unknown or ambiguous name."""
    own = set(_task_scorers(task))
    texts: Mapping[str, str] = getattr(task, "scorer_texts", {}) or {}
    task_name = str(getattr(task, "name", "the task"))
    unknown = [n for n in names if n not in own and n not in GENERIC]
    if unknown:
        known = own | set(GENERIC)
        raise ValueError(f"unknown scorer(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    ambiguous = [n for n in names if n in own and n in GENERIC and n not in texts]
    if ambiguous:
        raise ValueError(
            f"scorer name(s) {', '.join(ambiguous)} are both bedside's generic scorers and task {task_name!r}'s own, "
            "and the task does not say what its scorer reads (scorer_texts): rename the task's scorer or describe it"
        )
    out = []
    for name in dict.fromkeys(names):
        if name in own:
            text = texts.get(name, f"{task_name}'s own scorer")
            out.append(
                ScorerResolution(name, task_name, text, overrides_generic=name in GENERIC, better=direction(task, name))
            )
        else:
            out.append(ScorerResolution(name, "bedside", GENERIC_TEXTS[name], better=direction(task, name)))
    return out


_EMBEDDED: dict[str, Callable[[Sample, Output], list[str]]] = {
    "cosine": lambda sample, output: [output.text, *sample.references] if sample.references else [],
}
"""Per generic scorer that reads MiniLM sentence vectors: the texts it embeds for one sample."""


def prepare_scoring(task: Task, names: Sequence[str], batch: Sequence[tuple[Sample, Output]]) -> None:
    """Before a batch of samples is scored: every text its MiniLM scorers will embed, embedded at once
    (deduplicated, sorted by length, in batches of 64) and kept by the shared embedder, so that each sample's
    scorer then finds its vectors instead of running the model on two texts at a time (issue 45)."""
    own = set(_task_scorers(task))
    wanted = [_EMBEDDED[name] for name in names if name in _EMBEDDED and name not in own]
    if not wanted or not batch:
        return
    texts = dict.fromkeys(text for sample, output in batch for texts_of in wanted for text in texts_of(sample, output))
    from bedside.retrieval.embeddings import default_embedder

    default_embedder().embed(list(texts))


def score_sample(task: Task, names: list[str], sample: Sample, output: Output) -> dict[str, float | None]:
    """Every named scorer's value for one output (None where it does not apply; NaN becomes None), each name
    resolved by the module's rule: the task's own scorer first, then bedside's generic one."""
    own = set(_task_scorers(task))
    scores: dict[str, float | None] = {}
    for name in names:
        value = (
            task.score(name, sample, output) if name in own or name not in GENERIC else GENERIC[name](sample, output)
        )
        scores[name] = None if value is None or value != value else float(value)
    return scores


def unavailable(name: str) -> str | None:
    """Why bedside's generic scorer ``name`` cannot run on this machine (the metric catalog's check: a missing
    extra, WordNet not found), or None."""
    from bedside.metrics.catalog import CATALOG

    info = next((info for info in CATALOG if info.scorer == name), None)
    return info.availability() if info is not None else None


def check_scorers(task: Task, names: list[str]) -> list[ScorerResolution]:
    """Fail before the run starts on a scorer name neither bedside nor the task knows, one both define where the
    task does not say what its scorer reads, or a generic scorer that cannot run on this machine (a missing extra,
    WordNet's files not found: every sample would fail its scoring the same way); the resolution of every name
    otherwise."""
    resolved = resolve_scorers(task, names)
    missing = [
        f"{r.name} ({reason})" for r in resolved if r.implementation == "bedside" and (reason := unavailable(r.name))
    ]
    if missing:
        raise ValueError(f"scorer(s) that cannot run on this machine: {'; '.join(missing)}")
    return resolved
