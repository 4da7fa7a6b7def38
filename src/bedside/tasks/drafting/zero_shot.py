"""Zero-shot drafting: the patient's message and a chart summary in, a draft reply out."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from bedside.llm import ChatMessage, Completion, GenerationSettings, Model
from bedside.prompts import render_chat
from bedside.records import Record
from bedside.records.chart import render_chart_summary

ZERO_SHOT_TEMPLATE = "drafting/zero_shot.j2"


class PortalMessage(BaseModel):
    """A patient's portal message, and what a clinician would see beside it.

    The chart summary is given as text, or rendered from the patient's record as of ``sent_at`` (see
    :func:`with_chart_from`). ``reference_reply`` is a clinician's real reply, when there is one.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    message: str
    chart_summary: str | None = None
    patient_id: str | None = None
    sent_at: datetime | None = None
    reference_reply: str | None = None
    clinician_id: str | None = None


def with_chart_from(messages: list[PortalMessage], records: list[Record]) -> list[PortalMessage]:
    """Fill each message's missing chart summary from its patient's record, as the chart stood when it was sent."""
    by_id = {record.id: record for record in records}
    filled = []
    for message in messages:
        if message.chart_summary is None:
            record = by_id.get(message.patient_id or "")
            if record is None or message.sent_at is None:
                raise ValueError(
                    f"portal message {message.id}: no chart summary, and no record for patient "
                    f"{message.patient_id!r} with a sent_at time to render one from"
                )
            message = message.model_copy(update={"chart_summary": render_chart_summary(record, message.sent_at)})
        filled.append(message)
    return filled


def load_portal_messages(path: Path) -> list[PortalMessage]:
    """Read a JSONL file of portal messages; a bad line is reported with its file and line number."""
    messages = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                messages.append(PortalMessage.model_validate(json.loads(line)))
            except (json.JSONDecodeError, ValidationError) as exc:
                raise ValueError(f"{path}:{number}: not a valid portal message: {exc}") from None
    return messages


def zero_shot_chat(message: PortalMessage, template: str | Path = ZERO_SHOT_TEMPLATE) -> list[ChatMessage]:
    """The chat a zero-shot drafting model is sent for ``message`` (which must carry its chart summary)."""
    if message.chart_summary is None:
        raise ValueError(f"portal message {message.id} has no chart summary; see with_chart_from()")
    return render_chat(template, message=message.message, chart_summary=message.chart_summary)


async def draft_reply(
    model: Model,
    message: PortalMessage,
    settings: GenerationSettings | None = None,
    *,
    template: str | Path = ZERO_SHOT_TEMPLATE,
) -> Completion:
    chat = zero_shot_chat(message, template)
    return await model.generate(chat, settings or GenerationSettings(max_tokens=256, temperature=0.0))
