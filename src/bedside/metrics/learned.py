"""Learned metrics that need a model checkpoint the user has on disk: COMET (with a source) and BLEURT.

bedside never downloads a checkpoint. Each function takes a local checkpoint path; without the optional package
or the checkpoint, :func:`learned_unavailable` gives the reason and the metric is *absent* from results (never
scored as zero). Names carry the checkpoint (``comet[wmt22-comet-da]``) because scores from different checkpoints
are not comparable. Optional packages: ``unbabel-comet`` (module ``comet``) and ``bleurt-pytorch``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

from bedside.metrics.lexical import MetricUnavailableError

PACKAGES = {"comet": ("comet", "unbabel-comet"), "bleurt": ("bleurt_pytorch", "bleurt-pytorch")}


def learned_unavailable(kind: str, checkpoint: str | Path | None) -> str | None:
    """None when ``kind`` (comet or bleurt) can run with ``checkpoint`` now, else why not."""
    if kind not in PACKAGES:
        raise ValueError(f"unknown learned metric {kind!r}; known: {', '.join(PACKAGES)}")
    module, package = PACKAGES[kind]
    if importlib.util.find_spec(module) is None:
        return f"{kind} unavailable: the {package} package is not installed (pip install {package})"
    if checkpoint is None or not Path(checkpoint).exists():
        return f"{kind} unavailable: no local checkpoint (give the path of one; bedside downloads nothing)"
    return None


def metric_name(kind: str, checkpoint: str | Path) -> str:
    return f"{kind}[{Path(checkpoint).name.removesuffix('.ckpt')}]"


def comet_scores(
    hypotheses: Sequence[str], references: Sequence[str], sources: Sequence[str], checkpoint: str | Path
) -> list[float]:
    reason = learned_unavailable("comet", checkpoint)
    if reason:
        raise MetricUnavailableError(reason)
    from comet import load_from_checkpoint

    model = load_from_checkpoint(str(checkpoint))
    data = [{"src": s, "mt": h, "ref": r} for h, r, s in zip(hypotheses, references, sources, strict=True)]
    return [float(x) for x in model.predict(data, batch_size=8, gpus=0, progress_bar=False).scores]


def bleurt_scores(hypotheses: Sequence[str], references: Sequence[str], checkpoint: str | Path) -> list[float]:
    reason = learned_unavailable("bleurt", checkpoint)
    if reason:
        raise MetricUnavailableError(reason)
    import torch
    from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer

    tokenizer = BleurtTokenizer.from_pretrained(str(checkpoint), local_files_only=True)
    model = BleurtForSequenceClassification.from_pretrained(str(checkpoint), local_files_only=True).eval()
    scores: list[float] = []
    with torch.no_grad():
        for start in range(0, len(hypotheses), 16):
            batch = tokenizer(
                list(references[start : start + 16]),
                list(hypotheses[start : start + 16]),
                padding="longest",
                truncation=True,
                max_length=512,
                return_tensors="pt",
            )
            scores.extend(float(x) for x in model(**batch).logits.flatten().tolist())
    return scores
