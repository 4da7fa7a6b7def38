"""The embedded model behind llama.cpp's own OpenAI-compatible HTTP server (``bedside serve-model``).

One process loads the GGUF once and answers many runs, or many machines, over HTTP: each points at it with
``openai-compatible/<model>@<base_url>``. The server is llama.cpp's (in the ``xllamacpp`` wheel), not ours, so
the same tests that drive it also check bedside's OpenAI-compatible client against a server no one here wrote.
It binds the loopback address unless told otherwise; on any other address, set an API key.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType
from typing import Any

from bedside.llm.errors import ModelConfigError
from bedside.llm.providers.embedded import SMOLLM2_NAME, resolve_weights, runtime_params


class ModelServer:
    """A running llama.cpp server. ``close()`` (or leaving the ``with`` block) stops it and frees the model."""

    def __init__(self, runtime: Any, model: str) -> None:
        self._runtime: Any = runtime
        self.model = model
        """The model name the server answers to, and the one to put in the spec."""
        self.base_url = f"{runtime.listening_address}/v1"
        """The OpenAI API root, e.g. ``http://127.0.0.1:8080/v1``."""

    @property
    def spec(self) -> str:
        """The model spec a bedside run uses to reach this server."""
        return f"openai-compatible/{self.model}@{self.base_url}"

    def close(self) -> None:
        # xllamacpp stops listening and frees the weights when its last reference goes.
        self._runtime = None

    def __enter__(self) -> ModelServer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def start_model_server(
    model: str = SMOLLM2_NAME,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    n_ctx: int = 8192,
    parallel: int = 1,
    threads: int | None = None,
    api_key: str | None = None,
) -> ModelServer:
    """Load ``model`` (``smollm2-135m`` or a local ``.gguf`` path) and serve it; returns once it listens.

    ``port=0`` picks a free port. ``parallel`` requests are decoded together, each with ``n_ctx / parallel``
    tokens of context (llama.cpp splits the context between its slots). With ``api_key`` set, requests
    without ``Authorization: Bearer <api_key>`` are refused with HTTP 401.
    """
    if parallel < 1 or n_ctx < 1 or not 0 <= port <= 65535:
        raise ModelConfigError(f"serve-model: invalid settings (port={port}, n_ctx={n_ctx}, parallel={parallel})")
    weights = resolve_weights(model)
    params = runtime_params(weights, n_ctx=n_ctx, threads=threads or os.cpu_count() or 1, parallel=parallel)
    params.hostnames = [host]
    params.port = port
    name = model if model == SMOLLM2_NAME else Path(weights).stem
    params.model_alias = {name}
    if api_key:
        params.api_keys = [api_key]
    import xllamacpp  # importable: runtime_params checked

    try:
        runtime = xllamacpp.Server(params)
    except Exception as exc:  # the runtime raises plain RuntimeErrors (port taken, model unreadable)
        raise ModelConfigError(f"could not start the llama.cpp server on {host}:{port}: {exc}") from exc
    return ModelServer(runtime, name)
