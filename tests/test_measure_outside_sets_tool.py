"""tools/measure_outside_sets.py: the counts a round of rules is measured by, and what moved between two runs."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from tool_module import load_tool


def _tool() -> ModuleType:
    return load_tool("measure_outside_sets")


def test_it_counts_a_development_set_and_a_held_out_one_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "after.json"
    assert _tool().main(["--only", "guard", "--sets", "dev", "held out 46", "--out", str(out)]) == 0
    counts = json.loads(out.read_text(encoding="utf-8"))["guard"]
    assert set(counts) == {"dev", "held out 46"}
    assert counts["dev"]["unread"] is False
    assert counts["held out 46"]["unread"] is True
    for name in counts:
        assert 0 <= counts[name]["rejected"] <= 60
        assert 0 <= counts[name]["kept"] <= 40
        # a reversal passed with no doubt is never rejected: the two never sum past the 60 reversed pairs
        assert counts[name]["rejected"] + counts[name]["passed_silently"] <= 60
    printed = capsys.readouterr()
    assert "g52-" not in printed.out + printed.err  # counts only: no pair of a held-out set is printed


def test_a_fidelity_set_is_counted_by_its_full_name(tmp_path: Path) -> None:
    out = tmp_path / "after.json"
    assert _tool().main(["--only", "fidelity", "--sets", "outside-written 2026-11-28", "--out", str(out)]) == 0
    (row,) = json.loads(out.read_text(encoding="utf-8"))["fidelity"].values()
    assert row["unread"] is False  # its errors were read long ago
    assert 0 < row["contradicted_hits"] <= 55


def test_compare_lists_what_moved_and_totals_only_the_sets_unread_in_both() -> None:
    tool = _tool()
    zero = dict.fromkeys(tool.GUARD_COUNTS, 0)
    before = {
        "guard": {
            "dev": {**zero, "unread": False, "rejected": 50},
            "held out 1": {**zero, "unread": True, "rejected": 40},
            "held out 2": {**zero, "unread": True, "rejected": 30},
        }
    }
    after = {
        "guard": {
            "dev": {**zero, "unread": False, "rejected": 52},
            "held out 1": {**zero, "unread": False, "rejected": 45},  # spent in this round: not in the totals
            "held out 2": {**zero, "unread": True, "rejected": 31},
        }
    }
    lines = tool.compare(before, after)
    assert "guard dev: rejected 50 -> 52" in lines
    assert "guard held out 2: rejected 30 -> 31" in lines
    (totals,) = [line for line in lines if "unread in both" in line]
    assert totals.startswith("guard, the 1 sets unread in both runs: rejected 30 -> 31, kept 0 -> 0")


def test_an_unknown_set_is_refused_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        _tool().main(["--only", "guard", "--sets", "dev 999", "--out", str(tmp_path / "x.json")])
    assert exited.value.code == 2
    assert "no shipped set named ['dev 999']" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_per_item_keeps_verdicts_of_read_sets_only_and_compare_names_the_items_that_moved(tmp_path: Path) -> None:
    tool = _tool()
    out = tmp_path / "after.json"
    assert tool.main(["--only", "guard", "--per-item", "--sets", "dev", "held out 46", "--out", str(out)]) == 0
    counts = json.loads(out.read_text(encoding="utf-8"))["guard"]
    items = counts["dev"]["items"]
    assert len(items) == 100
    assert set(items.values()) <= {f"{v}/{r}" for v in ("agree", "conflict", "uncertain") for r in ("right", "wrong")}
    assert "items" not in counts["held out 46"]  # an unread set's ids would point at its sentences
    before = {"guard": {"dev": {**counts["dev"], "items": {**items, "g2-001": "moved/right"}}}}
    lines = tool.compare(before, {"guard": {"dev": counts["dev"]}})
    assert f"  g2-001: moved/right -> {items['g2-001']}" in lines
