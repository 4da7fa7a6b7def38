"""Concept F1: overlap of the medical concepts two texts mention, by concept identifier.

The papers' UMLS-F1 (DischargeSim) and MEDCON (ArchEHR-QA) extract UMLS concepts with QuickUMLS, which needs a
licensed UMLS release. bedside ships an offline stand-in and names every score for the extractor behind it:

- ``concept_f1[mesh]`` — the MeSH disease and drug dictionaries of ``medical-named-entity-recognition`` and
  ``drug-named-entity-recognition`` (extra ``concepts``; installed by ``make``). Exact, case-insensitive
  dictionary matches over word tokens; where matches overlap, only the longest is kept ("type 2 diabetes
  mellitus" is Diabetes Mellitus, Type 2, not also Diabetes Mellitus). Drugs resolve to their generic (a brand
  name and its generic are one concept).
- ``concept_f1[<name>]`` from :class:`TermListExtractor` — any term list you have, such as ICD-10-CM
  descriptions (``code<TAB>term`` per line).
- ``concept_f1[umls]`` from :class:`QuickUMLSExtractor` — QuickUMLS over your own UMLS index (extra ``umls``).

Definition: with H and R the sets of concept ids in hypothesis and reference, precision = |H ∩ R| / |H|,
recall = |H ∩ R| / |R|, F1 their harmonic mean. A side with no concepts gives precision (or recall) 0 when the
other side has some. When neither text mentions a concept, the score is undefined: ``f1`` is None and
:func:`mean_concept_f1` leaves the pair out and counts it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from bedside.metrics.lexical import MetricUnavailableError

_TOKEN = re.compile(r"\w+(?:[-'’]\w+)*")


@dataclass(frozen=True)
class Concept:
    id: str  # vocabulary-qualified: "MeSH:D014655", "ICD10CM:I10", "UMLS:C0020538"
    name: str
    text: str  # the words that matched


class ConceptExtractor(Protocol):
    name: str

    def extract(self, text: str) -> list[Concept]: ...


@dataclass(frozen=True)
class ConceptScore:
    precision: float | None
    recall: float | None
    f1: float | None
    hypothesis: frozenset[str]
    reference: frozenset[str]


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _longest(spans: Iterable[tuple[int, int, Concept]]) -> list[Concept]:
    """Drop every match whose token span lies strictly inside another match's span."""
    items = list(spans)
    kept = []
    for start, end, concept in items:
        inside = any(s <= start and end <= e and (e - s) > (end - start) for s, e, _ in items)
        if not inside:
            kept.append(concept)
    return kept


@lru_cache(maxsize=1)
def _mesh_finders() -> tuple[Any, Any]:
    try:
        from drug_named_entity_recognition import find_drugs
        from medical_named_entity_recognition import find_diseases
    except ImportError:
        raise MetricUnavailableError(
            "concept_f1[mesh] unavailable: install the MeSH recognisers (pip install 'bedside[concepts]')"
        ) from None
    return find_diseases, find_drugs


class MeshExtractor:
    """MeSH diseases and drugs from the offline dictionaries (loading them takes a few seconds, once)."""

    name = "mesh"

    def extract(self, text: str) -> list[Concept]:
        find_diseases, find_drugs = _mesh_finders()
        tokens = _tokens(text)
        spans: list[tuple[int, int, Concept]] = []
        for data, start, _ in find_diseases(tokens):
            spans.append(_span(data, start, "MeSH"))
        for data, start, _ in find_drugs(tokens, is_use_omop_api=False, use_pub_chem_api=False):
            spans.append(_span(data, start, "MeSH" if data.get("mesh_id") else "DrugBank"))
        return _longest(spans)


def _span(data: dict[str, Any], start: int, vocabulary: str) -> tuple[int, int, Concept]:
    matched = str(data.get("matching_string", ""))
    code = data.get("mesh_id") if vocabulary == "MeSH" else data.get("drugbank_id")
    name = str(data.get("name") or matched)
    concept = Concept(id=f"{vocabulary}:{code or name.lower()}", name=name, text=matched)
    return start, start + max(1, len(_tokens(matched))), concept


class TermListExtractor:
    """Exact, case-insensitive matches of listed terms over word tokens; longest match wins.

    The file has one ``code<TAB>term`` per line (several terms may share a code); ``#`` lines are comments.
    """

    def __init__(self, path: str | Path, *, name: str, vocabulary: str | None = None) -> None:
        self.name = name
        self._vocabulary = vocabulary or name.upper()
        self._terms: dict[tuple[str, ...], tuple[str, str]] = {}
        source = Path(path)
        try:
            lines = source.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{source}: cannot read term list: {exc}") from None
        for number, line in enumerate(lines, start=1):
            if not line.strip() or line.startswith("#"):
                continue
            code, tab, term = line.partition("\t")
            words = tuple(t.lower() for t in _tokens(term))
            if not tab or not code.strip() or not words:
                raise ValueError(f"{source}, line {number}: expected 'code<TAB>term', got {line!r}")
            self._terms.setdefault(words, (code.strip(), term.strip()))
        if not self._terms:
            raise ValueError(f"{source}: the term list is empty")
        self._longest_term = max(len(words) for words in self._terms)

    def extract(self, text: str) -> list[Concept]:
        tokens = [t.lower() for t in _tokens(text)]
        spans = []
        for start in range(len(tokens)):
            for length in range(min(self._longest_term, len(tokens) - start), 0, -1):
                hit = self._terms.get(tuple(tokens[start : start + length]))
                if hit:
                    code, term = hit
                    words = " ".join(tokens[start : start + length])
                    spans.append((start, start + length, Concept(f"{self._vocabulary}:{code}", term, words)))
                    break
        return _longest(spans)


class QuickUMLSExtractor:
    """UMLS concepts via QuickUMLS over a user's own index (extra ``umls``); the best candidate per span.

    ``semantic_types`` restricts matches to those TUIs (e.g. the disorder and drug groups MEDCON uses).
    """

    name = "umls"

    def __init__(
        self,
        index_path: str | Path,
        *,
        threshold: float = 0.7,
        window: int = 5,
        semantic_types: Sequence[str] | None = None,
    ) -> None:
        path = Path(index_path)
        if not path.is_dir():
            raise MetricUnavailableError(f"concept_f1[umls] unavailable: QuickUMLS index {path} does not exist")
        try:
            from quickumls import QuickUMLS
        except ImportError:
            raise MetricUnavailableError(
                "concept_f1[umls] unavailable: QuickUMLS is not installed (pip install 'bedside[umls]')"
            ) from None
        options: dict[str, Any] = {"threshold": threshold, "window": window}
        if semantic_types is not None:
            options["accepted_semtypes"] = set(semantic_types)
        self._matcher: Any = QuickUMLS(str(path), **options)

    def extract(self, text: str) -> list[Concept]:
        concepts = []
        for candidates in self._matcher.match(text, best_match=True, ignore_syntax=False):
            if candidates:
                best = candidates[0]
                concepts.append(Concept(f"UMLS:{best['cui']}", str(best["term"]), str(best["ngram"])))
        return concepts


def concept_f1(hypothesis: str, reference: str, extractor: ConceptExtractor) -> ConceptScore:
    """Set overlap of concept ids between ``hypothesis`` and ``reference`` (see the module docstring)."""
    found = frozenset(c.id for c in extractor.extract(hypothesis))
    wanted = frozenset(c.id for c in extractor.extract(reference))
    if not found and not wanted:
        return ConceptScore(None, None, None, found, wanted)
    common = len(found & wanted)
    precision = common / len(found) if found else 0.0
    recall = common / len(wanted) if wanted else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return ConceptScore(precision, recall, f1, found, wanted)


def mean_concept_f1(
    hypotheses: Sequence[str], references: Sequence[str], extractor: ConceptExtractor
) -> tuple[float | None, int]:
    """Mean F1 over the pairs where it is defined, and how many pairs were left out as undefined."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    scores = [concept_f1(h, r, extractor).f1 for h, r in zip(hypotheses, references, strict=True)]
    defined = [s for s in scores if s is not None]
    return (sum(defined) / len(defined) if defined else None), len(scores) - len(defined)
