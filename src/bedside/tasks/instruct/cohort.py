"""The records behind a set of instructions, described as MedAlign's Tables S4 and S5 describe its 276 EHRs.

Each distinct record counts once, however many instructions it serves (the paper's tables are per patient; an
EHR can serve several instructions). A record is identified by where it came from and its patient id.

- Table S4 (demographics): patients per sex, age band (at the record's time anchor, its latest event), race and
  ethnicity, with the values :func:`.subgroups.demographics` gives.
- Table S5 (EHR statistics): the records' lengths in a stated tokenizer and view (the paper does not name its
  tokenizer): how many are within 1,024, 2,048, 4,096 and 32,000 tokens, the median, the interquartile range
  (Q3 − Q1, as one number, as the paper gives it), the range, and the totals of tokens and characters; and per
  record the medians of codes, visits, notes and measurements. bedside's choice for "codes": the coded items of
  the record (conditions, measurements, medications and procedures), since the paper does not define it.
  Quartiles are numpy's linear interpolation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bedside.tasks.instruct.cases import Instruction
from bedside.tasks.instruct.ehr import EHR, RecordNotFoundError, load_ehr
from bedside.tasks.instruct.subgroups import ATTRIBUTES, demographics
from bedside.text.tokens import Tokenizer

THRESHOLDS = (1024, 2048, 4096, 32000)


def distinct_records(
    instructions: Sequence[Instruction], records: str | None
) -> tuple[dict[tuple[str, str], EHR], dict[str, str]]:
    """(source, patient id) → record for every instruction's record; and instruction id → why its record could not
    be loaded, for those that could not (reported, never silently dropped)."""
    found: dict[tuple[str, str], EHR] = {}
    missing: dict[str, str] = {}
    for instruction in instructions:
        try:
            ehr = load_ehr(instruction, records)
        except (RecordNotFoundError, ValueError, OSError) as exc:
            missing[instruction.id] = str(exc)
            continue
        found.setdefault((ehr.source, ehr.record.patient.id), ehr)
    return found, missing


@dataclass(frozen=True)
class Demographics:
    patients: int
    counts: dict[str, dict[str, int]]  # attribute -> value -> patients, values by count then name


def demographics_table(ehrs: Sequence[EHR]) -> Demographics:
    """Table S4: patients per value of each attribute."""
    values = [demographics(ehr) for ehr in ehrs]
    counts = {}
    for attribute in ATTRIBUTES:
        counted = Counter(v[attribute] for v in values)
        counts[attribute] = dict(sorted(counted.items(), key=lambda item: (-item[1], item[0])))
    return Demographics(len(values), counts)


@dataclass(frozen=True)
class RecordStatistics:
    records: int
    tokenizer: str
    view: str
    within: dict[int, int]  # tokens -> records of at most that many tokens
    median: float
    q1: float
    q3: float
    iqr: float
    minimum: int
    maximum: int
    total_tokens: int
    total_characters: int
    median_codes: float
    median_visits: float
    median_notes: float
    median_measurements: float


def record_statistics(ehrs: Sequence[EHR], tokenizer: Tokenizer, *, view: str = "paper") -> RecordStatistics:
    """Table S5 over ``ehrs`` in ``tokenizer``'s tokens of the ``view`` text (see the module docstring)."""
    if not ehrs:
        raise ValueError("no records to describe")
    lengths = np.array([ehr.tokens(view, tokenizer) for ehr in ehrs], dtype=float)
    q1, median, q3 = (float(v) for v in np.quantile(lengths, [0.25, 0.5, 0.75]))
    records = [ehr.record for ehr in ehrs]

    def median_of(counts: Sequence[int]) -> float:
        return float(np.median(np.asarray(counts, dtype=float)))

    return RecordStatistics(
        records=len(ehrs),
        tokenizer=tokenizer.name,
        view=view,
        within={t: int((lengths <= t).sum()) for t in THRESHOLDS},
        median=median,
        q1=q1,
        q3=q3,
        iqr=q3 - q1,
        minimum=int(lengths.min()),
        maximum=int(lengths.max()),
        total_tokens=int(lengths.sum()),
        total_characters=sum(len(ehr.text(view)) for ehr in ehrs),
        median_codes=median_of(
            [len(r.conditions) + len(r.measurements) + len(r.medications) + len(r.procedures) for r in records]
        ),
        median_visits=median_of([len(r.encounters) for r in records]),
        median_notes=median_of([len(r.notes) for r in records]),
        median_measurements=median_of([len(r.measurements) for r in records]),
    )
