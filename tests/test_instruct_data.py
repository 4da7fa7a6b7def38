"""The instruct task's data: taxonomy, instruction and label readers in every layout, the fixtures."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bedside.tasks.instruct import (
    InstructDataError,
    Instruction,
    TaxonomyError,
    facts_recall,
    primary_labels,
    read_instructions,
    read_labels_jsonl,
    read_release_gold,
    read_release_reviewed,
    read_relevance,
    read_sample_csv,
    resolve_category,
    resolve_subcategory,
    taxonomy,
)
from bedside.tasks.instruct.ehr import load_ehr
from bedside.tasks.instruct.task import DEMO_RECORDS, SYNTHETIC_INSTRUCTIONS, SYNTHETIC_LABELS


def test_taxonomy_holds_the_papers_categories_and_counts() -> None:
    tax = taxonomy()
    assert len(tax.categories) == 6
    assert len(tax.subcategories) == 20
    assert sum(c.gold for c in tax.categories) == 303
    assert sum(c.all for c in tax.categories) == 983
    assert sum(s.gold for s in tax.subcategories) == 303
    assert sum(s.all for s in tax.subcategories) == 1314
    retrieval = [s for s in tax.subcategories if s.category == "Retrieve & Summarize"]
    assert len(retrieval) == 14
    assert "patient education information" in {s.name for s in retrieval}
    # Every category's gold count equals the sum of its subcategories' gold counts (Table 2 vs Table S2).
    for category in tax.categories:
        assert category.gold == sum(s.gold for s in tax.subcategories if s.category == category.name)


@pytest.mark.parametrize(
    ("label", "name"),
    [
        ("information retrieval", "Retrieve & Summarize"),
        ("Information Retrieval", "Retrieve & Summarize"),
        ("calculation & scoring", "Calculation & Scoring"),
        ("CARE  planning", "Care Planning"),
    ],
)
def test_category_aliases_match_case_insensitively(label: str, name: str) -> None:
    assert resolve_category(label).name == name


def test_subcategory_aliases_and_unknown_labels() -> None:
    assert resolve_subcategory("retrieve medical history").name == "medical history"
    assert resolve_subcategory("Retrieve Coding & Billing Information").category == "Retrieve & Summarize"
    assert resolve_subcategory("provide patient education information").name == "patient education information"
    with pytest.raises(TaxonomyError, match="unknown instruction subcategory 'astrology'"):
        resolve_subcategory("astrology")


def test_instruction_labels_are_canonical_and_consistent() -> None:
    case = Instruction(id="x", question="q?", subcategory="retrieve vitals", extra_subcategories=["labs"])
    assert case.category == "Retrieve & Summarize"
    assert case.subcategory == "vitals"
    assert case.extra_subcategories == ["laboratory studies"]
    with pytest.raises(ValueError, match="belongs to 'Retrieve & Summarize', not to category 'translation'"):
        Instruction(id="x", question="q?", subcategory="vitals", category="translation")


def test_synthetic_fixtures_are_answerable_from_their_records() -> None:
    instructions = read_instructions(SYNTHETIC_INSTRUCTIONS)
    assert len(instructions) >= 30
    assert len({i.person_id for i in instructions}) == 12
    for instruction in instructions:
        assert instruction.source == "bedside-synthetic"
        assert instruction.references, instruction.id
        # The reference states every fact, and every fact is in the record (rendered as the model sees it).
        assert facts_recall(instruction, instruction.references[0].text) == 1.0, instruction.id
        text = load_ehr(instruction, str(DEMO_RECORDS)).text("paper").lower()
        if instruction.id != "syn-25":  # the age is computed from the birth date, not written in the record
            for alternatives in instruction.answer_facts:
                assert any(a.lower() in text for a in alternatives), (instruction.id, alternatives)
    labels = read_labels_jsonl(SYNTHETIC_LABELS)
    assert {x.model for x in labels} == {"synthetic-a", "synthetic-b", "synthetic-c", "synthetic-d"}
    assert Counter(x.evaluator for x in labels)["Annotator_2"] == 8 * 4
    assert any(x.provider_error for x in labels)


def test_jsonl_errors_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    good = {"id": "a", "question": "What?", "subcategory": "vitals"}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "b", "subcategory": "nonsense"}) + "\n")
    with pytest.raises(InstructDataError, match=r"cases\.jsonl:2: .*unknown instruction subcategory 'nonsense'"):
        read_instructions(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(InstructDataError, match=r"cases\.jsonl:2: duplicate instruction id 'a'"):
        read_instructions(path)
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"instruction_id": "a", "model": "m", "correct": True, "rank": 0}) + "\n")
    with pytest.raises(InstructDataError, match=r"labels\.jsonl:1: rank"):
        read_labels_jsonl(labels)
    labels.write_text(
        json.dumps({"instruction_id": "a", "model": "m", "correct": True, "criteria": {"C3": True}}) + "\n"
    )
    with pytest.raises(InstructDataError, match="meeting any of C1-C3 is incorrect"):
        read_labels_jsonl(labels)


GOLD = (
    "instruction_id\tperson_id\tannotator_num\tclinician_response\tquestion\tfilename\n"
    '1\t77\tAnnotator_1\tBP "high" since 2019\tHow has the BP been?\t77.xml\n'
    "1\t77\tAnnotator_2\tHypertensive throughout.\tHow has the BP been?\t77.xml\n"
    "2\t78\tAnnotator_1\tNone recorded.\tAny allergies?\t78.xml\n"
)


def test_release_gold_reads_in_both_quoting_modes(tmp_path: Path) -> None:
    (tmp_path / "ehrs").mkdir()
    (tmp_path / "ehrs" / "77.xml").write_text("<record></record>", encoding="utf-8")
    path = tmp_path / "clinician-instruction-responses.tsv"
    path.write_text(GOLD, encoding="utf-8")
    raw = read_release_gold(path, quoting="none")
    assert [i.id for i in raw] == ["1", "2"]
    assert raw[0].references[0].text == 'BP "high" since 2019'  # quotes are text
    assert [r.annotator for r in raw[0].references] == ["Annotator_1", "Annotator_2"]
    assert raw[0].record is not None
    assert raw[0].record.endswith("77.xml")
    assert raw[1].record is None  # its file is not there
    assert raw[0].medalign_sourced
    # With csv quoting, a field that opens with a quote is read as a quoted field.
    quoted = tmp_path / "quoted.tsv"
    quoted.write_text(GOLD.replace('BP "high" since 2019', '"BP ""high""\tsince 2019"'), encoding="utf-8")
    assert read_release_gold(quoted, quoting="csv")[0].references[0].text == 'BP "high"\tsince 2019'
    with pytest.raises(InstructDataError, match=r"quoted\.tsv:2: 7 fields, the header has 6"):
        read_release_gold(quoted, quoting="none")


def test_release_column_map_errors_name_the_missing_column(tmp_path: Path) -> None:
    path = tmp_path / "gold.tsv"
    path.write_text(GOLD.replace("annotator_num", "annotator"), encoding="utf-8")
    with pytest.raises(InstructDataError, match=r"gold\.tsv: the gold-answer file has no column 'annotator_num'"):
        read_release_gold(path)
    assert len(read_release_gold(path, columns={"annotator": "annotator"})) == 2


def test_release_reviewed_file_with_a_column_map(tmp_path: Path) -> None:
    path = tmp_path / "clinician-reviewed-model-responses.tsv"
    path.write_text(
        "instruction_id\tperson_id\tmodel_name\tbinary_correct\tis_used_eval\tresponse_text\trank\n"
        "1\t77\tgpt-4\t1\tyes\tHigh since 2019.\t1\n"
        "1\t77\tmpt-7b\t0\tyes\tNo idea.\t2\n"
        "1\t77\tvicuna\t0\tno\tSkipped.\t3\n",
        encoding="utf-8",
    )
    labels = read_release_reviewed(path, columns={"response": "response_text", "rank": "rank"})
    assert [(x.model, x.correct, x.rank, x.response) for x in labels] == [
        ("gpt-4", True, 1.0, "High since 2019."),
        ("mpt-7b", False, 2.0, "No idea."),
    ]
    assert len(read_release_reviewed(path, used_only=False)) == 3
    with pytest.raises(InstructDataError, match="no column 'clinician_rank' \\(for rank\\)"):
        read_release_reviewed(path, columns={"rank": "clinician_rank"})
    with pytest.raises(InstructDataError, match="unknown field"):
        read_release_reviewed(path, columns={"colour": "x"})
    path.write_text("instruction_id\tmodel_name\tbinary_correct\n1\tm\tmaybe\n", encoding="utf-8")
    with pytest.raises(InstructDataError, match=r":2: column 'binary_correct': 'maybe' is not a 0/1 label"):
        read_release_reviewed(path)


def test_relevance_labels_in_both_layouts(tmp_path: Path) -> None:
    csv_path = tmp_path / "ehr-relevance-labels.csv"
    csv_path.write_text(
        "instruction_id,question,person_id,is_selected_ehr\n1,q,77,no\n1,q,78,yes\n2,q,79,no\n", encoding="utf-8"
    )
    assert read_relevance(csv_path) == {"1": {"77": "irrelevant", "78": "relevant"}, "2": {"79": "irrelevant"}}
    jsonl = tmp_path / "relevance.jsonl"
    jsonl.write_text(json.dumps({"instruction_id": "1", "person_id": "77", "relevance": "maybe"}) + "\n")
    with pytest.raises(InstructDataError, match=r"relevance\.jsonl:1: relevance 'maybe'"):
        read_relevance(jsonl)


def test_primary_labels_choose_annotator_1_and_refuse_ambiguity() -> None:
    labels = read_labels_jsonl(SYNTHETIC_LABELS)
    chosen = primary_labels(labels)
    assert len(chosen) == 32 * 4
    assert {x.evaluator for x in chosen} == {"Annotator_1"}
    others = [x for x in labels if x.evaluator != "Annotator_1"]
    with pytest.raises(ValueError, match="several evaluators"):
        primary_labels(others)


def test_public_sample_reads_with_the_taxonomy(external: Path) -> None:
    folder = external / "som-shahlab_medalign" / "data"
    instructions = read_sample_csv(folder / "instructions-sample.csv")
    assert len(instructions) == 62
    assert Counter(i.source for i in instructions) == {
        "medalign-sample:table_s10": 33,
        "medalign-sample:table_s9": 22,
        "medalign-sample:table_2": 6,
        "medalign-sample:table_s3": 1,
    }
    assert all(i.category and i.subcategory for i in instructions)
    assert all(i.medalign_sourced for i in instructions)
    import csv

    with (folder / "instruction-taxonomy.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 20
    for row in rows:  # every taxonomy row resolves, category included, through the alias table
        assert resolve_subcategory(row["subcategory"]).category == resolve_category(row["category"]).name


def test_dedup_keeps_the_first_of_near_duplicates_in_file_order(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bedside.cli import app
    from bedside.tasks.instruct.dedup import deduplicate

    cases = [
        Instruction(id="a", question="What is the most recent blood pressure?"),
        Instruction(id="b", question="What is the most recent blood pressure reading?"),
        Instruction(id="c", question="Summarize the medication list."),
        Instruction(id="d", question="what is the most recent blood pressure"),
    ]
    result = deduplicate(cases)
    assert [i.id for i in result.kept] == ["a", "c"]
    assert result.removed["b"][0] == "a"
    assert result.removed["b"][1] > 0.7
    assert result.removed["d"] == ("a", 1.0)
    assert [i.id for i in deduplicate(cases, threshold=1.0).kept] == ["a", "b", "c", "d"]  # only > 1 would remove
    source = tmp_path / "in.jsonl"
    source.write_text("".join(c.model_dump_json() + "\n" for c in cases), encoding="utf-8")
    output = tmp_path / "out.jsonl"
    invoked = CliRunner().invoke(app, ["instruct", "dedup", "-i", str(source), "-o", str(output), "--json"])
    assert invoked.exit_code == 0, invoked.output
    assert [i.id for i in read_instructions(output)] == ["a", "c"]
    again = CliRunner().invoke(app, ["instruct", "dedup", "-i", str(source), "-o", str(output)])
    assert again.exit_code == 1
    assert "exists" in again.output


def _dialect_a(person_note: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<record>\n<visit type="Office" start="10/08/2018 20:00">\n'
        '<day start="10/08/2018 20:00">\n<person>\nBirth: 01/02/1970\n</person>\n'
        f'<note type="progress" start="10/08/2018 20:00">\n{person_note}\n</note>\n</day>\n</visit>\n</record>\n'
    )


def test_ehr_prefixed_files_join_the_relevance_labels(tmp_path: Path) -> None:
    """MedAlign's earlier layout names files EHR_<person_id>.xml and its labels the person alone: the file's person
    id drops the prefix (it was EHR_<id>, so no label ever joined), and the paper view still reads the file."""
    from typer.testing import CliRunner

    from bedside.cli import app
    from bedside.records import read_medalign_xml
    from bedside.tasks.instruct.matching import record_documents

    folder = tmp_path / "ehrs"
    folder.mkdir()
    (folder / "EHR_101.xml").write_text(_dialect_a("warfarin started for atrial fibrillation"), encoding="utf-8")
    (folder / "EHR_102.xml").write_text(_dialect_a("knee replacement planned next spring"), encoding="utf-8")
    (folder / "EHR_103.xml").write_text(_dialect_a("seasonal allergies treated with loratadine"), encoding="utf-8")
    assert read_medalign_xml(folder / "EHR_101.xml").patient.id == "101"
    assert read_medalign_xml(folder / "EHR_101.xml", patient_id="EHR_101").patient.id == "EHR_101"
    documents = record_documents(str(folder))
    assert sorted(documents) == ["101", "102", "103"]
    assert documents["101"] == (folder / "EHR_101.xml").read_text(encoding="utf-8")  # the file's own text
    instructions = tmp_path / "instructions.jsonl"
    instructions.write_text(
        json.dumps({"id": "q1", "question": "warfarin for atrial fibrillation", "general": True}) + "\n",
        encoding="utf-8",
    )
    labels = tmp_path / "ehr-relevance-labels.csv"
    labels.write_text(
        "instruction_id,question,person_id,is_selected_ehr\nq1,q,101,yes\nq1,q,102,no\n", encoding="utf-8"
    )
    result = CliRunner().invoke(
        app,
        ["instruct", "match", "-i", str(instructions), "--records", str(folder), "--labels", str(labels), "-k", "2"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(
        app,
        [
            "instruct",
            "match",
            "-i",
            str(instructions),
            "--records",
            str(folder),
            "--labels",
            str(labels),
            "-k",
            "2",
            "--json",
        ],
    )
    data = json.loads(result.output)
    candidates = data["matches"][0]["candidates"]
    assert (candidates[0]["person_id"], candidates[0]["relevance"]) == ("101", "relevant")
    assert data["evaluation"]["success"]["1"] == 1.0


def test_public_sample_record_under_the_earlier_file_name(external: Path, tmp_path: Path) -> None:
    """The public synthetic record (dialect a), linked in place under the earlier layout's name, reads as person 7."""
    from bedside.tasks.instruct.ehr import load_ehr as load

    folder = tmp_path / "ehrs"
    folder.mkdir()
    (folder / "EHR_7.xml").symlink_to(external / "som-shahlab_medalign" / "data" / "sample-ehr-clean.xml")
    ehr = load(Instruction(id="x", question="q", person_id="7"), str(folder))
    assert ehr.record.patient.id == "7"
    assert ehr.raw_text == (folder / "EHR_7.xml").read_text(encoding="utf-8")


def _person_record(birth: str, gender: str, race: str, notes: int, measurements: int) -> str:
    events = "".join(
        f'<note type="progress" start="10/08/2018 20:00">\nnote {i}\n</note>\n' for i in range(notes)
    ) + "".join(
        f'<measurement start="10/08/2018 20:00"><code>[LOINC/{i}] BP 120/80</code></measurement>\n'
        for i in range(measurements)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<record>\n<visit type="Office" start="10/08/2018 20:00">\n'
        f'<day start="10/08/2018 20:00">\n<person>\nBirth: {birth}\nGender: {gender}\nRace: {race}\n</person>\n'
        f"{events}</day>\n</visit>\n</record>\n"
    )


def test_records_command_tables_s4_and_s5_count_each_record_once(tmp_path: Path) -> None:
    """Three records behind five instructions (two share one; one has no record): Table S4 counts patients, not
    instructions, and Table S5 measures each record once; the missing one is reported, not dropped silently.

    Ages at the visit (8 Oct 2018): 48 (45-64), 8 (0-17), 68 (65-84). Lengths: chars:4 of each file's text, i.e.
    ceil(characters / 4); with three records numpy's quartiles are the midpoints of the sorted lengths."""
    import math

    from typer.testing import CliRunner

    from bedside.cli import app

    folder = tmp_path / "ehrs"
    folder.mkdir()
    texts = {
        "201": _person_record("01/02/1970", "F", "Asian", notes=1, measurements=1),
        "202": _person_record("05/05/2010", "M", "White", notes=2, measurements=3),
        "203": _person_record("01/02/1950", "F", "White", notes=0, measurements=5),
    }
    for person, text in texts.items():
        (folder / f"{person}.xml").write_text(text, encoding="utf-8")
    people = {"q1": "201", "q2": "201", "q3": "202", "q4": "203", "q5": "999"}
    instructions = tmp_path / "instructions.jsonl"
    instructions.write_text(
        "".join(json.dumps({"id": i, "question": "q", "person_id": p}) + "\n" for i, p in people.items()),
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        app, ["instruct", "records", "-i", str(instructions), "--records", str(folder), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["demographics"]["patients"] == 3
    assert data["demographics"]["counts"] == {
        "sex": {"f": 2, "m": 1},
        "race": {"White": 2, "Asian": 1},
        "ethnicity": {"Unknown": 3},
        "age": {"0-17": 1, "45-64": 1, "65-84": 1},
    }
    lengths = sorted(math.ceil(len(t) / 4) for t in texts.values())
    stats = data["statistics"]
    assert (stats["records"], stats["tokenizer"], stats["view"]) == (3, "chars:4", "paper")
    assert stats["median"] == lengths[1]
    assert stats["iqr"] == pytest.approx((lengths[1] + lengths[2]) / 2 - (lengths[0] + lengths[1]) / 2)
    assert (stats["minimum"], stats["maximum"]) == (lengths[0], lengths[2])
    assert stats["total_tokens"] == sum(lengths)
    assert stats["total_characters"] == sum(len(t) for t in texts.values())
    assert stats["within"] == {"1024": 3, "2048": 3, "4096": 3, "32000": 3}
    # codes per record: 1 + 3 + 5 measurements (no other coded items) → median 3; notes 1, 2, 0 → 1; visits 1.
    assert (stats["median_codes"], stats["median_notes"], stats["median_visits"], stats["median_measurements"]) == (
        3.0,
        1.0,
        1.0,
        3.0,
    )
    assert list(data["missing_records"]) == ["q5"]
