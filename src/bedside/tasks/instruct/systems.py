"""The systems: the paper's single budgeted prompt, its multi-step refinement (MR), and a RAG extension.

Options every system takes: ``context`` (the window in tokens, default 2048), ``tokenizer`` (the budget tokenizer:
``embedded``, ``chars:N`` or a ``tokenizer.json`` path; by default the embedded model's when the system model is
embedded, and otherwise the cautious estimate :data:`DEFAULT_ENDPOINT_TOKENIZER`, ``chars:3``, so a config pointed
at another endpoint runs without naming a tokenizer per system), ``reserve`` (tokens kept for the answer, 256; also
the cap on generated tokens), ``view`` (``paper`` or ``timeline``, see :data:`.cases.RecordView`), ``system_prompt``
(optional system message; the paper does not say whether one was used), ``overhead`` (tokens the endpoint's chat
template adds to the prompt; by default the embedded model's measured cost, else 0) and ``template`` (a prompt
template to use instead of the shipped one).

- ``budgeted``: one prompt, the question then as much of the most recent record as fits (Figure S9).
- ``refine`` (MR): the record in chronological chunks, each as large as fits beside the refine prompt and a
  previous answer of up to ``reserve`` tokens; the first chunk is answered, each later one refines the answer;
  the answer after the last (most recent) chunk is the output. A step whose model call fails keeps the previous
  answer and goes on (the paper credits MR's robustness to its content-filter errors to this); every step's
  prompt tokens, output and error are stored. Effective context: unbounded (the paper's "32,768†").
- ``rag`` (an *extension*: the paper deliberately ran no retrieval): the record's events (timeline view) or
  fixed-size token windows of the raw text (paper view, ``window`` tokens, default 256) ranked by BM25 against
  the question (bm25s, lower-cased words without stop words: record XML and a question share few whitespace
  tokens), the best ``k`` (default: as many as fit) kept; when fewer units match than fit, the most recent
  unmatched ones fill the rest of the budget; the kept units go in record order.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from bedside.llm.errors import ModelError
from bedside.llm.types import GenerationSettings
from bedside.prompts import render_chat
from bedside.records.fit import DEFAULT_RESERVE, text_chunks
from bedside.records.fit import chunks as timeline_chunks
from bedside.records.timeline import assemble, timeline_blocks
from bedside.retrieval import BM25Index
from bedside.runs.task import Output, SampleContext
from bedside.tasks.instruct.cases import Instruction
from bedside.tasks.instruct.ehr import EHR
from bedside.tasks.instruct.endpoint import terms_warning
from bedside.tasks.instruct.prompting import (
    ANSWER_TEMPLATE,
    EMBEDDED_OVERHEAD,
    Budget,
    BudgetError,
    budgeted_prompt,
    fit_prompt,
)
from bedside.text.tokens import Tokenizer, get_tokenizer

REFINE_FIRST = "instruct/refine_first.j2"
REFINE_NEXT = "instruct/refine_next.j2"
VIEWS = ("paper", "timeline")
JOIN_MARGIN = 8  # tokens left for joins that separate counts miss, so that every chunk goes in whole
DEFAULT_ENDPOINT_TOKENIZER = "chars:3"
"""The budget tokenizer of a system whose model is not the embedded one and whose options name none: one token
per 3 characters, an estimate on the cautious side (BPE tokenizers average about 4 characters per token on
English; record text dense with digits and markup, which some tokenizers split finely, comes nearer 3), so the
record is cut a little more than needed rather than overflowing the window. It is stored with every output
(``budget_tokenizer``); for budgets in the model's own tokens, set ``tokenizer`` to its tokenizer.json."""
OPTIONS = frozenset(
    {"context", "tokenizer", "reserve", "view", "system_prompt", "overhead", "template", "k", "window", "templates"}
)


def _budget(options: Mapping[str, Any], context: SampleContext) -> Budget:
    unknown = sorted(set(options) - OPTIONS)
    if unknown:
        raise ValueError(f"unknown instruct system option(s) {', '.join(unknown)}; known: {', '.join(sorted(OPTIONS))}")
    spec = options.get("tokenizer")
    if spec is None:
        embedded = context.model("system").config.provider == "embedded"
        spec = "embedded" if embedded else DEFAULT_ENDPOINT_TOKENIZER
    tokenizer: Tokenizer = get_tokenizer(str(spec))
    overhead = options.get("overhead")
    if overhead is None:
        embedded = context.model("system").config.provider == "embedded"
        shape = "system+user" if options.get("system_prompt") else "user"
        overhead = EMBEDDED_OVERHEAD[shape] if embedded else 0
    return Budget(
        context=int(options.get("context", 2048)),
        tokenizer=tokenizer,
        reserve=int(options.get("reserve", DEFAULT_RESERVE)),
        overhead=int(overhead),
    )


def _view(options: Mapping[str, Any]) -> str:
    view = str(options.get("view", "paper"))
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}, not {view!r}")
    return view


def _settings(context: SampleContext, budget: Budget) -> GenerationSettings:
    """The run's settings with max_tokens capped at the reserve (the paper generated at most 256 tokens)."""
    settings = context.settings.get("system") or GenerationSettings()
    if settings.max_tokens is not None and settings.max_tokens > budget.reserve:
        raise ValueError(
            f"settings.system.max_tokens ({settings.max_tokens}) exceeds the reserve ({budget.reserve}): the answer "
            "would not fit the context; raise options.reserve or lower max_tokens"
        )
    return settings.model_copy(update={"max_tokens": settings.max_tokens or budget.reserve})


def _common(instruction: Instruction, context: SampleContext, budget: Budget, view: str) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "context": budget.context,
        "budget_tokenizer": budget.tokenizer.name,
        "reserve": budget.reserve,
        "record_view": view,
    }
    warning = terms_warning(context.model("system").config, medalign_sourced=instruction.medalign_sourced)
    if warning:
        extra["terms_warning"] = warning
    return extra


async def budgeted(instruction: Instruction, ehr: EHR, options: Mapping[str, Any], context: SampleContext) -> Output:
    budget, view = _budget(options, context), _view(options)
    extra = _common(instruction, context, budget, view)
    fitted = budgeted_prompt(
        instruction.question,
        ehr,
        view,
        budget,
        template=options.get("template") or ANSWER_TEMPLATE,
        system=options.get("system_prompt"),
    )
    completion = await context.generate("system", fitted.messages, settings=_settings(context, budget))
    extra.update(
        prompt_tokens=fitted.prompt_tokens,
        ehr_tokens=fitted.ehr_tokens,
        ehr_total_tokens=fitted.ehr_total_tokens,
        truncated=fitted.truncated,
        finish_reason=completion.finish_reason,
    )
    return Output(text=completion.text, extra=extra)


def record_chunks(ehr: EHR, view: str, tokenizer: Tokenizer, size: int) -> list[str]:
    """The whole record in time order, each piece at most ``size`` tokens (raw-text cuts or whole events)."""
    if view == "paper":
        return text_chunks(ehr.text("paper"), tokenizer, size)
    return timeline_chunks(ehr.record, tokenizer, size, reserve=0)


async def refine(instruction: Instruction, ehr: EHR, options: Mapping[str, Any], context: SampleContext) -> Output:
    budget, view = _budget(options, context), _view(options)
    extra = _common(instruction, context, budget, view)
    templates = dict(options.get("templates") or {})
    first_template, next_template = templates.get("first", REFINE_FIRST), templates.get("next", REFINE_NEXT)
    system = options.get("system_prompt")
    settings = _settings(context, budget)
    # The chunk size leaves room for the refine prompt and a previous answer of up to `reserve` tokens.
    scaffold = budget.count(
        render_chat(
            next_template, question=instruction.question, previous="", ehr="", part=999, parts=999, system=system
        )
    )
    size = budget.limit - scaffold - budget.reserve - JOIN_MARGIN
    if size <= 0:
        raise BudgetError(
            f"context {budget.context}: the refine prompt ({scaffold} tokens), the previous answer and the reserve "
            f"({budget.reserve} each) leave no room for the record"
        )
    pieces = record_chunks(ehr, view, budget.tokenizer, size)
    steps: list[dict[str, Any]] = []
    answer: str | None = None
    for number, piece in enumerate(pieces, start=1):
        variables = {"question": instruction.question, "part": number, "parts": len(pieces), "system": system}
        if answer is None:
            template, extra_vars = first_template, {}
        else:
            previous = budget.tokenizer.head(answer, budget.reserve)  # an answer is at most `reserve` tokens
            template, extra_vars = next_template, {"previous": previous}
        messages, kept, measured = fit_prompt(
            template,
            {**variables, **extra_vars},
            budget,
            cut=partial(budget.tokenizer.head, piece),
        )
        if kept != piece:
            raise BudgetError(
                f"refinement step {number}: its chunk did not fit whole ({len(kept)} of {len(piece)} chars)"
            )
        step: dict[str, Any] = {"step": number, "prompt_tokens": measured, "chunk_chars": len(piece)}
        try:
            completion = await context.generate("system", messages, settings=settings)
        except ModelError as exc:
            step["error"] = f"{type(exc).__name__}: {exc}"
            step["kept_previous"] = answer is not None
        else:
            answer = completion.text
            step["output"] = completion.text
        steps.append(step)
    if answer is None:
        raise RuntimeError(f"every one of the {len(pieces)} refinement steps failed; first: {steps[0].get('error')}")
    extra.update(
        steps=len(pieces),
        step_errors=sum("error" in s for s in steps),
        prompt_tokens=max(s["prompt_tokens"] for s in steps),
        effective_context="unbounded",
    )
    return Output(text=answer, trace=steps, extra=extra)


def _rag_units(ehr: EHR, view: str, tokenizer: Tokenizer, window: int) -> list[str]:
    if view == "paper":
        return text_chunks(ehr.text("paper"), tokenizer, window)
    return [block.body for block in timeline_blocks(ehr.record)]


async def rag(instruction: Instruction, ehr: EHR, options: Mapping[str, Any], context: SampleContext) -> Output:
    budget, view = _budget(options, context), _view(options)
    extra = _common(instruction, context, budget, view)
    extra["extension"] = "rag (not in the paper)"
    window = int(options.get("window", 256))
    units = _rag_units(ehr, view, budget.tokenizer, window)
    matched = [h.index for h in BM25Index(units).search(instruction.question, k=len(units))] if units else []
    seen = set(matched)
    preference = matched + [i for i in reversed(range(len(units))) if i not in seen]
    limit = int(options.get("k", len(units)))
    blocks = timeline_blocks(ehr.record) if view == "timeline" else []
    costs = budget.tokenizer.count_many(units)

    def cut(room: int) -> str:
        chosen: list[int] = []
        used = 0
        for index in preference:
            if len(chosen) >= limit:
                break
            if used + costs[index] + 1 <= room:
                chosen.append(index)
                used += costs[index] + 1
        chosen.sort()  # record order, oldest first
        if view == "timeline":
            text = assemble([blocks[i] for i in chosen])
            while chosen and budget.tokenizer.count(text) > room:
                chosen.pop(0)
                text = assemble([blocks[i] for i in chosen])
            return text
        return "\n".join(units[i] for i in chosen)

    messages, kept, measured = fit_prompt(
        options.get("template") or ANSWER_TEMPLATE,
        {"question": instruction.question, "system": options.get("system_prompt")},
        budget,
        cut=cut,
    )
    completion = await context.generate("system", messages, settings=_settings(context, budget))
    extra.update(
        prompt_tokens=measured,
        units=len(units),
        matched_units=len(matched),
        retrieved_chars=len(kept),
        finish_reason=completion.finish_reason,
    )
    return Output(text=completion.text, extra=extra)
