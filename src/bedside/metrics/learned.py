"""Learned metrics that need a model checkpoint the user has on disk: COMET and LENS (with a source), BLEURT,
and UniEval (:mod:`bedside.metrics.unieval`).

bedside never downloads a checkpoint. Each function takes a local checkpoint path; without the optional package
or the checkpoint, :func:`learned_unavailable` gives the reason and the metric is *absent* from results (never
scored as zero). Names carry the checkpoint (``comet[wmt22-comet-da]``) because scores from different checkpoints
are not comparable. Optional packages (extras): ``unbabel-comet`` (``comet``, module ``comet``),
``bleurt-pytorch`` (``bleurt``), ``lens-metric`` (``lens``, module ``lens``), ``bert-score`` (``bertscore``), and
transformers with torch (``unieval``).
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Sequence
from pathlib import Path

from bedside.metrics.lexical import MetricUnavailableError

# kind -> (modules it imports, the bedside extra that installs them)
PACKAGES: dict[str, tuple[tuple[str, ...], str]] = {
    "comet": (("comet",), "comet"),
    "bleurt": (("bleurt_pytorch",), "bleurt"),
    "lens": (("lens",), "lens"),
    "unieval": (("torch", "transformers"), "unieval"),
    "bertscore": (("bert_score",), "bertscore"),
}
_DIRECTORY = {"bleurt", "unieval", "bertscore"}  # checkpoints that are model directories, not one file
_DISTRIBUTIONS = {"comet": "unbabel-comet", "lens": "lens-metric", "bleurt_pytorch": "bleurt-pytorch"}
"""PyPI names where they differ from the module's (what a user would search for or pip-install alone)."""


def learned_unavailable(kind: str, checkpoint: str | Path | None) -> str | None:
    """None when ``kind`` (a key of :data:`PACKAGES`) can run with ``checkpoint`` now, else why not."""
    if kind not in PACKAGES:
        raise ValueError(f"unknown learned metric {kind!r}; known: {', '.join(PACKAGES)}")
    modules, extra = PACKAGES[kind]
    for module in modules:
        if importlib.util.find_spec(module) is None:
            package = _DISTRIBUTIONS.get(module, module.replace("_", "-"))
            return f"{kind} unavailable: the {package} package is not installed (pip install 'bedside[{extra}]')"
    what = "checkpoint directory" if kind in _DIRECTORY else "checkpoint"
    if checkpoint is None:
        return f"{kind} unavailable: no local {what} given (bedside downloads nothing)"
    path = Path(checkpoint)
    if not path.exists() or (kind in _DIRECTORY and not path.is_dir()):
        return f"{kind} unavailable: no local {what} at {path} (bedside downloads nothing)"
    return None


def checkpoint_name(checkpoint: str | Path) -> str:
    """What a checkpoint is called in metric names: its file or folder name without ``.ckpt``; a file inside a
    ``checkpoints`` folder (COMET's and LENS's layout, ``wmt22-comet-da/checkpoints/model.ckpt``) is named by the
    folder above it."""
    path = Path(checkpoint)
    if path.parent.name == "checkpoints" and path.parent.parent.name:
        return path.parent.parent.name
    return path.name.removesuffix(".ckpt")


def metric_name(kind: str, checkpoint: str | Path) -> str:
    return f"{kind}[{checkpoint_name(checkpoint)}]"


def require_learned(kind: str, checkpoint: str | Path) -> None:
    """Raise :class:`MetricUnavailableError` with the reason when ``kind`` cannot run with ``checkpoint``."""
    reason = learned_unavailable(kind, checkpoint)
    if reason:
        raise MetricUnavailableError(reason)


def comet_scores(
    hypotheses: Sequence[str], references: Sequence[str], sources: Sequence[str], checkpoint: str | Path
) -> list[float]:
    require_learned("comet", checkpoint)
    from comet import load_from_checkpoint

    model = load_from_checkpoint(str(checkpoint))
    data = [{"src": s, "mt": h, "ref": r} for h, r, s in zip(hypotheses, references, sources, strict=True)]
    return [float(x) for x in model.predict(data, batch_size=8, gpus=_gpus(), progress_bar=False).scores]


def bleurt_scores(hypotheses: Sequence[str], references: Sequence[str], checkpoint: str | Path) -> list[float]:
    require_learned("bleurt", checkpoint)
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


def _gpus() -> int:
    """One GPU when torch sees one (COMET and LENS run through PyTorch Lightning, which takes a count), else CPU."""
    import torch

    return 1 if torch.cuda.is_available() else 0


def lens_scores(
    hypotheses: Sequence[str], complex_texts: Sequence[str], references: Sequence[str], checkpoint: str | Path
) -> list[float]:
    """LENS (lens-metric, rescaled to 0-100 as its authors report it) of each output against its reference, with
    ``complex_texts`` as LENS's "complex" input (the text that was simplified: the caller decides what stands for
    it and names the choice). ``checkpoint`` is the local ``.ckpt`` file; LENS lower-cases every input itself."""
    require_learned("lens", checkpoint)
    from lens import LENS

    model = LENS(str(checkpoint), rescale=True)
    parameters = inspect.signature(model.score).parameters
    # Older releases take ``gpus`` (0 = CPU); later ones take ``devices``, left to the package's default.
    device = {"gpus": _gpus()} if "gpus" in parameters else {}
    scores = model.score(list(complex_texts), list(hypotheses), [[r] for r in references], batch_size=8, **device)
    return [float(x) for x in scores]
