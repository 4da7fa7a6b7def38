"""How fast does bedside fit a long record into a context window, and embed sentences?

Prints, measured in one run on this machine:

* the time to fit a synthetic record whose XML timeline is about 1.5 million characters into a 32k-token
  budget (256 reserved) with the embedded model's exact tokenizer — goal < 1 s — beside the time to render
  the timeline alone and to tokenize all of it, so the ratio shows what fitting costs over rendering;
* sentence-embedding throughput of the offline MiniLM model, as a ratio to a one-sentence-at-a-time onnxruntime
  loop over the same int8 model measured in the same run (absolute rates on a shared machine vary by 2x).

Usage: ``python bench/records.py [--chars 1500000] [--budget 32000] [--sentences 2000]``
"""

from __future__ import annotations

import argparse
import random
import time
from datetime import date, datetime, timedelta

from bedside.records import Condition, Encounter, Measurement, Medication, Note, Patient, Record
from bedside.records.fit import fit
from bedside.records.timeline import render_timeline_xml
from bedside.retrieval.embeddings import MiniLMEmbedder
from bedside.text.tokens import embedded_tokenizer

VOCABULARY = (
    "patient reports chest pain shortness of breath denies fever cough nausea blood pressure stable heart rate "
    "regular lungs clear abdomen soft nontender plan continue lisinopril metformin follow up in two weeks labs "
    "ordered hemoglobin a1c lipid panel counselled on diet exercise smoking cessation return if symptoms worsen"
)
WORDS = VOCABULARY.split()


def synthetic_record(target_chars: int, seed: int = 0) -> Record:
    """A long record of weekly visits, each with vitals, a diagnosis, an order and a ~1,500-character note."""
    rng = random.Random(seed)
    record = Record(patient=Patient(id="bench", birth_date=date(1950, 1, 1), gender="female"))
    when = datetime(1990, 1, 1, 9, 0)
    visit = 0
    while visit % 100 or len(render_timeline_xml(record)) < target_chars:  # re-measured every 100 visits
        visit += 1
        encounter = f"v{visit}"
        record.encounters.append(
            Encounter(id=encounter, text="Office visit", start=when, end=when + timedelta(hours=1))
        )
        record.conditions.append(
            Condition(id=f"c{visit}", text="Essential hypertension", onset=when, encounter_id=encounter)
        )
        record.measurements += [
            Measurement(
                id=f"m{visit}-{k}",
                text=name,
                value=float(rng.randint(60, 160)),
                unit=unit,
                time=when,
                encounter_id=encounter,
            )
            for k, (name, unit) in enumerate(
                [("Systolic blood pressure", "mm[Hg]"), ("Heart rate", "/min"), ("Body weight", "kg")]
            )
        ]
        record.medications.append(
            Medication(id=f"d{visit}", text="lisinopril 10 MG Oral Tablet", start=when, encounter_id=encounter)
        )
        text = " ".join(rng.choice(WORDS) for _ in range(220)) + "."
        record.notes.append(
            Note(
                id=f"n{visit}",
                type="progress note",
                time=when + timedelta(minutes=40),
                text=text,
                encounter_id=encounter,
            )
        )
        when += timedelta(days=7)
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=1_500_000)
    parser.add_argument("--budget", type=int, default=32_000)
    parser.add_argument("--sentences", type=int, default=2_000)
    args = parser.parse_args()

    tokenizer = embedded_tokenizer()  # built once per process; not part of the fit time
    record = synthetic_record(args.chars)

    started = time.perf_counter()
    xml = render_timeline_xml(record)
    render_s = time.perf_counter() - started
    started = time.perf_counter()
    total_tokens = tokenizer.count(xml)
    tokenize_s = time.perf_counter() - started
    started = time.perf_counter()
    fitted = fit(record, tokenizer, args.budget)
    fit_s = time.perf_counter() - started

    print(f"record              {len(xml):,} characters of XML, {total_tokens:,} tokens ({tokenizer.name})")
    print(f"render timeline     {render_s:.3f} s")
    print(f"tokenize all of it  {tokenize_s:.3f} s (fit does not need to)")
    print(
        f"fit to {args.budget:,} tokens   {fit_s:.3f} s  (goal < 1 s; {fit_s / render_s:.2f}x rendering alone); "
        f"kept {fitted.events_kept:,} events, {fitted.tokens:,} tokens"
    )

    rng = random.Random(1)
    sentences = [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 30))).capitalize() + "." for _ in range(args.sentences)
    ]
    embedder = MiniLMEmbedder()
    embedder.embed(sentences[:32])  # warm-up: first-run allocations are not throughput
    # The reference path, measured in the same run: the same int8 ONNX session fed one sentence at a time (a plain
    # onnxruntime loop, no batching). Alternated with bedside's length-sorted batches, best of three each, so the
    # ratio holds on a shared machine where absolute rates move by 2x.
    batched_s: list[float] = []
    single_s: list[float] = []
    few = sentences[: max(len(sentences) // 4, 1)]
    for _ in range(3):
        started = time.perf_counter()
        embedder.embed(sentences)
        batched_s.append((time.perf_counter() - started) / len(sentences))
        started = time.perf_counter()
        for sentence in few:
            embedder.embed([sentence])
        single_s.append((time.perf_counter() - started) / len(few))
    batched, single = min(batched_s), min(single_s)
    print(
        f"embedding           {1 / batched:,.0f} sentences/s batched by length over {len(sentences):,}; "
        f"{single / batched:.2f}x a one-sentence-at-a-time onnxruntime loop on the same model ({1 / single:,.0f}/s), "
        "measured in this run"
    )


if __name__ == "__main__":
    main()
