"""Matching instructions to patient records with BM25 (MedAlign Stage 2, Appendix G).

Only instructions applicable to patients generally are matched (``general`` not False). The query is the
instruction, the patient characteristics and the clinical context, joined; each whole record is one document;
the top K (5) records by Okapi BM25 (rank_bm25's scoring, whitespace tokens) are the candidates. The paper's
relevance labels were given from rank 1 down, stopping at the first relevant record, so candidates below it are
*unreviewed*, not irrelevant: :func:`evaluate` counts an instruction found at K when a reviewed-relevant record
is within its first K candidates, and reports how many candidates were never reviewed.

Success@K is the share of matched instructions with a relevant record in the top K; MRR@K the mean of
1/rank of the first relevant one (0 when none is in the top K). The paper's own MRR@K column (0.0149-0.0155)
cannot be right (MRR@1 must equal Success@1); bedside reports the definition.

The random baseline draws K records uniformly per instruction from the same pool (seeded); its figure in the
paper is the *share of random pairs judged relevant* (38%), so :func:`evaluate` reports that share for any
labelled list of candidates, beside Success@K.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bedside.retrieval import OkapiBM25Index, mrr_at_k, success_at_k
from bedside.tasks.instruct.cases import Instruction

DEFAULT_K = 5


@dataclass(frozen=True)
class Candidate:
    person_id: str
    rank: int
    score: float | None  # None for random draws
    relevance: str = "unreviewed"  # relevant / irrelevant / unreviewed


@dataclass(frozen=True)
class Match:
    instruction_id: str
    query: str
    candidates: list[Candidate]


@dataclass
class MatchEvaluation:
    n: int  # instructions evaluated (the denominator)
    success: dict[int, float]
    mrr: dict[int, float]
    first_relevant_at: dict[int, int]  # rank -> instructions whose first relevant record is there
    unreviewed: int  # candidates never labelled
    relevant_pair_share: float | None  # share of labelled pairs that are relevant (the paper's random figure)
    labelled_pairs: int
    notes: list[str] = field(default_factory=list)


def matchable(instructions: Sequence[Instruction]) -> list[Instruction]:
    return [i for i in instructions if i.general is not False]


def bm25_match(instructions: Sequence[Instruction], documents: Mapping[str, str], *, k: int = DEFAULT_K) -> list[Match]:
    """Top-k records per instruction by Okapi BM25; ``documents`` maps person id -> the record's text."""
    if not documents:
        raise ValueError("no records to match against")
    ids = list(documents)
    index = OkapiBM25Index([documents[i] for i in ids], ids=ids)
    matches = []
    for instruction in matchable(instructions):
        query = instruction.matching_query()
        hits = index.search(query, k=k)
        matches.append(
            Match(instruction.id, query, [Candidate(h.id, rank, h.score) for rank, h in enumerate(hits, start=1)])
        )
    return matches


def random_match(
    instructions: Sequence[Instruction], person_ids: Sequence[str], *, k: int = DEFAULT_K, seed: int = 0
) -> list[Match]:
    """K records drawn uniformly without replacement per instruction, from the same pool (seeded)."""
    if not person_ids:
        raise ValueError("no records to draw from")
    rng = random.Random(seed)
    pool = sorted(person_ids)
    return [
        Match(
            instruction.id,
            instruction.matching_query(),
            [Candidate(p, rank, None) for rank, p in enumerate(rng.sample(pool, min(k, len(pool))), start=1)],
        )
        for instruction in matchable(instructions)
    ]


def label(matches: Sequence[Match], relevance: Mapping[str, Mapping[str, str]]) -> list[Match]:
    """The matches with each candidate's relevance from the labels (unlisted pairs stay unreviewed)."""
    return [
        Match(
            m.instruction_id,
            m.query,
            [
                Candidate(
                    c.person_id, c.rank, c.score, relevance.get(m.instruction_id, {}).get(c.person_id, "unreviewed")
                )
                for c in m.candidates
            ],
        )
        for m in matches
    ]


def evaluate(matches: Sequence[Match], *, ks: Sequence[int] = (1, 2, 3, 4, 5)) -> MatchEvaluation:
    """Success@K and MRR@K over labelled matches (every instruction in the denominator, found or not)."""
    if not matches:
        raise ValueError("no matches to evaluate")
    ranked = [[c.person_id for c in m.candidates] for m in matches]
    relevant = [{c.person_id for c in m.candidates if c.relevance == "relevant"} for m in matches]
    first: dict[int, int] = {}
    for m in matches:
        rank = next((c.rank for c in m.candidates if c.relevance == "relevant"), None)
        if rank is not None:
            first[rank] = first.get(rank, 0) + 1
    labelled = [c for m in matches for c in m.candidates if c.relevance != "unreviewed"]
    evaluation = MatchEvaluation(
        n=len(matches),
        success={k: success_at_k(ranked, relevant, k) for k in ks},
        mrr={k: mrr_at_k(ranked, relevant, k) for k in ks},
        first_relevant_at=dict(sorted(first.items())),
        unreviewed=sum(c.relevance == "unreviewed" for m in matches for c in m.candidates),
        relevant_pair_share=(sum(c.relevance == "relevant" for c in labelled) / len(labelled)) if labelled else None,
        labelled_pairs=len(labelled),
    )
    evaluation.notes.append(
        "unreviewed candidates count as not relevant for Success@K/MRR@K; the paper labelled from rank 1 down and "
        "stopped at the first relevant record, so this does not lower its figures"
    )
    return evaluation


def matches_json(matches: Sequence[Match]) -> list[dict[str, object]]:
    return [
        {
            "instruction_id": m.instruction_id,
            "query": m.query,
            "candidates": [
                {"person_id": c.person_id, "rank": c.rank, "score": c.score, "relevance": c.relevance}
                for c in m.candidates
            ],
        }
        for m in matches
    ]


def record_documents(path: str, *, view: str = "paper") -> dict[str, str]:
    """person id -> the whole record's text, one document per record, from bedside JSONL or a folder of files.

    In the paper view an XML file's own text is the document (MedAlign indexed its EHR files); otherwise the
    record rendered as bedside's timeline."""
    from bedside.inputs import read_xml_text
    from bedside.records import RecordError
    from bedside.records.timeline import render_timeline_xml
    from bedside.tasks.instruct.ehr import person_xml, records_by_person

    documents: dict[str, str] = {}
    for person, record in records_by_person(path).items():
        raw = person_xml(path, person)
        if view == "paper" and raw is not None:
            documents[person] = read_xml_text(raw, error=RecordError)
        else:
            documents[person] = render_timeline_xml(record)
    return documents
