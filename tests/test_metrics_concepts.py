"""Concept F1 over MeSH concepts (offline dictionaries), user term lists and a QuickUMLS index."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from bedside.metrics import MeshExtractor, QuickUMLSExtractor, TermListExtractor, concept_f1, mean_concept_f1


@pytest.fixture(scope="module")
def mesh() -> MeshExtractor:
    return MeshExtractor()


def test_mesh_finds_diseases_and_drugs_by_id(mesh: MeshExtractor) -> None:
    found = mesh.extract("History of hypertension and asthma; takes metformin.")
    assert sorted(c.name for c in found) == ["Asthma", "Hypertension", "Metformin"]
    assert all(c.id.startswith("MeSH:D") for c in found)
    # Synonyms resolve to the same concept.
    assert {c.id for c in mesh.extract("high blood pressure")} == {c.id for c in found if c.name == "Hypertension"}


def test_longest_match_wins_and_brands_resolve_to_generics(mesh: MeshExtractor) -> None:
    names = {c.name for c in mesh.extract("Type 2 diabetes mellitus, on Tylenol.")}
    assert names == {"Diabetes Mellitus, Type 2", "Acetaminophen"}
    tylenol = {c.id for c in mesh.extract("Tylenol")}
    assert tylenol == {c.id for c in mesh.extract("acetaminophen")}


def test_concept_f1_by_hand(mesh: MeshExtractor) -> None:
    # hypothesis: hypertension, asthma, metformin; reference: hypertension, metformin, pneumonia.
    score = concept_f1(
        "Hypertension and asthma; continue metformin.",
        "Hypertension; metformin; recent pneumonia.",
        mesh,
    )
    assert score.precision == pytest.approx(2 / 3)
    assert score.recall == pytest.approx(2 / 3)
    assert score.f1 == pytest.approx(2 / 3)
    assert len(score.hypothesis & score.reference) == 2


def test_no_concepts_on_either_side_is_undefined_not_perfect(mesh: MeshExtractor) -> None:
    empty = concept_f1("See you on Tuesday.", "Thanks for your message.", mesh)
    assert empty.f1 is None
    one_sided = concept_f1("See you on Tuesday.", "Your asthma is stable.", mesh)
    assert (one_sided.precision, one_sided.recall, one_sided.f1) == (0.0, 0.0, 0.0)
    mean, undefined = mean_concept_f1(
        ["See you on Tuesday.", "Asthma is stable."], ["Thanks.", "Your asthma is stable."], mesh
    )
    assert (mean, undefined) == (1.0, 1)


def test_term_list_extractor(tmp_path: Path) -> None:
    terms = tmp_path / "icd10cm.tsv"
    terms.write_text(
        "# code<TAB>term\nI10\tEssential hypertension\nI10\thypertension\nE11.9\tType 2 diabetes mellitus\n"
        "E11\tdiabetes mellitus\n",
        encoding="utf-8",
    )
    icd = TermListExtractor(terms, name="icd10cm")
    assert icd.name == "icd10cm"
    found = [(c.id, c.text) for c in icd.extract("Essential hypertension and type 2 diabetes mellitus.")]
    assert found == [("ICD10CM:I10", "essential hypertension"), ("ICD10CM:E11.9", "type 2 diabetes mellitus")]
    assert concept_f1("hypertension", "essential hypertension", icd).f1 == 1.0


def test_term_list_errors_name_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "terms.tsv"
    bad.write_text("I10\thypertension\nno tab here\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"terms.tsv, line 2: expected 'code<TAB>term'"):
        TermListExtractor(bad, name="x")


def test_quickumls_adapter_uses_the_best_candidate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: dict[str, Any] = {}

    class FakeQuickUMLS:
        def __init__(self, path: str, **options: Any) -> None:
            calls["init"] = (path, options)

        def match(self, text: str, best_match: bool, ignore_syntax: bool) -> list[list[dict[str, Any]]]:
            return [
                [
                    {"cui": "C0020538", "term": "hypertension", "ngram": "hypertension"},
                    {"cui": "C0020540", "term": "hypertension, malignant", "ngram": "hypertension"},
                ],
                [],
            ]

    monkeypatch.setitem(sys.modules, "quickumls", types.SimpleNamespace(QuickUMLS=FakeQuickUMLS))
    extractor = QuickUMLSExtractor(tmp_path, threshold=0.9, semantic_types=["T047"])
    assert [c.id for c in extractor.extract("hypertension")] == ["UMLS:C0020538"]
    assert calls["init"] == (str(tmp_path), {"threshold": 0.9, "window": 5, "accepted_semtypes": {"T047"}})
