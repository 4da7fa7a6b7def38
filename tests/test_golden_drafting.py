"""Golden end-to-end run of drafting (seed 000): a scripted server drafts two replies, judges content with the LLM
matcher and labels every sentence's theme with the LLM classifier; every stored score and every cell of
``bedside report --json`` and of the Markdown tables is compared with values worked out by hand below.

Cases (written here)::

    c1  message "My knee hurts after the fall." (6 words); one reply, dr-a:
        R1 = "I am sorry about your knee. | Please ice it twice a day. | Call us if it swells more."  (18 words)
              empathy                     planning                    contingency
    c2  message "Can I get my statin refilled please?" (7 words); two identical replies, dr-a and np-b:
        R2 = "Your statin refill was sent to the pharmacy. | Do you have any muscle aches?"          (14 words)
              logistics                                    symptom_questions

Drafts (system role) and the judge's answers (judge role, one call per reference sentence)::

    D1 = "I am sorry about your knee. | Rest and ice it twice a day, and take ibuprofen. | We will call you tomorrow."
          empathy                     planning                                          coordination
        s1 → "I am sorry about your knee."   verbatim sentence: EM
        s2 → "ice it twice a day"            verbatim clause: EM
        s3 → the whole draft                 not one sentence or clause: a matcher failure, flagged, NO MATCH: EA
        left after cutting both spans out (each cut breaks a sentence): "Rest and" | ", and take ibuprofen." |
        "We will call you tomorrow." → ED 3
        content EM 2 EA 1 ED 3: P 2/5, R 2/3, F1 1/2
        themes reference {Emp, Plan, Cont}, draft {Emp, Plan, Coord}: TP 2 FP 1 FN 1 → P 2/3, R 2/3, F1 2/3
    D2 = "Hello! | Your statin refill was sent to the pharmacy."
          other    logistics
        s1 → verbatim sentence: EM;  s2 → NO MATCH: EA;  left: "Hello!" → ED 1
        content EM 1 EA 1 ED 1: P 1/2, R 1/2, F1 1/2
        themes reference {Logis, SymQ}, draft {Logis}: TP 1 FP 0 FN 1 → P 1, R 1/2, F1 2/3
    c2's replies against each other (IAP, both ordered pairs): every sentence matched verbatim, same themes:
        per pair EM 2 EA 0 ED 0, TP 2 → every P/R/F1 1

Report (two samples: the bootstrap interval is [min, max], see test_golden_citeqa)::

    content_precision 0.45 [0.4, 0.5]; content_recall 7/12 [1/2, 2/3]; content_f1 1/2 [1/2, 1/2]
    theme_precision 5/6 [2/3, 1]; theme_recall 7/12 [1/2, 2/3]; theme_f1 2/3 [2/3, 2/3]
    em 1.5 [1, 2]; ea 1 [1, 1]; ed 2 [1, 3]; matcher_failures 0.5 [0, 1]
    EditJudge table (micro, counts pooled): content EM 3 EA 2 ED 4 → P 3/7 = 0.43, R 3/5 = 0.60, F1 1/2 = 0.50;
        themes TP 3 FP 1 FN 2 → P 3/4 = 0.75, R 3/5 = 0.60, F1 2/3 = 0.67; matcher failed 1 of 5 reference
        sentences = 0.20; judge flagged 1 of 5 = 0.20 (the failure); IAP row: n 2 pairs, all 1.00, 0.00, 0.00
    Theme proportions (Emp SymQ MedQ Assess Plan Logis Coord Cont | Other):
        clinicians  .50 .50 .00 .00 .50 .50 .00 .50 | .00  (references {Emp,Plan,Cont}, {Logis,SymQ})
        cell        .50 .00 .00 .00 .50 .50 .50 .00 | .50  (drafts {Emp,Plan,Coord}, {Logis}; "Hello!" is Other)
    Content recall per theme (share of the reference sentences of a theme that were matched):
        cell  Emp 1 (c1 s1), SymQ 0 (c2 s2), Plan 1 (c1 s2), Logis 1 (c2 s1), Cont 0 (c1 s3), others -
        IAP   SymQ 1, Logis 1, others -
    Theme Edit-F1 per theme (pooled per theme): cell Emp 1, SymQ 0 (FN), Plan 1, Logis 1, Coord 0 (FP),
        Cont 0 (FN), MedQ and Assess -; IAP SymQ 1, Logis 1, others -
    Inter-clinician agreement on themes (c2 only): inclusion SymQ 1, Logis 1, others 0; exclusion the reverse;
        strict agreement 1 for every theme
    Dataset statistics: 2 cases, 2 clinicians, 3 replies; message words 6, 7 → 6.50 ± 0.71; reply words 18,
        14, 14 → mean 46/3 = 15.33, sample std sqrt((64/9 + 16/9 + 16/9)/2) = sqrt(16/3) = 2.31
    Cosine IAA: the two replies are the same text, so the MiniLM cosine is 1.00 (the diagonal is 1 by definition)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bedside.testing import ScriptedServer
from golden_support import read_report, run_golden

R1 = "I am sorry about your knee. Please ice it twice a day. Call us if it swells more."
R2 = "Your statin refill was sent to the pharmacy. Do you have any muscle aches?"
D1 = "I am sorry about your knee. Rest and ice it twice a day, and take ibuprofen. We will call you tomorrow."
D2 = "Hello! Your statin refill was sent to the pharmacy."
CASES = [
    {
        "id": "c1",
        "message": "My knee hurts after the fall.",
        "chart_summary": "",
        "references": [{"clinician_id": "dr-a", "text": R1}],
    },
    {
        "id": "c2",
        "message": "Can I get my statin refilled please?",
        "chart_summary": "",
        "references": [{"clinician_id": "dr-a", "text": R2}, {"clinician_id": "np-b", "text": R2}],
    },
]


def _theme(key: str) -> str:
    return json.dumps({"theme": key})


RULES = [
    # The content judge (prompt: "Clinician sentence: ... Draft reply: ...").
    (r"Clinician sentence:\s*I am sorry about your knee\.", "I am sorry about your knee."),
    (r"Clinician sentence:\s*Please ice it twice a day\.", "ice it twice a day"),
    (r"Clinician sentence:\s*Call us if it swells more\.", D1),
    (r"Clinician sentence:\s*Your statin refill", "Your statin refill was sent to the pharmacy."),
    (
        r"Clinician sentence:\s*Do you have any muscle aches\?\s*Draft reply:\s*Your statin",
        "Do you have any muscle aches?",
    ),
    (r"Clinician sentence:", "NO MATCH"),
    # The theme classifier (prompt: "Sentence: ...").
    (r"^Sentence: I am sorry", _theme("empathy")),
    (r"^Sentence: Please ice", _theme("planning")),
    (r"^Sentence: Call us", _theme("contingency")),
    (r"^Sentence: Rest and ice", _theme("planning")),
    (r"^Sentence: We will call", _theme("coordination")),
    (r"^Sentence: Your statin", _theme("logistics")),
    (r"^Sentence: Do you have", _theme("symptom_questions")),
    (r"^Sentence: Hello", _theme("other")),
    # The drafts.
    (r"My knee hurts after the fall", D1),
    (r"statin refilled please", D2),
]

SCORERS = [
    "content_precision",
    "content_recall",
    "content_f1",
    "theme_precision",
    "theme_recall",
    "theme_f1",
    "em",
    "ea",
    "ed",
    "matcher_failures",
]
EXPECTED = {
    "c1": dict(zip(SCORERS, [2 / 5, 2 / 3, 1 / 2, 2 / 3, 2 / 3, 2 / 3, 2, 1, 3, 1], strict=True)),
    "c2": dict(zip(SCORERS, [1 / 2, 1 / 2, 1 / 2, 1, 1 / 2, 2 / 3, 1, 1, 1, 0], strict=True)),
}


def _golden_run(folder: Path, name: str, rules: Any, *, written_to: Path | None = None) -> dict[str, Any]:
    """The golden cases through a zero-shot drafter and an LLM judge answering from ``rules``; rows and report."""
    cases = folder / "cases.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    with ScriptedServer(rules) as server:
        config = {
            "name": name,
            "task": "drafting",
            "datasets": {"golden": {"path": str(cases)}},
            "systems": {"zs": {"type": "zero_shot", "options": {"matcher": "llm", "themes": "llm"}}},
            "models": {"system": [server.model_name("drafter")], "judge": [server.model_name("judge")]},
            "scorers": SCORERS,
        }
        store, run_id, rows = run_golden(folder, config)
    report, markdown = read_report(store, run_id, written_to=written_to)
    return {"rows": rows, "report": report, "markdown": markdown}


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("golden-drafting")
    return _golden_run(folder, "golden-drafting", RULES, written_to=folder)


def test_stored_scores_and_decisions(golden: dict[str, Any]) -> None:
    rows = {r.sample_id: r for r in golden["rows"]}
    for case, expected in EXPECTED.items():
        assert rows[case].status == "ok"
        assert set(rows[case].scores) == set(expected)
        for name, value in expected.items():
            assert rows[case].scores[name] == pytest.approx(value), (case, name)
    c1 = rows["c1"].output["extra"]["editjudge"]
    assert [d["span"] for d in c1["content"]["decisions"]] == [
        "I am sorry about your knee.",
        "ice it twice a day",
        None,
    ]
    assert c1["content"]["decisions"][2]["failure"] == "not a whole sentence or clause of the draft"
    assert c1["content"]["remainder"] == ["Rest and", ", and take ibuprofen.", "We will call you tomorrow."]
    assert c1["reference_themes"] == ["contingency", "empathy", "planning"]
    assert c1["draft_themes"] == ["coordination", "empathy", "planning"]
    c2 = rows["c2"].output["extra"]
    assert c2["editjudge"]["draft_sentence_themes"] == ["other", "logistics"]
    assert [(p["content"]["em"], p["content"]["ea"], p["content"]["ed"]) for p in c2["inter_clinician"]] == [
        (2, 0, 0),
        (2, 0, 0),
    ]


def _cell(report: dict[str, Any]) -> dict[str, Any]:
    (cell,) = report["cells"]
    return dict(cell)


def test_report_json_means_and_intervals(golden: dict[str, Any]) -> None:
    cell = _cell(golden["report"])
    assert (cell["samples"], cell["ok"], cell["errors"]) == (2, 2, 0)
    summaries = {m["metric"]: m for m in cell["metrics"]}
    assert set(summaries) == set(SCORERS)
    for name in SCORERS:
        a, b = EXPECTED["c1"][name], EXPECTED["c2"][name]
        assert (summaries[name]["n"], summaries[name]["mean"]) == (2, pytest.approx((a + b) / 2)), name
        assert (summaries[name]["low"], summaries[name]["high"]) == (pytest.approx(min(a, b)), pytest.approx(max(a, b)))
    assert summaries["content_recall"]["mean"] == pytest.approx(7 / 12)
    assert summaries["theme_precision"]["mean"] == pytest.approx(5 / 6)
    # Both samples are dr-a's first reply: the one stratum repeats the cell.
    assert cell["strata"]["clinician"]["dr-a"] == cell["metrics"]


def test_report_tables(golden: dict[str, Any]) -> None:
    cell = _cell(golden["report"])["cell"]
    tables = {t["title"]: t for t in golden["report"]["tables"]}
    main = tables["EditJudge: content and theme level, micro-averaged"]
    assert main["rows"] == [
        [cell, "llm", "2", "0.43", "0.60", "0.50", "0.75", "0.60", "0.67", "0.20", "0.20"],
        ["IAP: golden (llm, 1 cases)", "", "2", "1.00", "1.00", "1.00", "1.00", "1.00", "1.00", "0.00", "0.00"],
    ]
    assert main["note"].endswith("Samples left out so: none.")
    proportions = tables["Theme proportions: share of responses carrying each theme"]
    assert proportions["columns"] == [
        "source",
        "Emp",
        "SymQ",
        "MedQ",
        "Assess",
        "Plan",
        "Logis",
        "Coord",
        "Cont",
        "Other",
    ]
    assert proportions["rows"] == [
        ["clinicians: golden", "0.50", "0.50", "0.00", "0.00", "0.50", "0.50", "0.00", "0.50", "0.00"],
        [cell, "0.50", "0.00", "0.00", "0.00", "0.50", "0.50", "0.50", "0.00", "0.50"],
    ]
    assert tables["Content-level recall per theme of the reference sentence"]["rows"] == [
        [cell, "1.00", "0.00", "-", "-", "1.00", "1.00", "-", "0.00"],
        ["IAP: golden (llm, 1 cases)", "-", "1.00", "-", "-", "-", "1.00", "-", "-"],
    ]
    assert tables["Theme-level Edit-F1 per theme"]["rows"] == [
        [cell, "1.00", "0.00", "-", "-", "1.00", "1.00", "0.00", "0.00"],
        ["IAP: golden (llm, 1 cases)", "-", "1.00", "-", "-", "-", "1.00", "-", "-"],
    ]
    agreement = tables["Inter-clinician agreement on themes (cases with two or more replies)"]
    assert agreement["rows"] == [
        ["golden (1 cases)", "strict inclusion", "0.00", "1.00", "0.00", "0.00", "0.00", "1.00", "0.00", "0.00"],
        ["golden (1 cases)", "strict exclusion", "1.00", "0.00", "1.00", "1.00", "1.00", "0.00", "1.00", "1.00"],
        ["golden (1 cases)", "strict agreement", *["1.00"] * 8],
    ]
    assert tables["Dataset statistics"]["rows"] == [["golden", "2", "2", "3", "6.50 ± 0.71", "15.33 ± 2.31"]]
    cosine = tables["Inter-clinician agreement by cosine: golden (1 cases)"]
    assert cosine["columns"] == ["clinician", "dr-a", "np-b"]
    assert cosine["rows"] == [["dr-a", "1.00", "1.00"], ["np-b", "1.00", "1.00"]]
    assert len(tables) == 7  # one model: no over-models tables


def test_markdown_shows_the_same_cells(golden: dict[str, Any]) -> None:
    text = golden["markdown"]
    cell = _cell(golden["report"])["cell"]
    header = next(line for line in text.splitlines() if line.startswith("| cell | ok |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    row = next(line for line in text.splitlines() if line.startswith(f"| {cell} |"))
    values = dict(zip(columns, [c.strip() for c in row.strip("|").split("|")], strict=True))
    assert values["content_f1"] == "0.500 [0.500, 0.500] (n=2)"
    assert values["content_recall"] == "0.583 [0.500, 0.667] (n=2)"
    assert values["theme_precision"] == "0.833 [0.667, 1.000] (n=2)"
    assert values["ed"] == "2.000 [1.000, 3.000] (n=2)"
    assert f"| {cell} | llm | 2 | 0.43 | 0.60 | 0.50 | 0.75 | 0.60 | 0.67 | 0.20 | 0.20 |" in text
    assert "| clinicians: golden | 0.50 | 0.50 | 0.00 | 0.00 | 0.50 | 0.50 | 0.00 | 0.50 | 0.00 |" in text
    assert "| golden | 2 | 2 | 3 | 6.50 ± 0.71 | 15.33 ± 2.31 |" in text


# The same run with a judge whose every answer for c1's draft is the whole draft (not one sentence or clause of
# it: unusable), so c1's content level is never judged; c2 is judged as above.
GARBAGE_RULES = [(r"Draft reply:\s*I am sorry about your knee\. Rest", D1), *RULES]


@pytest.fixture(scope="module")
def garbage_judge(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("golden-drafting-garbage")
    return _golden_run(folder, "golden-drafting-garbage-judge", GARBAGE_RULES)


def test_a_draft_with_no_usable_judge_answer_has_no_content_scores(garbage_judge: dict[str, Any]) -> None:
    """Issue 35: a failed judge component shows absent with a count, never 0.0, from the store through the report.

    Worked by hand: c1's three judge answers all fail, so c1 stores no content score (all NO MATCH would have
    stored P = R = F1 = 0.0 and EM 0, EA 3, ED 3) and matcher_failures 3; its themes are judged as before. The
    content columns pool c2 alone (EM 1 EA 1 ED 1: P = R = F1 0.50, n 1); the theme columns both drafts as in the
    main golden run; matcher failed and judge flagged 3 of 5 reference sentences = 0.60. Content recall per theme
    from c2 alone: Logis 1, SymQ 0, the rest "-".
    """
    rows = {r.sample_id: r for r in garbage_judge["rows"]}
    assert all(r.status == "ok" for r in rows.values())
    c1 = rows["c1"].scores
    for name in ("content_precision", "content_recall", "content_f1", "em", "ea", "ed"):
        assert c1.get(name) is None, name
        assert rows["c2"].scores[name] == pytest.approx(EXPECTED["c2"][name]), name
    assert c1["matcher_failures"] == 3
    for name in ("theme_precision", "theme_recall", "theme_f1"):
        assert c1[name] == pytest.approx(EXPECTED["c1"][name]), name

    cell = _cell(garbage_judge["report"])
    summaries = {m["metric"]: m for m in cell["metrics"]}
    assert (summaries["content_f1"]["n"], summaries["content_f1"]["mean"]) == (1, pytest.approx(0.5))
    assert (summaries["matcher_failures"]["n"], summaries["matcher_failures"]["mean"]) == (2, pytest.approx(1.5))
    assert (summaries["theme_precision"]["n"], summaries["theme_precision"]["mean"]) == (2, pytest.approx(5 / 6))

    tables = {t["title"]: t for t in garbage_judge["report"]["tables"]}
    main = tables["EditJudge: content and theme level, micro-averaged"]
    assert main["rows"][0] == [cell["cell"], "llm", "1", "0.50", "0.50", "0.50", "0.75", "0.60", "0.67", "0.60", "0.60"]
    assert main["note"].endswith(f"Samples left out so: {cell['cell']}: 1.")
    recall = tables["Content-level recall per theme of the reference sentence"]
    assert recall["rows"][0] == [cell["cell"], "-", "0.00", "-", "-", "-", "1.00", "-", "-"]
    assert (
        f"| {cell['cell']} | llm | 1 | 0.50 | 0.50 | 0.50 | 0.75 | 0.60 | 0.67 | 0.60 | 0.60 |"
        in (garbage_judge["markdown"])
    )
