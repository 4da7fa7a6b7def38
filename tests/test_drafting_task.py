"""Drafting systems and EditJudge through the runner, against the scripted server; readers; report tables."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from bedside.runs import Store, execute, load_config
from bedside.runs.report import build_report, markdown
from bedside.tasks.drafting.cases import read_liveqa, read_oncqa, read_pairs, read_table
from bedside.tasks.drafting.readers import read_cases
from bedside.testing import ScriptedServer

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "external"

DRAFT = (
    "I'm sorry the cough is keeping you up. Please keep taking it for now. "
    "Our team will review your chart. Have a good day."
)
RULES = [
    # The LLM matcher: one reference sentence is matched verbatim, one paraphrased (aligned + flagged).
    (r"Clinician sentence:\s*I'm sorry the cough", "I'm sorry the cough is keeping you up."),
    (r"Clinician sentence:\s*Please keep taking it", "please keep taking it for now"),
    (r"Clinician sentence:", "NO MATCH"),
    (r"Sentence:", '{"theme": "other"}'),
    (r"Patient(?:'s)? message:", DRAFT),
]


def write_config(tmp_path: Path, server: ScriptedServer, **changes: Any) -> Path:
    config: dict[str, Any] = {
        "name": "drafting-grid",
        "task": "drafting",
        "datasets": {"demo": {"limit": 3}},
        "systems": {
            "zero_shot+embedding": {"type": "zero_shot", "options": {"matcher": "embedding"}},
            "zero_shot+llm": {"type": "zero_shot", "options": {"matcher": "llm"}},
            "thematic+lexical": {"type": "thematic", "options": {"matcher": "lexical"}},
            "rag+embedding": {"type": "rag", "options": {"pool": "demo", "k": 2}},
            "clinician+embedding": {"type": "clinician_rag", "options": {"pool": "demo", "k": 2}},
        },
        "models": {"system": [server.model_name("drafter")], "judge": [server.model_name("judge")]},
        "concurrency": 4,
        "store": str(tmp_path / "store.sqlite"),
    }
    config.update(changes)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_grid_of_systems_and_matchers_with_report_tables(tmp_path: Path) -> None:
    with ScriptedServer(RULES) as server:
        config = load_config(write_config(tmp_path, server))
        summary = asyncio.run(execute(config, cache=False))
    assert summary.errors == 0
    store = Store(config.store)
    try:
        rows = {(r.system, r.sample_id): r for r in store.results(config.run_id)}
        report = build_report(store, config.run_id)
    finally:
        store.close()
    # demo-01-msg1's first reference: "I'm sorry the cough is keeping you up. A dry cough is a known side effect of
    # lisinopril. Please keep taking it for now and we will call you today ... effect. If you have swelling ..."
    llm = rows[("zero_shot+llm", "demo-01-msg1")]
    evaluation = llm.output["extra"]["editjudge"]  # type: ignore[index]
    decisions = evaluation["content"]["decisions"]
    assert decisions[0]["span"] == "I'm sorry the cough is keeping you up."
    assert not decisions[0]["flagged"]
    assert decisions[2]["span"] == "Please keep taking it for now."
    assert decisions[2]["flagged"]  # the judge answered in lower case: aligned to the draft
    # 4 reference sentences, 2 matched; the draft's other 2 sentences are left: EM 2, EA 2, ED 2.
    assert (evaluation["content"]["em"], evaluation["content"]["ea"], evaluation["content"]["ed"]) == (2, 2, 2)
    assert llm.scores["content_f1"] == pytest.approx(0.5)
    assert llm.usage["judge"]["calls"] >= 4
    # The embedding matcher cell ran no judge call for matching, and the draft came from the same prompt.
    embedding = rows[("zero_shot+embedding", "demo-01-msg1")]
    assert "judge" not in embedding.usage
    assert embedding.output["text"] == llm.output["text"]  # type: ignore[index]
    # demo-01-msg1 has two clinicians' replies: both ordered pairs are scored.
    assert len(llm.output["extra"]["inter_clinician"]) == 2  # type: ignore[index]
    # The RAG prompts carry other cases' real replies, never the case's own.
    rag = rows[("rag+embedding", "demo-01-msg1")]
    prompt = rag.output["prompts"][0][-1]["content"]  # type: ignore[index]
    assert "Example 2" in prompt
    assert "A dry cough is a known side effect of lisinopril" not in prompt
    clinician = rows[("clinician+embedding", "demo-01-msg2")]
    system_prompt = clinician.output["prompts"][0][0]["content"]  # type: ignore[index]
    assert "% of replies" in system_prompt
    titles = [t.title for t in report.tables]
    assert titles[0].startswith("EditJudge")
    assert any("proportions" in t for t in titles)
    assert any("per theme" in t for t in titles)
    assert any("agreement" in t.lower() for t in titles)
    main = report.tables[0]
    assert any(row[0].startswith("IAP: demo (llm") for row in main.rows)
    flagged = {row[0].split("/")[1]: row[-1] for row in main.rows if row[0].startswith("demo/")}
    assert flagged["zero_shot+embedding"] == "0.00"  # offline matchers never flag
    llm_outputs = [r.output for r in rows.values() if r.system == "zero_shot+llm" and r.output]
    llm_decisions = [d for o in llm_outputs for d in o["extra"]["editjudge"]["content"]["decisions"]]
    assert flagged["zero_shot+llm"] == f"{sum(d['flagged'] for d in llm_decisions) / len(llm_decisions):.2f}"
    assert flagged["zero_shot+llm"] != "0.00"  # the scripted judge answers one sentence in lower case
    assert len([r for r in main.rows if r[0].startswith("demo/")]) == 5
    text = markdown(report)
    assert "## EditJudge: content and theme level, micro-averaged" in text


def test_micro_average_pools_counts(tmp_path: Path) -> None:
    from bedside.tasks.drafting.tables import drafting_tables

    with ScriptedServer(RULES) as server:
        config = load_config(
            write_config(tmp_path, server, systems={"z": {"type": "zero_shot", "options": {"matcher": "llm"}}})
        )
        asyncio.run(execute(config, cache=False))
    store = Store(config.store)
    try:
        rows = store.results(config.run_id)
    finally:
        store.close()
    counts = [r.output["extra"]["editjudge"]["content"] for r in rows]  # type: ignore[index]
    em = sum(c["em"] for c in counts)
    ea = sum(c["ea"] for c in counts)
    ed = sum(c["ed"] for c in counts)
    table = drafting_tables(rows)[0]
    precision, recall = em / (em + ed), em / (em + ea)
    assert table.rows[0][3] == f"{precision:.2f}"
    assert table.rows[0][4] == f"{recall:.2f}"
    assert table.rows[0][5] == f"{2 * precision * recall / (precision + recall):.2f}"


def test_clinician_dataset_keeps_that_clinicians_replies(tmp_path: Path) -> None:
    from bedside.runs.config import DatasetConfig
    from bedside.tasks.drafting.task import TASK

    samples = TASK.load("d", DatasetConfig(options={"clinician": "np-b"}))
    assert len(samples) == 8
    assert all(s.strata == {"clinician": "np-b"} for s in samples)
    assert all(len(s.references) == 1 for s in samples)
    with pytest.raises(ValueError, match="no case has a reply from clinician 'x'"):
        TASK.load("d", DatasetConfig(options={"clinician": "x"}))


def test_rag_without_pool_is_a_clear_sample_error(tmp_path: Path) -> None:
    with ScriptedServer(RULES) as server:
        config = load_config(write_config(tmp_path, server, systems={"r": {"type": "rag"}}))
        summary = asyncio.run(execute(config, cache=False))
    assert summary.errors == 3
    store = Store(config.store)
    try:
        assert "needs options.pool" in (store.results(config.run_id)[0].error or "")
    finally:
        store.close()


def test_table_reader_with_column_mapping_and_theme_fields(tmp_path: Path) -> None:
    path = tmp_path / "inbox.csv"
    path.write_text(
        "msg,text,chart,who,reply,emp_box,cont_box\n"
        "m1,My knee hurts.,Knee OA.,dr-x,Sorry about the knee. Ice it.,,\n"
        "m1,My knee hurts.,Knee OA.,np-y,,Sorry it hurts.,Call if it swells.\n"
        "m2,Refill please.,Statin.,dr-x,Sent to CVS.,,\n",
        encoding="utf-8",
    )
    columns = {
        "id": "msg",
        "message": "text",
        "chart_summary": "chart",
        "clinician_id": "who",
        "reference": "reply",
        "theme.empathy": "emp_box",
        "theme.contingency": "cont_box",
    }
    cases = read_table(path, columns)
    assert [c.id for c in cases] == ["m1", "m2"]
    first, second = cases[0].references
    assert first.given_themes is None
    assert second.text == "Sorry it hurts. Call if it swells."  # joined from the theme fields, in theme order
    assert second.given_themes == frozenset({"empathy", "contingency"})
    with pytest.raises(ValueError, match=r"inbox.csv:2: no value in column 'nope'"):
        read_table(path, {**columns, "message": "nope"})
    with pytest.raises(ValueError, match="unknown field"):
        read_table(path, {"body": "text"})


def test_bedside_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "a", "message": "hi", "chart_summary": ""}\n{"id": "b"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"cases.jsonl:2"):
        read_cases(path)
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": "1", "draft": "a", "reference": "b"}) + "\n{}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"pairs.jsonl:2"):
        read_pairs(pairs)


@pytest.mark.skipif(not EXTERNAL.is_dir(), reason="../shared/data/external is not beside the repository")
def test_external_liveqa_and_oncqa() -> None:
    questions = read_liveqa(EXTERNAL / "patient_qa" / "TREC-2017-LiveQA-Medical-Test-Questions-w-summaries.xml")
    assert len(questions) == 104
    assert all(q.chart_summary == "" for q in questions)
    assert sum(len(q.references) >= 2 for q in questions) == 50  # some questions have several expert answers
    assert all(q.references for q in questions)
    pairs = read_oncqa(EXTERNAL / "AIM-Harvard_OncQA" / "Data" / "parsed_data" / "stage2.csv")
    assert len(pairs) == 156
    assert {p.label for p in pairs} >= {"Acceptable with no modifications", "Acceptable with modifications"}


def test_shipped_grid_config_runs(tmp_path: Path) -> None:
    """configs/drafting-grid.yaml (systems x models x matchers) runs as shipped, models swapped for the scripted one."""
    path = Path(__file__).resolve().parents[1] / "configs" / "drafting-grid.yaml"
    with ScriptedServer(RULES) as server:
        config = load_config(path)
        config = config.model_copy(
            update={
                "models": {
                    "system": [server.model_name("a"), server.model_name("b")],
                    "judge": [server.model_name("j")],
                },
                "datasets": {name: d.model_copy(update={"limit": 2}) for name, d in config.datasets.items()},
                "store": str(tmp_path / "grid.sqlite"),
            }
        )
        summary = asyncio.run(execute(config, cache=False))
    assert summary.errors == 0
    assert len(summary.cells) == 2 * 10 * 2  # datasets x systems x models
    store = Store(config.store)
    try:
        tables = build_report(store, config.run_id).tables
    finally:
        store.close()
    assert len(tables[0].rows) >= 40
    by_title = {t.title: t for t in tables}
    statistics = by_title["Dataset statistics"]
    assert statistics.rows[0][:4] == ["demo", "2", "2", "4"]  # 2 cases, both answered by dr-a and np-b
    over = by_title["EditJudge over models: mean ± std per adaptation"]
    assert len(over.rows) == 2 * 10  # datasets x systems, each over the 2 models
    assert all("(2 models)" in row[0] for row in over.rows)
    assert "Other" in by_title["Theme proportions: share of responses carrying each theme"].columns
    # Every table with abbreviated theme columns says what each abbreviation is, so a log stays readable.
    for table in tables:
        if "SymQ" in table.columns:
            assert "SymQ = Symptom-related follow-up questions" in (table.note or ""), table.title
    cosine = next(t for t in tables if t.title.startswith("Inter-clinician agreement by cosine: demo"))
    assert cosine.columns == ["clinician", "dr-a", "np-b"]
    assert cosine.rows[0][1] == "1.00"
    assert 0.0 < float(cosine.rows[0][2]) < 1.0
