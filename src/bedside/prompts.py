"""Prompt templates: Jinja2 files shipped in the package, overridable by the user.

A template is named ``AREA/FILE.j2``. ``AREA`` is a bedside package (``llm``, or a task such as ``drafting``);
its shipped templates live in that package's ``prompts/`` folder. To change a prompt, copy it into a folder of
your own with the same relative name and point ``BEDSIDE_PROMPTS`` at that folder (several folders may be
given, separated by ``:``); yours are found first. Any function that takes a template also accepts a path.

A chat template marks where each message starts with a line holding only ``[[system]]``, ``[[user]]`` or
``[[assistant]]``; text before the first marker is not allowed (so nothing is silently dropped).
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

if TYPE_CHECKING:  # bedside.llm uses this module; import its types only where a chat is built
    from bedside.llm.types import ChatMessage

_MARKER = re.compile(r"^\[\[(system|user|assistant)\]\][ \t]*$", re.MULTILINE)


class PromptError(ValueError):
    """A template is missing, does not render, or renders to something that is not a chat."""


def _package_dir(area: str) -> Path | None:
    for package in (f"bedside.{area}", f"bedside.tasks.{area}"):
        try:
            spec = importlib.util.find_spec(package)
        except ModuleNotFoundError:
            continue
        if spec is not None and spec.submodule_search_locations:
            return Path(next(iter(spec.submodule_search_locations))) / "prompts"
    return None


def _resolve(template: str) -> Path | None:
    """The file a template name stands for now: user folders (``BEDSIDE_PROMPTS``) first, then the package."""
    area, _, rest = template.partition("/")
    candidates = [Path(d) / template for d in os.environ.get("BEDSIDE_PROMPTS", "").split(os.pathsep) if d]
    package_dir = _package_dir(area) if rest else None
    if package_dir is not None:
        candidates.append(package_dir / rest)
    return next((path for path in candidates if path.is_file()), None)


class _BedsideLoader(jinja2.BaseLoader):
    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        path = _resolve(template)
        if path is None:
            raise jinja2.TemplateNotFound(template)
        mtime = path.stat().st_mtime

        def uptodate() -> bool:  # a compiled template is reused until an override appears or a file changes
            return _resolve(template) == path and path.stat().st_mtime == mtime

        return path.read_text(encoding="utf-8"), str(path), uptodate


_ENV = jinja2.Environment(
    loader=_BedsideLoader(),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=False,
    autoescape=False,  # prompts are plain text for a model, not HTML
)


def load_template(template: str | Path) -> jinja2.Template:
    """A shipped template by name (``drafting/zero_shot.j2``), or any template file by path."""
    try:
        if isinstance(template, Path) or (os.sep in str(template) and Path(template).is_file()):
            path = Path(template)
            try:
                source = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise PromptError(f"{path}: cannot read template: {exc.strerror}") from None
            return _ENV.from_string(source)
        return _ENV.get_template(str(template))
    except jinja2.TemplateNotFound:
        raise PromptError(
            f"no prompt template {template!r} (looked in BEDSIDE_PROMPTS folders and the bedside package)"
        ) from None
    except jinja2.TemplateSyntaxError as exc:
        raise PromptError(f"{exc.filename or template}:{exc.lineno}: template syntax error: {exc.message}") from None


def render(template: str | Path, **variables: Any) -> str:
    """Render a template to text; a variable the template uses but was not given is an error."""
    try:
        return load_template(template).render(**variables).strip()
    except jinja2.UndefinedError as exc:
        raise PromptError(f"{template}: {exc.message}") from None


def render_chat(template: str | Path, **variables: Any) -> list[ChatMessage]:
    """Render a chat template into messages split at its ``[[role]]`` marker lines."""
    from bedside.llm.types import ChatMessage

    text = render(template, **variables)
    markers = list(_MARKER.finditer(text))
    if not markers or text[: markers[0].start()].strip():
        raise PromptError(f"{template}: a chat template must start with a [[system]] or [[user]] marker line")
    messages = []
    for marker, following in zip(markers, [*markers[1:], None], strict=True):
        end = following.start() if following else len(text)
        content = text[marker.end() : end].strip()
        if not content:
            raise PromptError(f"{template}: the [[{marker.group(1)}]] message is empty")
        messages.append(ChatMessage(role=marker.group(1), content=content))  # type: ignore[arg-type]
    return messages
