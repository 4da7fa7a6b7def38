"""Reading training files, checked line by line before any model is loaded.

The formats are the ones bedside writes: ``bedside drafting export-sft`` (TRL's conversational ``messages``) and
``bedside drafting tadpole`` (TRL's conversational preference format: ``prompt``, ``chosen``, ``rejected``).
A bad line fails the whole file with its path and line number, so a long GPU job never starts on data that
would break it halfway.

SFT chats become prompt/completion pairs (everything before the final assistant turn, and that turn), so the
loss is taken on the clinician's reply only: the seed trains the model to *output the response* given the
message and chart, not to reproduce the prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bedside.inputs import InputError
from bedside.jsonlines import json_objects

ROLES = ("system", "user", "assistant")
Chat = list[dict[str, str]]


class TrainingDataError(InputError):
    """A training file that cannot be used; the message names the file and line."""


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise TrainingDataError(f"{path}: no such training file")
    records = json_objects(path, TrainingDataError)
    if not records:
        raise TrainingDataError(f"{path}: no training examples")
    return records


def _chat(value: Any, field: str, where: str) -> Chat:
    if not isinstance(value, list) or not value:
        raise TrainingDataError(f"{where}: {field!r} must be a non-empty list of chat messages")
    chat = []
    for index, message in enumerate(value):
        at = f"{where}: {field}[{index}]"
        if not isinstance(message, dict):
            raise TrainingDataError(f"{at}: expected an object with role and content")
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise TrainingDataError(f"{at}: role must be one of {', '.join(ROLES)} (got {role!r})")
        if not isinstance(content, str) or not content.strip():
            raise TrainingDataError(f"{at}: content must be a non-empty string")
        chat.append({"role": role, "content": content})
    return chat


def _prompt(chat: Chat, field: str, where: str) -> Chat:
    if chat[-1]["role"] != "user":
        raise TrainingDataError(f"{where}: {field!r} must end with a user turn (the model answers it)")
    return chat


def _answer(value: Any, field: str, where: str) -> Chat:
    chat = _chat(value, field, where)
    if len(chat) != 1 or chat[0]["role"] != "assistant":
        raise TrainingDataError(f"{where}: {field!r} must be exactly one assistant message")
    return chat


def read_sft(path: Path) -> list[dict[str, Chat]]:
    """SFT examples as ``{"prompt": [...], "completion": [assistant turn]}``."""
    examples = []
    for number, record in _records(path):
        where = f"{path}:{number}"
        if "messages" not in record:
            raise TrainingDataError(f"{where}: no 'messages' field (the format `bedside drafting export-sft` writes)")
        chat = _chat(record["messages"], "messages", where)
        if chat[-1]["role"] != "assistant":
            raise TrainingDataError(f"{where}: the last message must be the assistant's reply to learn")
        if len(chat) < 2:
            raise TrainingDataError(f"{where}: the reply needs a prompt before it")
        examples.append({"prompt": _prompt(chat[:-1], "messages", where), "completion": chat[-1:]})
    return examples


def read_dpo(path: Path) -> list[dict[str, Chat]]:
    """Preference pairs as ``{"prompt", "chosen", "rejected"}``; extra fields (case id, theme) are dropped."""
    pairs = []
    for number, record in _records(path):
        where = f"{path}:{number}"
        missing = [f for f in ("prompt", "chosen", "rejected") if f not in record]
        if missing:
            raise TrainingDataError(
                f"{where}: missing {', '.join(missing)} (the format `bedside drafting tadpole` writes)"
            )
        prompt = _prompt(_chat(record["prompt"], "prompt", where), "prompt", where)
        chosen = _answer(record["chosen"], "chosen", where)
        rejected = _answer(record["rejected"], "rejected", where)
        if chosen[0]["content"].strip() == rejected[0]["content"].strip():
            raise TrainingDataError(f"{where}: chosen and rejected are the same text, so the pair teaches nothing")
        pairs.append({"prompt": prompt, "chosen": chosen, "rejected": rejected})
    return pairs
