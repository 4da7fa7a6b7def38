"""The doctor (system under test) and the simulated patient, as agents of :mod:`bedside.sim`.

Each builds its own view of the conversation. By default that is a real chat: its own messages as
``assistant``, the other side's as ``user``, the doctor's first message answering an empty patient turn. The
``blob`` prompt style reproduces the reference code instead (one user message holding the unlabelled history).

Text handling, the same for both sides: the control tokens (``NEXT STAGE``, ``FINISHED SIMULATION``) are read
into the utterance's control fields and removed from what the other side sees; a reply that goes on to write
the other side's lines (``Patient: ...`` inside the doctor's message, a common failure of small models) is cut
there, and the cut is kept in the trace; whitespace is collapsed, as the reference code does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bedside.llm.types import ChatMessage, GenerationSettings, Role
from bedside.prompts import render, render_chat
from bedside.runs.task import SampleContext
from bedside.sim import ConversationState, Utterance
from bedside.tasks.discharge.cases import DischargeCase
from bedside.tasks.discharge.schedules import CLOSING, FINISHED, NEXT_STAGE

PromptStyle = Literal["chat", "blob"]
OPENING = "(The patient is ready and waiting for you to begin.)"

_NEXT = re.compile(r"[\"'“”]?\bNEXT[ _]STAGE\b[\"'“”]?[.!]?", re.IGNORECASE)
_FINISHED = re.compile(r"[\"'“”]?\bFINISHED[ _]SIMULATION\b[\"'“”]?[.!]?", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


def _speaker_line(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?:^|\n|(?<=[.!?]))\s*\**{name}\**\s*:", re.IGNORECASE)


_PREFIX = re.compile(r"^\s*\**(?:doctor|dr\.? agent|patient)\**\s*:\s*", re.IGNORECASE)
_OTHER_SIDE = {"doctor": _speaker_line("patient"), "patient": _speaker_line(r"(?:doctor|dr\.? agent)")}


def clean(raw: str, speaker: Literal["doctor", "patient"]) -> tuple[str, dict[str, bool]]:
    """The text the other side sees, and the control fields found in ``raw``."""
    control = {"advance": bool(_NEXT.search(raw)), "end": bool(_FINISHED.search(raw))}
    text = _FINISHED.sub(" ", _NEXT.sub(" ", raw))
    text = _PREFIX.sub("", text)
    cut = _OTHER_SIDE[speaker].search(text)
    if cut:
        control["cut_other_side"] = True
        text = text[: cut.start()]
    return _SPACE.sub(" ", text).strip(), control


def _settings(
    context: SampleContext, role: Role, max_tokens: int | None, temperature: float | None = None
) -> GenerationSettings | None:
    """The run's settings for ``role``, with the schedule's per-turn values (the reference code's 200 tokens and
    temperature 0.05) put over them where the schedule sets them."""
    settings = context.settings.get(role)
    update = {k: v for k, v in (("max_tokens", max_tokens), ("temperature", temperature)) if v is not None}
    if not update:
        return settings
    return (settings or GenerationSettings()).model_copy(update=update)


def _history(state: ConversationState, me: str) -> list[ChatMessage]:
    """The conversation from one side's seat: its own turns as assistant, the other's as user."""
    messages = [
        ChatMessage(role="assistant" if turn.role == me else "user", content=turn.content or "(silence)")
        for turn in state.turns
    ]
    if not messages or messages[0].role == "assistant":
        messages.insert(0, ChatMessage(role="user", content=OPENING))
    return messages


def _blob(system: ChatMessage, state: ConversationState, speaker: str) -> list[ChatMessage]:
    texts = [turn.content for turn in state.turns]
    latest = texts[-1] if texts and state.turns[-1].role != ("clinician" if speaker == "Doctor" else "patient") else ""
    history = texts[:-1] if latest else texts
    return [system, *render_chat("discharge/blob.j2", history=history, latest=latest, speaker=speaker)]


@dataclass
class Doctor:
    """The doctor. With ``cut_note`` (the reference schedule's default) it sees what the reference code shows:
    the note cut before "Discharge Condition" and none of the structure's lines whose sections that cut removes
    (warning signs, activity and diet, follow-up, pending results, the medicines' patient instructions), so the
    structure does not hand back what the cut hid."""

    case: DischargeCase
    cut_note: bool = False
    prompt_style: PromptStyle = "chat"
    max_tokens: int | None = None
    temperature: float | None = None
    template: str = "discharge/doctor.j2"

    def system_message(self, stage: str) -> ChatMessage:
        (message,) = render_chat(
            self.template,
            stage=stage,
            closing=stage == CLOSING,
            case=self.case,
            structure=self.case.parsed(),
            hide_after_cut=self.cut_note,
            note=self.case.cut_note() if self.cut_note else self.case.note,
            next_stage=NEXT_STAGE,
            finished=FINISHED,
        )
        return message

    async def speak(self, state: ConversationState, context: SampleContext) -> Utterance:
        system = self.system_message(state.stage.id)
        if self.prompt_style == "blob":
            messages = _blob(system, state, "Doctor")
        else:
            messages = [system, *_history(state, "clinician")]
        settings = _settings(context, "system", self.max_tokens, self.temperature)
        completion = await context.generate("system", messages, settings=settings)
        text, control = clean(completion.text, "doctor")
        return Utterance(text=text, raw=completion.text, control=control, finish_reason=completion.finish_reason)


@dataclass
class Patient:
    case: DischargeCase
    profile: dict[str, str]
    prompt_style: PromptStyle = "chat"
    max_tokens: int | None = None
    temperature: float | None = None
    template: str = "discharge/patient.j2"

    def system_message(self) -> ChatMessage:
        (message,) = render_chat(self.template, view=self.case.patient_view(), profile_text=profile_text(self.profile))
        return message

    async def speak(self, state: ConversationState, context: SampleContext) -> Utterance:
        system = self.system_message()
        if self.prompt_style == "blob":
            messages = _blob(system, state, "Patient")
        else:
            messages = [system, *_history(state, "patient")]
        completion = await context.generate(
            "patient", messages, settings=_settings(context, "patient", self.max_tokens, self.temperature)
        )
        text, control = clean(completion.text, "patient")
        details = {"cut_other_side": True} if control.get("cut_other_side") else {}
        return Utterance(text=text, raw=completion.text, finish_reason=completion.finish_reason, details=details)


def profile_text(profile: dict[str, str], template: str = "discharge/profile.j2") -> str:
    return _SPACE.sub(" ", render(template, profile=profile)).strip()
