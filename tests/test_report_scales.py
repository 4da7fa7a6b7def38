"""Report tables put metrics in the run's declared order (primary first) and keep one scale per table."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from bedside.runs import Store, execute, load_config
from bedside.runs.report import build_report, markdown, metric_order, report_json
from bedside.testing import ScriptedServer


def test_metric_order_follows_the_declaration_with_variants_after_their_scorer() -> None:
    present = {"zeta", "concept_f1[umls]", "strict_f1", "alpha", "concept_f1[mesh]"}
    assert metric_order(present, ["strict_f1", "concept_f1"]) == [
        "strict_f1",
        "concept_f1[mesh]",
        "concept_f1[umls]",
        "alpha",
        "zeta",
    ]


def test_a_report_keeps_the_declared_order_and_one_scale(tmp_path: Path) -> None:
    with ScriptedServer({"rules": [], "default": "Keep taking your medicine and call us if it gets worse."}) as server:
        config_data = {
            "name": "scales",
            "task": "drafting",
            "datasets": {"demo": {"limit": 3}},
            "systems": {"zero_shot": {"type": "zero_shot", "options": {"evaluate": False}}},
            "models": {"system": server.model_name("m")},
            "scorers": ["words", "rougeL", "bleu", "chrf"],  # not alphabetical, on purpose
            "store": str(tmp_path / "store.sqlite"),
        }
        path = tmp_path / "scales.yaml"
        path.write_text(yaml.safe_dump(config_data), encoding="utf-8")
        config = load_config(path)
        asyncio.run(execute(config, cache=False))
    store = Store(config.store)
    try:
        report = build_report(store, config.run_id)
    finally:
        store.close()
    assert report.metrics == ["words", "rougeL", "bleu", "chrf"]
    text = markdown(report)
    header = next(line for line in text.splitlines() if line.startswith("| cell | ok |"))
    assert header == "| cell | ok | errors | hit max_tokens | words | rougeL | bleu (÷100) | chrf (÷100) |"
    row = next(line for line in text.splitlines() if line.startswith("| demo/zero_shot/"))
    shown = [cell.strip() for cell in row.strip("|").split("|")]
    for value in shown[5:]:  # rougeL, bleu, chrf: proportions, all on 0-1 now
        assert 0.0 <= float(value.split()[0]) <= 1.0, row
    stored = report_json(report)
    bleu = next(m for m in stored["cells"][0]["metrics"] if m["metric"] == "bleu")
    assert f"{bleu['mean'] / 100:.3f}" == shown[6].split()[0]  # the store and --json keep sacrebleu's 0-100
    assert stored["percent_scale"] == ["bleu", "chrf"]
    assert "Scale: scores that are proportions are shown on 0-1" in text
