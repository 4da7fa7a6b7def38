"""High agreement and a low κ are explained, not left to look like a bug (issue 46 item 6)."""

from __future__ import annotations

from bedside.stats.reliability import nominal_agreement


def test_high_agreement_with_one_dominant_category_notes_the_prevalence_paradox() -> None:
    # 42 pairwise labels: both raters prefer model A on 34, disagree on 8 (A/B both ways); A wins 38 of 42 labels.
    units = [{"r1": "A", "r2": "A"}] * 34 + [{"r1": "A", "r2": "B"}] * 4 + [{"r1": "B", "r2": "A"}] * 4
    found = {e.name: e for e in nominal_agreement("preference", [[u] for u in units], ["r1", "r2"])}
    agreement = found["preference: percent agreement"]
    kappa = found["preference: Cohen's κ"]
    assert agreement.value is not None
    assert kappa.value is not None
    assert agreement.value > 0.8
    assert kappa.value < 0.1
    assert kappa.note == (
        "agreement 81% but 90% of labels are 'A': chance agreement is high, and this statistic discounts it "
        "(the prevalence paradox); read both"
    )
    assert agreement.note == ""
    balanced = [{"r1": "A", "r2": "A"}] * 20 + [{"r1": "B", "r2": "B"}] * 20 + [{"r1": "A", "r2": "B"}] * 2
    assert all(not e.note for e in nominal_agreement("p", [[u] for u in balanced], ["r1", "r2"]))
