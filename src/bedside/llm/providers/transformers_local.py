"""A local Hugging Face checkpoint run in-process by transformers: ``transformers/<folder>``.

This is how a model bedside fine-tuned is called offline: ``bedside train sft --merge`` writes
``OUTPUT/merged`` (weights and tokenizer), and ``transformers/OUTPUT/merged`` is then a model like any other
(a judge for ``bedside drafting calibrate``, a system in a run config). The embedded provider cannot do this:
llama.cpp reads only GGUF files, and converting a checkpoint to GGUF needs tools bedside does not ship.

Nothing is downloaded: the folder must hold ``config.json`` and a tokenizer, and every load is
``local_files_only`` with the Hugging Face libraries in offline mode. The tokenizer's own chat template formats
the conversation (as the trainer formatted the training chats, so a fine-tuned judge is asked in the shape it
learned). Decoding is greedy when the temperature is 0 or unset (bedside's offline models are for reproducible
runs), sampled with ``temperature``/``top_p`` otherwise, seeded per text (``seed``, ``seed + 1``, ... for
``n`` texts). Stop strings end generation as soon as they appear and are cut from the text, as an OpenAI endpoint
does. Decoding is not constrained, so ``supports_json_schema`` is False: bedside's structured layer puts the
schema in the prompt and re-asks on invalid answers.

Options (``options`` in a model config): ``device`` (``cpu``, ``cuda``, ... ; default: cuda when available),
``dtype`` (``float32`` default, ``bfloat16``, ``float16``), ``threads`` (torch CPU threads), ``max_tokens``
(new tokens when a call sets none; 512). Generation is serialised (a lock, one request at a time) because one
model on one device gains nothing from concurrent calls and torch's global random state seeds the sampling.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from bedside.llm.config import ModelConfig
from bedside.llm.errors import ModelConfigError, ModelRequestError
from bedside.llm.providers.local import Draw, seeded_draws
from bedside.llm.types import ChatMessage, GenerationSettings, ProviderResponse

_INSTALL_HINT = "install the training extra: pip install 'bedside[train]' (torch and transformers)"
_DTYPES = ("float32", "bfloat16", "float16")
DEFAULT_MAX_TOKENS = 512


def checkpoint_folder(model: str) -> Path:
    """The checkpoint folder a model name points at; a clear error when it is not one (nothing is fetched)."""
    path = Path(model).expanduser()
    if not path.is_dir():
        raise ModelConfigError(
            f"transformers model folder not found: {path} (give a local folder with a transformers checkpoint, "
            "e.g. the merged/ folder that `bedside train sft --merge` writes; nothing is downloaded)"
        )
    if not (path / "config.json").is_file():
        raise ModelConfigError(f"{path} is not a transformers checkpoint: it has no config.json")
    return path


def _require_libraries() -> None:
    missing = [name for name in ("torch", "transformers") if find_spec(name) is None]
    if missing:
        raise ModelConfigError(f"the transformers provider needs {' and '.join(missing)}; {_INSTALL_HINT}")


def cut_at_stop(text: str, stops: Sequence[str]) -> tuple[str, bool]:
    """``text`` up to the earliest stop string, and whether one was found."""
    positions = [text.find(stop) for stop in stops if stop and stop in text]
    if not positions:
        return text, False
    return text[: min(positions)], True


class TransformersProvider:
    name = "transformers"
    default_concurrency = 1
    supports_json_schema = False

    def __init__(self, config: ModelConfig) -> None:
        _require_libraries()
        self.model = config.model
        self.base_url = None
        self._folder = checkpoint_folder(config.model)
        options = config.options
        self._device = options.get("device")
        self._dtype = str(options.get("dtype", "float32"))
        if self._dtype not in _DTYPES:
            raise ModelConfigError(f"options.dtype must be one of {', '.join(_DTYPES)}, got {self._dtype!r}")
        self._threads = options.get("threads")
        self._default_max_tokens = int(options.get("max_tokens", DEFAULT_MAX_TOKENS))
        self._network: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _load(self) -> tuple[Any, Any]:
        if self._network is None:
            for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
                os.environ.setdefault(variable, "1")
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer

            if self._threads:
                torch.set_num_threads(int(self._threads))
            device = self._device or ("cuda" if torch.cuda.is_available() else "cpu")
            try:
                tokenizer = AutoTokenizer.from_pretrained(str(self._folder), local_files_only=True)
                network = AutoModelForCausalLM.from_pretrained(
                    str(self._folder), local_files_only=True, dtype=getattr(torch, self._dtype)
                )
            except (OSError, ValueError) as exc:
                raise ModelConfigError(f"cannot load the transformers checkpoint {self._folder}: {exc}") from None
            if tokenizer.chat_template is None:
                raise ModelConfigError(
                    f"{self._folder}: the tokenizer has no chat template, so a chat cannot be formatted for it"
                )
            self._network, self._tokenizer = network.to(device).eval(), tokenizer
        return self._network, self._tokenizer

    def _eos_ids(self, network: Any, tokenizer: Any) -> list[int]:
        """Every id that ends a turn: the generation config's (often several) and the tokenizer's own."""
        ids: list[int] = []
        configured = network.generation_config.eos_token_id
        for value in [*(configured if isinstance(configured, list) else [configured]), tokenizer.eos_token_id]:
            if value is not None and value not in ids:
                ids.append(int(value))
        return ids

    def _generate_sync(
        self, messages: list[dict[str, str]], settings: GenerationSettings, seed: int
    ) -> tuple[str, int, int, str]:
        import torch

        with self._lock:
            network, tokenizer = self._load()
            prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            encoded = tokenizer(prompt, return_tensors="pt", add_special_tokens=False).to(network.device)
            prompt_length = int(encoded["input_ids"].shape[1])
            max_new = settings.max_tokens or self._default_max_tokens
            eos = self._eos_ids(network, tokenizer)
            kwargs: dict[str, Any] = {
                "max_new_tokens": max_new,
                "eos_token_id": eos or None,
                "pad_token_id": tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (eos or [0])[0],
            }
            if settings.temperature:
                kwargs.update(do_sample=True, temperature=settings.temperature, top_p=settings.top_p or 1.0)
            else:
                # greedy: the checkpoint's generation_config may ask for sampling; this call does not
                kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
            if settings.stop:
                # transformers matches stop strings on the text, so one may span tokens or end inside one
                kwargs.update(stop_strings=list(settings.stop), tokenizer=tokenizer)
            torch.manual_seed(seed)
            with torch.inference_mode():
                output = network.generate(**encoded, **kwargs)
            new_tokens = output[0, prompt_length:].tolist()
            text = tokenizer.decode(new_tokens, skip_special_tokens=True)
        text, stopped = cut_at_stop(text, settings.stop or ())
        ended = stopped or (bool(new_tokens) and new_tokens[-1] in eos)
        finish_reason = "stop" if ended or len(new_tokens) < max_new else "length"
        return text, prompt_length, len(new_tokens), finish_reason

    async def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: GenerationSettings,
        response_schema: dict[str, Any] | None,
    ) -> ProviderResponse:
        # response_schema is ignored: supports_json_schema is False, so the model layer asks by instructions.
        if settings.frequency_penalty or settings.presence_penalty:
            # transformers has only a multiplicative repetition_penalty, not OpenAI's additive ones: refuse rather
            # than run with settings the results would be credited to
            raise ModelConfigError(
                f"{self.model}: the transformers provider does not apply frequency_penalty or presence_penalty; "
                "leave them unset for this model"
            )
        chat = [m.model_dump() for m in messages]

        async def draw(seed: int) -> Draw:
            try:
                text, prompt, completion, finish = await asyncio.to_thread(self._generate_sync, chat, settings, seed)
            except ModelConfigError:
                raise
            except (RuntimeError, ValueError, IndexError) as exc:
                raise ModelRequestError(f"transformers model failed: {exc}", retryable=False) from exc
            return Draw((text,), prompt, completion, finish)

        return await seeded_draws(self.model, settings, draw)

    async def aclose(self) -> None:
        # Kept loaded for later calls; the memory goes with the provider object.
        return None
