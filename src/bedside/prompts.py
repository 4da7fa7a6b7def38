"""Prompt templates: Jinja2 files shipped in the package, overridable by the user.

A template is named ``AREA/FILE.j2``. ``AREA`` is a bedside package (``llm``, or a task such as ``drafting``);
its shipped templates live in that package's ``prompts/`` folder. To change a prompt, copy it into a folder of
your own with the same relative name and point ``BEDSIDE_PROMPTS`` at that folder (several folders may be
given, separated by ``:``); yours are found first. Any function that takes a template also accepts a path.

A chat template marks where each message starts with a line holding only ``[[system]]``, ``[[user]]`` or
``[[assistant]]``; text before the first marker is not allowed (so nothing is silently dropped).

Templates are data, not code: a run config can name any template file, and configs get shared. Every template
is rendered in Jinja's immutable sandbox, so one cannot reach Python internals (``__class__``, ``__globals__``,
...), call methods that change lists or dicts, or build ranges above 100,000 items; trying any of these is a
:class:`PromptError` naming the template file.

Rendering is also bounded, so a template cannot hang a run: every ``{% for %}`` loop counts its iterations
against one budget per render (:data:`MAX_LOOP_STEPS`, and a wall-clock :data:`MAX_RENDER_SECONDS` checked at
each step), ``*`` and ``**`` may not build strings, lists or numbers beyond :data:`MAX_BUILT` items or digits,
and neither may the filters and string methods whose output a number sizes (``center``, ``indent``,
``format``, ``replace``, ``ljust``, ``zfill``, ``expandtabs``, ``%`` and ``.format`` widths...): their arguments
are checked before the string is built. Recursion past Python's limit is stopped. Each is a :class:`PromptError`
naming the file.
"""

from __future__ import annotations

import contextvars
import importlib.util
import math
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

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


MAX_LOOP_STEPS = 1_000_000
"""Loop iterations one render may take, all loops together (prompts loop over a record's items: thousands)."""
MAX_RENDER_SECONDS = 60.0
"""Wall-clock bound on one render, checked at each loop step (the step budget is the deterministic bound)."""
MAX_BUILT = 10_000_000
"""The most items (characters, list items, digits) ``*`` and ``**`` may build in a template."""


class RenderLimitError(SecurityError):
    """A render went past one of the bounds above."""


class _Budget:
    def __init__(self, steps: int, seconds: float) -> None:
        self.steps = steps
        self.deadline = time.monotonic() + seconds

    def step(self) -> None:
        self.steps -= 1
        if self.steps < 0:
            raise RenderLimitError(f"the template's loops took more than {MAX_LOOP_STEPS:,} steps (a runaway loop?)")
        if self.steps % 1024 == 0 and time.monotonic() > self.deadline:
            raise RenderLimitError(f"rendering took longer than {MAX_RENDER_SECONDS:g} s (a runaway loop?)")


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("bedside_render_budget", default=None)


_WIDTHS = re.compile(r"%[-#0 +]*(\d+)?(?:\.(\d+))?[a-zA-Z%]|\{[^{}]*?:[^{}]*?(\d+)(?:\.(\d+))?[^{}]*\}")
"""Widths and precisions in ``%`` and ``str.format`` specs: "%1000000000s", "{:>1000000000}"."""


_DYNAMIC_WIDTH = re.compile(r"%[-#0 +]*\*|%[-#0 +]*\d*\.\*|\{[^{}]*:[^{}]*\{")
"""A width or precision taken from the arguments: "%*s", "%.*f", "{0:{1}}"."""


def _spec_width(spec: object, arguments: Iterable[Any] = ()) -> int:
    """The largest width or precision a format string asks for (0 for anything that is not a string); where the
    spec takes one from its arguments, the largest whole number among them counts too."""
    if not isinstance(spec, str):
        return 0
    widest = max((int(n) for m in _WIDTHS.finditer(spec) for n in m.groups() if n), default=0)
    if _DYNAMIC_WIDTH.search(spec):
        numbers = [a for a in arguments if isinstance(a, int) and not isinstance(a, bool)]
        widest = max([widest, *numbers])
    return widest


def _flat(value: Any) -> list[Any]:
    """A format's arguments: a tuple or a mapping's values, or the one value."""
    if isinstance(value, tuple | list):
        return list(value)
    if isinstance(value, dict):
        return list(value.values())
    return [value]


def _check_size(what: str, size: float) -> None:
    if size > MAX_BUILT:
        raise RenderLimitError(f"{what} would build {size:,.0f} characters (at most {MAX_BUILT:,})")


def _sized_call(name: str, text: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuse a string filter or method whose output a number sizes past :data:`MAX_BUILT`, before it runs."""
    numbers = [a for a in (*args, *kwargs.values()) if isinstance(a, int) and not isinstance(a, bool)]
    widest = max(numbers, default=0)
    lines = text.count("\n") + 1
    if name in ("center", "ljust", "rjust", "zfill"):
        _check_size(name, widest)
    elif name == "indent":
        width = next(iter(args), kwargs.get("width", 4))
        _check_size(name, len(text) + lines * (len(width) if isinstance(width, str) else int(width or 0)))
    elif name == "expandtabs":
        _check_size(name, len(text) + text.count("\t") * widest)
    elif name in ("format", "format_map"):
        values = [v for a in (*args, *kwargs.values()) for v in _flat(a)]
        _check_size(name, max([_spec_width(text, values), *(_spec_width(a, values) for a in args)]))
    elif name == "join" and args:
        items = args[0]
        count = len(items) if hasattr(items, "__len__") else 0
        _check_size(name, len(text) * max(count - 1, 0))
    elif name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        grows = len(args[1]) - len(args[0])
        if grows > 0:
            count = text.count(args[0]) if args[0] else len(text) + 1
            _check_size(name, len(text) + count * grows)


_SIZED = ("center", "ljust", "rjust", "zfill", "indent", "expandtabs", "format", "format_map", "replace", "join")


def _bounded_filter(name: str, inner: Callable[..., Any]) -> Callable[..., Any]:
    def bounded(value: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(value, str) or name == "format":
            _sized_call(name, str(value), args, kwargs)
        return inner(value, *args, **kwargs)

    return bounded


def _bounded_join(inner: Callable[..., Any]) -> Callable[..., Any]:
    """The ``join`` filter, refused before it runs when its items and separators would pass :data:`MAX_BUILT`
    ("range(100000)|join('y' * 1000)" is 100 MB). The items are taken one loop step each."""

    @jinja2.pass_eval_context
    def join(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> str:
        items = value if isinstance(value, list | tuple | str) else list(_ENV.bounded_loop(value))
        size = len(str(d)) * max(len(items) - 1, 0)
        if attribute is None:
            size += sum(len(x) if isinstance(x, str) else 8 for x in items)
        _check_size("join", size)
        return str(inner(eval_ctx, items, d, attribute))

    return join


_HUGE = math.inf
"""What a constant too large to compute stands for in :func:`_constant`."""


def _constant(node: nodes.Node) -> Any:
    """The value of a constant expression (``10**9``, ``"x" * 3``), without running anything large; None when the
    expression depends on the template's variables or cannot be computed (``0 ** -1``: the render says why). A
    power too large to compute is :data:`_HUGE`."""
    try:
        return _evaluated(node)
    except (ArithmeticError, ValueError):
        return None


def _evaluated(node: nodes.Node) -> Any:
    if isinstance(node, nodes.Const):
        return node.value
    if isinstance(node, nodes.Neg | nodes.Pos):
        inner = _constant(node.node)
        return -inner if isinstance(node, nodes.Neg) and isinstance(inner, int | float) else inner
    if isinstance(node, nodes.BinExpr):
        left, right = _constant(node.left), _constant(node.right)
        numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in (left, right))
        if not numbers:
            return None
        if isinstance(node, nodes.Pow):
            if right > 0 and max(1, abs(int(left)).bit_length()) * right * 0.302 > 15:
                return _HUGE
            return left**right
        operations = {nodes.Add: float.__add__, nodes.Sub: float.__sub__, nodes.Mul: float.__mul__}
        for kind, operation in operations.items():
            if isinstance(node, kind):
                found = operation(float(left), float(right))
                return int(found) if isinstance(left, int) and isinstance(right, int) else found
    return None


def _constant_runaway(node: nodes.Node) -> str | None:
    """What a filter or string method called with constant arguments would build past :data:`MAX_BUILT`
    (``"x"|center(10**9)``, ``"%1000000000s"|format(1)``, ``"x".ljust(10**9)``), said as the render would say it;
    None where nothing constant is too large. Sizes taken from the template's variables are bounded at render."""
    if isinstance(node, nodes.Mul):
        for sized, times in (
            (_constant(node.left), _constant(node.right)),
            (_constant(node.right), _constant(node.left)),
        ):
            if (
                isinstance(sized, str | list | tuple)
                and isinstance(times, int | float)
                and len(sized) * times > MAX_BUILT
            ):
                return _too_big("'*'", len(sized) * times, "items")
        return None
    if isinstance(node, nodes.Filter) and node.name in _SIZED:
        name, subject, args = node.name, node.node, node.args
    elif isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr) and node.node.attr in _SIZED:
        name, subject, args = node.node.attr, node.node.node, node.args
    else:
        return None
    values = [_constant(a) for a in args]
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    text = _constant(subject) if subject is not None else None
    widest = max(numbers, default=0)
    if name in ("format", "format_map") and isinstance(text, str):
        widest = max(widest if _DYNAMIC_WIDTH.search(text) else 0, _spec_width(text))
    elif name in ("format", "format_map", "replace", "join"):
        return None  # sized by what they are given: bounded at render
    return _too_big(name, widest, "characters") if widest > MAX_BUILT else None


def _too_big(what: str, size: float, unit: str) -> str:
    amount = f"more {unit} than can be counted" if size == _HUGE else f"{size:,.0f} {unit}"
    return f"{what} would build {amount} (at most {MAX_BUILT:,})"


class _BoundedSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox with bounded loops, ``*``/``**``/``%`` and size-producing string calls (see the
    module docstring)."""

    intercepted_binops = frozenset({"*", "**", "%"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        for name in ("center", "indent", "format", "replace"):
            self.filters[name] = _bounded_filter(name, self.filters[name])
        self.filters["join"] = _bounded_join(self.filters["join"])

    def call(self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        # str.format reaches here wrapped by the sandbox's safe formatter (functools.update_wrapper: __wrapped__)
        owner = getattr(__obj, "__self__", None) or getattr(getattr(__obj, "__wrapped__", None), "__self__", None)
        name = getattr(__obj, "__name__", "")
        if isinstance(owner, str) and name == "join" and args and not hasattr(args[0], "__len__"):
            args = (list(self.bounded_loop(args[0])), *args[1:])  # a generator is counted before it is joined
        if isinstance(owner, str) and name in _SIZED:
            _sized_call(name, owner, args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def _generate(
        self, source: nodes.Template, name: str | None, filename: str | None, defer_init: bool = False
    ) -> str:
        # Jinja's documented hook between parsing and code generation: every loop's iterable is wrapped so each
        # iteration takes a step of the render's budget.
        for loop in source.find_all(nodes.For):
            loop.iter = nodes.Call(nodes.EnvironmentAttribute("bounded_loop"), [loop.iter], [], None, None)
        # A size fixed in the template itself is refused when it is loaded (and so by `config check`), not first
        # when a run renders it.
        for call in source.find_all((nodes.Filter, nodes.Call, nodes.Mul)):
            if runaway := _constant_runaway(call):
                raise RenderLimitError(f"{filename or name}:{call.lineno}: {runaway}")
        return super()._generate(source, name, filename, defer_init)

    def bounded_loop(self, iterable: Iterable[Any]) -> Iterator[Any]:
        budget = _BUDGET.get()
        if budget is None:  # rendered outside render() (a caller of load_template): a budget of its own
            budget = _Budget(MAX_LOOP_STEPS, MAX_RENDER_SECONDS)
        for item in iterable:
            budget.step()
            yield item

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "%":
            _check_size("'%'", _spec_width(left, _flat(right)))
            return left % right
        if operator == "*":
            for sized, times in ((left, right), (right, left)):
                if isinstance(sized, str | list | tuple) and isinstance(times, int) and len(sized) * times > MAX_BUILT:
                    raise RenderLimitError(f"'*' would build {len(sized) * times:,} items (at most {MAX_BUILT:,})")
            return left * right
        if isinstance(left, int) and isinstance(right, int) and right > 0:
            digits = max(1, abs(left).bit_length()) * right * 0.302  # decimal digits of the result, roughly
            if digits > MAX_BUILT:
                raise RenderLimitError(f"'**' would build a number of about {digits:,.0f} digits")
        return left**right


_ENV = _BoundedSandbox(
    loader=_BedsideLoader(),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=False,
    autoescape=False,  # prompts are plain text for a model, not HTML
)


def load_template(template: str | Path) -> jinja2.Template:
    """A template by name (``drafting/zero_shot.j2``: BEDSIDE_PROMPTS folders, then the package), or by path.

    A name is looked up first, so a stray file of the same relative name in the working directory never replaces
    a shipped prompt unnoticed; a ``Path``, an absolute path or one starting with ``./``, ``../`` or ``~`` is
    always read as a file, and any other string that names no template but an existing file is read as one too.
    """
    name = str(template)
    explicit = isinstance(template, Path) or name.startswith(("/", "./", "../", "~"))
    try:
        if not explicit:
            try:
                return _ENV.get_template(name)
            except jinja2.TemplateNotFound:
                if not Path(name).is_file():
                    raise
        return _template_file(Path(name).expanduser())
    except jinja2.TemplateNotFound:
        raise PromptError(
            f"no prompt template {template!r} (looked in BEDSIDE_PROMPTS folders and the bedside package)"
        ) from None
    except jinja2.TemplateSyntaxError as exc:
        raise PromptError(f"{exc.filename or template}:{exc.lineno}: template syntax error: {exc.message}") from None
    except RenderLimitError as exc:  # a size the template fixes, found when it was compiled
        raise PromptError(f"{exc}: refused before any sample is rendered") from None


def _template_file(path: Path) -> jinja2.Template:
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PromptError(f"{path}: cannot read template: {exc.strerror}") from None
    # Compiled with its file name (from_string would say "<template>"), so errors can name the file.
    code = _ENV.compile(source, filename=str(path))
    return _ENV.template_class.from_code(_ENV, code, _ENV.make_globals(None))


def template_variables(template: str | Path) -> frozenset[str]:
    """The variables ``template`` reads that it does not set itself: what a caller must give it (templates it
    includes are not followed)."""
    from jinja2 import meta

    loaded = load_template(template)
    source = Path(loaded.filename).read_text(encoding="utf-8") if loaded.filename else ""
    return frozenset(meta.find_undeclared_variables(_ENV.parse(source)))


def render(template: str | Path, **variables: Any) -> str:
    """Render a template to text; a variable the template uses but was not given is an error, and so is anything
    the sandbox refuses."""
    loaded = load_template(template)
    where = loaded.filename or str(template)  # the file a template name resolved to, or the path given
    token = _BUDGET.set(_Budget(MAX_LOOP_STEPS, MAX_RENDER_SECONDS))
    try:
        return loaded.render(**variables).strip()
    except RenderLimitError as exc:
        raise PromptError(f"{where}: rendering stopped: {exc}") from None
    except RecursionError:
        raise PromptError(f"{where}: rendering stopped: the template recurses without end") from None
    except SecurityError as exc:
        raise PromptError(f"{where}: refused by the template sandbox: {exc}") from None
    except jinja2.UndefinedError as exc:
        raise PromptError(f"{where}: {exc.message}") from None
    except OverflowError as exc:  # among others, the sandbox's limit on range()
        raise PromptError(f"{where}: {exc}") from None
    finally:
        _BUDGET.reset(token)


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
