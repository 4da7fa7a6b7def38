"""Token counting offline: the embedded model's tokenizer must count as llama.cpp itself does."""

from __future__ import annotations

from pathlib import Path

import pytest

from bedside.text.tokens import CharEstimate, HFTokenizer, embedded_tokenizer, get_tokenizer

SAMPLES = [
    "Hello world",
    "BP 132/84 mmHg on lisinopril 10 mg b.i.d.; HbA1c 7.2% (2024-03-01).",
    "  leading spaces\nand\ttabs   ",
    "Émilie's café — naïve “quotes” 😀",
    '<visit type="Emergency" start="10/08/2018 08:00 PM">12345678</visit>',
]


@pytest.mark.embedded
def test_embedded_tokenizer_counts_exactly_as_llama_cpp() -> None:
    import xllamacpp

    from bedside.llm.providers.embedded import smollm2_path

    params = xllamacpp.CommonParams()
    params.model.path = str(smollm2_path())
    params.n_ctx = 512
    params.verbosity = -1
    server = xllamacpp.Server(params)
    tokenizer = embedded_tokenizer()
    for text in SAMPLES:
        answer = server.handle_completions({"prompt": text, "n_predict": 1, "cache_prompt": False})
        assert tokenizer.count(text) == answer["usage"]["prompt_tokens"], text


@pytest.mark.embedded
def test_cuts_are_exact_substrings_at_token_boundaries() -> None:
    tokenizer = get_tokenizer("embedded")
    text = SAMPLES[1]
    total = tokenizer.count(text)
    for n in range(total + 1):
        head, tail = tokenizer.head(text, n), tokenizer.tail(text, n)
        assert text.startswith(head)
        assert text.endswith(tail)
        assert tokenizer.count(head) <= n
        assert tokenizer.count(tail) <= n + 1
    assert tokenizer.head(text, total) == text
    assert tokenizer.tail(text, 0) == ""


def test_a_local_tokenizer_file_is_used_as_is(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[UNK]": 0, "chest": 1, "pain": 2, "at": 3, "night": 4}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "tokenizer.json"
    tokenizer.save(str(path))
    loaded = get_tokenizer(path)
    assert isinstance(loaded, HFTokenizer)
    assert loaded.count("chest pain at night") == 4
    assert loaded.count_many(["chest pain", "night"]) == [2, 1]
    assert loaded.tail("chest pain at night", 2) == "at night"
    assert loaded.head("chest pain at night", 1) == "chest "


def test_a_file_that_is_not_a_tokenizer_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text("{}")
    with pytest.raises(ValueError, match=r"not a Hugging Face tokenizer\.json"):
        get_tokenizer(path)


def test_the_character_estimate_says_what_it_is() -> None:
    estimate = CharEstimate(3.5)
    assert estimate.name == "chars:3.5"
    assert estimate.count("a" * 7) == 2
    assert estimate.tail("abcdefgh", 1) == "fgh"  # int(3.5) characters
