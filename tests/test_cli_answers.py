"""What an endpoint sends back, through `bedside generate` (issue 48: tests through the CLI): content as a list of
parts is its text, and a key the endpoint echoes in `model` or `system_fingerprint` never reaches the cache."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bedside.cli import app

KEY = "sk-cli-echo-0123456789abcdefghij"


@pytest.fixture
def echoing_endpoint() -> Iterator[str]:
    """An OpenAI-compatible endpoint on 127.0.0.1 that answers in parts and echoes the caller's key."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            body: dict[str, Any] = {
                "id": f"chatcmpl-{key}",
                "model": f"gpt-echo/{key}",
                "system_fingerprint": f"fp_{key}",
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": [{"type": "text", "text": "Take it "}, {"type": "text", "text": "daily."}],
                        },
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 3, "completion_tokens": 3},
            }
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_parts_are_the_text_and_an_echoed_key_never_reaches_the_cache(
    echoing_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ECHO_KEY", KEY)
    cache = tmp_path / "cache.sqlite"
    args = ["generate", "Hello", "-m", f"openai-compatible/m@{echoing_endpoint}", "--api-key-env", "ECHO_KEY"]
    result = CliRunner().invoke(app, [*args, "--cache", str(cache), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["texts"] == ["Take it daily."]  # not "empty content"
    assert KEY not in result.output
    with sqlite3.connect(cache) as db:
        stored = " ".join(str(v) for row in db.execute("SELECT * FROM completions") for v in row)
    assert stored  # the answer was cached
    assert KEY not in stored
    assert "gpt-echo/" in stored
