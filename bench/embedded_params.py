"""llama.cpp settings for the embedded model: prompt and generation speed of each, over the default, in one run.

The demo's wall time is mostly the embedded model reading long prompts (a discharge stay is 2-3k tokens), so this
asks whether any llama.cpp setting bedside leaves at its default would read them faster on this machine. Each
variant loads the model afresh (one slot, ``--ctx`` tokens) and answers the same long prompt twice; the second
call is timed (llama.cpp's own prompt and generation tokens/s, from its timings), so no variant reuses another's
cache or pays the first call's warm-up. Printed per variant: its tokens/s and its ratio to the default's, measured
in the same run (absolute speeds vary between machines; ratios much less).

Measured 2026-11-27 on a quiet 2-core AVX-512 machine (the wheel is built for AVX2), 3,757 prompt tokens: the
default read 191 tokens/s and generated 31 tokens/s at that context; flash attention forced on 1.02x (its default,
"auto", turns it on), off 0.52x, a q8_0 KV cache 0.47x, micro-batches of 256 or 1,024 tokens 0.97x and 1.02x, one
thread of two 0.52x. No setting bedside leaves at its default reads prompts meaningfully faster.

Usage: ``python bench/embedded_params.py [--lines 110] [--ctx 8192]``
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from bedside.llm.providers.embedded import runtime_params, smollm2_path


def variants() -> dict[str, dict[str, Any]]:
    import xllamacpp as x

    threads = os.cpu_count() or 1
    enabled = x.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_ENABLED
    disabled = x.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_DISABLED
    return {
        "default (bedside's settings)": {},
        "flash attention forced on": {"flash_attn_type": enabled},
        "flash attention off": {"flash_attn_type": disabled},
        "micro-batch 256": {"n_ubatch": 256},
        "micro-batch 1024": {"n_ubatch": 1024},
        "KV cache q8_0": {
            "flash_attn_type": enabled,
            "cache_type_k": x.ggml_type.GGML_TYPE_Q8_0,
            "cache_type_v": x.ggml_type.GGML_TYPE_Q8_0,
        },
        f"{max(1, threads // 2)} thread(s) of {threads}": {"threads": max(1, threads // 2)},
    }


def measure(prompt: str, ctx: int, settings: dict[str, Any]) -> dict[str, float]:
    """Prompt and generation tokens/s of the second of two identical-length calls on a fresh runtime."""
    import xllamacpp

    settings = dict(settings)
    params = runtime_params(smollm2_path(), n_ctx=ctx, threads=settings.pop("threads", os.cpu_count() or 1))
    for name, value in settings.items():
        setattr(params, name, value)
    server = xllamacpp.Server(params)
    timings: dict[str, Any] = {}
    for attempt in range(2):  # different first words: the second call reads its whole prompt, not a cached one
        request = {
            "messages": [{"role": "user", "content": f"({attempt}) {prompt}\nSummarise this in two sentences."}],
            "max_tokens": 64,
            "temperature": 0.0,
            "seed": 0,
        }
        timings = server.handle_chat_completions(request).get("timings") or {}
    return {
        "prompt_n": float(timings.get("prompt_n", 0)),
        "prompt_tps": float(timings.get("prompt_per_second", 0.0)),
        "gen_tps": float(timings.get("predicted_per_second", 0.0)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=110, help="lines of synthetic note in the prompt")
    parser.add_argument("--ctx", type=int, default=8192)
    args = parser.parse_args()
    prompt = " ".join(
        f"Note line {i}: blood pressure 128/82, metformin 500 mg twice daily, review in clinic in two weeks."
        for i in range(args.lines)
    )
    results: dict[str, dict[str, float]] = {}
    for name, settings in variants().items():
        started = time.perf_counter()
        results[name] = found = measure(prompt, args.ctx, settings)
        print(
            f"{name:32} prompt {found['prompt_tps']:6.0f} tok/s ({found['prompt_n']:.0f} tokens)  "
            f"generation {found['gen_tps']:5.1f} tok/s  [{time.perf_counter() - started:.0f} s]",
            flush=True,
        )
    base = results["default (bedside's settings)"]
    print("over the default, same run:")
    for name, found in results.items():
        print(
            f"  {name:32} prompt {found['prompt_tps'] / base['prompt_tps']:.2f}x  "
            f"generation {found['gen_tps'] / base['gen_tps']:.2f}x"
        )


if __name__ == "__main__":
    main()
