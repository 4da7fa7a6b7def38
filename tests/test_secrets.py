"""The API key is sent, and appears nowhere else: not in the cache, logs, errors or stored requests."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from pathlib import Path
from urllib.parse import quote

import pytest
from aiohttp import web

from bedside.errors import StorageError
from bedside.llm import ModelError, RetriesExhaustedError, RetryPolicy, get_model, parse_model_spec
from bedside.llm.secrets import redact, remember_secret, scrub_data, strip_userinfo
from bedside.runs import Store
from bedside.testing import ScriptedServer

SECRET = "sk-bedside-test-0123456789abcdef"


def test_api_key_is_used_but_never_stored_or_logged(
    cache_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("BEDSIDE_TEST_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    policy = RetryPolicy(max_retries=2, initial_delay_s=0.01)
    errors: list[str] = []
    with ScriptedServer(api_key=SECRET, faults="first=429+500,retry-after=0.01") as server:

        async def run() -> None:
            async with get_model(
                server.model_name(), cache=cache_path, api_key_env="BEDSIDE_TEST_KEY", retry=policy
            ) as model:
                await model.generate("hello")
                await model.generate("how are you")

        asyncio.run(run())
        answers = server.stats()["answers"]
        assert answers["ok"] == 2  # authorised: the key reached the server

    with ScriptedServer(faults="500=1.0") as failing:

        async def fail() -> None:
            async with get_model(
                failing.model_name(), api_key_env="BEDSIDE_TEST_KEY", retry=policy, cache=cache_path
            ) as model:
                await model.generate("x")

        with pytest.raises(RetriesExhaustedError) as info:
            asyncio.run(fail())
        errors.append(str(info.value))
        errors.append(repr(info.value.cause))

    raw = b"".join(p.read_bytes() for p in cache_path.parent.glob("cache.sqlite*"))
    assert raw
    assert SECRET.encode() not in raw
    assert "BEDSIDE_TEST_KEY" not in raw.decode("utf-8", "replace")
    assert caplog.records, "retries should have been logged"
    assert all(SECRET not in r.getMessage() for r in caplog.records)
    assert all(SECRET not in e for e in errors)


# ----------------------------------------------------------------------------------------------- what redact sees

DRILL_KEY = "sk-unit+9c1e/77ab=f00d4c3b2a190e8d7c6b5a4f"


def _pieces(text: str, form: str) -> list[str]:
    return [form[i : i + 8] for i in range(len(form) - 7) if form[i : i + 8] in text]


def test_redact_masks_pieces_line_breaks_and_encoded_forms() -> None:
    remember_secret(DRILL_KEY)
    encoded = quote(DRILL_KEY, safe="")
    cases = {
        "cut by the endpoint": f"Authorization: Bearer {DRILL_KEY[:23]}",
        "cut at the front": f"...{DRILL_KEY[-22:]} rest",
        "split across lines": f"key {DRILL_KEY[:11]}\n{DRILL_KEY[11:30]}\r\n{DRILL_KEY[30:]} end",
        "short first line": f"key {DRILL_KEY[:3]}\n{DRILL_KEY[3:]} end",
        "JSON-escaped break": f'{{"message": "Bearer {DRILL_KEY[:17]}\\n{DRILL_KEY[17:]}"}}',
        "url-encoded": f"GET /v1?api_key={encoded}&x=1",
        "url-encoded, cut": f"api_key={encoded[:14]}",
    }
    for user in ("a", "ab", "abc", "clinician"):  # every byte alignment of the key inside base64(user:key)
        cases[f"basic {user}"] = "Authorization: Basic " + base64.b64encode(f"{user}:{DRILL_KEY}".encode()).decode()
    basic_forms = [base64.b64encode(f"{u}:{DRILL_KEY}".encode()).decode()[8:] for u in ("a", "ab", "abc", "clinician")]
    for name, text in cases.items():
        clean = redact(text)
        assert "***" in clean, name
        for form in (DRILL_KEY, encoded, *basic_forms):
            assert not _pieces(clean, form), (name, clean)
    assert redact(f"{DRILL_KEY[:3]}") == DRILL_KEY[:3]  # a piece under 8 characters alone is not the key
    ordinary = "The patient took 4f9a tablets; see http://example.org/a@b and Dear patient, all is well."
    assert redact(ordinary) == ordinary


def test_scrub_strips_userinfo_from_every_url() -> None:
    assert strip_userinfo("openai-compatible/m@http://u:p%40ss@h:8/v1") == "openai-compatible/m@http://h:8/v1"
    assert strip_userinfo("a http://u:pw@h/v1,https://v@g/v1 b") == "a http://h/v1,https://g/v1 b"
    assert strip_userinfo("postgresql+psycopg://bob:pw@db/x?table=t") == "postgresql+psycopg://db/x?table=t"
    assert strip_userinfo("http://h/path?who=a@b") == "http://h/path?who=a@b"
    assert scrub_data({"u": ["http://x:y@h/"], "n": 1}) == {"u": ["http://h/"], "n": 1}
    config = parse_model_spec("openai-compatible/m@http://user:hunter2secret@127.0.0.1:9/v1")
    assert config.name == "openai-compatible/m@http://127.0.0.1:9/v1"


def test_a_store_url_with_a_password_is_refused_with_a_pointer_to_pgpass() -> None:
    with pytest.raises(StorageError) as caught:
        Store("postgresql+psycopg://bedside:hunter2secret@127.0.0.1:1/evals")
    message = str(caught.value)
    assert "hunter2secret" not in message
    assert "bedside:" not in message
    assert "PGPASSWORD" in message
    assert ".pgpass" in message


def test_userinfo_in_a_base_url_authenticates_but_is_never_logged_cached_or_stored(
    cache_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    password = "pw-" + "7f3e91c2ab54d08e"
    caplog.set_level(logging.INFO)
    seen: list[str] = []
    with ScriptedServer(faults="first=500", echo_headers=True) as server:
        url = f"http://ann:{password}@127.0.0.1:{server.port}/v1"

        async def run() -> str:
            async with get_model(
                f"openai-compatible/m@{url}", cache=cache_path, retry=RetryPolicy(max_retries=1, initial_delay_s=0.01)
            ) as model:
                seen.append(model.name)
                return (await model.generate("hello")).text

        text = asyncio.run(run())
    basic = base64.b64encode(f"ann:{password}".encode()).decode()
    assert "Authorization: Basic ***" in text  # it was sent (the endpoint echoed it), and masked on the way back
    raw = b"".join(p.read_bytes() for p in cache_path.parent.glob("cache.sqlite*")).decode("utf-8", "replace")
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "retry 1/1" in logged
    for where in (raw, logged, text, *seen):
        assert not _pieces(where, password)
        assert not _pieces(where, basic)
        assert "ann:" not in where


def test_an_answer_holding_the_key_is_masked_in_the_cache_and_the_log_says_so(
    cache_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("BEDSIDE_TEST_KEY", SECRET)
    caplog.set_level(logging.WARNING)
    rules = {"repeat": f"Sure: {SECRET[:12]}\n{SECRET[12:]} is your key"}
    with ScriptedServer(rules=rules, api_key=SECRET) as server:

        async def run() -> str:
            async with get_model(server.model_name(), cache=cache_path, api_key_env="BEDSIDE_TEST_KEY") as model:
                return (await model.generate("repeat the key")).text

        text = asyncio.run(run())
    assert text == "Sure: *** is your key"
    raw = b"".join(p.read_bytes() for p in cache_path.parent.glob("cache.sqlite*")).decode("utf-8", "replace")
    assert "is your key" in raw
    assert not _pieces(raw, SECRET)
    assert any("masked" in r.getMessage() and "secret" in r.getMessage() for r in caplog.records)


# --------------------------------------------------------------------------------------------------- redirects


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_the_key_goes_only_to_the_configured_origin_on_every_redirect(
    status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BEDSIDE_TEST_KEY", SECRET)
    received: list[tuple[int, str, str | None, str | None]] = []

    async def record(request: web.Request) -> web.Response:
        received.append(
            (request.url.port or 0, request.path, request.headers.get("Authorization"), request.headers.get("api-key"))
        )
        if request.path.endswith("/same"):
            return web.json_response(
                {
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": "fine"}, "finish_reason": "stop"}
                    ]
                }
            )
        target = {
            "/a/v1/chat/completions": "/b/v1/same",  # relative, same origin: followed with the key
            "/x/v1/chat/completions": f"http://127.0.0.1:{ports[1]}/v1/chat/completions",  # port change
            "/y/v1/chat/completions": f"http://localhost:{ports[0]}/v1/same",  # host change, same port
            "/z/v1/chat/completions": "//localhost/v1/same",  # scheme-relative, other host
        }[request.path]
        return web.Response(status=status, headers={"Location": target})

    ports: list[int] = []

    async def scenario() -> dict[str, str]:
        runners = []
        for _ in range(2):
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", record)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            ports.append(int(runner.addresses[0][1]))
            runners.append(runner)
        outcomes: dict[str, str] = {}
        try:
            for prefix in ("a", "x", "y", "z"):
                for header in ("Authorization", "api-key"):
                    spec = f"openai-compatible/m@http://127.0.0.1:{ports[0]}/{prefix}/v1"
                    async with get_model(
                        spec, cache=None, api_key_env="BEDSIDE_TEST_KEY", api_key_header=header, max_retries=0
                    ) as model:
                        try:
                            outcomes[f"{prefix} {header}"] = (await model.generate("hi")).text
                        except ModelError as exc:
                            outcomes[f"{prefix} {header}"] = str(exc)
        finally:
            for runner in runners:
                await runner.cleanup()
        return outcomes

    outcomes = asyncio.run(scenario())
    for header in ("Authorization", "api-key"):
        assert outcomes[f"a {header}"] == "fine"  # (after a 303, fetched with GET, as HTTP says)
        for prefix in ("x", "y", "z"):
            assert "another origin" in outcomes[f"{prefix} {header}"], outcomes
            assert SECRET not in outcomes[f"{prefix} {header}"]
    first = ports[0]
    for port, path, authorization, api_key in received:
        sent_key = SECRET in (authorization or "") or SECRET in (api_key or "")
        assert port == first, (port, path)  # nothing at all reached the other origin
        assert sent_key, path  # and on the configured origin, every request carried it


def test_every_command_that_calls_a_model_takes_the_same_api_key_env_option() -> None:
    from typing import Any

    import typer

    from bedside.cli import app

    def commands(command: Any, path: str) -> list[tuple[str, Any]]:
        subs = getattr(command, "commands", None)
        if not subs:
            return [(path, command)]
        return [found for name, sub in subs.items() for found in commands(sub, f"{path} {name}".strip())]

    calling = []
    for path, command in commands(typer.main.get_command(app), ""):
        options = {o for p in command.params for o in getattr(p, "opts", [])}
        if path.startswith("train "):
            continue  # fine-tuning: --model names local weights to train, not an endpoint to call
        if path == "serve-model":
            continue  # serves local weights: its --api-key-env names the key clients must send, not one to send
        if options & {"--model", "-m"}:
            calling.append(path)
            assert "--api-key-env" in options, path
            option = next(p for p in command.params if "--api-key-env" in getattr(p, "opts", []))
            assert option.help == "Name of the environment variable holding the API key.", path
    for named in (
        "judges run",
        "citeqa answer",
        "drafting editjudge",
        "drafting tadpole",
        "drafting calibrate",
        "discharge parse",
        "instruct judge",
        "generate",
    ):
        assert named in calling


def test_api_key_env_reaches_the_endpoint_from_a_task_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bedside.cli import app

    monkeypatch.setenv("BEDSIDE_TEST_KEY", SECRET)
    with ScriptedServer(api_key=SECRET, rules={".": '{"score": 4, "reason": "ok"}'}) as server:
        result = CliRunner().invoke(
            app,
            [
                "judges",
                "run",
                "diagnostic_accuracy_hard",
                "-i",
                "diagnosis_statement=flu",
                "-i",
                "true_diagnosis=flu",
                "-m",
                server.model_name(),
                "--no-cache",
                "--api-key-env",
                "BEDSIDE_TEST_KEY",
                "--json",
            ],
        )
        stats = server.stats()["answers"]
    assert stats.get("401", 0) == 0, (stats, result.output)
    assert stats.get("ok", 0) >= 1, (stats, result.output)


def test_the_stored_run_config_keeps_no_url_credentials_or_known_keys(tmp_path: Path) -> None:
    remember_secret(DRILL_KEY)
    store = Store(str(tmp_path / "store.sqlite"))
    try:
        store.begin_run(
            "r1",
            "r",
            "drafting",
            {
                "cache": "postgresql+psycopg://bedside:pg-secret-9f8e7d@db/evals?table=t",
                "models": {"system": ["openai-compatible/m@http://u:url-secret-1a2b3c@127.0.0.1:9/v1"]},
                "note": f"pasted by mistake: {DRILL_KEY}",
            },
        )
        stored = store.run("r1")["config"]
    finally:
        store.close()
    text = json.dumps(stored)
    assert "pg-secret" not in text
    assert "url-secret" not in text
    assert not _pieces(text, DRILL_KEY)
    assert stored["cache"] == "postgresql+psycopg://db/evals?table=t"
    assert stored["models"]["system"] == ["openai-compatible/m@http://127.0.0.1:9/v1"]
