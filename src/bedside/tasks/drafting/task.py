"""Portal reply drafting as a runnable task (``task: drafting`` in a run config).

Datasets are JSONL files of portal messages (see :class:`PortalMessage`); without a ``path`` the synthetic demo
messages are used. Messages without a chart summary get one rendered from ``options.records`` (a records file;
the demo cohort for the demo messages) as the chart stood when the message was sent. The clinician's reply is
the reference; the clinician is a stratum.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bedside.data import DEMO_DIR
from bedside.runs.config import DatasetConfig
from bedside.runs.task import Output, Sample, SampleContext, System
from bedside.tasks.drafting.zero_shot import (
    ZERO_SHOT_TEMPLATE,
    PortalMessage,
    load_portal_messages,
    with_chart_from,
    zero_shot_chat,
)


def _load(name: str, config: DatasetConfig) -> list[Sample]:
    from bedside.records import read_records

    path = Path(config.path) if config.path else DEMO_DIR / "portal_messages.jsonl"
    messages = load_portal_messages(path)
    records_path = config.options.get("records") or (None if config.path else DEMO_DIR / "cohort.jsonl")
    if any(m.chart_summary is None for m in messages):
        if records_path is None:
            raise ValueError(f"dataset {name!r}: messages without chart_summary need options.records")
        messages = with_chart_from(messages, read_records(Path(records_path)))
    return [
        Sample(
            id=m.id,
            inputs={"message": m.message, "chart_summary": m.chart_summary},
            references=[m.reference_reply] if m.reference_reply else [],
            strata={"clinician": m.clinician_id} if m.clinician_id else {},
        )
        for m in messages
    ]


async def _zero_shot(sample: Sample, options: Mapping[str, Any], context: SampleContext) -> Output:
    chat = zero_shot_chat(PortalMessage(id=sample.id, **sample.inputs), options.get("template", ZERO_SHOT_TEMPLATE))
    completion = await context.generate("system", chat)
    return Output(text=completion.text)


class DraftingTask:
    name = "drafting"
    systems: Mapping[str, System] = {"zero_shot": _zero_shot}
    default_scorers = ("bleu", "rougeL", "chrf", "words")
    scorers: tuple[str, ...] = ()

    def load(self, name: str, config: DatasetConfig) -> list[Sample]:
        return _load(name, config)

    def score(self, scorer: str, sample: Sample, output: Output) -> float | None:
        raise KeyError(scorer)


TASK = DraftingTask()
