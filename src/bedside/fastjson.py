"""``json.dumps`` with fixed arguments, without building encoder objects on every call.

``json.dumps`` builds a ``JSONEncoder`` whenever it is given arguments, and a C encoder on every call; for the
small documents bedside encodes per model call (cache keys, request bodies) and per stored sample (result
columns, sample keys) that was a third to two thirds of the cost. :func:`dumper` makes the C encoder once. Its
text is the same as ``json.dumps`` with the same arguments; the circular-reference check is left out (callers
encode trees of plain data, where it never fires).
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable
from typing import Any


def _no_default(value: Any) -> Any:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def dumper(
    *,
    sort_keys: bool = False,
    separators: tuple[str, str] = (", ", ": "),
    ensure_ascii: bool = True,
    default: Callable[[Any], Any] | None = None,
) -> Callable[[Any], str]:
    """A function equal to ``lambda v: json.dumps(v, sort_keys=..., separators=..., ensure_ascii=...,
    default=...)``, only cheaper."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # a Python without the C accelerator: json.dumps itself

        def slow(value: Any) -> str:
            return json.dumps(
                value, sort_keys=sort_keys, separators=separators, ensure_ascii=ensure_ascii, default=default
            )

        return slow
    text: Callable[[str], str] = (
        json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring
    )
    item_separator, key_separator = separators
    encode = make(None, default or _no_default, text, None, key_separator, item_separator, sort_keys, False, True)

    def dumps(value: Any) -> str:
        if isinstance(value, str):  # as JSONEncoder.encode does
            return text(value)
        return "".join(encode(value, 0))

    return dumps
