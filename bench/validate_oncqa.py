"""Does Content Edit-F1 track what oncologists did and said about GPT-4 drafts? (OncQA, both settings)

OncQA has, for 100 synthetic cancer-patient messages, oncologists' own replies written without a draft (stage 1)
and GPT-4 drafts that oncologists edited and rated (stage 2: ``raw_response``, ``doc_change``, acceptability
``q3``, harm ``q5``). Two settings, and what each can and cannot show:

* **edited** (draft vs the oncologist's edit of that draft): the reference is anchored on the draft, so this
  is *not* the paper's setting (an independent reference). It checks the matcher's mechanics: identical pairs
  must score 1.0; the sentences the oncologist changed should not be called matches (printed: the share that
  were); 1 - Edit-F1 should rank pairs as the character edit distance does (Spearman rho).
* **independent** (draft vs a stage-1 reply to the same message by another oncologist): the paper's setting.
  Oncologists' replies are much shorter than GPT-4's, and rating and writing were done by different people,
  so rho with the draft's acceptability and harm ratings is weak evidence either way; it is printed beside the
  plain edit-distance baseline, which is the bar a matcher has to clear to be worth its complexity.

Per matcher: share of oncologist-changed sentences called matches (edited), rho(1 - Edit-F1, normalised edit
distance) in both settings, rho with acceptability (0 = as is, 1 = with modifications, 2 = unacceptable) and
harm (0 = none ... 4 = death) in both settings, micro content Edit-F1 (independent), and agreement on bedside's
own match annotations (leave one draft out). Then the embedding matcher's independent micro F1 across
thresholds, with and without the guard.

The files are read from ``../shared/data/external`` (never copied into the project). Usage:
``python bench/validate_oncqa.py [--dir PATH] [--matchers embedding,lexical,trained]``
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

DEFAULT_DIR = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "external" / "AIM-Harvard_OncQA" / "Data" / "parsed_data"
)
ACCEPTABILITY = {
    "Acceptable with no modifications": 0,
    "Acceptable with modifications": 1,
    "Unacceptable (Major modifications or rewrite required)": 2,
}
HARM = {"No harm": 0, "Mild harm": 1, "Moderate harm": 2, "Severe harm": 3, "Death": 4}


@dataclass(frozen=True)
class Row:
    id: str
    draft: str
    edited: str
    acceptability: int | None
    harm: int | None


def read_rows(folder: Path) -> tuple[list[Row], dict[str, list[str]]]:
    with (folder / "stage2.csv").open(encoding="utf-8", newline="") as handle:
        rows = [
            Row(r["id"], r["raw_response"], r["doc_change"], ACCEPTABILITY.get(r["q3"]), HARM.get(r["q5"]))
            for r in csv.DictReader(handle)
        ]
    independent: dict[str, list[str]] = defaultdict(list)
    with (folder / "stage1.csv").open(encoding="utf-8", newline="") as handle:
        for r in csv.DictReader(handle):
            if r["response"].strip():
                independent[r["id"]].append(r["response"])
    return rows, independent


def rho(x: Sequence[float], y: Sequence[float | int | None]) -> str:
    from scipy.stats import spearmanr

    pairs = [(a, b) for a, b in zip(x, y, strict=True) if b is not None]
    if len(pairs) < 3:
        return "-"
    value = spearmanr([a for a, _ in pairs], [b for _, b in pairs]).statistic
    return f"{value:+.2f}"


def normalised_distance(draft: str, reference: str) -> float:
    from rapidfuzz.distance import Levenshtein

    return Levenshtein.distance(draft, reference) / max(len(reference), 1)


async def judge_all(pairs: list[tuple[str, str]], matcher: Any) -> list[Any]:
    from bedside.tasks.drafting.editjudge import edit_judge

    return [await edit_judge(reference, draft, matcher) for draft, reference in pairs]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="OncQA's Data/parsed_data folder")
    parser.add_argument("--matchers", default="embedding,lexical,trained")
    args = parser.parse_args()
    if not (args.dir / "stage2.csv").is_file() or not (args.dir / "stage1.csv").is_file():
        print(f"skipped: OncQA stage1.csv/stage2.csv not found under {args.dir} (../shared/data/external)")
        return 0

    from bedside.tasks.drafting.editjudge import EditCounts, reference_sentences
    from bedside.tasks.drafting.matcher_kinds import make_matcher
    from bedside.tasks.drafting.trained_matcher import leave_one_draft_out
    from bedside.tasks.drafting.validation import calibrate, read_annotations

    rows, independent = read_rows(args.dir)
    edited_pairs = [(r.draft, r.edited) for r in rows]
    indep_index = [(i, ref) for i, r in enumerate(rows) for ref in independent.get(r.id, [])]
    indep_pairs = [(rows[i].draft, ref) for i, ref in indep_index]
    annotations = read_annotations()
    print(
        f"OncQA: {len(rows)} stage-2 rows (GPT-4 draft, oncologist's edit, ratings); "
        f"{len(indep_pairs)} (draft, independent stage-1 reply) pairs"
    )

    changed = {
        i: {s for s in reference_sentences(r.edited) if s not in r.draft}
        for i, r in enumerate(rows)
        if r.draft != r.edited
    }
    n_changed = sum(len(v) for v in changed.values())
    edited_rows = [i for i, r in enumerate(rows) if r.draft != r.edited]
    distance_edited = [normalised_distance(rows[i].draft, rows[i].edited) for i in edited_rows]
    distance_indep_by_row = defaultdict(list)
    for (i, ref), (draft, _) in zip(indep_index, indep_pairs, strict=True):
        distance_indep_by_row[i].append(normalised_distance(draft, ref))
    indep_rows = sorted(distance_indep_by_row)
    distance_indep = [fmean(distance_indep_by_row[i]) for i in indep_rows]
    accept_e = [rows[i].acceptability for i in edited_rows]
    harm_e = [rows[i].harm for i in edited_rows]
    accept_i = [rows[i].acceptability for i in indep_rows]
    harm_i = [rows[i].harm for i in indep_rows]

    header = (
        f"{'matcher':<22}{'changed->match':>15}{'rho dist E':>11}{'rho dist I':>11}{'rho acc E':>10}"
        f"{'rho harm E':>11}{'rho acc I':>10}{'rho harm I':>11}{'micro F1 I':>11}{'LODO agr':>9}{'s':>6}"
    )
    lines = [header]
    identical_failures = 0
    configurations = [(kind, "reject") for kind in args.matchers.split(",")]
    configurations += [(kind, "off") for kind in args.matchers.split(",") if kind in ("embedding", "lexical")]
    for kind, guard in configurations:
        started = time.perf_counter()
        matcher = make_matcher(kind, guard=guard)  # type: ignore[arg-type]
        edited_j = asyncio.run(judge_all(edited_pairs, matcher))
        indep_j = asyncio.run(judge_all(indep_pairs, matcher))
        identical_failures += sum(
            j.counts.f1 != 1.0 for r, j in zip(rows, edited_j, strict=True) if r.draft == r.edited
        )
        called = sum(d.matched and d.sentence in changed[i] for i in changed for d in edited_j[i].decisions)
        load_e = [1 - edited_j[i].counts.f1 for i in edited_rows]
        per_row: dict[int, list[float]] = defaultdict(list)
        for (i, _), j in zip(indep_index, indep_j, strict=True):
            per_row[i].append(1 - j.counts.f1)
        load_i = [fmean(per_row[i]) for i in indep_rows]
        micro = sum((j.counts for j in indep_j), EditCounts()).f1
        if kind == "trained":
            agreement = leave_one_draft_out(annotations, guarded=guard == "reject").agreement.agreement
        else:
            held = calibrate(matcher, annotations).held_out  # type: ignore[arg-type]
            agreement = held.agreement if held else float("nan")
        name = kind if guard == "reject" else f"{kind} (no guard)"
        lines.append(
            f"{name:<22}{f'{called}/{n_changed} {called / max(n_changed, 1):.2f}':>15}"
            f"{rho(load_e, distance_edited):>11}{rho(load_i, distance_indep):>11}"
            f"{rho(load_e, accept_e):>10}{rho(load_e, harm_e):>11}{rho(load_i, accept_i):>10}{rho(load_i, harm_i):>11}"
            f"{micro:>11.3f}{agreement:>9.3f}{time.perf_counter() - started:>6.0f}"
        )
        print(f"  done: {name}", file=sys.stderr, flush=True)
    lines.append(
        f"{'edit distance (base)':<22}{'-':>15}{'-':>11}{'-':>11}{rho(distance_edited, accept_e):>10}"
        f"{rho(distance_edited, harm_e):>11}{rho(distance_indep, accept_i):>10}{rho(distance_indep, harm_i):>11}"
        f"{'-':>11}{'-':>9}{'':>6}"
    )
    print("\n".join(lines))
    print(
        "E = edited setting (draft vs the oncologist's edit of it, "
        f"{len(edited_rows)} edited rows); I = independent setting (draft vs stage-1 replies, per row the mean "
        f"over its {len(indep_pairs)} pairs). changed->match: oncologist-changed reference sentences the matcher "
        "called matches (lower is better). rho dist: Spearman rho of 1 - Edit-F1 with character edit distance / "
        "reference length. rho acc / harm: with the draft's acceptability and harm ratings (the baseline row uses "
        "the edit distance itself). LODO agr: agreement on bedside's 309 annotations, leave one draft out."
    )
    print(f"identical draft and edit: every pair scores Edit-F1 1.0 for every matcher: {identical_failures == 0}")

    from bedside.tasks.drafting.matchers import EmbeddingMatcher, GuardedMatcher

    sweep = []
    for threshold in (0.45, 0.52, 0.60, 0.70):
        bare = EmbeddingMatcher(threshold)
        scores = []
        for matcher in (GuardedMatcher(bare), bare):
            judged = asyncio.run(judge_all(indep_pairs, matcher))
            scores.append(sum((j.counts for j in judged), EditCounts()).f1)
        sweep.append(f"{threshold:.2f}: guarded {scores[0]:.3f}, bare {scores[1]:.3f}")
    print("embedding matcher, independent micro content Edit-F1 by threshold: " + "; ".join(sweep))
    return 0 if identical_failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
