"""The paper configs (configs/papers/): each passes `bedside config check`, and `bedside run --dry-run` prints the
samples to run and, once the store holds a sample of the same system, the calls and cost it expects.

They also say, in their comments, which paper table they reproduce, what data the user must supply, and where the
fidelity page is; that page must exist.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.runs import Store, load_config
from bedside.runs.store import ResultRow

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT / "configs" / "papers"
CONFIGS = {
    "000-drafting.yaml": "drafting",
    "001-instruct.yaml": "instruct",
    "002-discharge.yaml": "discharge",
    "003-citeqa.yaml": "citeqa",
    "004-sensemaking.yaml": "sensemaking",
}
runner = CliRunner()


def test_one_config_per_seed() -> None:
    assert sorted(p.name for p in PAPERS.glob("*.yaml")) == sorted(CONFIGS)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_config_check_passes(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    store = tmp_path / "store.sqlite"
    result = runner.invoke(app, ["config", "check", str(PAPERS / name), "--set", f"store={store}", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["task"] == CONFIGS[name]
    assert summary["run"].startswith("paper-" + name.removesuffix(".yaml"))
    assert all(count > 0 for count in summary["samples"].values())
    assert not store.exists()  # checking writes nothing


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_comments_cite_the_paper_and_the_data(name: str) -> None:
    text = (PAPERS / name).read_text(encoding="utf-8")
    header = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    assert "Table" in header
    assert "Data you supply" in header
    assert f"bedside run configs/papers/{name}" in header
    page = next(part for part in header.split() if part.startswith("docs/fidelity/"))
    assert (ROOT / page.rstrip(".,;)")).is_file(), page


def _seed_history(store_path: Path, config_path: Path) -> int:
    """One earlier successful sample of each of the config's system types, with its usage per role; returns the
    calls that sample made in all."""
    config = load_config(config_path)
    usage = {
        role: {"calls": 3, "prompt_tokens": 1000, "completion_tokens": 200, "cache_hits": 0} for role in config.models
    }
    store = Store(str(store_path))
    try:
        store.begin_run(
            "earlier",
            "earlier",
            config.task,
            {"systems": {name: {"type": system.type} for name, system in config.systems.items()}},
        )
        store.write(
            [
                ResultRow(
                    run_id="earlier",
                    cell=f"d/{name}/m",
                    sample_id="s1",
                    epoch=0,
                    dataset="d",
                    system=name,
                    model="m",
                    key=f"k-{name}",
                    status="ok",
                    error=None,
                    output={"text": "x", "extra": {}},
                    scores={},
                    usage=usage,
                    strata={},
                    sample={"id": "s1", "inputs": {}},
                )
                for name in config.systems
            ]
        )
        store.finish_run("earlier", "done")
    finally:
        store.close()
    return 3 * len(config.models)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_dry_run_prints_the_samples_then_calls_and_cost(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    store = tmp_path / "store.sqlite"
    base = ["run", str(PAPERS / name), "--dry-run", "--no-cache", "--set", f"store={store}"]
    fresh = runner.invoke(app, [*base, "--json"])
    assert fresh.exit_code == 0, fresh.output
    data = json.loads(fresh.output)
    to_run = sum(cell["run"] for cell in data["cells"].values())
    assert to_run == sum(cell["samples"] for cell in data["cells"].values()) > 0
    assert data["expected"]["calls"] is None  # no history yet: it says so rather than guess
    assert data["expected"]["requests_at_least"] == to_run  # but the bounds it knows it gives
    settings = load_config(PAPERS / name).settings
    assert data["expected"]["max_tokens"] == {r: s["max_tokens"] for r, s in settings.items() if s.get("max_tokens")}
    said = " ".join(runner.invoke(app, base).output.split())
    assert f"Known bounds: at least {to_run} request(s)" in said
    assert not store.exists()

    per_sample = _seed_history(store, PAPERS / name)
    config = load_config(PAPERS / name)
    prices = [
        f"model_options.{role}.price={{input_per_million: 1.0, output_per_million: 5.0}}" for role in config.models
    ]
    priced = [arg for price in prices for arg in ("--set", price)]
    estimated = runner.invoke(app, [*base, *priced, "--json"])
    assert estimated.exit_code == 0, estimated.output
    expected = json.loads(estimated.output)["expected"]
    assert expected["calls"] == per_sample * to_run
    per_role_cost = (1000 * 1.0 + 200 * 5.0) / 1e6  # the stored tokens are per sample, over its 3 calls
    assert expected["cost"] == pytest.approx(per_role_cost * len(config.models) * to_run, rel=1e-6)
    text = runner.invoke(app, [*base, *priced])
    assert text.exit_code == 0, text.output
    assert f"expected ≈ {per_sample * to_run} model calls" in text.output
    assert "cost ≈" in text.output
    assert "unknown" not in text.output.split("expected ≈", 1)[1]
