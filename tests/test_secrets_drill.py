"""The red-team drill for secrets, end to end: a run against endpoints that echo the request headers (cut at the
snippet limit, cut mid-key by the endpoint, split across lines, URL-encoded, in a 200 answer, with the key in the
base URL's userinfo), then export, show and report; every file bedside wrote is grepped for any 8-character piece
of the key, of its base64 Basic form and of its URL-encoded form.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml
from aiohttp import web
from typer.testing import CliRunner

from bedside.cli import app

# '+', '/' and '=' make the URL-encoded form differ from the key itself.
KEY = "sk-drill+4f9a/2c7e=1b8d6a3f0e5c9b2a7d4e1f8c"
USER = "drill"
PIECE = 8
cli = CliRunner()


def key_forms() -> list[str]:
    return [KEY, quote(KEY, safe=""), base64.b64encode(f"{USER}:{KEY}".encode()).decode()]


def leaked_pieces(data: bytes) -> set[str]:
    text = data.decode("utf-8", "replace")
    return {
        form[i : i + PIECE] for form in key_forms() for i in range(len(form) - PIECE + 1) if form[i : i + PIECE] in text
    }


def _echo(request: web.Request) -> str:
    return "".join(f"{k}: {v}\n" for k, v in request.headers.items())


async def _chat(request: web.Request) -> web.Response:
    """Each model name is one way a careless endpoint leaks what it was sent."""
    body = await request.json()
    mode = body["model"]
    headers = _echo(request)
    at = headers.find(KEY)
    assert at >= 0, "the key must reach the endpoint"
    if mode == "cut":  # the endpoint cuts its own body 25 characters into the key
        return web.Response(status=400, text=headers[: at + 25], content_type="text/plain")
    if mode == "snippet":  # the key straddles bedside's 300-character snippet limit
        padded = "x" * (290 - at) + headers
        return web.Response(status=500, text=padded, content_type="text/plain")
    if mode == "split":  # wrapped lines, inside a JSON error (so the breaks arrive as \n escapes)
        wrapped = headers.replace(KEY, f"{KEY[:13]}\n{KEY[13:27]}\n{KEY[27:]}")
        return web.json_response({"error": {"message": wrapped}}, status=400)
    if mode == "split-raw":  # wrapped lines, as a plain-text body
        wrapped = headers.replace(KEY, f"{KEY[:5]}\r\n{KEY[5:30]}\n{KEY[30:]}")
        return web.Response(status=400, text=wrapped, content_type="text/plain")
    if mode == "urlenc":  # a debug page that prints the request URL with the key as a query parameter
        return web.Response(
            status=400, text=f"GET /v1/chat?api_key={quote(KEY, safe='')} denied", content_type="text/plain"
        )
    # "ok" and "userinfo": a 200 answer that repeats the headers, also wrapped and encoded
    content = f"{headers}\nkey again: {KEY[:20]}\n{KEY[20:]} and {quote(KEY, safe='')}\nDear patient, all is well."
    return web.json_response(
        {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10},
        }
    )


@pytest.fixture
def echo_server() -> Iterator[int]:
    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", _chat)
    runner = web.AppRunner(app, access_log=None)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = int(runner.addresses[0][1])
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.run_until_complete(runner.cleanup())
        loop.close()


def _bedside(args: list[str], env: dict[str, str], log: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "bedside.cli", "-v", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
        check=False,
    )
    log.write_text(done.stdout + done.stderr, encoding="utf-8")
    return done


def test_no_piece_of_the_key_reaches_any_file_bedside_writes(
    tmp_path: Path, echo_server: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = f"http://127.0.0.1:{echo_server}/v1"
    with_userinfo = f"http://{USER}:{quote(KEY, safe='')}@127.0.0.1:{echo_server}/v1"
    modes = ["cut", "snippet", "split", "split-raw", "urlenc", "ok"]
    models = [f"openai-compatible/{m}@{base}" for m in modes] + [f"openai-compatible/userinfo@{with_userinfo}"]
    work = tmp_path / "out"
    work.mkdir()
    config = {
        "name": "secrets-drill",
        "task": "drafting",
        "datasets": {"demo": {"limit": 2}},
        "systems": {"zero_shot": {"type": "zero_shot", "options": {"evaluate": False}}},
        "models": {"system": models},
        # The key goes in X-Api-Key, so the userinfo's Basic credentials travel in Authorization too.
        "model_options": {"system": {"api_key_env": "DRILL_KEY", "api_key_header": "X-Api-Key", "max_retries": 1}},
        "settings": {"system": {"max_tokens": 64}},
        "scorers": ["words"],
        "store": str(work / "store.sqlite"),
        "cache": str(work / "cache.sqlite"),
    }
    config_path = tmp_path / "run.yaml"  # written by the user (the test), not by bedside: not grepped
    config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {**os.environ, "DRILL_KEY": KEY, "BEDSIDE_CACHE": str(work / "cache.sqlite")}

    ran = _bedside(["run", str(config_path), "--allow-errors", "--json"], env, work / "run.log", tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    summary = json.loads(ran.stdout)
    run_id = summary["run"]
    store = ["--store", str(work / "store.sqlite")]
    # export, show and report in this process (a fresh one each costs seconds): they read only the store
    exported = cli.invoke(app, ["export", run_id, "-o", str(work / "export.jsonl"), *store])
    assert exported.exit_code == 0, exported.output
    rows = [json.loads(line) for line in (work / "export.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["status"] for r in rows} == {"ok", "error"}
    errors = [r for r in rows if r["status"] == "error"]
    assert len(errors) == 2 * 5  # every error mode failed, as the endpoint meant
    assert all("***" in r["error"] for r in errors), [r["error"] for r in errors if "***" not in r["error"]]
    answered = [r for r in rows if r["status"] == "ok"]
    assert len(answered) == 2 * 2
    assert all("Dear patient" in r["output"]["text"] for r in answered)
    assert all(USER not in r["cell"] and "@127.0.0.1" not in r["cell"] for r in rows)
    shown = [cli.invoke(app, ["show", run_id, row["sample_id"], *store]) for row in rows]
    (work / "show.log").write_text("".join(r.output for r in shown), encoding="utf-8")
    assert all(r.exit_code == 0 for r in shown)
    reported = cli.invoke(app, ["report", run_id, "-o", str(work / "report"), *store])
    assert reported.exit_code == 0, reported.output
    (work / "report.log").write_text(reported.output, encoding="utf-8")
    # one prompt through `bedside generate`, answered and failed, as a user would paste it into a ticket
    monkeypatch.setenv("DRILL_KEY", KEY)
    generated = [
        cli.invoke(app, ["generate", "-m", model, "--api-key-env", "DRILL_KEY", "--no-cache", "hello"])
        for model in (models[0], models[2], models[5], models[6])
    ]
    (work / "generate.log").write_text("".join(r.output for r in generated), encoding="utf-8")
    assert [r.exit_code for r in generated] == [1, 1, 0, 0]

    written = [p for p in work.rglob("*") if p.is_file()]
    names = {p.name for p in written}
    assert {"store.sqlite", "cache.sqlite", "export.jsonl", "run.log", "show.log", "generate.log"} <= names
    assert any(p.suffix == ".html" for p in written)
    assert any(p.suffix == ".md" for p in written)
    leaks = {str(p.relative_to(work)): sorted(found) for p in written if (found := leaked_pieces(p.read_bytes()))}
    assert leaks == {}
    # the userinfo URL was used (the endpoint saw Basic credentials) but is not kept: no user name either
    stored = b"".join(p.read_bytes() for p in written if p.name.startswith("store.sqlite"))
    assert f"{USER}:".encode() not in stored
