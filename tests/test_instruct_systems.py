"""The instruct systems: budgets measured in a real tokenizer, multi-step refinement, RAG, and whole runs."""

from __future__ import annotations

import asyncio
import base64
import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bedside.llm import ChatMessage, GenerationSettings, get_model
from bedside.llm.errors import ModelRequestError
from bedside.runs import Store, execute, load_config
from bedside.runs.task import SampleContext
from bedside.tasks.instruct import Instruction
from bedside.tasks.instruct.ehr import load_ehr
from bedside.tasks.instruct.endpoint import MedAlignTermsWarning, is_local, terms_warning
from bedside.tasks.instruct.prompting import Budget, BudgetError, budgeted_prompt
from bedside.tasks.instruct.systems import record_chunks, refine
from bedside.testing import ScriptedServer
from bedside.text.tokens import CharEstimate, TokenizerError, get_tokenizer


def long_xml(visits: int) -> str:
    """A MedAlign-style record (dialect a) written for this test: many visits, notes with digits and Unicode."""
    parts = ["<record>"]
    for v in range(visits):
        day = f"{(v % 12) + 1:02d}/{(v % 27) + 1:02d}/{2000 + v // 12}"
        parts.append(f'<visit type="Office Visit" start="{day} 09:00">\n<day start="{day} 09:00">')
        parts.append(f'<measurement start="{day} 09:05 AM">\n<code>[LOINC/8480-6] Systolic BP {120 + v % 40}</code>')
        parts.append("</measurement>")
        parts.append(f'<note type="progress note" start="{day} 09:30 AM">\nVisit {v}: café, naïve, µg dosing; ')
        parts.append(f"patient reports item {v * 7} résumé. Plan: follow up.\n</note>\n</day>\n</visit>")
    parts.append("</record>")
    return "\n".join(parts)


@pytest.fixture(scope="module")
def long_record(tmp_path_factory: pytest.TempPathFactory) -> Instruction:
    path = tmp_path_factory.mktemp("ehr") / "p1.xml"
    path.write_text(long_xml(120), encoding="utf-8")
    return Instruction(id="long", question="What was the last systolic BP?", record=str(path))


def embedded_or_skip() -> Any:
    try:
        return get_tokenizer("embedded")
    except TokenizerError as exc:
        pytest.skip(str(exc))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    context=st.integers(min_value=420, max_value=6000),
    question=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=80),
    view=st.sampled_from(["paper", "timeline"]),
)
def test_budgeted_prompt_fits_the_context_in_the_real_tokenizer(
    long_record: Instruction, context: int, question: str, view: str
) -> None:
    """The hypothesis of the budget: the assembled prompt never exceeds context − 256 in the model's own tokens,
    the question is never cut, and what is kept is the most recent part of the record."""
    tokenizer = embedded_or_skip()
    budget = Budget(context=context, tokenizer=tokenizer)
    ehr = load_ehr(long_record)
    try:
        fitted = budgeted_prompt(question, ehr, view, budget)
    except BudgetError:
        assert tokenizer.count(question) > context - 256 - 60  # only a question that nearly fills it all
        return
    measured = sum(tokenizer.count(m.content) for m in fitted.messages)
    assert measured == fitted.prompt_tokens
    assert measured <= context - 256
    content = fitted.messages[-1].content
    assert f'Question: "{question}"' in content or question != question.strip()  # never cut (the chat splitter
    # strips the message's outer whitespace only)
    assert content.index("Question:") < content.index("EHR:")  # question before the record, no answer cue
    assert content.rstrip().endswith('"')
    kept = content[content.index('EHR: "') + 6 : -1]
    if view == "paper":
        assert ehr.text("paper").endswith(kept)  # a tail of the raw file text
    else:
        assert kept.startswith("<record>")  # well-formed, whole events
        assert "</record>" in kept
    assert fitted.truncated == (fitted.ehr_tokens < fitted.ehr_total_tokens)


def test_a_budget_that_holds_no_record_is_an_error(long_record: Instruction) -> None:
    budget = Budget(context=300, tokenizer=CharEstimate(4))
    with pytest.raises(BudgetError, match="leaves no room for the record"):
        budgeted_prompt("q " * 200, load_ehr(long_record), "paper", budget)


def test_a_different_budget_tokenizer_changes_the_cut_not_the_rule(long_record: Instruction) -> None:
    ehr = load_ehr(long_record)
    coarse = budgeted_prompt("BP?", ehr, "paper", Budget(2048, CharEstimate(2)))
    fine = budgeted_prompt("BP?", ehr, "paper", Budget(2048, CharEstimate(6)))
    assert coarse.prompt_tokens <= 2048 - 256
    assert fine.prompt_tokens <= 2048 - 256
    assert len(fine.messages[0].content) > len(coarse.messages[0].content)


def _context(model: Any, **kw: Any) -> SampleContext:
    return SampleContext({"system": model}, {"system": GenerationSettings(**kw)} if kw else {}, "0", 0)


@pytest.mark.parametrize("view", ["paper", "timeline"])
def test_refinement_covers_the_record_once_in_order_within_budget(long_record: Instruction, view: str) -> None:
    tokenizer = CharEstimate(4)
    ehr = load_ehr(long_record)
    seen: list[str] = []

    def reply(messages: Sequence[ChatMessage]) -> str:
        content = messages[-1].content
        seen.append(content)
        return f"answer {len(seen)}"

    options = {"context": 1024, "tokenizer": "chars:4", "view": view}

    async def go() -> Any:
        async with get_model("scripted/m", options={"rules": {"EHR": reply}}) as model:
            return await refine(long_record, ehr, options, _context(model))

    output = asyncio.run(go())
    steps = output.trace
    assert output.text == f"answer {len(steps)}"
    assert output.extra["steps"] == len(steps) > 3
    assert all(s["prompt_tokens"] <= 1024 - 256 for s in steps)
    assert "Response so far" not in seen[0]
    assert 'Response so far: "answer 1"' in seen[1]
    pieces = record_chunks(ehr, view, tokenizer, 1024 - 256)
    if view == "paper":
        shown = [c[c.index('EHR: "') + 6 : -1] for c in seen]
        assert "".join(shown) == ehr.text("paper")  # every character once, oldest first
    else:
        assert all(p.startswith("<record>") for p in pieces)


def test_a_failing_refinement_step_keeps_the_previous_answer(long_record: Instruction) -> None:
    calls = {"n": 0}

    def reply(messages: Sequence[ChatMessage]) -> str:
        calls["n"] += 1
        if calls["n"] == 2:
            raise ModelRequestError("content filter", retryable=False)
        return f"answer {calls['n']}"

    async def go() -> Any:
        async with get_model("scripted/m", options={"rules": {"EHR": reply}}, max_retries=0) as model:
            return await refine(
                long_record, load_ehr(long_record), {"context": 2048, "tokenizer": "chars:4"}, _context(model)
            )

    output = asyncio.run(go())
    assert output.extra["step_errors"] == 1
    failed = output.trace[1]
    assert "content filter" in failed["error"]
    assert failed["kept_previous"] is True
    assert output.trace[2]["output"] == "answer 3"  # the step after the failure refined answer 1
    assert output.text == f"answer {calls['n']}"


def test_max_tokens_above_the_reserve_is_refused(long_record: Instruction) -> None:
    async def go() -> Any:
        async with get_model("scripted/m") as model:
            return await refine(
                long_record,
                load_ehr(long_record),
                {"context": 2048, "tokenizer": "chars:4"},
                _context(model, max_tokens=512),
            )

    with pytest.raises(ValueError, match="exceeds the reserve"):
        asyncio.run(go())


def test_non_loopback_endpoints_get_the_medalign_warning() -> None:
    remote = get_model("openai-compatible/m@http://10.2.3.4:8000/v1").config
    assert not is_local(remote)
    assert is_local(get_model("openai-compatible/m@http://127.0.0.1:8000/v1").config)
    assert is_local(get_model("openai-compatible/m@http://localhost:8000/v1").config)
    assert is_local(get_model("openai-compatible/m@http://[::1]:8000/v1").config)
    assert terms_warning(remote, medalign_sourced=False) is None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        message = terms_warning(remote, medalign_sourced=True)
        again = terms_warning(remote, medalign_sourced=True)
    assert message is not None
    assert "HIPAA" in message
    assert again == message  # stored with every result...
    assert sum(issubclass(w.category, MedAlignTermsWarning) for w in caught) == 1  # ...warned once per endpoint


CORRECTNESS = json.dumps(
    {
        "appropriate": {"score": 1, "justification": "fits the record"},
        "no_consequential_errors": {"score": 1, "justification": "no errors"},
        "addresses_request": {"score": 1, "justification": "answers it"},
    }
)
RULES: list[tuple[str, Any]] = [
    (r"Patient record", CORRECTNESS),
    (r"Response so far", "Lisinopril 10 mg daily, switched for ankle swelling."),
    (r"EHR", "The patient takes lisinopril."),
]


def write_config(tmp_path: Path, server: ScriptedServer) -> Path:
    config = {
        "name": "instruct-test",
        "task": "instruct",
        "datasets": {"synthetic": {"limit": 4}},
        "systems": {
            "budgeted_512": {"type": "budgeted", "options": {"context": 512, "tokenizer": "chars:4"}},
            "budgeted_4k": {
                "type": "budgeted",
                "options": {"context": 4096, "tokenizer": "chars:4", "view": "timeline", "judge": True},
            },
            "mr": {"type": "refine", "options": {"context": 900, "tokenizer": "chars:4"}},
            "rag": {"type": "rag", "options": {"context": 512, "tokenizer": "chars:4", "view": "timeline"}},
        },
        "models": {"system": [server.model_name("m")], "judge": server.model_name("j")},
        "store": str(tmp_path / "store.sqlite"),
        "concurrency": 2,
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_systems_by_context_length_through_a_run(tmp_path: Path) -> None:
    from bedside.runs.report import build_report, html_page

    with ScriptedServer(RULES) as server:
        config = load_config(write_config(tmp_path, server))
        summary = asyncio.run(execute(config, cache=False))
        requests = server.stats()["requests"]
    assert summary.errors == 0
    store = Store(config.store)
    try:
        rows = {(r.system, r.sample_id): r for r in store.results(config.run_id)}
        report = build_report(store, config.run_id)
    finally:
        store.close()
    short, long = rows[("budgeted_512", "syn-01")], rows[("budgeted_4k", "syn-01")]
    assert short.output is not None
    assert long.output is not None
    assert short.output["extra"]["context"] == 512
    assert short.output["extra"]["record_view"] == "paper"
    assert short.output["extra"]["truncated"] is True
    assert short.output["extra"]["prompt_tokens"] <= 512 - 256
    assert long.output["extra"]["truncated"] is False
    assert long.scores["judge_correct"] == 1.0
    assert short.scores["judge_correct"] is None  # the judge was not asked for this system
    mr = rows[("mr", "syn-01")]
    assert mr.scores["facts_correct"] == 1.0  # the refine answer states lisinopril and ankle swelling
    assert rows[("rag", "syn-01")].output["extra"]["system_kind"] == "rag (extension)"  # type: ignore[index]
    table = report.tables[0]
    assert [row[0] for row in table.rows] == ["budgeted", "budgeted", "refine", "rag (extension)"]
    assert [row[2] for row in table.rows] == ["512", "4096", "unbounded", "512"]
    assert requests >= 4 * 4
    # the HTML report draws correctness by context length and the response-length distribution
    assert [title for title, _ in report.task_plots] == ["Correctness by context length", "Response lengths"]
    assert all(base64.b64decode(png).startswith(b"\x89PNG") for _, png in report.task_plots)
    page = html_page(report)
    assert "Task plots" in page
    assert page.count("data:image/png;base64,") >= 2
    assert "<figcaption>Correctness by context length</figcaption>" in page


def test_instruct_plots_are_left_out_without_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    from types import SimpleNamespace

    from bedside.tasks.instruct.plots import report_plots

    row = SimpleNamespace(
        status="ok",
        system="budgeted_512",
        model="m",
        output={"text": "Lisinopril 10 mg.", "extra": {"system_kind": "budgeted", "context": 512}},
        scores={"facts_correct": 1.0},
    )
    assert [title for title, _ in report_plots([row])] == ["Correctness by context length", "Response lengths"]
    assert report_plots([]) == []
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    assert report_plots([row]) == []


@pytest.mark.embedded
def test_budgeted_prompt_on_the_embedded_model_fits_by_llama_cpps_own_count() -> None:
    """The embedded model runs the paper's prompt for real; llama.cpp's own prompt token count, which includes the
    chat template's tokens, must stay within context − 256 (the default overhead is the template's measured cost)."""
    from bedside.tasks.instruct.readers import read_instructions
    from bedside.tasks.instruct.systems import budgeted
    from bedside.tasks.instruct.task import DEMO_RECORDS, SYNTHETIC_INSTRUCTIONS

    embedded_or_skip()
    instruction = read_instructions(SYNTHETIC_INSTRUCTIONS)[0]
    ehr = load_ehr(instruction, str(DEMO_RECORDS))

    async def go() -> Any:
        async with get_model("embedded/smollm2-135m") as model:
            context = _context(model, max_tokens=24, temperature=0.0)
            output = await budgeted(instruction, ehr, {"context": 512}, context)
            completion = await model.generate(context.prompts[0], GenerationSettings(max_tokens=24, temperature=0.0))
            return output, completion.usage.prompt_tokens

    output, llama_prompt_tokens = asyncio.run(go())
    assert output.text.strip()
    assert output.extra["truncated"] is True
    assert output.extra["prompt_tokens"] <= 512 - 256
    assert llama_prompt_tokens == output.extra["prompt_tokens"]  # bedside's count is llama.cpp's, template included
    assert llama_prompt_tokens <= 512 - 256


@pytest.mark.parametrize("view", ["paper", "timeline"])
def test_rag_extension_keeps_matching_parts_within_the_budget(long_record: Instruction, view: str) -> None:
    from bedside.tasks.instruct.systems import rag

    ehr = load_ehr(long_record)
    question = "Which visit reported item 833?"

    async def go() -> Any:
        async with get_model("scripted/m", options={"rules": {"EHR": "ok"}}) as model:
            context = _context(model)
            case = long_record.model_copy(update={"question": question})
            output = await rag(
                case, ehr, {"context": 1024, "tokenizer": "chars:4", "view": view, "window": 64}, context
            )
            return output, context.prompts[0][-1].content

    output, prompt = asyncio.run(go())
    assert output.extra["prompt_tokens"] <= 1024 - 256
    assert output.extra["extension"] == "rag (not in the paper)"
    assert output.extra["matched_units"] >= 1
    assert "item 833" in prompt  # the one note that answers it was retrieved
    kept = prompt[prompt.index('EHR: "') + 6 : -1]
    if view == "timeline":
        assert kept.startswith("<record>")
    else:
        units = record_chunks(ehr, "paper", CharEstimate(4), 64)
        position = 0
        for unit in units:  # the kept text is whole raw-text windows joined by line breaks, in record order
            if kept.startswith(unit, position):
                position += len(unit) + 1
        assert position == len(kept) + 1


def test_shipped_demo_config_runs_with_a_scripted_model(tmp_path: Path) -> None:
    """configs/instruct-demo.yaml as shipped (systems x contexts), the model swapped for a scripted endpoint; the
    budget tokenizer stays the embedded model's, named explicitly because the endpoint is no longer embedded."""
    embedded_or_skip()
    path = Path(__file__).resolve().parents[1] / "configs" / "instruct-demo.yaml"
    with ScriptedServer(RULES) as server:
        config = load_config(path)
        systems = {
            name: system.model_copy(update={"options": {**system.options, "tokenizer": "embedded"}})
            for name, system in config.systems.items()
        }
        config = config.model_copy(
            update={
                "models": {"system": [server.model_name("m")]},
                "systems": systems,
                "datasets": {name: d.model_copy(update={"limit": 2}) for name, d in config.datasets.items()},
                "store": str(tmp_path / "demo.sqlite"),
            }
        )
        summary = asyncio.run(execute(config, cache=False))
    assert summary.errors == 0
    store = Store(config.store)
    try:
        rows = list(store.results(config.run_id))
    finally:
        store.close()
    contexts = {(r.system, r.output["extra"]["context"]) for r in rows if r.output}
    assert contexts == {("budgeted_512", 512), ("budgeted_2k", 2048), ("refine_1536", 1536), ("rag_512", 512)}
    assert all(r.output["extra"]["prompt_tokens"] <= r.output["extra"]["context"] - 256 for r in rows if r.output)


def test_the_demo_config_pointed_at_another_endpoint_needs_no_tokenizer(tmp_path: Path) -> None:
    """No system names a tokenizer: off the embedded model, budgets are counted with the documented cautious
    estimate (chars:3), named in every output, and every prompt fits its window by that count."""
    path = Path(__file__).resolve().parents[1] / "configs" / "instruct-demo.yaml"
    with ScriptedServer(RULES) as server:
        config = load_config(path, [f"models.system={server.model_name('m')}", f"store={tmp_path / 'demo.sqlite'}"])
        assert all("tokenizer" not in system.options for system in config.systems.values())
        config = config.model_copy(
            update={"datasets": {name: d.model_copy(update={"limit": 2}) for name, d in config.datasets.items()}}
        )
        summary = asyncio.run(execute(config, cache=False))
    assert summary.errors == 0
    store = Store(config.store)
    try:
        rows = list(store.results(config.run_id))
    finally:
        store.close()
    assert rows
    for row in rows:
        assert row.output is not None
        extra = row.output["extra"]
        assert extra["budget_tokenizer"] == "chars:3"
        assert extra["prompt_tokens"] + extra["reserve"] <= extra["context"]
