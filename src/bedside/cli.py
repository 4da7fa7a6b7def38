"""The ``bedside`` command. Thin on purpose: parse arguments, call the library, print."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from bedside import __version__
from bedside.llm import GenerationSettings, ModelError, Role, UsageLedger, default_cache_path, get_model
from bedside.llm.usage import RoleUsage

app = typer.Typer(
    name="bedside",
    help="Build, simulate and evaluate LLM systems that talk to patients, grounded in their records.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

ModelOption = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        help="PROVIDER/MODEL[@BASE_URL], e.g. embedded/smollm2-135m or "
        "openai-compatible/qwen2.5-7b@http://127.0.0.1:8000/v1",
    ),
]
CacheOption = Annotated[
    Path | None,
    typer.Option(
        "--cache", help="SQLite response cache [default: $BEDSIDE_CACHE or ~/.cache/bedside/llm-cache.sqlite]"
    ),
]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")]
ApiKeyEnvOption = Annotated[
    str | None, typer.Option("--api-key-env", help="Name of the environment variable holding the API key.")
]


def _version(value: bool) -> None:
    if value:
        out.print(f"bedside {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log retries and other events.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )


def _fail(exc: Exception) -> typer.Exit:
    err.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True)
    return typer.Exit(code=1)


def _cache_path(cache: Path | None, no_cache: bool) -> Path | None:
    return None if no_cache else cache or default_cache_path()


@app.command()
def generate(
    prompt: Annotated[str, typer.Argument(help="The user message; '-' reads it from standard input.")],
    model: ModelOption = "embedded/smollm2-135m",
    system: Annotated[str | None, typer.Option("--system", help="A system message sent before the prompt.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the completion and its usage as JSON.")] = False,
    max_tokens: Annotated[int | None, typer.Option(help="Most tokens to generate.")] = 256,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature.")] = None,
    seed: Annotated[int | None, typer.Option(help="Sampling seed, where the endpoint supports one.")] = None,
    epoch: Annotated[str, typer.Option(help="Sample tag: each tag is a distinct cached draw.")] = "0",
    api_key_env: ApiKeyEnvOption = None,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Send one prompt to a model and print its answer."""
    text = sys.stdin.read() if prompt == "-" else prompt
    settings = GenerationSettings(max_tokens=max_tokens, temperature=temperature, seed=seed)

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
        raise _fail(exc) from None


@app.command("serve-scripted")
def serve_scripted(
    port: Annotated[int, typer.Option(help="Port to listen on (0 picks a free one).")] = 8765,
    host: Annotated[str, typer.Option(help="Address to bind; keep the loopback default for tests.")] = "127.0.0.1",
    latency_ms: Annotated[float, typer.Option(help="Delay before each answer, in milliseconds.")] = 0.0,
    faults: Annotated[
        str | None, typer.Option(help="e.g. '429=0.1,500=0.05,hang=0.01,malformed=0.02,invalid-json=0.05'")
    ] = None,
    rules: Annotated[
        str | None, typer.Option(help="Rules file (YAML/JSON) or import path package.module:attribute.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the fault draws.")] = 0,
) -> None:
    """Serve scripted answers over the OpenAI chat API, for tests, benchmarks and fault drills."""
    from bedside.llm.scripted_server import ScriptedServer

    async def serve() -> None:
        server = ScriptedServer(rules, latency_ms=latency_ms, faults=faults, seed=seed, host=host, port=port)
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
        raise _fail(exc) from None


@app.command()
def demo(
    model: ModelOption = "embedded/smollm2-135m",
    messages: Annotated[
        Path | None, typer.Option(help="JSONL of portal messages [default: the bundled synthetic one]")
    ] = None,
    api_key_env: ApiKeyEnvOption = None,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Draft replies to synthetic patient portal messages and show them with token usage."""
    from bedside.data import DEMO_DIR
    from bedside.tasks.drafting import draft_reply, load_portal_messages

    usage = UsageLedger()

    async def run_command() -> None:
        portal = load_portal_messages(messages or DEMO_DIR / "portal_messages.jsonl")
        async with get_model(model, cache=_cache_path(cache, no_cache), usage=usage, api_key_env=api_key_env) as llm:
            for item in portal:
                completion = await draft_reply(llm, item)
                out.rule(f"portal message {item.id}")
                out.print("[bold]Patient:[/]", item.message, highlight=False)
                out.print(f"[bold]Draft reply[/] ({model}{', cached' if completion.cached else ''}):")
                out.print(completion.text, highlight=False, markup=False)
                out.print(
                    f"[dim]{completion.usage.prompt_tokens} prompt + {completion.usage.completion_tokens} "
                    f"completion tokens, {completion.latency_s:.2f} s, finish: {completion.finish_reason}[/]"
                )

    try:
        asyncio.run(run_command())
    except (ModelError, ValueError, OSError) as exc:
        raise _fail(exc) from None
    out.print(usage_table(usage.snapshot()))


def usage_table(by_role: dict[Role, RoleUsage]) -> Table:
    table = Table(title="Model usage by role")
    for column in ("role", "calls", "cache hits", "requests", "tokens in", "tokens out", "cost", "errors"):
        table.add_column(column, justify="left" if column == "role" else "right")
    for role, entry in by_role.items():
        table.add_row(
            role,
            str(entry.calls),
            str(entry.cache_hits),
            str(entry.requests),
            str(entry.prompt_tokens),
            str(entry.completion_tokens),
            f"{entry.cost:.4f}" if entry.priced else "-",
            str(entry.errors),
        )
    return table


def main() -> None:
    app()


if __name__ == "__main__":
    main()
