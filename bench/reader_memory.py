"""How much memory does reading a MedAlign XML record take, as the file grows?

The reader streams (``bedside.records.medalign``): an event element is kept only until it closes, so beyond the
record it returns it should need about one read chunk (1 MiB) and one event, whatever the file's size. This
bench writes synthetic MedAlign files of growing size (weekly visits, each a day with a 1,500-character note and
ten coded measurements, about the release's mix of text and code lines) and reads each one under
``tracemalloc``, all in one run, printing per file:

* ``file MB`` — its size;
* ``peak MB`` and ``peak/file`` — the most Python memory allocated while reading, as a ratio to the file size;
* ``record MB`` — memory still held by the returned :class:`~bedside.records.model.Record` (what any reader
  must hold);
* ``transient MB`` — peak minus record: what reading itself cost on top. This is the figure that should stay
  flat as files grow.

Usage: ``python bench/reader_memory.py [--sizes 1 4 16 64]`` (sizes in MB).
"""

from __future__ import annotations

import argparse
import gc
import random
import tempfile
import time
import tracemalloc
from pathlib import Path

from bedside.records import read_medalign_xml

VOCABULARY = (
    "patient reports chest pain shortness of breath denies fever cough nausea blood pressure stable heart rate "
    "regular lungs clear abdomen soft nontender plan continue lisinopril metformin follow up in two weeks labs "
    "ordered hemoglobin a1c lipid panel counselled on diet exercise smoking cessation return if symptoms worsen"
)
WORDS = VOCABULARY.split()
MB = 1024 * 1024


def write_record(path: Path, target_bytes: int, seed: int = 0) -> int:
    """A MedAlign ``<record>`` of weekly visits until the file reaches ``target_bytes``; its size."""
    rng = random.Random(seed)
    written = 0
    week = 0
    with path.open("w", encoding="utf-8") as handle:

        def emit(text: str) -> None:
            nonlocal written
            handle.write(text)
            written += len(text)

        emit('<?xml version="1.0" encoding="UTF-8"?>\n<record>\n')
        emit('<visit type="Visit" start="01/01/1990 09:00"><day start="01/01/1990 09:00">\n')
        emit("<person>\nBirth: 01/01/1950\nGender: FEMALE\n</person>\n</day></visit>\n")
        while written < target_bytes:
            year, day = 1990 + week // 52, week % 52
            stamp = f"{(day % 12) + 1:02d}/{(day % 28) + 1:02d}/{year} 09:00"
            note = " ".join(rng.choice(WORDS) for _ in range(230))
            codes = "".join(
                f"<code>[LOINC/{1000 + i}] Measurement {i} value {rng.randint(40, 200)}</code>\n" for i in range(10)
            )
            emit(
                f'<visit type="Office Visit" start="{stamp}">\n<day start="{stamp}">\n'
                f'<measurement start="{stamp}">\n{codes}</measurement>\n'
                f'<note type="Progress Note" start="{stamp}">\n{note}\n</note>\n</day>\n</visit>\n'
            )
            week += 1
        emit("</record>\n")
    return path.stat().st_size


def measure(path: Path) -> tuple[float, float, float]:
    """(peak MB while reading, MB still held by the record, seconds) for one read under tracemalloc."""
    gc.collect()
    tracemalloc.start()
    started = time.perf_counter()
    record = read_medalign_xml(path)
    seconds = time.perf_counter() - started
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert record.notes, "the synthetic record has notes"
    return peak / MB, held / MB, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 4, 16, 64], help="file sizes in MB")
    args = parser.parse_args()
    print(f"{'file MB':>8} {'peak MB':>8} {'peak/file':>9} {'record MB':>9} {'transient MB':>12} {'seconds':>8}")
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            path = Path(folder) / f"record-{size:g}MB.xml"
            file_mb = write_record(path, int(size * MB)) / MB
            peak, held, seconds = measure(path)
            print(
                f"{file_mb:8.1f} {peak:8.1f} {peak / file_mb:9.2f} {held:9.1f} {peak - held:12.1f} {seconds:8.1f}",
                flush=True,
            )
            path.unlink()


if __name__ == "__main__":
    main()
