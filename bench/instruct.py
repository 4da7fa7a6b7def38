"""How fast are the instruct task's record-bound steps on a long record and a large matching corpus?

Prints, measured in one run on this machine, with the embedded model's exact tokenizer:

* paper-view budget: cutting the most recent 32k tokens (256 reserved) of a ~1.5-million-character raw record,
  beside tokenizing the whole record once — goal: the cut costs < 0.25 of the whole tokenization, because only a
  window at the end is tokenized;
* multi-step refinement chunks: cutting the whole record into 30k-token chunks, beside one whole tokenization —
  goal: < 2.5x (each cut tokenizes a window of about 1.1 chunks and re-counts the chunk it keeps, so the cost is
  linear in the record; cutting each chunk from the whole remaining text would cost about chunks/2 x);
* Okapi BM25 matching: indexing a corpus of 10,000 synthetic records and ranking 400 instructions against it
  (records/s indexed, instructions/s ranked over the whole corpus), beside a direct per-document implementation of
  the same formula (the one rank_bm25 uses; timed on 5 instructions and scaled) — the scores must be equal to 1e-9
  and the sparse index faster (ratio printed).

Usage: ``python bench/instruct.py [--chars 1500000] [--records 10000] [--queries 400]``
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections import Counter

from bedside.records.fit import fit_text, text_chunks
from bedside.retrieval import OkapiBM25Index
from bedside.text.tokens import embedded_tokenizer

VOCABULARY = (
    "patient reports chest pain shortness of breath denies fever cough nausea blood pressure stable heart rate "
    "regular lungs clear abdomen soft plan continue lisinopril metformin follow up labs ordered hemoglobin a1c "
    "lipid panel counselled diet exercise smoking cessation return if symptoms worsen asthma inhaler warfarin "
    "creatinine egfr anemia ferritin colonoscopy mammogram biopsy mri ct ekg troponin sodium potassium"
)
WORDS = VOCABULARY.split()


def raw_record(chars: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    parts = ["<record>"]
    day = 0
    while sum(len(p) for p in parts) < chars:
        day += 1
        stamp = f"{(day % 12) + 1:02d}/{(day % 28) + 1:02d}/{1990 + day // 300} 09:00"
        note = " ".join(rng.choice(WORDS) for _ in range(200))
        parts.append(
            f'<visit type="Office Visit" start="{stamp}">\n<day start="{stamp}">\n'
            f'<measurement start="{stamp}">\n<code>[LOINC/8480-6] Systolic BP {rng.randint(90, 180)}</code>\n'
            f'</measurement>\n<note type="progress" start="{stamp}">\n{note}\n</note>\n</day>\n</visit>'
        )
    parts.append("</record>")
    return "\n".join(parts)


def direct_okapi(corpus: list[list[str]], query: list[str], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """rank_bm25's BM25Okapi written out per document (the reference for equality and speed)."""
    n = len(corpus)
    frequencies = [Counter(d) for d in corpus]
    df: Counter[str] = Counter()
    for f in frequencies:
        df.update(f.keys())
    idf = {t: math.log(n - c + 0.5) - math.log(c + 0.5) for t, c in df.items()}
    floor = 0.25 * sum(idf.values()) / len(idf)
    idf = {t: (floor if v < 0 else v) for t, v in idf.items()}
    avgdl = sum(len(d) for d in corpus) / n
    scores = []
    for doc, f in zip(corpus, frequencies, strict=True):
        score = 0.0
        for term in query:
            tf = f.get(term, 0)
            score += idf.get(term, 0.0) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avgdl))
        scores.append(score)
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chars", type=int, default=1_500_000)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=400)
    args = parser.parse_args()
    tokenizer = embedded_tokenizer()
    text = raw_record(args.chars)
    tokenizer.count("warm up")

    start = time.perf_counter()
    total = tokenizer.count(text)
    whole = time.perf_counter() - start
    start = time.perf_counter()
    fitted = fit_text(text, tokenizer, 32_000)
    cut = time.perf_counter() - start
    assert fitted.tokens <= 32_000 - 256
    assert text.endswith(fitted.text)
    start = time.perf_counter()
    pieces = text_chunks(text, tokenizer, 30_000)
    chunking = time.perf_counter() - start
    assert "".join(pieces) == text
    print(f"record: {len(text):,} characters, {total:,} tokens ({tokenizer.name}); whole tokenization {whole:.2f} s")
    print(f"paper-view cut to 32k: {cut:.3f} s = {cut / whole:.3f} x whole tokenization (goal < 0.25)")
    print(f"MR chunks of 30k: {len(pieces)} chunks in {chunking:.2f} s = {chunking / whole:.2f} x whole (goal < 2.5)")

    rng = random.Random(1)
    documents = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(200, 2000))) for _ in range(args.records)]
    queries = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(args.queries)]
    start = time.perf_counter()
    index = OkapiBM25Index(documents)
    indexing = time.perf_counter() - start
    start = time.perf_counter()
    sparse = [index.scores(q) for q in queries]
    ranking = time.perf_counter() - start
    sparse_time = indexing + ranking
    tokenized = [d.split() for d in documents]
    probe = min(5, len(queries))
    start = time.perf_counter()
    reference = [direct_okapi(tokenized, q.split()) for q in queries[:probe]]
    direct_time = (time.perf_counter() - start) * len(queries) / probe
    worst = max(abs(a - b) for s, r in zip(sparse, reference, strict=False) for a, b in zip(s, r, strict=True))
    print(
        f"Okapi BM25 matching over {args.records:,} records: indexed in {indexing:.2f} s "
        f"({args.records / indexing:,.0f} records/s); {args.queries} instructions ranked in {ranking:.2f} s "
        f"({args.queries / ranking:,.0f} instructions/s, {args.records * args.queries / ranking:,.0f} record scores/s)"
    )
    print(
        f"  beside the direct formula: {direct_time:.1f} s (scaled from {probe} instructions) against the sparse "
        f"index's {sparse_time:.2f} s in all: {direct_time / sparse_time:.0f}x faster; largest score difference "
        f"{worst:.1e} (must be < 1e-9)"
    )
    assert worst < 1e-9


if __name__ == "__main__":
    main()
