"""API keys: read from the environment at call time, and scrubbed from anything we print or store.

The key is only ever placed in the ``Authorization`` header of a request. As a second line of defence every
key read here (and every password found in a URL's userinfo) is remembered, in memory only, so :func:`redact`
can remove it from text we do not control, such as an endpoint's error body echoing the request headers, or a
model answer that repeats them.

What counts as "the key" in a text is wider than the exact string, because the text we get is often mangled
before we see it (a proxy cuts its error body, a debug page wraps long lines, a header is Basic-encoded):

* any run of at least :data:`MIN_FRAGMENT` characters of the key (a cut key still leaks most of it);
* the same across line breaks (``\\n``, ``\\r``, and their JSON escapes) inside the run;
* its URL-encoded form (``%2B`` for ``+`` and so on);
* its base64 form at each of the three byte alignments, so ``Basic base64(user:key)`` is caught whatever the
  user name's length.

Shorter pieces are left alone: an 8-character floor keeps ordinary words from being masked, and a key shorter
than that is masked only where it appears whole.
"""

from __future__ import annotations

import base64
import logging
import os
import re
import threading
from collections.abc import Iterable
from typing import TypeVar, cast
from urllib.parse import quote

from bedside.llm.errors import ModelConfigError

MIN_FRAGMENT = 8
"""The shortest piece of a key that is masked on its own (the red-team drill greps for 8-character pieces)."""

_MASK = "***"
_T = TypeVar("_T")
_BLOCK = 4  # any run of >= 8 key characters contains a whole 4-character block of the key aligned to 4
_BREAKS = re.compile(r"(?:\r|\n|\\r|\\n)+")  # what a wrapped or JSON-escaped line break looks like inside a run

_lock = threading.Lock()
_known: set[str] = set()
_forms: list[str] = []
"""Every text form of every known secret, longest first."""
_finder: re.Pattern[str] | None = None
"""One alternation of the 4-character blocks of every form: a hit is where a masked run may start."""
_block_sites: dict[str, list[tuple[str, int]]] = {}
"""Block -> the (form, offset) pairs it comes from."""


def read_api_key(env_name: str | None) -> str | None:
    """The key held by ``env_name``, or ``None`` when no variable is configured."""
    if env_name is None:
        return None
    value = os.environ.get(env_name)
    if not value:
        raise ModelConfigError(f"the API key variable {env_name} is not set (or is empty)")
    remember_secret(value)
    return value


def remember_secret(value: str) -> None:
    """Mask ``value`` (and its encoded forms and pieces) in everything :func:`redact` sees from now on."""
    if not value:
        return
    global _finder
    with _lock:
        if value in _known:
            return
        _known.add(value)
        forms = set(_forms)
        forms.update(_text_forms(value))
        _forms[:] = sorted(forms, key=len, reverse=True)
        _block_sites.clear()
        for form in _forms:
            for offset in range(0, len(form) - _BLOCK + 1, _BLOCK):
                _block_sites.setdefault(form[offset : offset + _BLOCK], []).append((form, offset))
        _finder = re.compile(_trie(list(_block_sites))) if _block_sites else None


def _trie(words: list[str]) -> str:
    """One regex for equal-length literals, shared prefixes factored out: ~1.5x faster to scan than a flat
    alternation (0.1 ms for a 2 kB answer with one key known)."""
    if not words[0]:
        return ""
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault(word[0], []).append(word[1:])
    alternatives = [re.escape(first) + _trie(rest) for first, rest in sorted(groups.items())]
    return alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"


def known_secret_count() -> int:
    """How many secrets are being masked (for tests and diagnostics; the values are never exposed)."""
    return len(_known)


def _text_forms(secret: str) -> Iterable[str]:
    """The key as it may appear in text: itself, URL-encoded, and the base64 characters it fully determines at
    each byte alignment (the characters it shares with its neighbours depend on them, so they are left out)."""
    yield secret
    encoded = quote(secret, safe="")
    if encoded != secret:
        yield encoded
    raw = secret.encode("utf-8")
    for pad in range(3):
        text = base64.b64encode(b"\0" * pad + raw).decode("ascii")
        start = -(-8 * pad // 6)  # the first character made only of key bits
        end = (8 * (pad + len(raw))) // 6  # past the last character made only of key bits
        piece = text[start:end]
        if len(piece) >= MIN_FRAGMENT:
            yield piece
            urlsafe = piece.replace("+", "-").replace("/", "_")
            if urlsafe != piece:
                yield urlsafe


def redact(text: str) -> str:
    """``text`` with every known secret, any run of :data:`MIN_FRAGMENT` or more of its characters (also across
    line breaks), and its URL-encoded and base64 forms replaced by ``***``."""
    if not _known or not text:
        return text
    with _lock:
        forms = list(_forms)
        finder = _finder
        sites = dict(_block_sites)
    for form in forms:  # whole forms first: cheap, and the usual case
        if form in text:
            text = text.replace(form, _MASK)
    if finder is None:
        return text
    spans: list[tuple[int, int]] = []
    for hit in finder.finditer(text):
        for form, offset in sites.get(hit.group(), ()):
            span = _run_around(text, hit.start(), form, offset)
            if span is not None:
                spans.append(span)
    if not spans:
        return text
    spans.sort()
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces: list[str] = []
    at = 0
    for start, end in merged:
        pieces.append(text[at:start])
        pieces.append(_MASK)
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


def _run_around(text: str, at: int, form: str, offset: int) -> tuple[int, int] | None:
    """The span of ``text`` around ``at`` that matches ``form`` around ``offset`` (skipping line breaks), if it
    holds at least :data:`MIN_FRAGMENT` characters of the form."""
    matched = _BLOCK
    # forwards
    end, k = at + _BLOCK, offset + _BLOCK
    while k < len(form):
        if end < len(text) and text[end] == form[k]:
            end += 1
            k += 1
            matched += 1
            continue
        gap = _BREAKS.match(text, end)
        if gap is None or gap.end() >= len(text) or text[gap.end()] != form[k]:
            break
        end = gap.end()
    # backwards
    start, k = at, offset - 1
    while k >= 0:
        if start > 0 and text[start - 1] == form[k]:
            start -= 1
            k -= 1
            matched += 1
            continue
        gap_start = _break_before(text, start)
        if gap_start is None or gap_start == 0 or text[gap_start - 1] != form[k]:
            break
        start = gap_start
    if matched < min(MIN_FRAGMENT, len(form)):
        return None
    return start, end


def _break_before(text: str, end: int) -> int | None:
    """Where a run of line breaks ending at ``end`` starts, or ``None`` when none ends there."""
    start = end
    while start > 0:
        if text[start - 1] in "\r\n":
            start -= 1
        elif start >= 2 and text[start - 2] == "\\" and text[start - 1] in "rn":
            start -= 2
        else:
            break
    return start if start < end else None


_URL_WITH_USERINFO = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)[^\s/?#'\"<>]*@")


def strip_userinfo(text: str) -> str:
    """``text`` with the ``user:password@`` part of every URL in it left out, for anything that is logged or
    stored (a URL, a model spec ``PROVIDER/MODEL@URL``, a list of URLs, a sentence)."""
    if "@" not in text or "://" not in text:
        return text
    return _URL_WITH_USERINFO.sub(r"\1", text)


def scrub(text: str) -> str:
    """:func:`redact` plus the userinfo of every URL in ``text``: what any text bound for a store, an export,
    a report or a log goes through."""
    return redact(strip_userinfo(text))


def scrub_data(value: _T) -> _T:
    """:func:`scrub` applied to every string in a JSON-like value (dicts, lists, tuples), keys included."""
    return cast(_T, _scrub_any(value))


def _scrub_any(value: object) -> object:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub(k) if isinstance(k, str) else k: _scrub_any(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_any(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_scrub_any(v) for v in value)
    return value


class RedactingFilter(logging.Filter):
    """A logging filter that scrubs keys and URL userinfo from records before any handler formats them."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = scrub(message)
        if clean != message:
            record.msg = clean
            record.args = None
        return True


def install_log_redaction(logger: logging.Logger | None = None) -> None:
    """Put a :class:`RedactingFilter` on every handler of ``logger`` (the root logger by default): a filter on
    a handler sees records from every logger that propagates to it, which a filter on one logger does not."""
    target = logger or logging.getLogger()
    for handler in target.handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
