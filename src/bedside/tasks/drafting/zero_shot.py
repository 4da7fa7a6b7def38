"""Zero-shot drafting: the patient's message and a chart summary in, a draft reply out."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from bedside.llm import Completion, GenerationSettings, Model
from bedside.prompts import render_chat

ZERO_SHOT_TEMPLATE = "drafting/zero_shot.j2"


class PortalMessage(BaseModel):
    """A patient's portal message with the chart summary a clinician would see beside it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    message: str
    chart_summary: str
    sent_at: str | None = None


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


async def draft_reply(
    model: Model,
    message: PortalMessage,
    settings: GenerationSettings | None = None,
    *,
    template: str | Path = ZERO_SHOT_TEMPLATE,
) -> Completion:
    chat = render_chat(template, message=message.message, chart_summary=message.chart_summary)
    return await model.generate(chat, settings or GenerationSettings(max_tokens=256, temperature=0.0))
