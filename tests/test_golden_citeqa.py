"""Golden end-to-end run of citeqa (ArchEHR-QA): a scripted server answers two hand-made cases, and every stored
score and every cell of ``bedside report --json`` and of the Markdown tables is compared with values worked out
by hand below, never with what the scorer functions return.

The cases (written here, no real patient)::

    g1  narrative  "My mother fell twice this week!"           13a tokens: my mother fell twice this week !   (7)
        question   "Why did her falls happen?"                               why did her falls happen ?     (6)
        sentences  1 essential      "Orthostatic hypotension caused syncope."  orthostatic hypotension caused
                                                                               syncope .                      (5)
                   2 supplementary  "Metoprolol was stopped."
                   3 not-relevant   "Appetite is good."
                   4 not-relevant   "Sleep is normal."
    g2  narrative  "My son has a bad cough!"                   my son has a bad cough !                       (7)
        question   "What treatment was given?"                 what treatment was given ?                     (5)
        sentences  1 essential      "Chest radiograph confirmed pneumonia."
                   2 essential      "Amoxicillin started today."   essential text: chest radiograph confirmed
                                                                   pneumonia . amoxicillin started today .    (9)
                   3 supplementary  "Fever resolved overnight."
                   4 not-relevant   "Diet is regular."

The scripted 1-stage answers repeat the relevance reference (narrative, question, essential sentences), one
statement each, so the relevance metrics are known by hand; the citations are chosen to make every
factuality number differ:

    g1  relevant [1];     statements N1 |1,3|, Q1 |2|, s1 |1|            cited C = {1,2,3}
    g2  relevant [1,2,3]; statements N2 |1|, Q2 |3|, s1 |4|, s2 |1|       cited C = {1,3,4}

Factuality (tp = |C∩G|, fp = |C−G|, fn = |G−C|):

    g1 strict  G={1}:     tp 1 fp 2 fn 0 → P 1/3, R 1,   F1 1/2
    g1 lenient G={1,2}:   tp 2 fp 1 fn 0 → P 2/3, R 1,   F1 4/5
    g2 strict  G={1,2}:   tp 1 fp 2 fn 1 → P 1/3, R 1/2, F1 2/5
    g2 lenient G={1,2,3}: tp 2 fp 1 fn 1 → P 2/3, R 2/3, F1 2/3
    lenient 2026 (supplementary taken out of C, scored against essential):
        g1 C={1,3} vs {1}: tp 1 fp 1 fn 0 → F1 2/3;  g2 C={1,4} vs {1,2}: tp 1 fp 1 fn 1 → F1 1/2
    macro (the report's means): strict P 1/3, R 3/4, F1 9/20; lenient P 2/3, R 5/6, F1 11/15
    micro (pooled): strict tp 2 fp 4 fn 1 → P 1/3, R 2/3, F1 4/9; lenient tp 4 fp 2 fn 1 → P 2/3, R 4/5, F1 8/11
    evidence recall (selected vs essential+supplementary): g1 1/2, g2 3/3 = 1

Relevance (0–100). The answer's text is the reference's words in the reference's order, so BLEU = 100 (all
n-gram precisions 1, same length), ROUGE-Lsum = 100 (every reference line's LCS is the whole line, and the
token multisets are equal), the MiniLM cosine of identical token sequences = 100, and concept F1 of identical
texts = 100 (both name MeSH concepts: hypotension, syncope; pneumonia, amoxicillin, cough).
SARI (source S = narrative + question, output O = S followed by the essential text E, reference E; S and E
share no token): keep F1 = 0 for every n (S's n-grams are all kept, none is in E: precision 0, recall 1 over
the empty S∩E); delete precision = 1 (nothing deleted); add: O's n-grams not in S are E's n-grams plus the n−1
that straddle S|E, all of E's n-grams are added, so add recall 1 and precision p_n = (e−n+1)/e for n ≥ 2
(p_1 = 1: sets of unigrams), add F1 = 2p/(1+p):

    g1 (e = 5): F1 = 1, 8/9, 3/4, 4/7 → mean 0.8025794;  SARI = (0 + 1 + 0.8025794)/3 × 100 = 60.085979
    g2 (e = 9): F1 = 1, 16/17, 7/8, 4/5 → mean 0.9040441; SARI = (0 + 1 + 0.9040441)/3 × 100 = 63.468137

relevance = mean of the five: g1 (400 + 60.085979)/5 = 92.017196, g2 (400 + 63.468137)/5 = 92.693627.

Other scores: words = whitespace words of the submission text (statement words + one ``|ids|`` per line):
g1 6+1 + 5+1 + 4+1 = 18, g2 6+1 + 4+1 + 4+1 + 3+1 = 21; invalid citations, citation syntax, cut: 0.

Report intervals: with two samples the percentile bootstrap's resampled means are {a, (a+b)/2, b} with
probabilities 1/4, 1/2, 1/4, so its 2.5% and 97.5% points are exactly min and max; equal values give a
zero-width interval.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bedside.testing import ScriptedServer
from golden_support import read_report, run_golden

N1, Q1 = "My mother fell twice this week!", "Why did her falls happen?"
N2, Q2 = "My son has a bad cough!", "What treatment was given?"
G1 = ["Orthostatic hypotension caused syncope.", "Metoprolol was stopped.", "Appetite is good.", "Sleep is normal."]
G2 = [
    "Chest radiograph confirmed pneumonia.",
    "Amoxicillin started today.",
    "Fever resolved overnight.",
    "Diet is regular.",
]


def _case(case_id: str, narrative: str, question: str, texts: list[str], labels: list[str]) -> dict[str, Any]:
    return {
        "id": case_id,
        "narrative": narrative,
        "clinician_question": question,
        "sentences": [{"id": str(i), "text": t} for i, t in enumerate(texts, start=1)],
        "relevance": {str(i): label for i, label in enumerate(labels, start=1)},
    }


CASES = [
    _case("g1", N1, Q1, G1, ["essential", "supplementary", "not-relevant", "not-relevant"]),
    _case("g2", N2, Q2, G2, ["essential", "essential", "supplementary", "not-relevant"]),
]


def _answer(relevant: list[str], statements: list[tuple[str, list[str]]]) -> str:
    return json.dumps({"relevant": relevant, "statements": [{"statement": s, "citations": c} for s, c in statements]})


RULES = [
    ("Patient's message:\\s*My mother fell", _answer(["1"], [(N1, ["1", "3"]), (Q1, ["2"]), (G1[0], ["1"])])),
    (
        "Patient's message:\\s*My son has",
        _answer(["1", "2", "3"], [(N2, ["1"]), (Q2, ["3"]), (G2[0], ["4"]), (G2[1], ["1"])]),
    ),
]

SCORERS = [
    "strict_precision",
    "strict_recall",
    "strict_f1",
    "lenient_precision",
    "lenient_recall",
    "lenient_f1",
    "lenient2026_f1",
    "evidence_recall",
    "relevance_bleu",
    "relevance_rougeLsum",
    "relevance_sari",
    "relevance_semantic",
    "relevance_concepts",
    "relevance",
    "invalid_citations",
    "citation_syntax_in_text",
    "cut_to_word_limit",
    "words",
]


def _sari(e: int) -> float:
    add = [1.0] + [2 * p / (1 + p) for p in ((e - n + 1) / e for n in (2, 3, 4))]
    return 100 * (0.0 + 1.0 + sum(add) / 4) / 3


SARI_G1, SARI_G2 = _sari(5), _sari(9)
# Hand values, as fractions where they are fractions.
EXPECTED: dict[str, dict[str, float]] = {
    "g1": {
        "strict_precision": 1 / 3,
        "strict_recall": 1.0,
        "strict_f1": 1 / 2,
        "lenient_precision": 2 / 3,
        "lenient_recall": 1.0,
        "lenient_f1": 4 / 5,
        "lenient2026_f1": 2 / 3,
        "evidence_recall": 1 / 2,
        "relevance_bleu": 100.0,
        "relevance_rougeLsum": 100.0,
        "relevance_sari": 60.085979,
        "relevance_semantic": 100.0,
        "relevance_concepts": 100.0,
        "relevance": 92.017196,
        "invalid_citations": 0.0,
        "citation_syntax_in_text": 0.0,
        "cut_to_word_limit": 0.0,
        "words": 18.0,
    },
    "g2": {
        "strict_precision": 1 / 3,
        "strict_recall": 1 / 2,
        "strict_f1": 2 / 5,
        "lenient_precision": 2 / 3,
        "lenient_recall": 2 / 3,
        "lenient_f1": 2 / 3,
        "lenient2026_f1": 1 / 2,
        "evidence_recall": 1.0,
        "relevance_bleu": 100.0,
        "relevance_rougeLsum": 100.0,
        "relevance_sari": 63.468137,
        "relevance_semantic": 100.0,
        "relevance_concepts": 100.0,
        "relevance": 92.693627,
        "invalid_citations": 0.0,
        "citation_syntax_in_text": 0.0,
        "cut_to_word_limit": 0.0,
        "words": 21.0,
    },
}
# The MiniLM cosine of one text with itself is 1 up to float32 rounding.
TOLERANCE = {"relevance_semantic": 1e-3, "relevance": 1e-3}


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("golden-citeqa")
    cases = folder / "cases.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    with ScriptedServer(RULES) as server:
        config = {
            "name": "golden-citeqa",
            "task": "citeqa",
            "datasets": {"golden": {"path": str(cases)}},
            "systems": {"one": {"type": "one_stage"}},
            "models": {"system": [server.model_name("answerer")]},
            "scorers": SCORERS,
        }
        store, run_id, rows = run_golden(folder, config)
    report, markdown = read_report(store, run_id, written_to=folder)
    return {"rows": rows, "report": report, "markdown": markdown}


def test_stored_scores_are_the_hand_worked_ones(golden: dict[str, Any]) -> None:
    rows = {r.sample_id: r for r in golden["rows"]}
    assert sorted(rows) == ["g1", "g2"]
    for case, expected in EXPECTED.items():
        assert rows[case].status == "ok"
        assert set(rows[case].scores) == set(expected)
        for name, value in expected.items():
            assert rows[case].scores[name] == pytest.approx(value, abs=TOLERANCE.get(name, 1e-6)), (case, name)
    # What the scores were computed from: the submission text and the citation field.
    assert rows["g1"].output["text"] == f"{N1} |1,3|\n{Q1} |2|\n{G1[0]} |1|"
    assert rows["g2"].output["extra"]["selected"] == ["1", "2", "3"]


def test_report_json_cells_and_micro_table(golden: dict[str, Any]) -> None:
    report = golden["report"]
    (cell,) = report["cells"]
    assert (cell["samples"], cell["ok"], cell["errors"], cell["truncated"]) == (2, 2, 0, 0)
    summaries = {m["metric"]: m for m in cell["metrics"]}
    assert set(summaries) == set(SCORERS)
    for name in SCORERS:
        a, b = EXPECTED["g1"][name], EXPECTED["g2"][name]
        tolerance = TOLERANCE.get(name, 1e-6)
        assert summaries[name]["n"] == 2
        assert summaries[name]["mean"] == pytest.approx((a + b) / 2, abs=tolerance), name
        assert summaries[name]["low"] == pytest.approx(min(a, b), abs=tolerance), name
        assert summaries[name]["high"] == pytest.approx(max(a, b), abs=tolerance), name
    # Macro factuality as fractions: strict P 1/3, R 3/4, F1 9/20; lenient P 2/3, R 5/6, F1 11/15.
    assert summaries["strict_recall"]["mean"] == pytest.approx(3 / 4)
    assert summaries["strict_f1"]["mean"] == pytest.approx(9 / 20)
    assert summaries["lenient_f1"]["mean"] == pytest.approx(11 / 15)
    table, stand_ins = report["tables"]
    assert table["title"] == "Micro factuality (citations pooled over answers)"
    # the two offline stand-ins are scored and averaged into relevance, so the report says so
    assert stand_ins["title"] == "Relevance: offline stand-ins"
    assert stand_ins["rows"] == [
        ["relevance_semantic", "BERTScore and AlignScore", "yes"],
        ["relevance_concepts", "MEDCON", "yes"],
    ]
    assert table["columns"] == [
        "cell",
        "answers",
        "strict P",
        "strict R",
        "strict F1",
        "lenient P",
        "lenient R",
        "lenient F1",
        "cut to 75 words",
        "errors",
    ]
    # strict tp 2 fp 4 fn 1 → 1/3, 2/3, 4/9; lenient tp 4 fp 2 fn 1 → 2/3, 4/5, 8/11.
    assert table["rows"] == [[cell["cell"], "2", "0.333", "0.667", "0.444", "0.667", "0.800", "0.727", "0", "0"]]


def test_markdown_tables_show_the_same_numbers(golden: dict[str, Any]) -> None:
    text = golden["markdown"]
    cell = golden["report"]["cells"][0]["cell"]
    header = next(line for line in text.splitlines() if line.startswith("| cell | ok |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    row = next(line for line in text.splitlines() if line.startswith(f"| {cell} |"))
    values = dict(zip(columns, [c.strip() for c in row.strip("|").split("|")], strict=True))
    assert (values["ok"], values["errors"], values["hit max_tokens"]) == ("2", "0", "0")
    assert values["strict_f1"] == "0.450 [0.400, 0.500] (n=2)"
    assert values["lenient_f1"] == "0.733 [0.667, 0.800] (n=2)"
    assert values["strict_precision"] == "0.333 [0.333, 0.333] (n=2)"
    assert values["evidence_recall"] == "0.750 [0.500, 1.000] (n=2)"
    # Stored on 0-100 (SARI 61.777 [60.086, 63.468], relevance 92.355 [92.017, 92.694]); the per-cell table keeps
    # one scale, 0-1, and marks the columns it divided.
    assert values["relevance_sari (÷100)"] == (
        f"{(SARI_G1 + SARI_G2) / 200:.3f} [{SARI_G1 / 100:.3f}, {SARI_G2 / 100:.3f}] (n=2)"
    )
    assert values["relevance_sari (÷100)"] == "0.618 [0.601, 0.635] (n=2)"
    assert values["relevance (÷100)"].endswith("[0.920, 0.927] (n=2)")
    assert "are shown divided by 100, marked (÷100)" in text
    assert values["words"] == "19.500 [18.000, 21.000] (n=2)"
    assert f"| {cell} | 2 | 0.333 | 0.667 | 0.444 | 0.667 | 0.800 | 0.727 | 0 | 0 |" in text
