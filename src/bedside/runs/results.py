"""A run's results as a table for analysis: ``bedside.runs.load(run) -> pandas.DataFrame``.

One row per (cell, sample, epoch), flattened: the cell's ``dataset``, ``system`` and ``model``, ``sample_id``,
``epoch``, ``status`` (``ok`` | ``error``), ``error`` (the cause, for an error), ``text`` (the output's text),
each score as ``score.<metric>`` (NaN where the scorer did not apply or its component failed: absent, never
0), each stratum as ``stratum.<key>``, and each role's usage as ``usage.<role>.<count>``. Nested outputs
(transcripts, judgements) stay in the store: ``bedside show`` and ``bedside export --format jsonl`` give them.

``df.to_parquet(path)`` writes the same table as flat Parquet. Needs pandas (the ``export`` extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from bedside.runs.store import ResultRow, Store

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_STORE = "runs/bedside.sqlite"


def _flat(row: ResultRow) -> dict[str, Any]:
    flat: dict[str, Any] = {
        "run_id": row.run_id,
        "cell": row.cell,
        "dataset": row.dataset,
        "system": row.system,
        "model": row.model,
        "sample_id": row.sample_id,
        "epoch": row.epoch,
        "status": row.status,
        "error": row.error,
        "text": (row.output or {}).get("text"),
    }
    flat.update({f"score.{name}": (float("nan") if v is None else float(v)) for name, v in row.scores.items()})
    flat.update({f"stratum.{key}": value for key, value in row.strata.items()})
    for role, counts in (row.usage or {}).items():
        if isinstance(counts, dict):
            flat.update({f"usage.{role}.{name}": value for name, value in counts.items()})
    return flat


def load(run: str, store: str | Path | Store = DEFAULT_STORE) -> pd.DataFrame:
    """The results of ``run`` (an id or a unique prefix) in ``store`` (a path, URL or open :class:`Store`)."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("bedside.runs.load needs pandas (pip install 'bedside[export]')") from None
    opened = store if isinstance(store, Store) else Store(str(store))
    try:
        rows = opened.results(opened.run(run)["id"])
    finally:
        if opened is not store:
            opened.close()
    frame = pd.DataFrame([_flat(row) for row in rows])
    scores = sorted(c for c in frame.columns if c.startswith("score."))
    for column in scores:  # a score absent from some rows is NaN, never a mixed object column
        frame[column] = frame[column].astype("float64")
    return frame
