from __future__ import annotations

import pytest

from bedside.llm import ModelConfigError, get_model, parse_model_spec


def test_string_spec_with_url_and_slashed_model_name() -> None:
    config = parse_model_spec("openai-compatible/meta-llama/Llama-3.1-8B@http://127.0.0.1:8000/v1")
    assert config.provider == "openai-compatible"
    assert config.model == "meta-llama/Llama-3.1-8B"
    assert config.base_url == "http://127.0.0.1:8000/v1"
    assert config.name == "openai-compatible/meta-llama/Llama-3.1-8B@http://127.0.0.1:8000/v1"


def test_spec_without_url_and_config_block() -> None:
    assert parse_model_spec("embedded/smollm2-135m").base_url is None
    config = parse_model_spec({"provider": "scripted", "model": "t", "max_concurrency": 3})
    assert config.max_concurrency == 3


@pytest.mark.parametrize("spec", ["", "no-slash", "/model", "Bad Provider/x"])
def test_unreadable_names_say_what_is_expected(spec: str) -> None:
    with pytest.raises(ModelConfigError, match="PROVIDER/MODEL"):
        parse_model_spec(spec)


def test_config_errors_name_the_field() -> None:
    with pytest.raises(ModelConfigError, match="timeout_s"):
        parse_model_spec({"provider": "scripted", "model": "t", "timeout_s": -1})
    with pytest.raises(ModelConfigError, match="colour"):
        parse_model_spec({"provider": "scripted", "model": "t", "colour": "red"})


def test_unknown_provider_and_missing_url_are_config_errors() -> None:
    with pytest.raises(ModelConfigError, match="known providers: embedded, openai-compatible, scripted"):
        get_model("nosuch/model")
    with pytest.raises(ModelConfigError, match="needs a base URL"):
        get_model("openai-compatible/qwen")


def test_unset_api_key_variable_fails_at_build_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BEDSIDE_TEST_NO_SUCH_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="BEDSIDE_TEST_NO_SUCH_KEY is not set"):
        get_model("openai-compatible/x@http://127.0.0.1:9/v1", api_key_env="BEDSIDE_TEST_NO_SUCH_KEY")
