"""API keys: read from the environment at call time, and scrubbed from anything we print or store.

The key is only ever placed in the ``Authorization`` header of a request. As a second line of defence every
key read here is remembered (in memory only) so :func:`redact` can remove it from error messages and log
records built from text we do not control, such as an endpoint's error body echoing the request.
"""

from __future__ import annotations

import logging
import os
import threading

from bedside.llm.errors import ModelConfigError

_known: set[str] = set()
_lock = threading.Lock()
_MASK = "***"


def read_api_key(env_name: str | None) -> str | None:
    """The key held by ``env_name``, or ``None`` when no variable is configured."""
    if env_name is None:
        return None
    value = os.environ.get(env_name)
    if not value:
        raise ModelConfigError(f"the API key variable {env_name} is not set (or is empty)")
    with _lock:
        _known.add(value)
    return value


def redact(text: str) -> str:
    """``text`` with every API key read so far replaced by ``***``."""
    if not _known:
        return text
    with _lock:
        secrets = sorted(_known, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, _MASK)
    return text


class RedactingFilter(logging.Filter):
    """A logging filter that scrubs keys from records before any handler formats them."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _known:
            record.msg = redact(record.getMessage())
            record.args = None
        return True
