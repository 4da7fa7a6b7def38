"""A task for the Ray executor tests and bench/scale.py, importable by Ray workers by name
(``runs_ray_task:TASK``): each sample asks the system model once, and ``judge`` (when configured) once more."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bedside.runs import DatasetConfig, Output, Sample, SampleContext
from bedside.runs.task import System


async def _answer(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    completion = await context.generate("system", f"{options.get('prefix', '')}{sample.inputs['prompt']}")
    return Output(text=completion.text)


class SingleCallTask:
    name = "ray-single-call"
    systems: Mapping[str, System] = {"echo": _answer}
    default_scorers = ("words", "length")
    scorers = ("length",)

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        count = int(config.options.get("samples", 40))
        return [Sample(id=f"s{i:05d}", inputs={"prompt": f"request {i} of {name}"}) for i in range(count)]

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        if scorer == "length":
            return float(len(output.text))
        raise KeyError(scorer)


TASK = SingleCallTask()
