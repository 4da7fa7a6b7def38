"""Training data for adapting a drafting model: SFT chats and TADPOLE preference pairs (TRL JSONL formats).

SFT: one chat per clinician reply, the zero-shot prompt (one user turn, the paper's Fig. 7) and the reply as the
assistant turn (TRL's conversational ``messages`` format), as the seed paper trains its SFT models.

Judge SFT (the paper's App. C.1: a judge fine-tuned on 450 hand-labelled samples): one chat per match annotation,
the content matcher's 0-shot prompt (``editjudge_match.j2``, or the template given) and the annotated answer (the
gold span verbatim, or NO MATCH) as the assistant turn; ``bedside train sft`` trains on it like any SFT file.

TADPOLE (the paper's Appendix D.3): every base reply r is given one theme t (round robin over the eight, so each
theme gets an equal share). A theme's *enhancement agent* (a 3-shot prompt; examples in
``data/tadpole_examples.toml``) adds content of theme t to r → r⁺; the *corruption agent*, told the theme, takes
theme t's content out of r → r⁻. From the (r⁺, r, r⁻) tuples come four preference sets in TRL's conversational
DPO format (``prompt``, ``chosen``, ``rejected``):

- Enhanced: r⁺ over r;  Corrupted: r over r⁻;  Hard-Corrupted: r⁺ over r⁻;
- Blend: an even share of the three, each tuple contributing one pair, the kind cycling tuple by tuple.

A tuple whose agent answer is empty or identical to r, or whose r⁺ equals its r⁻, is dropped (and counted),
since one of its pairs would teach nothing.
The base replies come from the model being adapted (the paper uses its SFT model) drafting zero-shot.
"""

from __future__ import annotations

import asyncio
import json
import tomllib
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bedside.llm import ChatMessage
from bedside.private_files import open_private
from bedside.prompts import render_chat
from bedside.tasks.drafting.cases import PortalMessage
from bedside.tasks.drafting.systems import zero_shot_chat
from bedside.tasks.drafting.themes import RESPONSE_THEMES, THEMES, Theme

if TYPE_CHECKING:
    from bedside.tasks.drafting.validation import MatchAnnotation

ENHANCE_TEMPLATE = "drafting/tadpole_enhance.j2"
CORRUPT_TEMPLATE = "drafting/tadpole_corrupt.j2"
PAIR_SETS = ("enhanced", "corrupted", "hard_corrupted", "blend")

Generate = Callable[[list[ChatMessage]], Awaitable[str]]


def _chat_json(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


def sft_records(cases: Iterable[PortalMessage]) -> list[dict[str, Any]]:
    """TRL chat records: the zero-shot prompt, then the clinician's reply as the assistant turn."""
    records = []
    for case in cases:
        prompt = _chat_json(zero_shot_chat(case))
        for reply in case.references:
            records.append({"messages": [*prompt, {"role": "assistant", "content": reply.text}]})
    return records


def judge_sft_records(
    annotations: Iterable[MatchAnnotation], template: str | Path | None = None
) -> list[dict[str, Any]]:
    """TRL chat records for fine-tuning a content judge: its prompt, then the annotated answer."""
    from bedside.tasks.drafting.matchers import MATCH_TEMPLATE

    records = []
    for annotation in annotations:
        chat = _chat_json(render_chat(template or MATCH_TEMPLATE, sentence=annotation.sentence, draft=annotation.draft))
        answer = annotation.gold if annotation.gold is not None else "NO MATCH"
        records.append({"messages": [*chat, {"role": "assistant", "content": answer}]})
    return records


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> int:
    """0600: training chats and preference pairs are patients' messages and replies."""
    count = 0
    with open_private(path) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def enhancement_examples() -> dict[str, list[dict[str, str]]]:
    text = (resources.files("bedside.tasks.drafting") / "data" / "tadpole_examples.toml").read_text(encoding="utf-8")
    examples: dict[str, list[dict[str, str]]] = tomllib.loads(text)
    missing = [t for t in RESPONSE_THEMES if len(examples.get(t, [])) != 3]
    if missing:
        raise ValueError(f"tadpole_examples.toml: themes without exactly 3 examples: {missing}")
    return examples


@dataclass(frozen=True)
class PreferenceTuple:
    case_id: str
    theme: str
    prompt: list[dict[str, str]]
    enhanced: str
    base: str
    corrupted: str


def _theme(key: str) -> Theme:
    return next(t for t in THEMES if t.key == key)


async def make_tuple(
    case: PortalMessage, base: str, theme: str, agent: Generate, examples: dict[str, list[dict[str, str]]]
) -> PreferenceTuple | None:
    """One (r⁺, r, r⁻) tuple for ``base`` and ``theme``; None when an agent changed nothing, or both agents
    returned the same text (a small model can rewrite the reply identically for both)."""
    details = _theme(theme)
    enhance = render_chat(
        ENHANCE_TEMPLATE, theme=details, examples=examples[theme], message=case.message, response=base
    )
    corrupt = render_chat(CORRUPT_TEMPLATE, theme=details, message=case.message, response=base)
    enhanced, corrupted = await asyncio.gather(agent(enhance), agent(corrupt))
    enhanced, corrupted, base = enhanced.strip(), corrupted.strip(), base.strip()
    # Any two of the three being equal makes one of the pair sets a pair with nothing to prefer.
    if not enhanced or not corrupted or len({enhanced, base, corrupted}) < 3:
        return None
    return PreferenceTuple(case.id, theme, _chat_json(zero_shot_chat(case)), enhanced, base, corrupted)


async def make_tuples(
    cases: Sequence[PortalMessage],
    draft: Generate,
    agent: Generate,
    *,
    concurrency: int = 4,
    on_done: Callable[[str, bool], None] | None = None,
) -> tuple[list[PreferenceTuple], int]:
    """Draft a base reply per case with ``draft`` (the model to adapt), then enhance and corrupt it with
    ``agent`` for the case's theme (round robin). Returns the tuples (in case order) and how many were dropped."""
    examples = enhancement_examples()
    gate = asyncio.Semaphore(concurrency)
    results: list[PreferenceTuple | None] = [None] * len(cases)

    async def one(index: int, case: PortalMessage) -> None:
        async with gate:
            base = await draft(zero_shot_chat(case))
            made = await make_tuple(case, base, RESPONSE_THEMES[index % len(RESPONSE_THEMES)], agent, examples)
            results[index] = made
            if on_done:
                on_done(case.id, made is not None)

    await asyncio.gather(*(one(i, c) for i, c in enumerate(cases)))
    kept = [t for t in results if t is not None]
    return kept, len(cases) - len(kept)


def _pair(t: PreferenceTuple, chosen: str, rejected: str, kind: str) -> dict[str, Any]:
    return {
        "prompt": t.prompt,
        "chosen": [{"role": "assistant", "content": chosen}],
        "rejected": [{"role": "assistant", "content": rejected}],
        "case_id": t.case_id,
        "theme": t.theme,
        "pair": kind,
    }


def preference_pairs(tuples: Sequence[PreferenceTuple], kind: str) -> list[dict[str, Any]]:
    """One pair set, in TRL's conversational DPO format (extra fields say where each pair came from)."""
    makers = {
        "enhanced": lambda t: _pair(t, t.enhanced, t.base, "enhanced"),
        "corrupted": lambda t: _pair(t, t.base, t.corrupted, "corrupted"),
        "hard_corrupted": lambda t: _pair(t, t.enhanced, t.corrupted, "hard_corrupted"),
    }
    if kind in makers:
        return [makers[kind](t) for t in tuples]
    if kind == "blend":
        order = ("enhanced", "corrupted", "hard_corrupted")
        return [makers[order[i % 3]](t) for i, t in enumerate(tuples)]
    raise ValueError(f"unknown pair set {kind!r}; choose one of {', '.join(PAIR_SETS)}")


def write_tadpole(folder: Path, tuples: Sequence[PreferenceTuple]) -> dict[str, int]:
    """tuples.jsonl plus one DPO file per pair set; returns the number of records written per file."""
    written = {"tuples": write_jsonl(folder / "tuples.jsonl", (asdict(t) for t in tuples))}
    for kind in PAIR_SETS:
        written[kind] = write_jsonl(folder / f"dpo_{kind}.jsonl", preference_pairs(tuples, kind))
    return written
