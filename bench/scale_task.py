"""The task bench/scale.py runs, importable by Ray workers by name (``scale_task:TASK``): each sample asks the
system model once; the ``minilm`` scorer embeds the answer and the prompt with MiniLM (CPU-heavy scoring)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bedside.runs import DatasetConfig, Output, Sample, SampleContext
from bedside.runs.task import System


async def _answer(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    completion = await context.generate("system", sample.inputs["prompt"])
    return Output(text=completion.text)


class ScaleTask:
    name = "bench-scale"
    systems: Mapping[str, System] = {"echo": _answer}
    default_scorers = ("words",)
    scorers = ("minilm",)

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        count = int(config.options.get("samples", 20000))
        return [
            Sample(id=f"s{i:05d}", inputs={"prompt": f"request {i}: my knee hurts after running, what should I do?"})
            for i in range(count)
        ]

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        if scorer == "minilm":
            from bedside.retrieval.embeddings import cosine

            return cosine(output.text, sample.inputs["prompt"])
        raise KeyError(scorer)


TASK = ScaleTask()
