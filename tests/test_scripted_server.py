from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.request
from pathlib import Path

import pytest

from bedside.llm import get_model
from bedside.llm.scripted import ScriptedRules
from bedside.llm.types import ChatMessage
from bedside.testing import FaultSpec, ScriptedServer


def test_fault_spec_parsing_and_errors() -> None:
    spec = FaultSpec.parse("429=0.1, 500=0.05,hang=0.01,retry-after=0.5,first=429+malformed")
    assert spec.rates == {"429": 0.1, "500": 0.05, "hang": 0.01}
    assert spec.retry_after_s == 0.5
    assert spec.first == ("429", "malformed")
    with pytest.raises(ValueError, match="unknown fault 'teapot'"):
        FaultSpec.parse("teapot=0.1")
    with pytest.raises(ValueError, match="add up to at most 1"):
        FaultSpec.parse("429=0.7,500=0.7")
    with pytest.raises(ValueError, match="not a number"):
        FaultSpec.parse("429=often")


def test_fault_draws_are_reproducible_with_a_seed() -> None:
    def outcomes(seed: int) -> dict[str, int]:
        with ScriptedServer(faults="500=0.3,invalid-json=0.2", seed=seed) as server:

            async def run() -> None:
                async with get_model(server.model_name(), max_retries=0) as model:
                    for i in range(40):
                        with contextlib.suppress(Exception):
                            await model.generate(f"q{i}")

            asyncio.run(run())
            return dict(server.stats()["answers"])

    first = outcomes(3)
    assert first == outcomes(3)
    assert first["500"] > 0
    assert first["invalid-json"] > 0
    assert first["ok"] > 0


def test_rules_match_in_order_with_regex_callable_and_default() -> None:
    rules = ScriptedRules.coerce(
        [("(?i)refill", "Refill sent."), ("pain", lambda msgs: f"{len(msgs)} messages"), ("pain", "unreached")]
    )

    def ask(text: str) -> str:
        return rules.answer([ChatMessage(role="user", content=text)])

    assert ask("Can I get a REFILL?") == "Refill sent."
    assert ask("back pain") == "1 messages"
    assert ask("anything else") == "anything else"  # default echoes


def test_rules_file_errors_name_the_file_and_entry(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("rules:\n  - pattern: '('\n    reply: x\n")
    with pytest.raises(ValueError, match=r"rules.yaml: rules\[0\].pattern is not a valid regular expression"):
        ScriptedRules.coerce(str(path))
    path.write_text("rules:\n  - pattern: a\n")
    with pytest.raises(ValueError, match=r"rules\[0\] must have exactly the keys"):
        ScriptedRules.coerce(path)


def test_stats_and_reset_over_http() -> None:
    with ScriptedServer() as server:
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "a b c"}], "n": 2}).encode()
        request = urllib.request.Request(
            f"{server.base_url}/chat/completions", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request) as response:
            answer = json.load(response)
        assert [c["message"]["content"] for c in answer["choices"]] == ["a b c", "a b c"]
        assert answer["usage"] == {"prompt_tokens": 3, "completion_tokens": 6, "total_tokens": 9}
        root = server.base_url.removesuffix("/v1")
        with urllib.request.urlopen(f"{root}/_scripted/stats") as response:
            assert json.load(response)["requests"] == 1
        urllib.request.urlopen(urllib.request.Request(f"{root}/_scripted/reset", data=b"", method="POST")).close()
        assert server.stats()["requests"] == 0


@pytest.mark.scripted_server(rules={"hello": "hi there"}, latency_ms=5)
def test_pytest_fixture_takes_options_from_the_marker(scripted_server: ScriptedServer) -> None:
    async def run() -> str:
        async with get_model(scripted_server.model_name()) as model:
            return (await model.generate("hello")).text

    assert asyncio.run(run()) == "hi there"
    assert scripted_server.host == "127.0.0.1"


def test_the_gate_holds_requests_until_released_or_enough_are_in_flight() -> None:
    """Tests observe concurrency through the gate and the counters, never through a latency or a sleep."""
    with ScriptedServer() as server:
        server.hold(after=1)

        async def send(count: int) -> list[str]:
            async with get_model(server.model_name(), max_concurrency=8) as model:
                return [c.text for c in await asyncio.gather(*(model.generate(f"q{i}") for i in range(count)))]

        async def hold_then_release() -> list[str]:
            sending = asyncio.ensure_future(send(3))
            seen = await asyncio.to_thread(server.wait_until, lambda s: s["held"] == 2 and s["answers"])
            assert seen["answers"] == {"ok": 1}  # the one let through answered; two wait, counted in flight
            assert (seen["requests"], seen["in_flight"]) == (3, 2)
            server.release()
            return await sending

        assert asyncio.run(hold_then_release()) == ["q0", "q1", "q2"]
        assert server.stats()["held"] == 0

        server.reset()
        server.hold(until_in_flight=4)
        assert asyncio.run(send(4)) == ["q0", "q1", "q2", "q3"]  # the fourth opened the gate for all
        assert server.stats()["max_in_flight"] == 4

        server.reset()
        server.hold(until_in_flight=5, at_most_s=1.0)  # never reached: the gate opens anyway, nothing hangs
        assert asyncio.run(send(2)) == ["q0", "q1"]
        assert server.stats()["max_in_flight"] == 2
        with pytest.raises(TimeoutError, match="never met the condition"):
            server.wait_until(lambda s: s["requests"] > 2, timeout_s=0.01)
