"""Matching, the analyses of clinician labels, metrics against clinicians, LLM judges, and the CLI."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bedside.cli import app
from bedside.llm import ChatMessage, get_model
from bedside.metrics.learned import learned_unavailable
from bedside.metrics.lexical import sentence_google_bleu
from bedside.stats import head_to_head
from bedside.tasks.instruct import (
    Instruction,
    ResponseLabel,
    agreement,
    evaluation,
    matching,
    primary_labels,
    read_instructions,
    read_labels_jsonl,
)
from bedside.tasks.instruct.judging import blinded, judge_labels, validate
from bedside.tasks.instruct.task import DEMO_RECORDS, SYNTHETIC_INSTRUCTIONS, SYNTHETIC_LABELS
from bedside.text.tokens import CharEstimate

runner = CliRunner()


def _labels() -> list[ResponseLabel]:
    return primary_labels(read_labels_jsonl(SYNTHETIC_LABELS))


def _cases() -> dict[str, Instruction]:
    return {i.id: i for i in read_instructions(SYNTHETIC_INSTRUCTIONS)}


def test_table_s6_is_reproduced_from_its_first_relevant_ranks() -> None:
    # 407 general instructions; the first relevant record at rank 1..5 for 240, 37, 19, 3 and 4 of them.
    matches = []
    for n, rank in enumerate([1] * 240 + [2] * 37 + [3] * 19 + [4] * 3 + [5] * 4 + [None] * 104):
        candidates = [
            matching.Candidate(
                f"p{r}",
                r,
                1.0,
                "relevant" if r == rank else ("irrelevant" if rank is None or r < rank else "unreviewed"),
            )
            for r in range(1, 6)
        ]
        matches.append(matching.Match(str(n), "q", candidates))
    result = matching.evaluate(matches)
    assert result.n == 407
    assert [round(result.success[k], 4) for k in range(1, 6)] == [0.5897, 0.6806, 0.7273, 0.7346, 0.7445]
    assert [round(result.mrr[k], 4) for k in range(1, 6)] == [0.5897, 0.6351, 0.6507, 0.6525, 0.6545]
    assert result.mrr[1] == result.success[1]  # the paper's 0.0149 cannot be MRR@1
    assert result.first_relevant_at == {1: 240, 2: 37, 3: 19, 4: 3, 5: 4}
    assert result.unreviewed == 4 * 240 + 3 * 37 + 2 * 19 + 1 * 3  # below the first relevant: never labelled


def test_bm25_matching_over_the_demo_cohort_and_the_random_baseline() -> None:
    cases = read_instructions(SYNTHETIC_INSTRUCTIONS)
    documents = matching.record_documents(str(DEMO_RECORDS))
    found = matching.bm25_match(cases, documents, k=5)
    assert len(found) == sum(i.general is not False for i in cases)  # specific instructions are not matched
    first = found[0]
    assert first.query.startswith(cases[0].question)
    assert cases[0].patient_characteristics in first.query
    assert [c.rank for c in first.candidates] == list(range(1, len(first.candidates) + 1))
    assert all(a.score >= b.score for a, b in zip(first.candidates, first.candidates[1:], strict=False))  # type: ignore[operator]
    relevance = {i.id: {i.person_id or "": "relevant"} for i in cases}
    labelled = matching.label(found, relevance)
    bm25 = matching.evaluate(labelled)
    random_draws = matching.random_match(cases, list(documents), k=5, seed=1)
    assert random_draws == matching.random_match(cases, list(documents), k=5, seed=1)  # seeded
    baseline = matching.evaluate(matching.label(random_draws, relevance))
    assert bm25.success[1] > baseline.success[1]  # 0.48 against 0.16 with this seed
    assert bm25.mrr[5] > baseline.mrr[5]
    assert 0 <= bm25.mrr[5] <= bm25.success[5] <= 1


def test_table3_win_rates_exclude_ties_and_average_a_half() -> None:
    labels = _labels()
    table = evaluation.table3(labels)
    rates = [r.win_rate for r in table.rows]
    assert sum(r for r in rates if r is not None) / len(rates) == pytest.approx(0.5)
    a = next(r for r in table.rows if r.model == "synthetic-a")
    assert a.correct == 1.0
    assert a.mean_rank == pytest.approx(sum(x.rank or 0 for x in labels if x.model == "synthetic-a") / 32)
    counted = head_to_head(evaluation.rankings(labels), ["synthetic-a", "synthetic-b"])
    assert table.matrix.wins[0][1] > counted.wins[0][1]  # type: ignore[operator]  # ties left the denominator


def test_breakdowns_micro_macro_and_subsets() -> None:
    labels, cases = _labels(), _cases()
    by_category = evaluation.correctness_by(labels, cases, lambda i: i.category, name="category")
    b = "synthetic-b"
    assert by_category.micro[b] == pytest.approx(sum(x.correct for x in labels if x.model == b) / 32)
    rates = [r for g in by_category.groups if (r := by_category.rates[g][b]) is not None]
    assert by_category.macro[b] == pytest.approx(sum(rates) / len(rates))
    assert sum(by_category.counts.values()) == 32
    subset = evaluation.without_provider_errors(labels)
    flagged = {x.instruction_id for x in labels if x.provider_error}
    assert flagged
    assert {x.instruction_id for x in subset} == {x.instruction_id for x in labels} - flagged
    correlation = evaluation.rank_correctness_correlation(labels)
    assert correlation.mean is not None
    assert correlation.mean < -0.5  # correct responses rank better
    assert correlation.n + correlation.skipped == 32
    everything_right = [x.model_copy(update={"correct": True}) for x in labels]
    assert evaluation.rank_correctness_correlation(everything_right).skipped == 32
    assert len(evaluation.easy_and_hard(everything_right).all_correct) == 32


def test_length_quartiles_bin_instructions_by_their_record() -> None:
    labels, cases = _labels(), _cases()
    tokenizer = CharEstimate(4)
    from bedside.tasks.instruct.ehr import load_ehr

    lengths = {i: tokenizer.count(load_ehr(c, str(DEMO_RECORDS)).text("paper")) for i, c in cases.items()}
    quartiles = evaluation.by_length_quartile(labels, lengths, tokenizer=tokenizer.name)
    assert quartiles.edges[0] == min(lengths.values())
    assert quartiles.edges[-1] == max(lengths.values())
    assert sum(quartiles.counts) == 32
    assert quartiles.correct["synthetic-a"] == [1.0, 1.0, 1.0, 1.0]
    rows = {r.source: r for r in evaluation.response_lengths(labels, cases, tokenizer.count)}
    assert rows["synthetic-d"].percentiles[2] == tokenizer.count("The patient should follow up with their doctor.")
    assert rows["clinicians"].n == sum(len(c.references) for c in cases.values())
    assert rows["synthetic-a"].percentiles == sorted(rows["synthetic-a"].percentiles)


def test_metrics_against_clinicians_and_the_inter_rater_row() -> None:
    labels, cases = _labels(), _cases()
    scores = agreement.metric_scores(labels, cases, sentence_google_bleu)
    result = agreement.versus_clinicians("google_bleu", scores, labels)
    assert result.n + result.undefined == 32
    assert result.low is not None
    assert result.high is not None
    assert result.low <= (result.mean or 0) <= result.high
    # Perfect agreement: a "metric" that is the clinicians' own (negated) rank.
    own = agreement.clinician_scores(labels)
    perfect = agreement.versus_clinicians("own", own, labels)
    assert perfect.mean == pytest.approx(1.0)
    raters = agreement.inter_rater(read_labels_jsonl(SYNTHETIC_LABELS))
    assert raters.n == 8
    assert raters.mean is not None
    assert 0 < raters.mean < 1
    comparison = agreement.compare(result, perfect)
    assert comparison.paired.difference > 0
    assert comparison.fisher is None  # τ = 1 has no Fisher z
    win_rates = agreement.metric_win_rates(own)
    assert win_rates == pytest.approx({r.model: r.win_rate for r in evaluation.table3(labels).rows})


def test_comet_source_is_bm25_snippets_of_the_patients_record_within_400_tokens() -> None:
    from bedside.tasks.instruct.ehr import load_ehr

    case = _cases()["syn-08"]  # "What is the latest kidney function result?"
    tokenizer = CharEstimate(4)
    source = agreement.source_snippets(load_ehr(case, str(DEMO_RECORDS)), case.question, tokenizer, tokens=60)
    assert tokenizer.count(source) <= 60 + source.count("\n")
    assert source.splitlines()[0].lower().count("kidney") == 1  # the matching event comes first


def _agreement_json(*options: str) -> dict[str, Any]:
    result = runner.invoke(app, ["instruct", "agreement", "--metric", "rougeL", *options, "--json"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


LEARNED_OPTIONS = {
    "comet": ("--comet", "comet[{}][src=bm25-events-400]"),
    "bleurt": ("--bleurt", "bleurt[{}]"),
    "lens": ("--lens", "lens[{}][complex=bm25-events-400]"),
    "unieval": ("--unieval", "unieval[{}][src=bm25-events-400]"),
    "bertscore": ("--bertscore-model", "bertscore[{}/L17]"),
}


def test_each_learned_metric_is_absent_with_its_reason_without_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from bedside.metrics.learned import PACKAGES

    missing = {module for modules, _ in PACKAGES.values() for module in modules}
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in missing else real(name, *a))
    for kind, (option, name) in LEARNED_OPTIONS.items():
        data = _agreement_json(option, "/models/ckpt")
        assert [r["name"] for r in data["agreement"]] == ["rougeL", "inter-rater"]  # absent, not zero
        (reason,) = data["absent"]
        assert reason.startswith(f"{name.format('ckpt')}: {kind} unavailable: the ")
        assert f"pip install 'bedside[{PACKAGES[kind][1]}]'" in reason


def test_each_learned_metric_is_absent_with_its_reason_without_its_checkpoint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())  # every package "installed"
    for kind, (option, name) in LEARNED_OPTIONS.items():
        data = _agreement_json(option, str(tmp_path / "absent"))
        assert [r["name"] for r in data["agreement"]] == ["rougeL", "inter-rater"]
        (reason,) = data["absent"]
        assert reason.startswith(f"{name.format('absent')}: {kind} unavailable: no local checkpoint")
        assert str(tmp_path / "absent") in reason
    # all at once: every reason listed, in the table's note too
    options = [x for option, _ in LEARNED_OPTIONS.values() for x in (option, str(tmp_path / "absent"))]
    assert len(_agreement_json(*options)["absent"]) == 5
    table = runner.invoke(app, ["instruct", "agreement", "--metric", "rougeL", "--comet", str(tmp_path / "absent")])
    assert table.exit_code == 0, table.output
    assert "Absent (not zero): comet[absent][src=bm25-events-400]: comet unavailable" in " ".join(table.stdout.split())


def test_agreement_rows_from_a_batch_metric_on_the_synthetic_labels() -> None:
    labels, cases = _labels(), _cases()
    seen: dict[str, list[str]] = {}

    def metric(responses: list[str], references: list[str], sources: list[str]) -> dict[str, list[float]]:
        seen.update(responses=responses, references=references, sources=sources)
        # "length" prefers long answers; "own" is the clinicians' ranking itself, in the order given
        own = agreement.clinician_scores(labels)
        order = [(x.instruction_id, x.model) for x in labels]
        return {"length": [float(len(r)) for r in responses], "own": [own[i][m] for i, m in order]}

    built: dict[str, str] = {}
    rows = agreement.batch_agreement(
        labels, cases, metric, records=str(DEMO_RECORDS), tokenizer=CharEstimate(4), snippets=built
    )
    assert [r.name for r in rows] == ["length", "own"]
    assert rows[1].mean == pytest.approx(1.0)
    assert rows[0].n + rows[0].undefined == 32
    assert rows[0].mean == pytest.approx(
        agreement.versus_clinicians("x", agreement.metric_scores(labels, cases, lambda t, r: len(t)), labels).mean
    )
    first = labels[0]
    assert seen["references"][0] == cases[first.instruction_id].primary_reference.text  # type: ignore[union-attr]
    from bedside.tasks.instruct.ehr import load_ehr

    case = cases[first.instruction_id]
    expected = agreement.source_snippets(load_ehr(case, str(DEMO_RECORDS)), case.question, CharEstimate(4))
    assert seen["sources"][0] == expected != ""
    assert built[first.instruction_id] == expected
    built[first.instruction_id] = "cached"  # a second metric reads the shared snippets, not the record again
    agreement.batch_agreement(labels, cases, metric, records="/nonexistent", tokenizer=CharEstimate(4), snippets=built)
    assert seen["sources"][0] == "cached"
    agreement.batch_agreement(labels, cases, metric)  # source-free: no record is read
    assert set(seen["sources"]) == {""}


def test_learned_metrics_are_absent_without_a_checkpoint(tmp_path: Path) -> None:
    reason = learned_unavailable("comet", tmp_path / "missing.ckpt")
    assert reason is not None
    assert "comet" in reason
    with pytest.raises(ValueError, match="unknown learned metric"):
        learned_unavailable("nope", None)
    with pytest.raises(ValueError, match="unknown learned metric"):
        agreement.learned_agreement("nope", tmp_path, [], {}, records=None, tokenizer=CharEstimate(4))


def test_llm_judge_labels_validated_against_the_clinicians() -> None:
    labels = [x for x in _labels() if x.instruction_id in ("syn-01", "syn-02")]
    cases = _cases()
    assert blinded(["a", "b", "c"], instruction_id="i1") == blinded(["a", "b", "c"], instruction_id="i1")
    letters_by_item = {
        item: blinded(sorted({x.model for x in labels}), instruction_id=item) for item in ("syn-01", "syn-02")
    }

    def reply(messages: Sequence[ChatMessage]) -> str:
        text = messages[-1].content
        if "Rank the responses" in text:
            item = "syn-01" if "antihypertensive" in text else "syn-02"
            human = {x.model: x.rank for x in labels if x.instruction_id == item}
            return json.dumps({letters_by_item[item][m]: int(r or 1) for m, r in human.items()})
        ok = 0 if "follow up with their doctor" in text or "content filter" in text else 1
        entry = {"score": ok, "justification": "checked against the record"}
        return json.dumps({"appropriate": entry, "no_consequential_errors": entry, "addresses_request": entry})

    async def go() -> Any:
        async with get_model(
            "scripted/judge", options={"rules": {"Rank the responses|Patient record": reply}}
        ) as model:
            return await judge_labels(
                model, labels, cases, records=str(DEMO_RECORDS), tokenizer=CharEstimate(4), record_tokens=200
            )

    judged, failures = asyncio.run(go())
    assert failures == {}
    assert len(judged) == len(labels)
    assert {x.evaluator for x in judged} == {"llm-judge"}
    result = validate(judged, labels)
    assert result.n == len(labels)
    assert result.ranking is not None
    assert result.ranking.mean == pytest.approx(1.0)  # the scripted judge ranks as the clinicians did
    assert result.agreement is not None
    assert 0 <= result.agreement <= 1


def test_cli_match_evaluate_agreement_taxonomy(tmp_path: Path) -> None:
    labels = tmp_path / "relevance.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"instruction_id": i.id, "person_id": i.person_id, "relevance": "relevant"}) + "\n"
            for i in read_instructions(SYNTHETIC_INSTRUCTIONS)
        )
    )
    result = runner.invoke(
        app, ["instruct", "match", "--records", str(DEMO_RECORDS), "--labels", str(labels), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["method"] == "bm25-okapi"
    assert data["matches"][0]["candidates"][0]["relevance"] in ("relevant", "unreviewed")
    assert data["evaluation"]["mrr"]["1"] == data["evaluation"]["success"]["1"]
    result = runner.invoke(app, ["instruct", "evaluate", "--json"])
    assert result.exit_code == 0, result.output
    assert "synthetic demo labels" in result.stderr  # said, and kept off the JSON
    evaluated = json.loads(result.stdout)
    table = {r["model"]: r for r in evaluated["table3"]}
    assert table["synthetic-a"]["correct"] == 1.0
    assert sum(evaluated["length_quartiles"]["counts"]) == 32
    result = runner.invoke(app, ["instruct", "agreement", "--metric", "google_bleu", "--json"])
    assert result.exit_code == 0, result.output
    names = [r["name"] for r in json.loads(result.stdout)["agreement"]]
    assert names == ["google_bleu", "inter-rater"]
    result = runner.invoke(app, ["instruct", "agreement", "--metric", "nonsense"])
    assert result.exit_code == 1
    assert "unknown metric" in result.output
    result = runner.invoke(app, ["instruct", "taxonomy", "--json"])
    assert len(json.loads(result.output)["subcategories"]) == 20
    missing = runner.invoke(app, ["instruct", "cases", "-i", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 1
    assert "no such file" in missing.output


def test_subgroup_audit_is_pairwise_with_a_stated_bonferroni_family() -> None:
    from bedside.tasks.instruct import subgroups
    from bedside.tasks.instruct.ehr import load_ehr

    assert [subgroups.age_band(a) for a in (0, 17, 18, 64, 65, 85, 101)] == [
        "0-17",
        "0-17",
        "18-24",
        "45-64",
        "65-84",
        "85+",
        "85+",
    ]
    cases = _cases()
    ages = {i: subgroups.demographics(load_ehr(c, str(DEMO_RECORDS)))["age"] for i, c in cases.items()}
    assert ages["syn-25"] == "65-84"  # born 29 Feb 1948, last event September 2025: 77
    labels = _labels()
    tests = subgroups.audit(labels, ages)
    for model in {t.model for t in tests}:
        mine = [t for t in tests if t.model == model]
        assert all(t.family == len(mine) for t in mine)
        assert all(t.p_bonferroni == min(1.0, t.p_value * len(mine)) for t in mine)
    assert not any(t.model == "synthetic-a" for t in tests)  # always correct: no 2x2 table has a χ²
    result = runner.invoke(app, ["instruct", "subgroups", "--attribute", "height"])
    assert result.exit_code == 1
    assert "--attribute must be one of" in result.output


def test_cli_judge_against_a_scripted_endpoint() -> None:
    from bedside.testing import ScriptedServer

    def reply(messages: Sequence[ChatMessage]) -> str:
        text = messages[-1].content
        if "Rank the responses" in text:
            letters = [line.split()[1].rstrip(":") for line in text.splitlines() if line.startswith("Response ")]
            return json.dumps({letter: 1 for letter in letters})  # every response tied
        entry = {"score": 1, "justification": "consistent with the record"}
        return json.dumps({"appropriate": entry, "no_consequential_errors": entry, "addresses_request": entry})

    with ScriptedServer([(r"Rank the responses|Patient record", reply)]) as server:
        result = runner.invoke(
            app,
            [
                "instruct",
                "judge",
                "-m",
                server.model_name("judge"),
                "--limit",
                "2",
                "--tokenizer",
                "chars:4",
                "--no-cache",
                "--json",
            ],
        )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output[result.output.index("{") :])
    assert data["failures"] == {}
    validation = data["validation"]
    assert validation["n"] == 8  # 2 instructions x 4 responses
    judged = [x for x in _labels() if x.instruction_id in ("syn-01", "syn-02")]
    assert validation["agreement"] == pytest.approx(sum(x.correct for x in judged) / len(judged))  # judge: all correct
    assert validation["ranking"]["undefined"] == 2  # a judge that ties everything has no defined tau


def test_demo_has_an_instruct_section(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "demo",
            "-m",
            "scripted/demo",
            "--no-cache",
            "--store",
            str(tmp_path / "demo.sqlite"),
            "--reports",
            str(tmp_path / "reports"),
            "--limit",
            "1",
            "--citeqa-cases",
            "0",
            "--discharge-conversations",
            "0",
            "--instruct-instructions",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "clinician instructions over records: 2 synthetic instruction(s)" in result.output
    assert "0 sample(s) failed; `bedside report demo-instruct-" in result.output
    assert "unbounded" in result.output  # the MR row


def test_release_tsvs_through_the_analysis_commands_with_column_maps(tmp_path: Path) -> None:
    """The release's two TSVs, under column names bedside cannot guess, read by `instruct evaluate` and `agreement`
    through --column (reviewed file) and --instruction-column (gold file); the reviewed file's submitter_specialty
    fills the specialty breakdown, which the gold file cannot (it has no such column)."""
    gold = tmp_path / "clinician-instruction-responses.tsv"
    gold.write_text(
        "iid\tperson_id\tannotator_num\tanswer\tquestion\tfilename\n"
        'q1\t77\tAnnotator_1\tBP "high" since 2019\tHow is the blood pressure?\t\n'
        "q2\t78\tAnnotator_1\tNo known allergies\tAny allergies?\t\n",
        encoding="utf-8",
    )
    reviewed = tmp_path / "clinician-reviewed-model-responses.tsv"
    reviewed.write_text(
        "iid\tmodel_name\tbinary_correct\tis_used_eval\tsubmitter_specialty\tresponse_text\trank\n"
        'q1\tm1\t1\tyes\tCardiology\tBP "high" since 2019\t1\n'
        "q1\tm2\t0\tyes\tCardiology\tUnknown\t2\n"
        "q2\tm1\t0\tyes\tNeurology\tPenicillin\t2\n"
        "q2\tm2\t1\tyes\tNeurology\tNo known allergies\t1\n",
        encoding="utf-8",
    )
    maps = ["--column", "instruction_id=iid", "--column", "response=response_text", "--column", "rank=rank"]
    maps += ["--instruction-column", "instruction_id=iid", "--instruction-column", "response=answer"]
    common = [str(reviewed), "-i", str(gold), *maps, "--quoting", "none", "--json"]
    result = runner.invoke(app, ["instruct", "evaluate", *common])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert {r["model"]: r["correct"] for r in data["table3"]} == {"m1": 0.5, "m2": 0.5}
    assert {r["model"]: r["win_rate"] for r in data["table3"]} == {"m1": 0.5, "m2": 0.5}
    assert data["by_specialty"] == {"Cardiology": 0.5, "Neurology": 0.5}
    result = runner.invoke(app, ["instruct", "agreement", *common, "--metric", "rougeL", "--metric", "words"])
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.output)["agreement"]}
    # The gold answers joined by id: rougeL ranks each instruction's right answer first, as the clinician did.
    assert rows["rougeL"]["per_instruction"] == {"q1": 1.0, "q2": 1.0}
    bad = runner.invoke(
        app, ["instruct", "evaluate", str(reviewed), "-i", str(gold), "--column", "rank=clinician_rank"]
    )
    assert bad.exit_code == 1
    assert "clinician_rank" in bad.output
    wrong = runner.invoke(app, ["instruct", "evaluate", "--column", "rank=rank"])
    assert wrong.exit_code == 1
    assert "reviewed .tsv" in wrong.output
    unknown = runner.invoke(app, ["instruct", "agreement", *common, "--metric", "rougeL", "--compare", "rougeL:nope"])
    assert unknown.exit_code == 1
    assert "no row named nope" in unknown.output


def test_power_analysis_reproduces_appendix_k_with_its_inputs() -> None:
    """σ_d 0.014, α 0.05, power 0.8: (1.95996 + 0.84162) × 0.014 = 0.03922 with normal quantiles; with t at 4 df
    (2.77645 + 0.94096) × 0.014 = 0.05204, the paper's 0.052."""
    from bedside.stats import minimum_detectable_difference

    assert minimum_detectable_difference(0.014) == pytest.approx((1.959964 + 0.841621) * 0.014, abs=1e-6)
    assert minimum_detectable_difference(0.014, df=4) == pytest.approx((2.776445 + 0.940965) * 0.014, abs=1e-6)
    result = runner.invoke(app, ["instruct", "power", "--sd", "0.014", "--df", "4", "--json"])
    assert result.exit_code == 0, result.output
    assert round(json.loads(result.output)["minimum_detectable"], 3) == 0.052
    bad = runner.invoke(app, ["instruct", "power", "--sd", "0"])
    assert bad.exit_code == 1
    assert "standard error must be a positive number" in bad.output
