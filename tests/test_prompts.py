from __future__ import annotations

import re
from pathlib import Path

import pytest

from bedside.llm import ChatMessage
from bedside.prompts import PromptError, load_template, render, render_chat


def test_shipped_chat_template_renders_to_messages() -> None:
    chat = render_chat("drafting/zero_shot_nudged.j2", message="My cough is worse.", chart_summary="Asthma.")
    assert [m.role for m in chat] == ["system", "user"]
    assert "My cough is worse." in chat[1].content
    assert "Asthma." in chat[1].content


def test_user_folder_overrides_a_shipped_template(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "drafting").mkdir()
    (tmp_path / "drafting" / "zero_shot.j2").write_text("[[user]]\nReply to: {{ message }}\n")
    monkeypatch.setenv("BEDSIDE_PROMPTS", str(tmp_path))
    chat = render_chat("drafting/zero_shot.j2", message="hi", chart_summary="")
    assert chat == [ChatMessage(role="user", content="Reply to: hi")]


def test_template_by_path_and_missing_variable(tmp_path: Path) -> None:
    path = tmp_path / "mine.j2"
    path.write_text("Hello {{ name }}")
    assert render(path, name="Ana") == "Hello Ana"
    with pytest.raises(PromptError, match="'name' is undefined"):
        render(path)


def test_bad_templates_are_reported_with_their_name(tmp_path: Path) -> None:
    with pytest.raises(PromptError, match=r"no prompt template 'drafting/nope\.j2'"):
        render("drafting/nope.j2")
    loose = tmp_path / "loose.j2"
    loose.write_text("preamble\n[[user]]\nhi")
    with pytest.raises(PromptError, match="must start with"):
        render_chat(loose)
    broken = tmp_path / "broken.j2"
    broken.write_text("{% if %}")
    with pytest.raises(PromptError, match="syntax error"):
        render(broken)


def test_drafting_prompts_follow_the_paper_and_the_nudged_ones_are_named_apart() -> None:
    from bedside.tasks.drafting.systems import Example
    from bedside.tasks.drafting.themes import RESPONSE_THEMES, THEMES

    themes = [t for t in THEMES if t.key in RESPONSE_THEMES]
    example = Example("x", "Old message.", "Old chart.", "Old reply.", "dr", 0.9)
    variables = {"message": "My cough is worse.", "chart_summary": "Asthma.", "themes": themes, "examples": [example]}
    for name in ("zero_shot", "thematic", "rag"):
        faithful = _flat(render_chat(f"drafting/{name}.j2", **variables)).lower()
        nudged = _flat(render_chat(f"drafting/{name}_nudged.j2", **variables)).lower()
        assert "reply to the message as the patient's doctor" in faithful
        assert faithful.rstrip().endswith("doctor's reply:")
        # No advice toward the measured themes beyond the paper's theme list (thematic) and examples (rag).
        for nudge in ("urgent care", "ask a follow-up question", "what they should do next", "match their length"):
            assert nudge not in faithful, (name, nudge)
        assert faithful != nudged
    thematic = " ".join(m.content for m in render_chat("drafting/thematic.j2", **variables))
    assert all(t.name in thematic for t in themes)
    assert "Old reply." in " ".join(m.content for m in render_chat("drafting/rag.j2", **variables))
    nudged_zero = _flat(render_chat("drafting/zero_shot_nudged.j2", **variables))
    assert "urgent care" in nudged_zero


def _flat(chat: list[ChatMessage]) -> str:
    return " ".join(" ".join(m.content.split()) for m in chat)


ESCAPES = [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ cycler.__init__.__globals__.os.system('touch PWNED') }}",
    "{{ joiner.__init__.__globals__['os'].popen('touch PWNED').read() }}",
    "{{ lipsum.__globals__['os'].system('touch PWNED') }}",
    "{% set found = [] %}{{ found.append(1) }}",
    "{{ range(10**9) | list | length }}",
]


@pytest.mark.parametrize("source", ESCAPES)
def test_templates_are_sandboxed_and_a_refusal_names_the_file(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    evil = tmp_path / "evil.j2"
    evil.write_text(f"[[user]]\n{source}\n{{{{ message }}}}\n")
    with pytest.raises(PromptError) as caught:
        render_chat(evil, message="hi")
    assert str(evil) in str(caught.value)
    assert "sandbox" in str(caught.value) or "range" in str(caught.value).lower()
    # Through a user prompt folder too: the error names the file the name resolved to.
    (tmp_path / "prompts" / "drafting").mkdir(parents=True)
    override = tmp_path / "prompts" / "drafting" / "zero_shot.j2"
    override.write_text(evil.read_text())
    monkeypatch.setenv("BEDSIDE_PROMPTS", str(tmp_path / "prompts"))
    with pytest.raises(PromptError, match=re.escape(str(override))):
        render_chat("drafting/zero_shot.j2", message="hi", chart_summary="")
    assert not (tmp_path / "PWNED").exists()


def test_a_template_path_in_a_run_config_cannot_run_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 19: a crafted template named by a run config created a file; configs are data."""
    import yaml
    from typer.testing import CliRunner

    from bedside.cli import app
    from bedside.runs import Store, load_config
    from bedside.testing import ScriptedServer

    monkeypatch.chdir(tmp_path)
    evil = tmp_path / "evil.j2"
    evil.write_text("[[user]]\n{{ cycler.__init__.__globals__.os.system('touch PWNED') }}\n{{ message }}\n")
    store_path = tmp_path / "store.sqlite"
    with ScriptedServer() as server:
        config = {
            "name": "crafted",
            "task": "drafting",
            "datasets": {"demo": {"limit": 2}},
            "systems": {"zero_shot": {"type": "zero_shot", "options": {"template": str(evil), "evaluate": False}}},
            "models": {"system": server.model_name()},
            "scorers": ["words"],
            "store": str(store_path),
        }
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        result = CliRunner().invoke(app, ["run", str(path), "--no-cache"])
        requests = server.stats()["requests"]
    assert result.exit_code == 1, result.output  # both samples are errors, so the run says so
    assert "2 errors" in result.output
    assert requests == 0  # refused while building the prompt, before anything was sent
    assert not (tmp_path / "PWNED").exists()
    store = Store(str(store_path))
    try:
        rows = store.results(load_config(path).run_id)
    finally:
        store.close()
    assert [r.status for r in rows] == ["error", "error"]
    for row in rows:
        assert row.error is not None
        assert row.error.startswith(f"PromptError: {evil}: refused by the template sandbox")


def test_a_file_in_the_working_directory_does_not_shadow_a_shipped_template(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = render("llm/structured_repair.j2", error="E")
    stray = tmp_path / "llm" / "structured_repair.j2"
    stray.parent.mkdir()
    stray.write_text("stray {{ error }}", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert render("llm/structured_repair.j2", error="E") == shipped  # the name wins
    assert render("./llm/structured_repair.j2", error="E") == "stray E"  # an explicit path is a file
    assert render(stray, error="E") == "stray E"
    mine = tmp_path / "mine" / "prompt.j2"
    mine.parent.mkdir()
    mine.write_text("mine {{ error }}", encoding="utf-8")
    assert render("mine/prompt.j2", error="E") == "mine E"  # no such name: an existing file is read


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "steps"),
        ("{% for i in range(3) %}{% for j in range(100000) %}{{ j }}{% endfor %}{% endfor %}", "steps"),
        ("{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}", "recurses"),
        ("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", "recurses"),
        ('{{ "x" * 100000000000 }}', "'*' would build"),
        ("{{ range(100000)|list * 1000 }}", "'*' would build"),
        ("{{ 10 ** (10 ** 10) }}", "'**' would build"),
        ('{{ "x"|center(10**9) }}', "center would build"),
        ('{{ "x".center(10**9) }}', "center would build"),
        ('{{ "x".rjust(10**9) }}', "rjust would build"),
        ('{{ "x\ny"|indent(10**8, true) }}', "indent would build"),
        ('{{ "%1000000000s"|format("x") }}', "format would build"),
        ('{{ "%1000000000s" % "x" }}', "'%' would build"),
        ('{{ "{:>1000000000}".format("x") }}', "format would build"),
        ('{{ ("x" * 1000000)|replace("x", "y" * 100) }}', "replace would build"),
        ('{{ "a\tb".expandtabs(10**9) }}', "expandtabs would build"),
        # widths taken from the arguments, and joins (issue 48's audit: 31 s and 3.9 GB, 1 GB, 100 MB)
        ('{{ "%*s"|format(10**9, "x") }}', "format would build"),
        ('{{ "%*s" % (10**9, "x") }}', "'%' would build"),
        ('{{ "%.*f" % (10**9, 1.5) }}', "'%' would build"),
        ('{{ "{0:{1}}".format("x", 10**9) }}', "format would build"),
        ('{{ range(100000)|join("y" * 1000) }}', "join would build"),
        ('{{ ("y" * 1000).join(["a"] * 100000) }}', "join would build"),
        ('{{ ("y" * 1000).join(range(100000)|map("string")) }}', "join would build"),
    ],
)
def test_runaway_templates_are_stopped_with_an_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, reason: str
) -> None:
    import bedside.prompts

    monkeypatch.setattr(bedside.prompts, "MAX_LOOP_STEPS", 200_000)  # the bound, smaller so the test stays quick
    template = tmp_path / "runaway.j2"
    template.write_text(source)
    # a size fixed in the template is refused as it is loaded (with its line), one from the render as it runs
    with pytest.raises(PromptError, match=f"{template}(: rendering stopped: |:\\d+: ).*{re.escape(reason)}"):
        render(template)


def test_a_constant_that_cannot_be_computed_does_not_break_loading(tmp_path: Path) -> None:
    """The load-time size check evaluates constant arguments; one that fails (a zero to a negative power, a float
    too large for an integer) is left to the render, never a traceback from loading."""
    for source in ('{{ "x"|center(0 ** -1) }}', '{{ "x" * (0 ** -1) }}', '{{ "x"|center((10.0 ** 300) ** 2) }}'):
        template = tmp_path / "odd.j2"
        template.write_text(source)
        load_template(template)


def test_bounded_rendering_keeps_ordinary_loops_and_arithmetic(tmp_path: Path) -> None:
    template = tmp_path / "ok.j2"
    template.write_text(
        "{% for i in items %}{{ loop.index }}. {{ i }}\n{% else %}none{% endfor %}"
        '{{ 2 * 3 }} {{ "ab" * 2 }} {{ 2 ** 8 }} {% for x in [[1, [2]]] recursive %}{{ x }}{% endfor %}'
    )
    assert render(template, items=["a", "b"]) == "1. a\n2. b\n6 abab 256 [1, [2]]"
    sized = tmp_path / "sized.j2"
    sized.write_text(
        '{{ "ok"|center(6) }}|{{ "%5.2f"|format(3.14159) }}|{{ 7 % 3 }}|{{ "a,b".replace(",", ";") }}|'
        '{{ "{0:>3}".format("x") }}|{{ "a\nb"|indent(2, true) }}'
    )
    assert render(sized) == "ok  | 3.14|1|a;b|  x|  a\n  b"
    assert render(template, items=[]) == "none6 abab 256 [1, [2]]"
    # Each render has a budget of its own: many renders of a loop-heavy template all pass.
    many = tmp_path / "many.j2"
    many.write_text("{% for i in range(90000) %}{% endfor %}ok")
    assert all(render(many) == "ok" for _ in range(15))
