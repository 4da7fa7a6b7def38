"""Deterministic answers from rules: the engine behind the ``scripted`` provider and the scripted server.

A rule is a regular expression searched in the last user message and the reply to give when it matches
(a string, or a callable that receives the whole conversation). Rules are tried in order; the first match
wins; with no match the default reply is given, which echoes the last user message unless set.

Rules file (YAML or JSON)::

    default: "I am not sure."
    rules:
      - pattern: "(?i)refill"
        reply: "Your refill has been sent to the pharmacy."
      - pattern: "validation error"
        reply: '{"score": 3}'
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bedside.inputs import InputError, loads_json, read_text
from bedside.llm.types import ChatMessage
from bedside.safe_yaml import YamlLimitError, safe_load

Reply = str | Callable[[Sequence[ChatMessage]], str]


def count_words(text: str) -> int:
    """Token count used by scripted answers: whitespace-separated words, a documented stand-in."""
    return len(text.split())


def echo(messages: Sequence[ChatMessage]) -> str:
    """The default reply: the last user message, unchanged."""
    return last_user_message(messages)


def last_user_message(messages: Sequence[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            return message.content
    return ""


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str]
    reply: Reply


@dataclass(frozen=True)
class ScriptedRules:
    rules: tuple[Rule, ...] = ()
    default: Reply = field(default=echo)

    def answer(self, messages: Sequence[ChatMessage]) -> str:
        text = last_user_message(messages)
        for rule in self.rules:
            if rule.pattern.search(text):
                return _reply(rule.reply, messages)
        return _reply(self.default, messages)

    @classmethod
    def coerce(cls, spec: Any) -> ScriptedRules:
        """Build rules from what a user is likely to hand over.

        Accepts ``None`` (echo), a :class:`ScriptedRules`, a callable (answers everything), a mapping of
        pattern to reply, a sequence of ``(pattern, reply)`` pairs, a path to a YAML/JSON rules file, or an
        import path ``package.module:attribute`` naming any of these.
        """
        if spec is None:
            return cls()
        if isinstance(spec, ScriptedRules):
            return spec
        if callable(spec):
            return cls(default=spec)
        if isinstance(spec, Path):
            return cls.from_file(spec)
        if isinstance(spec, str):
            if re.fullmatch(r"[\w.]+:[\w.]+", spec) and not Path(spec).exists():
                return cls.from_import_path(spec)
            return cls.from_file(Path(spec))
        if isinstance(spec, Mapping):
            if "rules" in spec or "default" in spec:
                return cls.from_data(spec, source="<mapping>")
            return cls(rules=tuple(_rule(p, r) for p, r in spec.items()))
        if isinstance(spec, Sequence):
            return cls(rules=tuple(_rule(p, r) for p, r in spec))
        raise TypeError(f"cannot build scripted rules from {type(spec).__name__}")

    @classmethod
    def from_file(cls, path: Path) -> ScriptedRules:
        text = read_text(path)
        try:
            data = loads_json(text, path=path) if path.suffix == ".json" else safe_load(text)
        except yaml.YAMLError as exc:
            raise InputError(f"{path}: not valid YAML: {exc}") from None
        except YamlLimitError as exc:
            raise InputError(f"{path}: {exc}") from None
        return cls.from_data(data, source=str(path))

    @classmethod
    def from_data(cls, data: Any, *, source: str) -> ScriptedRules:
        if not isinstance(data, Mapping):
            raise InputError(f"{source}: expected a mapping with 'rules' and optionally 'default'")
        unknown = set(data) - {"rules", "default"}
        if unknown:
            raise InputError(f"{source}: unknown keys {sorted(unknown)}; expected 'rules' and 'default'")
        rules = []
        listed = data.get("rules") or []
        if not isinstance(listed, list):
            raise InputError(f"{source}: 'rules' must be a list of {{pattern, reply}} mappings")
        for i, item in enumerate(listed):
            if not isinstance(item, Mapping) or set(item) != {"pattern", "reply"}:
                raise InputError(f"{source}: rules[{i}] must have exactly the keys 'pattern' and 'reply'")
            try:
                rules.append(_rule(str(item["pattern"]), str(item["reply"])))
            except re.error as exc:
                raise InputError(f"{source}: rules[{i}].pattern is not a valid regular expression: {exc}") from None
        default = data.get("default")
        return cls(rules=tuple(rules), default=echo if default is None else str(default))

    @classmethod
    def from_import_path(cls, path: str) -> ScriptedRules:
        module_name, _, attr = path.partition(":")
        try:
            obj: Any = importlib.import_module(module_name)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"cannot import scripted rules {path!r}: {exc}") from None
        return cls.coerce(obj)


def _rule(pattern: str | re.Pattern[str], reply: Reply) -> Rule:
    compiled = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern, re.DOTALL)
    return Rule(pattern=compiled, reply=reply)


def _reply(reply: Reply, messages: Sequence[ChatMessage]) -> str:
    return reply if isinstance(reply, str) else reply(messages)
