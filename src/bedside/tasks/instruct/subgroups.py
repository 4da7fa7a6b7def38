"""Correctness by patient subgroup (MedAlign Appendix E, Table S4): demographics and χ² audits.

Demographics come from the record's patient (sex or gender, race, ethnicity) and the age at the record's time
anchor (its latest event), in the paper's bands 0-17, 18-24, 25-34, 35-44, 45-64, 65-84, 85+. For each model, every
pair of values of one attribute gets a 2×2 χ² test of correct vs incorrect (the paper reports pairwise results:
"Asian vs White"), Bonferroni-adjusted over that model's pairs for the attribute — the family size, which the
paper does not state, is reported with each result. Responses about the same patient are not independent (an
EHR can serve several instructions); the paper ignores this and so does the test, which the output says.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from bedside.stats import bonferroni, chi_square
from bedside.tasks.instruct.ehr import EHR
from bedside.tasks.instruct.labels import ResponseLabel

ATTRIBUTES = ("sex", "race", "ethnicity", "age")
AGE_BANDS = ((0, 17), (18, 24), (25, 34), (35, 44), (45, 64), (65, 84), (85, 200))
DEPENDENCE_NOTE = (
    "responses about the same patient are not independent (one record can serve several instructions); "
    "the test treats them as independent, as the paper did"
)


def age_band(age: int) -> str:
    for low, high in AGE_BANDS:
        if low <= age <= high:
            return f"{low}+" if high == 200 else f"{low}-{high}"
    raise ValueError(f"age {age} is negative")


def demographics(ehr: EHR) -> dict[str, str]:
    patient = ehr.record.patient
    values = {
        "sex": (patient.sex or patient.gender or "unknown").lower(),
        "race": patient.race or "Unknown",
        "ethnicity": patient.ethnicity or "Unknown",
    }
    anchor = ehr.as_of
    age = patient.age_at(anchor) if anchor is not None else None
    values["age"] = age_band(age) if age is not None else "unknown"
    return values


@dataclass(frozen=True)
class SubgroupTest:
    model: str
    a: str
    b: str
    n_a: int
    n_b: int
    correct_a: float
    correct_b: float
    chi2: float
    p_value: float
    p_bonferroni: float
    family: int  # tests in this model's Bonferroni family


def audit(labels: Sequence[ResponseLabel], groups: Mapping[str, str]) -> list[SubgroupTest]:
    """Pairwise χ² of correctness between subgroups, per model; ``groups`` maps instruction id -> subgroup."""
    cells: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for label in labels:
        if label.instruction_id in groups:
            cells[label.model][groups[label.instruction_id]].append(label.correct)
    results: list[SubgroupTest] = []
    for model in sorted(cells):
        by_group = cells[model]
        pairs = [
            (a, b)
            for a, b in combinations(sorted(by_group), 2)
            if len(set(by_group[a]) | set(by_group[b])) > 1  # a table with an empty column has no χ²
        ]
        raw = []
        for a, b in pairs:
            table = [[sum(v), len(v) - sum(v)] for v in (by_group[a], by_group[b])]
            raw.append(chi_square(table))
        adjusted = bonferroni([r.p_value for r in raw])
        for (a, b), test, p in zip(pairs, raw, adjusted, strict=True):
            va, vb = by_group[a], by_group[b]
            results.append(
                SubgroupTest(
                    model,
                    a,
                    b,
                    len(va),
                    len(vb),
                    sum(va) / len(va),
                    sum(vb) / len(vb),
                    test.statistic,
                    test.p_value,
                    p,
                    len(pairs),
                )
            )
    return results
