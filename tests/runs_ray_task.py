"""A task for the Ray executor tests and bench/scale.py, importable by Ray workers by name
(``runs_ray_task:TASK``): each sample asks the system model once, and ``judge`` (when configured) once more.
With the dataset options ``marks`` (a folder) and ``hold_first_until`` (N), every sample leaves a mark and the
first one waits until N marks are there: a slow sample, for the tests of how work is shared."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bedside.runs import DatasetConfig, Output, Sample, SampleContext
from bedside.runs.task import System


async def _answer(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    if marks := sample.inputs.get("marks"):  # a slow sample: held until enough others have run (or 300 s)
        await asyncio.to_thread(_wait_for_marks, Path(marks), int(sample.inputs.get("wait_for", 0)))
    completion = await context.generate("system", f"{options.get('prefix', '')}{sample.inputs['prompt']}")
    return Output(text=completion.text)


def _wait_for_marks(folder: Path, wanted: int) -> None:
    """Leave a mark, or (the slow sample) wait for ``wanted`` marks: other processes leave them, so a file count
    rather than an event."""
    if not wanted:
        (folder / uuid.uuid4().hex).touch()
        return
    deadline = time.monotonic() + 300  # a limit no loaded machine reaches while the others run; it ends a wrong run
    while sum(1 for mark in folder.iterdir() if mark.name != TIMED_OUT) < wanted:
        if time.monotonic() > deadline:  # said, so a test can tell an ended wait from a given-up one
            (folder / TIMED_OUT).touch()
            return
        time.sleep(0.05)


TIMED_OUT = "timed-out"
"""The mark the slow sample leaves when it stopped waiting at its limit rather than because the others ran."""


class SingleCallTask:
    name = "ray-single-call"
    systems: Mapping[str, System] = {"echo": _answer}
    default_scorers = ("words", "length")
    scorers = ("length",)

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        count = int(config.options.get("samples", 40))
        samples = [Sample(id=f"s{i:05d}", inputs={"prompt": f"request {i} of {name}"}) for i in range(count)]
        if marks := config.options.get("marks"):  # the first sample waits until `hold_first_until` others ran
            for i, sample in enumerate(samples):
                sample.inputs["marks"] = marks
                sample.inputs["wait_for"] = int(config.options["hold_first_until"]) if i == 0 else 0
        return samples

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        if scorer == "length":
            return float(len(output.text))
        raise KeyError(scorer)


TASK = SingleCallTask()
