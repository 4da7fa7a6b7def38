"""Core pieces the instruct task added to shared layers: Okapi BM25, win rates without ties, Fisher z, the
event-stream XML dialect, and raw-text cuts at token boundaries."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest

from bedside.records import RecordWarning, read_medalign_xml
from bedside.records.fit import FitError, fit_text, text_chunks
from bedside.retrieval import OkapiBM25Index
from bedside.stats import fisher_z, head_to_head
from bedside.text.tokens import CharEstimate


def test_okapi_scores_equal_the_rank_bm25_formula_by_hand() -> None:
    # N = 4 documents, avgdl = (2 + 2 + 4 + 1) / 4 = 2.25. df: a = 3, b = 2, c = d = e = f = 1.
    docs = ["a b", "a c", "a b d e", "f"]
    index = OkapiBM25Index(docs, ids=["d0", "d1", "d2", "d3"])
    idf_one = math.log(3.5 / 1.5)  # df = 1
    idf_a = math.log(1.5 / 3.5)  # df = 3: negative, so replaced by epsilon x mean idf
    mean_idf = (idf_a + 0.0 + 4 * idf_one) / 6  # b has idf ln(2.5/2.5) = 0; the mean includes the negative
    eps_a = 0.25 * mean_idf

    def term(idf: float, tf: int, length: int) -> float:
        return idf * tf * 2.5 / (tf + 1.5 * (1 - 0.75 + 0.75 * length / 2.25))

    expected = {
        "d1": term(eps_a, 1, 2) + term(idf_one, 1, 2),
        "d0": term(eps_a, 1, 2),
        "d2": term(eps_a, 1, 4),
    }
    hits = index.search("a c", k=4)
    assert [h.id for h in hits] == ["d1", "d0", "d2"]  # d3 scores 0 and is not returned
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.id], rel=1e-12)
    assert expected["d1"] == pytest.approx(1.00338, abs=1e-5)  # the number worked out on paper
    # Repeated query tokens count each time (rank_bm25 loops over the query's tokens).
    assert index.scores("c c")[1] == pytest.approx(2 * term(idf_one, 1, 2))
    # Tokens are whitespace-split with case kept: "A" is not "a".
    assert index.search("A") == []


def test_okapi_keeps_rank_bm25s_epsilon_floor_even_when_it_is_negative() -> None:
    docs = ["the pain the pain", "chest pain", "the the the"]
    # idf(the) = idf(pain) = ln(1.5/2.5) < 0, idf(chest) = ln(2.5/1.5); their mean is negative, so the floor is too.
    floor = 0.25 * (2 * math.log(1.5 / 2.5) + math.log(2.5 / 1.5)) / 3
    scores = OkapiBM25Index(docs).scores("the")
    length_norm = 1.5 * (1 - 0.75 + 0.75 * 3 / (9 / 3))
    assert scores[2] == pytest.approx(floor * 3 * 2.5 / (3 + length_norm))
    assert scores[2] < 0
    assert scores[1] == 0
    with pytest.raises(TypeError):
        OkapiBM25Index("one string")
    with pytest.raises(ValueError, match="unique"):
        OkapiBM25Index(["a", "b"], ids=["x", "x"])


def test_win_rates_with_ties_excluded_sum_to_half_per_system() -> None:
    rankings = {
        "i1": {"a": 1, "b": 2, "c": 3},
        "i2": {"a": 1, "b": 1, "c": 2},
        "i3": {"a": 2, "b": 1, "c": 1},
    }
    counted = head_to_head(rankings)
    excluded = head_to_head(rankings, ties="exclude")
    a, b = 0, 1
    assert counted.wins[a][b] == pytest.approx(1 / 3)  # i1 only; i2 tie in the denominator
    assert excluded.wins[a][b] == pytest.approx(1 / 2)  # i1 of the two non-tied items
    assert excluded.wins[a][b] + excluded.wins[b][a] == pytest.approx(1)  # type: ignore[operator]
    rates = [excluded.win_rate(s) for s in "abc"]
    assert sum(r for r in rates if r is not None) == pytest.approx(1.5)  # mean 0.5, as Table 3's WRs
    always_tied = head_to_head({"i": {"x": 1, "y": 1}}, ties="exclude")
    assert always_tied.wins[0][1] is None
    with pytest.raises(ValueError, match="ties"):
        head_to_head(rankings, ties="drop")  # type: ignore[arg-type]


def test_fisher_z_reproduces_the_independent_test_and_rejects_bad_input() -> None:
    # MedAlign Appendix K: COMET .37 vs BERTScore .34 over 303 instructions is not significant this way.
    result = fisher_z(0.37, 303, 0.34, 303)
    expected_z = (math.atanh(0.37) - math.atanh(0.34)) / math.sqrt(2 / 300)
    assert result.statistic == pytest.approx(expected_z)
    assert result.statistic == pytest.approx(0.42, abs=0.01)
    assert result.p_value == pytest.approx(0.67, abs=0.01)
    with pytest.raises(ValueError, match="more than 3"):
        fisher_z(0.3, 3, 0.2, 10)


EVENT_STREAM = """<eventstream person_id="p-77">
  <encounter start_timestamp="2021-03-01 09:00:00" end_timestamp="2021-03-01 10:00:00">
    <person>
      <birthdate>1960-05-02</birthdate>
      <age_in_days>22218</age_in_days>
      <age_in_years>60</age_in_years>
      <ethnicity>Not Hispanic or Latino</ethnicity>
      <gender>FEMALE</gender>
      <payerplan>Medicare</payerplan>
    </person>
    <caresites><caresite id="1">Clinic A</caresite></caresites>
    <providers><provider id="9">Dr X</provider></providers>
    <events>
      <entry timestamp="2021-03-01 09:05:00">
        <event type="condition_occurrence" code="ICD10CM/I10" name="Essential hypertension"></event>
        <event type="measurement" code="LOINC/8480-6" name="Systolic blood pressure">152 mmHg</event>
      </entry>
      <entry timestamp="2021-03-01 09:30:00">
        <event type="drug" code="RxNorm/197361" name="amlodipine 5 MG Oral Tablet"></event>
        <event type="note" name="progress note" note_id="n1">BP high. Start amlodipine.</event>
        <event type="device_exposure" code="X/1" name="cuff"></event>
      </entry>
    </events>
  </encounter>
</eventstream>
"""


def test_event_stream_dialect_reads_into_a_record(tmp_path: Path) -> None:
    path = tmp_path / "p-77.xml"
    path.write_text(EVENT_STREAM, encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        record = read_medalign_xml(path)
    assert record.patient.id == "p-77"
    assert str(record.patient.birth_date) == "1960-05-02"
    assert record.patient.gender == "female"
    assert [c.codes[0].tag for c in record.conditions] == ["[ICD10CM/I10]"]
    assert record.measurements[0].text == "Systolic blood pressure 152 mmHg"
    assert record.medications[0].codes[0].code == "197361"
    assert record.notes[0].text == "BP high. Start amlodipine."
    assert record.notes[0].type == "progress note"
    assert record.encounters[0].end is not None
    assert any("device_exposure" in str(w.message) for w in caught if issubclass(w.category, RecordWarning))


def test_event_stream_errors_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.xml"
    path.write_text(EVENT_STREAM.replace('timestamp="2021-03-01 09:30:00"', 'timestamp="yesterday"'), "utf-8")
    with pytest.raises(ValueError, match=r"bad\.xml: line 18 <entry>: timestamp"):
        read_medalign_xml(path)
    other = tmp_path / "other.xml"
    other.write_text("<patient/>", encoding="utf-8")
    with pytest.raises(ValueError, match="<record> \\(or <eventstream>\\)"):
        read_medalign_xml(other)


def test_raw_text_cuts_keep_the_most_recent_tokens_and_chunks_cover_the_text_once() -> None:
    tokenizer = CharEstimate(4)
    text = "<record><visit>" + "".join(f"<e>{i:04d}</e>" for i in range(200)) + "</visit></record>"
    fitted = fit_text(text, tokenizer, 300, reserve=256)
    assert fitted.tokens <= 44
    assert text.endswith(fitted.text)
    assert len(fitted.text) == 44 * 4
    pieces = text_chunks(text, tokenizer, 50)
    assert "".join(pieces) == text
    assert all(tokenizer.count(p) <= 50 for p in pieces)
    with pytest.raises(FitError):
        fit_text(text, tokenizer, 256, reserve=256)
