"""UniEval-style scores from a local boolean-QA evaluator (a T5 checkpoint directory), written for bedside.

UniEval (Zhong et al. 2022) turns each quality dimension into a yes/no question to a T5 model fine-tuned to
answer them; a dimension's score is P("Yes") / (P("Yes") + P("No")) of the *first* decoder token, so in [0, 1].
No maintained package exists, so bedside computes it over ``transformers`` from a checkpoint directory on disk
(``local_files_only``: nothing is downloaded). The dimensions follow the paper-era summarization evaluator that
MedAlign used (source-augmented: the source is what the caller passes, the instruct task's BM25 record snippets):

- relevance: the whole output, with the source and the reference;
- coherence: the whole output, with the source;
- consistency: each sentence of the output (bedside's splitter) with the source, averaged over sentences;
- fluency: each sentence of the output alone, averaged over sentences;
- overall: the mean of the four.

An output with no sentence (empty) is asked about as one empty sentence, so every dimension is defined. The
questions are the templates ``metrics/unieval_<dimension>.j2`` (bedside's own wording, overridable through
``BEDSIDE_PROMPTS``; a checkpoint answers best in the wording it was trained on, so put that in an override to
reproduce published numbers). Names carry the checkpoint folder: ``unieval[<dir>]:relevance``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from bedside.metrics.learned import checkpoint_name, require_learned
from bedside.prompts import render
from bedside.text.sentences import split_sentences

DIMENSIONS = ("relevance", "fluency", "coherence", "consistency")
PER_SENTENCE = frozenset({"fluency", "consistency"})
ANSWERS = ("Yes", "No")


def template(dimension: str) -> str:
    return f"metrics/unieval_{dimension}.j2"


class UniEval:
    """A boolean-QA evaluator loaded from ``checkpoint`` (a directory with the model and its tokenizer)."""

    def __init__(self, checkpoint: str | Path, *, batch_size: int = 8, max_length: int = 1024) -> None:
        require_learned("unieval", checkpoint)
        import torch
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        path = str(checkpoint)
        self.name = f"unieval[{checkpoint_name(checkpoint)}]"
        self.batch_size = batch_size
        self.max_length = max_length
        self._torch: Any = torch
        self._tokenizer: Any = AutoTokenizer.from_pretrained(path, local_files_only=True)
        # a GPU when there is one: per-sentence questions make thousands of forward passes on a real evaluation
        self._device = "cuda" if torch.cuda.is_available() else "cpu"
        model = AutoModelForSeq2SeqLM.from_pretrained(path, local_files_only=True)
        self._model: Any = model.to(self._device).eval()
        self._answer_ids = tuple(self._first_token(word) for word in ANSWERS)
        start = self._model.config.decoder_start_token_id
        self._start = self._model.config.pad_token_id if start is None else start

    def _first_token(self, word: str) -> int:
        ids = self._tokenizer(word, add_special_tokens=False)["input_ids"]
        if not ids:
            raise ValueError(f"the evaluator's tokenizer gives no token for the answer {word!r}")
        return int(ids[0])

    def yes_probabilities(self, questions: Sequence[str]) -> list[float]:
        """P(Yes) / (P(Yes) + P(No)) of the first decoder token, for each rendered question."""
        torch = self._torch
        yes, no = self._answer_ids
        out: list[float] = []
        with torch.no_grad():
            for begin in range(0, len(questions), self.batch_size):
                batch = self._tokenizer(
                    list(questions[begin : begin + self.batch_size]),
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                batch = batch.to(self._device)
                rows = batch["input_ids"].shape[0]
                decoder = torch.full((rows, 1), self._start, dtype=torch.long, device=self._device)
                logits = self._model(
                    input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], decoder_input_ids=decoder
                ).logits[:, 0, :]
                # softmax over the vocabulary, then renormalised over the two answers: a logistic of their gap
                out.extend(float(p) for p in torch.sigmoid(logits[:, yes] - logits[:, no]).tolist())
        return out

    def score(
        self, outputs: Sequence[str], sources: Sequence[str], references: Sequence[str]
    ) -> list[dict[str, float]]:
        """Per output: each dimension and ``overall`` (the mean of the four)."""
        if not len(outputs) == len(sources) == len(references):
            raise ValueError("outputs, sources and references must have the same length")
        questions: list[str] = []
        owners: list[tuple[int, str]] = []
        for index, (output, source, reference) in enumerate(zip(outputs, sources, references, strict=True)):
            sentences = [s.text for s in split_sentences(output)] or [output]
            for dimension in DIMENSIONS:
                for text in sentences if dimension in PER_SENTENCE else [output]:
                    questions.append(render(template(dimension), output=text, source=source, reference=reference))
                    owners.append((index, dimension))
        collected: list[dict[str, list[float]]] = [{d: [] for d in DIMENSIONS} for _ in outputs]
        for (index, dimension), probability in zip(owners, self.yes_probabilities(questions), strict=True):
            collected[index][dimension].append(probability)
        return [_with_overall({d: fmean(values[d]) for d in DIMENSIONS}) for values in collected]


def _with_overall(scores: Mapping[str, float]) -> dict[str, float]:
    return {**scores, "overall": fmean(scores[d] for d in DIMENSIONS)}
