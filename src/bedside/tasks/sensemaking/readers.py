"""Sensemaking cases from files: bedside JSONL, MediQ's JSONL (``all_dev_good.jsonl`` and its kin), or the
MedAgent authors' case CSV.

bedside JSONL: one :class:`~.cases.SensemakingCase` per line. MediQ: ``id``, ``context`` (sentences), ``facts``
(numbered strings, no vitals split), ``question``, ``options``, ``answer``; the answer becomes the diagnosis
label only for the cases the caller names as diagnosis cases (most MedQA psych answers are drugs or durations,
not diagnoses, spec 004 item 6); every other case gets a derived label at run time, marked unreviewed.

MedAgent CSV (:func:`read_medagent_csv`): the reference code's input, ``id``, ``clinical_case_study`` (the MedQA
vignette) and ``mental_health_classification`` (``Yes``/``No`` from the authors' classifier and review); only
``Yes`` rows are cases, as in the code. The vignette is decomposed into facts, vitals, intent, goal and a derived
(unreviewed) label by the ``helper`` role at run time, as the paper does with GPT-4o.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from pathlib import Path

from pydantic import ValidationError

from bedside.inputs import InputError, csv_table, expect, read_json
from bedside.jsonlines import json_objects
from bedside.tasks.sensemaking.cases import Diagnosis, SensemakingCase

_NUMBERED = re.compile(r"^\s*\d+[.)]\s*")


def read_cases(path: Path) -> list[SensemakingCase]:
    cases = []
    for number, data in json_objects(path):
        try:
            cases.append(SensemakingCase.model_validate(data))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "case"
            raise InputError(f"{path}:{number}: {where}: {first['msg']}") from None
    _unique(cases, path)
    return cases


def read_mediq(
    path: Path, *, ids: Collection[str] | None = None, diagnosis_ids: Collection[str] = ()
) -> list[SensemakingCase]:
    """MediQ cases (only ``ids`` when given); the MCQ answer is the label for ``diagnosis_ids`` only."""
    wanted = {str(i) for i in ids} if ids is not None else None
    labelled = {str(i) for i in diagnosis_ids}
    cases = []
    for number, data in json_objects(path):
        # An id given as an object or list was stringified into an id no index could name: an error instead.
        case_id = str(expect(data.get("id", ""), (str, int), path=path, line=number, field="id")).strip()
        if wanted is not None and case_id not in wanted:
            continue
        facts = data.get("facts")
        if not case_id or not isinstance(facts, list) or not facts:
            raise InputError("a MediQ case needs an id and a non-empty facts list", path=path, line=number)
        for index, fact in enumerate(facts):
            expect(fact, str, path=path, line=number, field=f"facts[{index}]")
        cleaned = [_NUMBERED.sub("", f).strip() for f in facts if f.strip()]
        context: str | list[str] | None = expect(
            data.get("context"), (str, list, type(None)), path=path, line=number, field="context"
        )
        if isinstance(context, list):
            for index, sentence in enumerate(context):
                expect(sentence, str, path=path, line=number, field=f"context[{index}]")
        vignette = " ".join(context) if isinstance(context, list) else context
        answer: str | float | None = expect(
            data.get("answer"), (str, int, float, type(None)), path=path, line=number, field="answer"
        )
        diagnosis = (
            Diagnosis(label=str(answer), provenance="given", note="MediQ answer")
            if case_id in labelled and answer
            else None
        )
        cases.append(
            SensemakingCase(
                id=f"mediq-{case_id}", vignette=vignette or None, facts=cleaned, diagnosis=diagnosis, source="mediq"
            )
        )
    if not cases:  # the file holds cases (json_objects refuses an empty one), so the id filter chose none
        raise InputError(f"none of the {len(wanted or ())} case ids asked for is in the file", path=path)
    _unique(cases, path)
    return cases


MEDAGENT_COLUMNS = {
    "id": "id",
    "vignette": "clinical_case_study",
    "classification": "mental_health_classification",
}


def read_medagent_csv(path: Path, *, columns: Mapping[str, str] | None = None) -> list[SensemakingCase]:
    """The cases of a MedAgent case CSV marked ``Yes`` (case-insensitive), in file order.

    ``columns`` maps ``id``, ``vignette`` and ``classification`` to other column names. A missing column, an empty
    id or vignette on a kept row, a classification other than Yes/No, or a repeated id is an error naming the
    file, the line and the column."""
    fields = {field: (columns or {}).get(field, column) for field, column in MEDAGENT_COLUMNS.items()}
    cases = []
    seen: dict[str, int] = {}
    for line, row in csv_table(path, fields, "MedAgent case CSV"):
        label = row["classification"].lower()
        if label not in ("yes", "no"):
            raise InputError(
                f"expected Yes or No, not {row['classification']!r}",
                path=path,
                line=line,
                field=fields["classification"],
            )
        if label == "no":
            continue
        for field in ("id", "vignette"):
            if not row[field]:
                raise InputError("empty on a row marked Yes", path=path, line=line, field=fields[field])
        if row["id"] in seen:
            raise InputError(
                f"case id {row['id']!r} already on line {seen[row['id']]}", path=path, line=line, field=fields["id"]
            )
        seen[row["id"]] = line
        cases.append(SensemakingCase(id=f"medqa-{row['id']}", vignette=row["vignette"], source="medagent_csv"))
    return cases


def _unique(cases: list[SensemakingCase], path: Path) -> None:
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise InputError(f"case id {case.id!r} appears twice", path=path)
        seen.add(case.id)


# MediQ ids (``all_dev_good.jsonl``) in the strict psych index whose MCQ answer is itself a psychiatric diagnosis
# (spec 004 item 6); only these take the answer as a given label.
PSYCH_DIAGNOSIS_IDS = (
    "15", "23", "59", "106", "231", "261", "317", "350", "370", "506", "654",
    "679", "707", "722", "741", "770", "840", "850", "883", "966", "977", "1015",
)  # fmt: skip


def psych_index_ids(index_path: Path, subset: str = "strict") -> list[str]:
    """Case ids of bedside's derived MediQ psych index: ``strict`` (specialty tag or answer term) or ``union``."""
    if subset not in ("strict", "union"):
        raise ValueError(f"psych index subset must be strict or union, not {subset!r}")
    data = read_json(index_path)
    cases = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(cases, list) or not all(isinstance(c, dict) and "id" in c for c in cases):
        raise InputError("expected an object with a 'cases' list of objects with an id", path=index_path)
    keep = [c for c in cases if subset == "union" or c.get("psychiatry_specialty_tag") or c.get("answer_term_match")]
    return [str(c["id"]) for c in keep]
