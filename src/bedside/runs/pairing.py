"""Which cells a comparison sets side by side: the one rule ``bedside compare`` and the web Compare page share.

A comparison pairs a cell of side A with a cell of side B and then pairs their samples by (sample id, epoch). The
sides are two runs, or one run twice; each side may be narrowed by a *selection*, ``model=good-1`` or
``system=rag,dataset=demo`` (fields: dataset, system, model, cell).

- **No selection** (two runs of one grid, or a run against its rerun): cells with the same id pair; when the runs
  share no cell id, each (dataset, system) that has exactly one cell on each side pairs (two single-model runs
  whose models differ).
- **With a selection** on either side: cells pair when they agree on every field neither selection names.
  ``--a model=good-1 --b model=bad-1`` in an 18-model grid pairs, for each (dataset, system), good-1's cell with
  bad-1's. Two cells of one side with the same free fields are ambiguous: an error names them.
- **Against a baseline** (``--baseline MODEL``, one run): every other model's cells against the baseline model's,
  paired as above with ``model=BASELINE`` and ``model=M``.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

SELECT_FIELDS = ("dataset", "system", "model", "cell")


@dataclass(frozen=True)
class CellKey:
    """A cell and what it is a cell of."""

    cell: str
    dataset: str
    system: str
    model: str


Selection = Mapping[str, str]


class PairingError(ValueError):
    """A selection that cannot be read, selects nothing, or pairs cells ambiguously."""


def parse_selection(text: str, option: str = "--a") -> dict[str, str]:
    """``field=value[,field=value...]`` (fields: dataset, system, model, cell) as a selection."""
    selection: dict[str, str] = {}
    for part in text.split(","):
        field, sep, value = part.partition("=")
        field, value = field.strip(), value.strip()
        if not sep or not field or not value:
            raise PairingError(f"{option} {text!r}: expected FIELD=VALUE[,FIELD=VALUE], e.g. model=good-1")
        if field not in SELECT_FIELDS:
            close = difflib.get_close_matches(field, SELECT_FIELDS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise PairingError(f"{option} {text!r}: no field {field!r}{hint}; fields: {', '.join(SELECT_FIELDS)}")
        if field in selection:
            raise PairingError(f"{option} {text!r}: {field} given twice")
        selection[field] = value
    return selection


def select(cells: Iterable[CellKey], selection: Selection | None) -> list[CellKey]:
    """The cells that match every field of ``selection`` (all of them when there is none)."""
    return [c for c in cells if all(getattr(c, f) == v for f, v in (selection or {}).items())]


def _unique(cells: Iterable[CellKey]) -> list[CellKey]:
    seen: dict[str, CellKey] = {}
    for cell in cells:
        seen.setdefault(cell.cell, cell)
    return sorted(seen.values(), key=lambda c: c.cell)


def pair_cells(
    cells_a: Iterable[CellKey],
    cells_b: Iterable[CellKey],
    a: Selection | None = None,
    b: Selection | None = None,
    *,
    same_run: bool = False,
) -> list[tuple[str, str]]:
    """(cell of A, cell of B) pairs by the module's rules; raises :class:`PairingError` when none pair or a
    selection is ambiguous or empty. Within one run (``same_run``) a cell is never paired with itself; across
    two runs the same cell id is the natural pair."""
    side_a, side_b = _unique(cells_a), _unique(cells_b)
    if not a and not b:
        ids_b = {c.cell for c in side_b}
        shared = [(c.cell, c.cell) for c in side_a if c.cell in ids_b]
        if shared:
            return shared
        return _pair_on(side_a, side_b, ("dataset", "system"), strict=False)
    chosen_a, chosen_b = select(side_a, a), select(side_b, b)
    for name, selection, chosen, every in (("--a", a, chosen_a, side_a), ("--b", b, chosen_b, side_b)):
        if selection and not chosen:
            shown = ",".join(f"{f}={v}" for f, v in selection.items())
            values = {f: sorted({getattr(c, f) for c in every}) for f in selection}
            known = "; ".join(f"{f}: {', '.join(v)}" for f, v in values.items())
            raise PairingError(f"{name} {shown}: no cell matches ({known})")
    named = set(a or {}) | set(b or {})
    free = tuple(f for f in ("dataset", "system", "model") if f not in named)
    return _pair_on(chosen_a, chosen_b, free, strict=True, same_run=same_run)


def _pair_on(
    side_a: Sequence[CellKey],
    side_b: Sequence[CellKey],
    fields: tuple[str, ...],
    *,
    strict: bool,
    same_run: bool = False,
) -> list[tuple[str, str]]:
    groups_a: dict[tuple[str, ...], list[str]] = defaultdict(list)
    groups_b: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for side, groups in ((side_a, groups_a), (side_b, groups_b)):
        for cell in side:
            groups[tuple(getattr(cell, f) for f in fields)].append(cell.cell)
    pairs = []
    for key, found in sorted(groups_a.items()):
        theirs = groups_b.get(key, [])
        if strict and (len(found) > 1 or len(theirs) > 1):
            raise PairingError(
                f"cells {', '.join(found + theirs)} share {_describe(fields, key)}: select them further "
                "(e.g. add system=... or model=...)"
            )
        if len(found) == 1 and len(theirs) == 1 and not (same_run and found[0] == theirs[0]):
            pairs.append((found[0], theirs[0]))  # within one run, never a cell with itself
    if not pairs:
        if strict:
            raise PairingError(
                "the selections pair no cells: no cell of A agrees with one of B on "
                + (", ".join(fields) or "anything")
            )
        raise PairingError(
            "the runs share no cell, and no dataset/system pair has exactly one cell in each; "
            "select cells with --a/--b (e.g. --a model=X --b model=Y)"
        )
    return pairs


def _describe(fields: tuple[str, ...], key: tuple[str, ...]) -> str:
    return ", ".join(f"{f}={v}" for f, v in zip(fields, key, strict=True)) or "every field"


def baseline_pairs(cells: Iterable[CellKey], baseline: str) -> list[tuple[str, str]]:
    """Every other model's cells against the ``baseline`` model's cells of the same dataset and system."""
    every = _unique(cells)
    models = sorted({c.model for c in every})
    if baseline not in models:
        close = difflib.get_close_matches(baseline, models, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise PairingError(f"--baseline {baseline!r}: no such model in the run{hint}; its models: {', '.join(models)}")
    pairs: list[tuple[str, str]] = []
    for model in models:
        if model == baseline:
            continue
        try:
            pairs += pair_cells(every, every, {"model": baseline}, {"model": model}, same_run=True)
        except PairingError as exc:
            if "pair no cells" not in str(exc):
                raise
    if not pairs:
        raise PairingError(f"--baseline {baseline!r}: no other model shares a dataset and system with it")
    return pairs


__all__ = [
    "SELECT_FIELDS",
    "CellKey",
    "PairingError",
    "Selection",
    "baseline_pairs",
    "pair_cells",
    "parse_selection",
    "select",
]
