"""`bedside generate`, `serve-scripted` and `serve-model`: one model call, the scripted endpoint for drills, and
the embedded model behind llama.cpp's HTTP server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
from typing import Annotated

import typer

from bedside.cli.app import (
    ApiKeyEnvOption,
    CacheOption,
    ModelOption,
    NoCacheOption,
    _cache_path,
    app,
    settings_from_options,
)
from bedside.console import fail, out
from bedside.llm import ModelError, get_model


@app.command()
def generate(
    prompt: Annotated[str, typer.Argument(help="The user message; '-' reads it from standard input.")],
    model: ModelOption = "embedded/smollm2-135m",
    system: Annotated[str | None, typer.Option("--system", help="A system message sent before the prompt.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the completion and its usage as JSON.")] = False,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Most tokens to generate.")] = 256,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature.")] = None,
    seed: Annotated[int | None, typer.Option(help="Sampling seed, where the endpoint supports one.")] = None,
    epoch: Annotated[str, typer.Option(help="Sample tag: each tag is a distinct cached draw.")] = "0",
    api_key_env: ApiKeyEnvOption = None,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Send one prompt to a model and print its answer."""
    text = sys.stdin.read() if prompt == "-" else prompt
    settings = settings_from_options(max_tokens=max_tokens, temperature=temperature, seed=seed)

    async def run_command() -> None:
        async with get_model(model, cache=_cache_path(cache, no_cache), api_key_env=api_key_env) as llm:
            completion = await llm.generate(text, settings, system=system, epoch=epoch)
        if as_json:
            data = completion.model_dump(mode="json")
            data["text"] = completion.text
            data["usage"] = {**data["usage"], "total_tokens": completion.usage.total_tokens}
            out.print_json(json.dumps(data))
        else:
            out.print(completion.text, highlight=False, markup=False)

    try:
        asyncio.run(run_command())
    except (ModelError, ValueError) as exc:
        raise fail(exc) from None


@app.command("serve-scripted")
def serve_scripted(
    port: Annotated[int, typer.Option(help="Port to listen on (0 picks a free one).")] = 8765,
    host: Annotated[str, typer.Option(help="Address to bind; keep the loopback default for tests.")] = "127.0.0.1",
    latency_ms: Annotated[float, typer.Option(help="Delay before each answer, in milliseconds.")] = 0.0,
    faults: Annotated[
        str | None,
        typer.Option(
            help="e.g. '429=0.1,500=0.05,hang=0.01,malformed=0.02,invalid-json=0.05,null=0.05,empty=0.02,length=0.1'"
        ),
    ] = None,
    echo_headers: Annotated[
        bool, typer.Option(help="Start every answer and error body with the request's headers (a leak drill).")
    ] = False,
    rules: Annotated[
        str | None, typer.Option(help="Rules file (YAML/JSON) or import path package.module:attribute.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the fault draws.")] = 0,
) -> None:
    """Serve scripted answers over the OpenAI chat API, for tests, benchmarks and fault drills."""
    from bedside.llm.scripted_server import ScriptedServer

    async def serve() -> None:
        server = ScriptedServer(
            rules, latency_ms=latency_ms, faults=faults, seed=seed, host=host, port=port, echo_headers=echo_headers
        )
        await server.start_async()
        out.print(f"serving scripted answers on {server.base_url}", highlight=False)
        sys.stdout.flush()
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop_async()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    except (ValueError, OSError) as exc:
        raise fail(exc) from None


def wait_until_interrupted(poll_s: float = 0.2) -> None:
    """Block until Ctrl-C (``KeyboardInterrupt``).

    Not one endless wait: the kernel hands a process's SIGINT to any of its threads, and llama.cpp runs many.
    When one of those takes it, Python only sets a flag for the main thread, which an endless wait never looks
    at (CI saw ``serve-model`` ignore a Ctrl-C that way). Waking every ``poll_s`` lets the main thread see it."""
    never = threading.Event()
    while not never.wait(poll_s):
        pass


@app.command("serve-model")
def serve_model(
    model: Annotated[
        str, typer.Option("--model", "-m", help="'smollm2-135m' (the embedded model) or a path to a local .gguf.")
    ] = "smollm2-135m",
    port: Annotated[int, typer.Option(help="Port to listen on (0 picks a free one).")] = 8080,
    host: Annotated[
        str, typer.Option(help="Address to bind; another than the loopback default needs --api-key-env.")
    ] = "127.0.0.1",
    n_ctx: Annotated[int, typer.Option(help="Context tokens in all, split between the parallel slots.")] = 8192,
    parallel: Annotated[int, typer.Option(help="Requests decoded together.")] = 1,
    threads: Annotated[int | None, typer.Option(help="CPU threads (default: all cores).")] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option("--api-key-env", help="Environment variable holding the key clients must send (Bearer)."),
    ] = None,
) -> None:
    """Serve a GGUF model with llama.cpp's OpenAI-compatible HTTP server until Ctrl-C.

    Several runs, or machines, then share one loaded model through ``openai-compatible/<model>@<url>``.
    """
    from bedside.llm.model_server import start_model_server
    from bedside.llm.secrets import read_api_key

    try:
        key = read_api_key(api_key_env)
        if key is None and host not in {"127.0.0.1", "localhost", "::1"}:
            raise ValueError(f"--host {host} would serve the model to the network without a key: set --api-key-env")
        server = start_model_server(
            model, host=host, port=port, n_ctx=n_ctx, parallel=parallel, threads=threads, api_key=key
        )
    except (ModelError, ValueError) as exc:
        raise fail(exc) from None
    # Ctrl-C is how it stops, from the moment the banner can be seen: a Ctrl-C arriving between the banner and
    # the wait (a loaded machine can pause there) stops it as cleanly as one during the wait.
    with server, contextlib.suppress(KeyboardInterrupt):
        out.print(
            f"serving {server.model} on {server.base_url}; use it as --model {server.spec}",
            highlight=False,
            soft_wrap=True,
        )
        # llama.cpp decodes --parallel requests at once and queues the rest; a run that sends more waits, and
        # its calls time out as "no answer". The alias's max_concurrency keeps it to what the server decodes.
        out.print(
            f"it answers {parallel} request(s) at a time: in a run config give it max_concurrency: {parallel}, e.g.\n"
            f"  models:\n    local: {{provider: openai-compatible, model: {server.model}, "
            f"base_url: {server.base_url}, max_concurrency: {parallel}}}",
            highlight=False,
            soft_wrap=True,
        )
        sys.stdout.flush()
        wait_until_interrupted()
