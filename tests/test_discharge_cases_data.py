"""The discharge cases' text is data (tools/data/discharge_cases.yaml), and the shipped cases are what the tool
builds from it, byte for byte (issue 48: the text was 3,000 lines of code)."""

from __future__ import annotations

import json
from pathlib import Path

from bedside.tasks.discharge.cases import DischargeCase
from tool_module import load_tool

ROOT = Path(__file__).resolve().parents[1]


def test_the_shipped_cases_are_built_from_the_data_file() -> None:
    tool = load_tool("make_discharge_cases")
    built = [
        json.dumps(DischargeCase.model_validate(raw).model_dump(mode="json"), ensure_ascii=False)
        for raw in tool.read_cases()
    ]
    shipped = (ROOT / "src" / "bedside" / "tasks" / "discharge" / "data" / "synthetic_cases.jsonl").read_text(
        encoding="utf-8"
    )
    assert "\n".join(built) + "\n" == shipped
    assert len(built) == 12
