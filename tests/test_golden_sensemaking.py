"""Golden end-to-end run of MedAgent + MultiSenseEval (seed 004): a scripted run whose every stored score and every
cell of every report table is worked out by hand below, read back from the **store** and the **report**
(`bedside report --json` and the Markdown report), never from the scorer functions.

The run
-------
One case (facts given, intent and goal given, **no diagnosis**: the helper derives "low mood", so every label is
derived and unreviewed) × five personas: agreeableness-basic (ab), neuroticism-basic (nb), openness-basic (ob),
neuroticism-advanced (na), agreeableness-advanced (aa); two sensemaker models, ``o1`` and ``r1``, each on its own
scripted server (a rule cannot see the model name); patient, helper and judges on ``o1``'s server; reference path,
no fidelity check, the default scorers less ``smog_textstat`` (textstat's own syllables are not hand-countable) and
less the fidelity scorers (with the check off they score nothing, and a run that declares a scorer which scores no
sample fails).

The rules
---------
- Patient: every message is "I feel bad, code XY." with XY the persona's code, read from its prompt (the HIGH
  trait, and "describes symptoms precisely" for advanced literacy).
- Helper: extracts no fact (so no match call); derives the label "low mood"; the redundancy filter marks a
  candidate redundant when it contains "again".
- Sensemaker stage call: MOVE, except STAY in Gathering while it has said fewer than G "Tell me more" messages and
  in Decision Making while fewer than D "Try a walk" ones; (G, D) = ab (1, 1), nb (1, 1), ob (1, 3), na (3, 5),
  aa (2, 1). So the conversation holds G + 1 + D + 1 + 1 sensemaker messages: ab 5, nb 5, ob 7, na 11, aa 6.
- Sensemaker messages, one sentence each, by stage: "Tell me more." / "You may have low mood." / "Try a walk." /
  "I hear you." / "Take care."; ``r1`` adds "now" before the full stop; a "technical" conversation puts "with
  family" before it too (o1: ob; r1: ob and na); ``r1`` on nb and na says "You may have a sad time now." in
  Providing Information; ``r1`` on aa writes every candidate with "again", so Gathering's and then Providing
  Information's candidates are all redundant: a stagnation end with no sensemaker message (excluded).
- Judges: susceptibility = {a: 4, n: 2, o: 3}[trait], 1 lower for ``r1``; severity = {a: 3, n: 2, o: 2};
  benefits = 2 (basic) or 4 (advanced); flow 3, but 2 for ``r1`` with neuroticism; hard accuracy 1 when the
  diagnosis message says "low mood", soft when it says "low mood" or "sad".

Worked by hand
--------------
- SMOG (bedside's counter, sensemaker messages only): every word has one or two syllables except "family" (three:
  a, i, y), so P = polysyllables = the number of messages in a technical conversation, 0 otherwise, with S = the
  number of messages. Plain: 1.0430 × √0 + 3.1291 = 3.1291. Technical: 1.0430 × √30 + 3.1291 = 3.1291 + d,
  d = 5.712746, so 8.841846. (Before issue 29's fix the generic SMOG of the whole rendered conversation was stored
  instead: "Sensemaker" (4 syllables) and the patient's lines are in that text.)
- Stored per sample (o1 | r1): ab susc 4|3 sev 3|3 ben 2|2 flow 3|3 hard 1|1 soft 1|1 smog 3.1291|3.1291 msgs 5|5;
  nb 2|1, 2|2, 2|2, 3|2, 1|0, 1|1, 3.1291|3.1291, 5|5; ob 3|2, 2|2, 2|2, 3|3, 1|1, 1|1, 8.8418|8.8418, 7|7;
  na 2|1, 2|2, 4|4, 3|2, 1|0, 1|1, 3.1291|8.8418, 11|11; aa (o1 only) 4, 3, 4, 3, 1, 1, 3.1291, 6; hbm_mean the
  mean of the three; completed 1, except r1 aa 0 (its judges read the opening line only: scored as the rules
  say, no diagnosis scores).
- Table 1 (every finished conversation; per conversation fostering 1, gathering 2G, PI 2, DM 2D, RE 2, Exit 1):
  o1 n 5: 1.00, (2+2+2+6+4)/5 = 3.20, 2.00, (2+2+6+10+2)/5 = 4.40, 2.00, 1.00, overall 13.60. r1 n 5 (aa: the
  opening only): 1.00, 12/5 = 2.40, 8/5 = 1.60, 20/5 = 4.00, 1.60, 4/5 = 0.80, overall 11.40.
- Exclusions: r1 aa by stagnation_end; kept o1 5, r1 4; in all cells 4 (ab, na, nb, ob); accuracy on unreviewed
  labels: o1 5, r1 4 (every conversation with a diagnosis message).
- Comparison (4 per cell, sample SD): susc o1 [4,2,2,3] 2.75 (0.96), r1 [3,1,1,2] 1.75 (0.96), U = 4 + 2.5 + 2.5 +
  3.5 = 12.5; severity [3,2,2,2] 2.25 (0.50) both, U 8.0; benefits [2,4,2,2] 2.50 (1.00) both, U 8.0; flow o1
  3.00 (0.00), r1 [3,2,2,3] 2.50 (0.58), U = 4 × 3 = 12.0; SMOG o1 [a,a,a,a+d]: a + d/4 = 4.56, SD d/2 = 2.86; r1
  [a,a+d,a,a+d]: a + d/2 = 5.99, SD d/√3 = 3.30; Welch t = (−d/4) / √(d²/16 + d²/12) = −0.25 / √(7/48) = −0.65
  (d cancels); soft 100.00 (0.00) both, U = 16/2 = 8.0 (all ties); hard o1 100.00 (0.00), r1 [1,0,0,1]
  50.00 (57.74), U = 12.0. The p-values are scipy's on these hand-listed values (not a hand calculation).
- Table 2: one conversation per row, so the row is the sample's values.
- Relative differences: o1 basic (A − N)/A susc (4 − 2)/4 = +50.00%, sev (3 − 2)/3 = +33.33%, ben +0.00%, SMOG
  (O − N)/O = d/(a + d) = +64.61%; advanced "-" (no A or O kept). Composite basic (3 + 7/3 + 2)/3 = 2.4444,
  advanced (2 + 2 + 4)/3 = 2.6667: +9.09%; hard and soft +0.00%; SMOG basic a + d/3 = 5.0333 vs advanced a:
  −37.83%. r1 basic susc (3 − 1)/3 = +66.67%, sev +33.33%, ben +0.00%, SMOG +64.61%; composite basic
  (2 + 7/3 + 2)/3 = 2.1111, advanced (1 + 2 + 4)/3 = 2.3333: +10.53%; hard basic 2/3 vs advanced 0: −100.00%;
  soft +0.00%; SMOG basic a + d/3 vs advanced a + d: +75.67%.
- Length bins (kept): 5 = ab, nb; 6-9 = ob; 10-15 = na; ≥16 empty (n 0, "-"); each row the means of its samples.
- SMOG cross-check: no textstat grade stored, so no row, and the note says how to get them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import mannwhitneyu, ttest_ind

from bedside.llm import ChatMessage
from bedside.llm.scripted_server import ScriptedServer
from bedside.tasks.sensemaking.task import SCORERS
from bedside.testing.scripted_answers import rubric_answer
from golden_support import read_report, run_golden

PERSONAS = ["agreeableness-basic", "neuroticism-basic", "openness-basic", "neuroticism-advanced",
            "agreeableness-advanced"]  # fmt: skip
STAYS = {"ab": (1, 1), "nb": (1, 1), "ob": (1, 3), "na": (3, 5), "aa": (2, 1)}  # code -> (G, D)
TECHNICAL = {"o1": {"ob"}, "r1": {"ob", "na"}}
STAGE_TITLES = {
    "Fostering the Relationship": "fostering",
    "Gathering Information": "gathering",
    "Providing Information": "providing_information",
    "Decision Making": "decision_making",
    "Responding to Emotions": "responding_to_emotions",
    "Exit": "exit",
}
MESSAGES = {
    "gathering": "Tell me more",
    "providing_information": "You may have low mood",
    "decision_making": "Try a walk",
    "responding_to_emotions": "I hear you",
    "exit": "Take care",
}
CASE = {
    "id": "g1",
    "facts": ["The person feels low.", "The person sleeps badly."],
    "vital_facts": [],
    "intent": "interpreting_medical_information",
    "goal": "comfort",
}
A = 3.1291
D = 1.0430 * math.sqrt(30)


def _stage(text: str, prefix: str) -> str:
    for title, stage in STAGE_TITLES.items():
        if f"{prefix}{title}" in text:
            return stage
    raise AssertionError(f"no stage after {prefix!r}")


def _code(text: str) -> str:
    found = re.search(r"code (\w\w)\b", text)
    assert found, text[:300]
    return found.group(1)


def _statement(user: str) -> str:
    """The sensemaker's diagnosis statement in a diagnosis judge's prompt (the true label is there too)."""
    found = re.search(r"You may have [^.]*\.", user)
    assert found, user[:300]
    return found.group(0).lower()


class Rules:
    """One server's rules; ``model`` ("o1" or "r1") is the sensemaker it serves. The patient, helper and judge
    calls are only ever sent to ``o1``'s server, and do not depend on ``model``."""

    def __init__(self, model: str) -> None:
        self.model = model

    def __call__(self, messages: Sequence[ChatMessage]) -> str:
        system, user = messages[0].content, messages[-1].content
        if "HIGH." in system and ("starting a conversation" in system or "Use only the facts below" in system
                                  or "None of what you know about" in system):  # fmt: skip
            trait = re.search(r"- (\w+): HIGH", system).group(1)[0].lower()  # type: ignore[union-attr]
            literacy = "a" if "describes symptoms precisely" in system else "b"
            text = f"I feel bad, code {trait}{literacy}."
            if "starting a conversation" in system:
                return json.dumps({"reasoning": "", "item_numbers": [2], "message": text})
            return text
        if "You decide which of a patient's facts answer" in system:
            return json.dumps({"reasoning": "", "fact_numbers": [2]})
        if "name the single most likely diagnosis" in system:
            return json.dumps({"rationale": "low mood", "diagnosis": "low mood"})
        if "List the facts the person states about themselves" in system:
            return json.dumps({"facts": []})
        if "For each numbered candidate message" in system:
            candidates = re.findall(r"^\d+\. (.*)$", user.split("## Candidates", 1)[1], re.MULTILINE)
            return json.dumps({"labels": ["redundant" if "again" in c else "not_redundant" for c in candidates]})
        if "Decide whether to stay in the current stage or move" in system:
            stage = _stage(system, "Current stage: ")
            g, d = STAYS[_code(user)]
            said = system.split("## What you have said so far", 1)[1]
            stay = (stage == "gathering" and said.count("Tell me more") < g) or (
                stage == "decision_making" and said.count("Try a walk") < d
            )
            return json.dumps({"reasoning": "", "confidence": 5, "stage": "STAY" if stay else "MOVE"})
        if "candidate messages for your next turn" in system:
            return json.dumps(
                {
                    "reasoning": "",
                    "messages": [self.message(_stage(system, "stage of the\nconversation: "), _code(user))] * 3,
                }
            )
        if "Related, so 1." in system:  # soft diagnostic accuracy
            statement = _statement(user)
            return rubric_answer("diagnostic_accuracy_soft", float("low mood" in statement or "sad" in statement))
        if "Not the same condition, so 0." in system:  # hard diagnostic accuracy
            return rubric_answer("diagnostic_accuracy_hard", float("low mood" in _statement(user)))
        return self.conversation_judge(system, user)

    def message(self, stage: str, code: str) -> str:
        text = MESSAGES[stage]
        if self.model == "r1" and stage == "providing_information" and code[0] == "n":
            text = "You may have a sad time"
        if code in TECHNICAL[self.model]:
            text += " with family"
        if self.model == "r1":
            text += " again now" if code == "aa" else " now"
        return text + "."

    @staticmethod
    def conversation_judge(system: str, user: str) -> str:
        codes = set(re.findall(r"code (\w\w)\b", user))
        assert len(codes) == 1, user[:300]
        (code,) = codes
        r1 = " now." in user
        rubric_scores = {
            "sensemaking_susceptibility": {"a": 4, "n": 2, "o": 3}[code[0]] - r1,
            "sensemaking_severity": {"a": 3, "n": 2, "o": 2}[code[0]],
            "sensemaking_benefits": 2 if code[1] == "b" else 4,
            "sensemaking_flow_correctness": 2 if (r1 and code[0] == "n") else 3,
        }
        for rubric_id, score in rubric_scores.items():
            criterion = {"sensemaking_flow_correctness": "flow_correctness"}.get(rubric_id, rubric_id.split("_")[1])
            if f'"{criterion}"' in system:
                return rubric_answer(rubric_id, float(score))
        raise AssertionError(f"no rule for this call: {system[:200]}")


GoldenRun = tuple[list[Any], str, str]


def _run(tmp_path: Path) -> GoldenRun:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    with ScriptedServer(rules=Rules("o1")) as server_a, ScriptedServer(rules=Rules("r1")) as server_b:
        config = {
            "name": "golden-sensemaking",
            "task": "sensemaking",
            "datasets": {"golden": {"path": str(cases), "options": {"personas": PERSONAS}}},
            "systems": {"medagent": {"type": "medagent", "options": {"fidelity": False}}},
            "models": {
                "system": [server_a.model_name("o1"), server_b.model_name("r1")],
                "patient": server_a.model_name("patient"),
                "helper": server_a.model_name("helper"),
                "judge": server_a.model_name("judge"),
            },
            "scorers": [s for s in SCORERS if s != "smog_textstat" and not s.startswith("fidelity_")],
            "concurrency": 2,
        }
        store, run_id, rows = run_golden(tmp_path, config)
    return rows, store, run_id


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> GoldenRun:
    return _run(tmp_path_factory.mktemp("golden-sensemaking"))


@pytest.fixture(scope="module")
def reported(golden: GoldenRun) -> tuple[dict[str, Any], str, dict[str, str]]:
    """`bedside report --json`, the Markdown `bedside report` writes, and the cell of each model."""
    rows, store, run_id = golden
    report, markdown = read_report(store, run_id)
    cells = {("o1" if r.cell.endswith("/o1") else "r1"): r.cell for r in rows}
    return report, markdown, cells


SMOG_PLAIN, SMOG_TECHNICAL = A, A + D
STORED = {  # (model, code) -> hand-worked scores
    ("o1", "ab"): {"susceptibility": 4, "severity": 3, "benefits": 2, "flow": 3, "diagnosis_hard": 1,
                   "diagnosis_soft": 1, "smog": SMOG_PLAIN, "sensemaker_messages": 5},
    ("o1", "nb"): {"susceptibility": 2, "severity": 2, "benefits": 2, "flow": 3, "diagnosis_hard": 1,
                   "diagnosis_soft": 1, "smog": SMOG_PLAIN, "sensemaker_messages": 5},
    ("o1", "ob"): {"susceptibility": 3, "severity": 2, "benefits": 2, "flow": 3, "diagnosis_hard": 1,
                   "diagnosis_soft": 1, "smog": SMOG_TECHNICAL, "sensemaker_messages": 7},
    ("o1", "na"): {"susceptibility": 2, "severity": 2, "benefits": 4, "flow": 3, "diagnosis_hard": 1,
                   "diagnosis_soft": 1, "smog": SMOG_PLAIN, "sensemaker_messages": 11},
    ("o1", "aa"): {"susceptibility": 4, "severity": 3, "benefits": 4, "flow": 3, "diagnosis_hard": 1,
                   "diagnosis_soft": 1, "smog": SMOG_PLAIN, "sensemaker_messages": 6},
    ("r1", "ab"): {"susceptibility": 3, "severity": 3, "benefits": 2, "flow": 3, "diagnosis_hard": 1,
                   "diagnosis_soft": 1, "smog": SMOG_PLAIN, "sensemaker_messages": 5},
    ("r1", "nb"): {"susceptibility": 1, "severity": 2, "benefits": 2, "flow": 2, "diagnosis_hard": 0,
                   "diagnosis_soft": 1, "smog": SMOG_PLAIN, "sensemaker_messages": 5},
    ("r1", "ob"): {"susceptibility": 2, "severity": 2, "benefits": 2, "flow": 3, "diagnosis_hard": 1,
                   "diagnosis_soft": 1, "smog": SMOG_TECHNICAL, "sensemaker_messages": 7},
    ("r1", "na"): {"susceptibility": 1, "severity": 2, "benefits": 4, "flow": 2, "diagnosis_hard": 0,
                   "diagnosis_soft": 1, "smog": SMOG_TECHNICAL, "sensemaker_messages": 11},
}  # fmt: skip


def _key(row: Any) -> tuple[str, str]:
    persona = row.sample_id.split("/")[1]
    trait, literacy = persona.split("-")
    return ("o1" if row.cell.endswith("/o1") else "r1"), trait[0] + literacy[0]


def test_stored_scores_are_the_hand_worked_values(golden: GoldenRun) -> None:
    rows, _, _ = golden
    assert len(rows) == 10
    assert all(r.status == "ok" for r in rows)
    by = {_key(r): r for r in rows}
    # smog from the task's scorer (the sensemaker's messages only), not the generic one (the whole rendered text)
    assert by[("o1", "ab")].scores["smog"] == pytest.approx(3.1291)
    assert by[("r1", "na")].scores["smog"] == pytest.approx(8.841846, abs=1e-6)
    for key, expected in STORED.items():
        scores = by[key].scores
        for name, value in expected.items():
            assert scores[name] == pytest.approx(value), (key, name)
        hbm = (expected["susceptibility"] + expected["severity"] + expected["benefits"]) / 3
        assert scores["hbm_mean"] == pytest.approx(hbm), key
        assert scores["completed"] == 1.0, key
    stagnated = by[("r1", "aa")]
    assert stagnated.scores["completed"] == 0.0
    assert stagnated.scores["sensemaker_messages"] == 0.0
    assert stagnated.scores["smog"] is None  # no sensemaker message: no grade, never zero
    assert stagnated.scores["diagnosis_hard"] is None
    assert stagnated.output["extra"]["excluded"] == "stagnation_end"
    # the paper's fixed side ran on the helper model; every label is the helper's, unreviewed
    assert {r.output["extra"]["helper_side"] for r in rows} == {"helper"}
    assert {r.output["extra"]["case"]["diagnosis"]["reviewed"] for r in rows} == {False}


def _table(report: dict[str, Any], prefix: str) -> dict[str, Any]:
    return next(t for t in report["tables"] if t["title"].startswith(prefix))


def _md_table(markdown: str, title_prefix: str) -> list[list[str]]:
    part = markdown.split(f"## {title_prefix}", 1)[1]
    out: list[list[str]] = []
    for line in part.splitlines()[1:]:
        if line.startswith("|"):
            if not line.startswith("|---"):
                out.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif out:
            break
    return out


def test_table_one_and_the_exclusions(golden: GoldenRun, reported: tuple[dict[str, Any], str, dict[str, str]]) -> None:
    report, markdown, cells = reported
    one = _table(report, "MedAgent Table 1")
    expected = [
        [cells["o1"], "5", "1.00", "3.20", "2.00", "4.40", "2.00", "1.00", "13.60"],
        [cells["r1"], "5", "1.00", "2.40", "1.60", "4.00", "1.60", "0.80", "11.40"],
    ]
    assert sorted(one["rows"]) == sorted(expected)
    assert sorted(_md_table(markdown, "MedAgent Table 1")[1:]) == sorted(expected)
    exclusions = _table(report, "Exclusions by cause")
    assert exclusions["columns"] == ["cell", "samples", "stagnation_end", "kept", "in all cells",
                                     "accuracy on unreviewed labels"]  # fmt: skip
    assert sorted(exclusions["rows"]) == sorted([[cells["o1"], "5", "0", "5", "4", "5"],
                                                 [cells["r1"], "5", "1", "4", "4", "4"]])  # fmt: skip


def test_the_comparison_with_its_tests(golden: GoldenRun, reported: tuple[dict[str, Any], str, dict[str, str]]) -> None:
    report, markdown, cells = reported
    comparison = _table(report, "MultiSenseEval: model comparison")
    first, second = comparison["columns"][1:3]
    assert {first, second} == {cells["o1"], cells["r1"]}
    a_model = "o1" if first == cells["o1"] else "r1"
    samples = {  # hand-listed per-sample values, kept intersection ab, na, nb, ob (sample id order)
        "o1": {"Suscept.": [4, 2, 2, 3], "Severity": [3, 2, 2, 2], "Benefits": [2, 4, 2, 2], "Flow": [3, 3, 3, 3],
               "SMOG": [A, A, A, A + D], "Soft %": [1, 1, 1, 1], "Hard %": [1, 1, 1, 1]},
        "r1": {"Suscept.": [3, 1, 1, 2], "Severity": [3, 2, 2, 2], "Benefits": [2, 4, 2, 2], "Flow": [3, 2, 2, 3],
               "SMOG": [A, A + D, A, A + D], "Soft %": [1, 1, 1, 1], "Hard %": [1, 0, 0, 1]},
    }  # fmt: skip
    cell_text = {
        "o1": {"Suscept.": "2.75 (0.96)", "Severity": "2.25 (0.50)", "Benefits": "2.50 (1.00)", "Flow": "3.00 (0.00)",
               "SMOG": "4.56 (2.86)", "Soft %": "100.00 (0.00)", "Hard %": "100.00 (0.00)"},
        "r1": {"Suscept.": "1.75 (0.96)", "Severity": "2.25 (0.50)", "Benefits": "2.50 (1.00)", "Flow": "2.50 (0.58)",
               "SMOG": "5.99 (3.30)", "Soft %": "100.00 (0.00)", "Hard %": "50.00 (57.74)"},
    }  # fmt: skip
    b_model = "r1" if a_model == "o1" else "o1"
    hand_u = {"Suscept.": 12.5, "Severity": 8.0, "Benefits": 8.0, "Flow": 12.0, "Hard %": 12.0}  # o1 as sample A
    rows = {row[0]: row for row in comparison["rows"]}
    for metric in cell_text["o1"]:
        row = rows[metric]
        assert row[1] == cell_text[a_model][metric], metric
        assert row[2] == cell_text[b_model][metric], metric
        a, b = samples[a_model][metric], samples[b_model][metric]
        if metric == "SMOG":
            assert row[3].startswith("t = " + ("-0.65" if a_model == "o1" else "0.65") + ", p = ")
            p = ttest_ind(a, b, equal_var=False).pvalue
            assert row[3] == f"t = {(-0.65 if a_model == 'o1' else 0.65):.2f}, p = {p:.4f}"
        elif metric == "Soft %":
            assert row[3] == "U = 8.0, p = 1.0000"  # every pair a tie: U = 4 × 4 / 2
        else:
            u = hand_u[metric] if a_model == "o1" else 16 - hand_u[metric]
            expected = mannwhitneyu(a, b, alternative="two-sided")
            assert expected.statistic == u
            assert row[3] == f"U = {u:.1f}, p = {expected.pvalue:.4f}", metric
    assert (
        "8 of the 8 compared conversations have diagnostic accuracy judged against an unreviewed"
        in (comparison["note"])
    )
    assert "ran on the run's helper model, the same in every cell" in comparison["note"]
    assert _md_table(markdown, "MultiSenseEval: model comparison")[1:] == comparison["rows"]


def test_table_two_relative_differences_and_length_bins(
    golden: GoldenRun, reported: tuple[dict[str, Any], str, dict[str, str]]
) -> None:
    report, markdown, cells = reported
    plain, technical = f"{A:.2f}", f"{A + D:.2f}"
    assert (plain, technical) == ("3.13", "8.84")
    two = _table(report, "MedAgent Table 2")
    expected_two = [
        [cells["o1"], "basic", "openness", "1", "3.00", "2.00", "2.00", "3.00", technical, "100.00", "100.00"],
        [cells["o1"], "basic", "agreeableness", "1", "4.00", "3.00", "2.00", "3.00", plain, "100.00", "100.00"],
        [cells["o1"], "basic", "neuroticism", "1", "2.00", "2.00", "2.00", "3.00", plain, "100.00", "100.00"],
        [cells["o1"], "advanced", "neuroticism", "1", "2.00", "2.00", "4.00", "3.00", plain, "100.00", "100.00"],
        [cells["r1"], "basic", "openness", "1", "2.00", "2.00", "2.00", "3.00", technical, "100.00", "100.00"],
        [cells["r1"], "basic", "agreeableness", "1", "3.00", "3.00", "2.00", "3.00", plain, "100.00", "100.00"],
        [cells["r1"], "basic", "neuroticism", "1", "1.00", "2.00", "2.00", "2.00", plain, "100.00", "0.00"],
        [cells["r1"], "advanced", "neuroticism", "1", "1.00", "2.00", "4.00", "2.00", technical, "100.00", "0.00"],
    ]
    assert sorted(two["rows"]) == sorted(expected_two)
    assert sorted(_md_table(markdown, "MedAgent Table 2")[1:]) == sorted(expected_two)

    relative = {(r[0], r[1], r[2]): r[3] for r in _table(report, "Relative differences")["rows"]}
    o1, r1 = cells["o1"], cells["r1"]
    expected_relative = {
        (o1, "basic", "susceptibility: (A − N)/A"): "+50.00%",
        (o1, "basic", "severity: (A − N)/A"): "+33.33%",
        (o1, "basic", "benefits: (A − N)/A"): "+0.00%",
        (o1, "basic", "smog: (O − N)/O"): "+64.61%",
        (o1, "advanced", "susceptibility: (A − N)/A"): "-",
        (o1, "advanced", "smog: (O − N)/O"): "-",
        (o1, "all", "patient-centric: (adv − basic)/basic"): "+9.09%",
        (o1, "all", "diagnosis_hard: (adv − basic)/basic"): "+0.00%",
        (o1, "all", "diagnosis_soft: (adv − basic)/basic"): "+0.00%",
        (o1, "all", "smog: (adv − basic)/basic"): "-37.83%",
        (r1, "basic", "susceptibility: (A − N)/A"): "+66.67%",
        (r1, "basic", "severity: (A − N)/A"): "+33.33%",
        (r1, "basic", "benefits: (A − N)/A"): "+0.00%",
        (r1, "basic", "smog: (O − N)/O"): "+64.61%",
        (r1, "all", "patient-centric: (adv − basic)/basic"): "+10.53%",
        (r1, "all", "diagnosis_hard: (adv − basic)/basic"): "-100.00%",
        (r1, "all", "diagnosis_soft: (adv − basic)/basic"): "+0.00%",
        (r1, "all", "smog: (adv − basic)/basic"): "+75.67%",
    }
    for key, value in expected_relative.items():
        assert relative[key] == value, key

    bins = _table(report, "Metric means by conversation length")
    expected_bins = [
        [o1, "5", "2", "3.00", "2.50", "2.00", "3.00", plain, "100.00", "100.00"],
        [o1, "6-9", "1", "3.00", "2.00", "2.00", "3.00", technical, "100.00", "100.00"],
        [o1, "10-15", "1", "2.00", "2.00", "4.00", "3.00", plain, "100.00", "100.00"],
        [o1, "≥16", "0", "-", "-", "-", "-", "-", "-", "-"],
        [r1, "5", "2", "2.00", "2.50", "2.00", "2.50", plain, "100.00", "50.00"],
        [r1, "6-9", "1", "2.00", "2.00", "2.00", "3.00", technical, "100.00", "100.00"],
        [r1, "10-15", "1", "1.00", "2.00", "4.00", "2.00", technical, "100.00", "0.00"],
        [r1, "≥16", "0", "-", "-", "-", "-", "-", "-", "-"],
    ]
    assert sorted(bins["rows"]) == sorted(expected_bins)

    # the SMOG cross-check: no textstat grades in this run (the scorer is left out), so no row and the note says so
    check = _table(report, "SMOG cross-check")
    assert check["rows"] == []
    assert "No textstat grades in this run" in check["note"]

    assert (
        "smog: sensemaking (the task's own, over bedside's generic one), SMOG (bedside's counter) of the "
        "sensemaker's messages only, joined: one value per conversation; lower is better"
    ) in report["methods"]
    assert "- smog: sensemaking (the task's own, over bedside's generic one)" in markdown
