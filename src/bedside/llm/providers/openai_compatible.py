"""Any endpoint that speaks the OpenAI chat completions API: vLLM, llama.cpp server, Ollama, OpenAI, Azure.

Built on aiohttp: at 100 concurrent requests it costs ~0.2 ms of CPU per call here, where httpx cost ~13 ms
(measured in ARCHITECTURE.md), and the client's overhead is what a large evaluation run pays for.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
from collections.abc import Sequence
from typing import Any

import aiohttp
from yarl import URL

from bedside.fastjson import dumper
from bedside.llm.config import ModelConfig
from bedside.llm.errors import EndpointUnreachableError, ModelConfigError, ModelRequestError
from bedside.llm.providers.openai_http import RETRYABLE_STATUS, parse_chat_completion, parse_retry_after, snippet
from bedside.llm.secrets import read_api_key, remember_secret, scrub, strip_userinfo
from bedside.llm.types import ChatMessage, GenerationSettings, ProviderResponse

_dumps = dumper()  # json.dumps(payload): what aiohttp's json= sends
_decode = json.JSONDecoder().decode


def _loads(raw: bytes) -> Any:
    """``json.loads(raw)``. A body that opens with ``{`` followed by a non-zero byte is what ``json.loads`` would
    read as UTF-8 (no BOM, not UTF-16 or UTF-32), so it is decoded as such directly, skipping the encoding
    detection; anything else goes through ``json.loads`` itself."""
    if raw[:1] == b"{" and raw[1:2] != b"\x00":
        return _decode(raw.decode("utf-8", "surrogatepass"))
    return json.loads(raw)


REDIRECT_STATUS = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5


class OpenAICompatibleProvider:
    name = "openai-compatible"
    default_concurrency = 16
    supports_json_schema = True

    def __init__(self, config: ModelConfig) -> None:
        if not config.base_url:
            raise ModelConfigError(
                f"model {config.name!r} needs a base URL, e.g. "
                f"'openai-compatible/{config.model}@http://127.0.0.1:8000/v1'"
            )
        self.model = config.model
        url = URL(config.base_url.rstrip("/"))
        self._basic: str | None = None
        if url.user is not None or url.password is not None:
            # Credentials in the URL are used (HTTP Basic) but never shown: the URL is kept without them, and
            # the password is masked wherever it, or its base64 Basic form, appears in text.
            token = base64.b64encode(f"{url.user or ''}:{url.password or ''}".encode()).decode("ascii")
            self._basic = f"Basic {token}"
            if url.password:
                remember_secret(url.password)
            remember_secret(token)
            url = url.with_user(None).with_password(None)
        self.base_url = str(url)
        self._url = f"{self.base_url}/chat/completions"
        self._origin = url.origin()
        self._api_key_env = config.api_key_env
        self._api_key_header = config.api_key_header
        self._timeout = aiohttp.ClientTimeout(total=config.timeout_s)
        self._connections = config.max_concurrency or self.default_concurrency
        self._session: aiohttp.ClientSession | None = None
        self._session_loop: asyncio.AbstractEventLoop | None = None
        self._fields: tuple[GenerationSettings, dict[str, object]] | None = None
        read_api_key(self._api_key_env)  # fail at build time, not on the first request, when unset

    def _client(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session_loop is not loop or self._session.closed:
            # The key is a session header, safe because this session only ever requests the configured origin:
            # redirects are followed by hand (_post), and one to another origin is refused before it is sent.
            headers = {"Content-Type": "application/json"}
            if self._basic is not None:
                headers["Authorization"] = self._basic
            key = read_api_key(self._api_key_env)
            if key:
                bearer = self._api_key_header.lower() == "authorization"
                headers[self._api_key_header] = f"Bearer {key}" if bearer else key
            # One host per provider: the total limit is the per-host limit (tracking both cost per request).
            connector = aiohttp.TCPConnector(limit=self._connections)
            self._session = aiohttp.ClientSession(
                headers=headers,
                connector=connector,
                timeout=self._timeout,
                cookie_jar=aiohttp.DummyCookieJar(),  # an API client keeps no cookies; skips per-request work
            )
            self._session_loop = loop
        return self._session

    async def _post(self, body: bytes) -> tuple[int, bytes, float | None]:
        """POST ``body`` to the endpoint, following redirects by hand: a redirect within the configured origin
        (scheme, host and port) is followed; one to any other origin is refused before anything is sent there
        (neither the key, a session header, nor the prompt, which may hold patient records)."""
        session = self._client()
        url: str | URL = self._url
        method, data = "POST", body
        for _ in range(MAX_REDIRECTS + 1):
            async with session.request(method, url, data=data, allow_redirects=False) as response:
                status = response.status
                location = response.headers.get("Location") if status in REDIRECT_STATUS else None
                if location is None:
                    raw = await response.read()
                    retry_after = parse_retry_after(response.headers.get("Retry-After")) if status != 200 else None
                    return status, raw, retry_after
            target = URL(str(url)).join(URL(location))
            if target.origin() != self._origin:
                raise ModelRequestError(
                    f"{self._url} answered HTTP {status}, a redirect to another origin "
                    f"({strip_userinfo(str(target.origin()))}); bedside sends the key and the prompt only to the "
                    "configured origin: set the model's base URL to the new address if you trust it",
                    status=status,
                    retryable=False,
                )
            if status == 303:  # "see other": fetched with GET, as HTTP says
                method, data = "GET", b""
            url = target
        raise ModelRequestError(f"{self._url}: more than {MAX_REDIRECTS} redirects", retryable=False)

    async def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: GenerationSettings,
        response_schema: dict[str, Any] | None,
    ) -> ProviderResponse:
        fields = self._fields
        if fields is None or fields[0] is not settings:  # a run sends the same settings object every time
            fields = self._fields = (settings, settings.request_fields())
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],  # = m.model_dump()
            **fields[1],
        }
        if response_schema is not None:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": response_schema},
            }
        try:
            # The same bytes aiohttp's json= would send (json.dumps, UTF-8; Content-Type is a session header),
            # without its payload-class detour.
            body = _dumps(payload).encode("utf-8")
            status, raw, retry_after = await self._post(body)
        except TimeoutError:
            raise ModelRequestError(
                f"no answer from {self._url} within {self._timeout.total:g} s", retryable=True
            ) from None
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc, aiohttp.ClientConnectorDNSError) or isinstance(
                exc.os_error, ConnectionRefusedError | socket.gaierror
            ):
                what = (
                    "the host name does not resolve"
                    if not isinstance(exc.os_error, ConnectionRefusedError)
                    else ("connection refused: nothing listens there")
                )
                raise EndpointUnreachableError(
                    scrub(
                        f"cannot reach {self._url} ({what}): is the server running, and are the host and port in the "
                        f"model's URL right? ({type(exc).__name__}: {exc})"
                    ),
                    retryable=True,
                ) from None
            raise ModelRequestError(
                scrub(f"connection to {self._url} failed: {type(exc).__name__}: {exc}"), retryable=True
            ) from None
        except aiohttp.ClientError as exc:
            raise ModelRequestError(
                scrub(f"connection to {self._url} failed: {type(exc).__name__}: {exc}"), retryable=True
            ) from None
        if status != 200:
            raise ModelRequestError(
                f"{self._url} answered HTTP {status}: {snippet(raw)}",
                status=status,
                retryable=status in RETRYABLE_STATUS,
                retry_after=retry_after,
            )
        try:
            answer = _loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise ModelRequestError(
                f"malformed response from {self._url}: body is not JSON: {snippet(raw)}",
                status=status,
                retryable=True,
            ) from None
        return parse_chat_completion(answer)

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None
