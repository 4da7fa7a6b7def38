"""The review app: creation, blinding, assignments, labelling with resume and edit-until-submit, cross-annotator
isolation on every route, meta-evaluation, exports read by bedside's own readers, import. SQLite, and PostgreSQL
when BEDSIDE_TEST_POSTGRES_URL is set."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from bedside.runs.store import Store
from bedside.web import review as rv
from bedside.web import review_export, review_labels, review_meta
from bedside.web.app import create_app
from web_support import (
    BACKENDS,
    PASSWORD,
    REVIEW_ITEMS,
    add_accounts,
    backend_store,
    create_review,
    csrf_of,
    fill_run,
    logged_in,
)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    for opened in backend_store(request.param, tmp_path):
        fill_run(opened, "alpha-111", 24, cells=[("d", "sys-x", "model-x"), ("d", "sys-y", "model-y")])
        add_accounts(opened)
        yield opened


def _client(store: Store, name: str) -> TestClient:
    return logged_in(create_app(store), name)  # type: ignore[no-any-return]


def _letters_to_canonical(task_type: str, html: str) -> dict[str, int]:
    """From an item page: shown letter -> canonical output index (read from the output texts)."""
    found = {}
    for letter, marked in re.findall(
        r'data-row="([A-Z])"><h2>Output \1</h2>\s*<div class="text clip">(.*?)</div>', html
    ):
        body = re.sub(r"<[^>]+>", "", marked)  # a pairwise item marks the words that differ
        for item in REVIEW_ITEMS[task_type]:
            texts = [o["text"] for o in item["outputs"]]
            if body in texts:
                found[letter] = texts.index(body)
    return found


def answer(task_type: str, html: str, *, variant: int = 0) -> dict[str, Any]:
    """Form fields labelling the item shown in ``html`` (variant 1 gives a different answer)."""
    data: dict[str, Any] = {"csrf": csrf_of(html)}
    if task_type == "rank":
        for letter, canonical in _letters_to_canonical(task_type, html).items():
            data[f"rank_{letter}"] = str(canonical + 1 if not variant else 3 - canonical)
            if canonical == 2:
                data[f"c2_{letter}"] = "on"
    elif task_type == "pairwise":
        mapping = _letters_to_canonical(task_type, html)
        data["preference"] = next(k for k, v in mapping.items() if v == variant)
        data["evidence"] = "First text"
    elif task_type == "agree":
        data["agree"] = "yes" if not variant else "no"
        data["comment"] = "fine"
    elif task_type == "gold":
        data["box_0"] = "Yes, ibuprofen is fine with food."
        data["box_1"] = "" if not variant else "Call us in a week."
    elif task_type == "match":
        data["span"] = "Continue omeprazole every day." if not variant else "NO MATCH"
    elif task_type == "evidence":
        data["rel_1"] = "essential"
        data["rel_2"] = "not-relevant" if not variant else "supplementary"
    return data


def label_all(client: TestClient, review_id: str, task_type: str, *, variant: int = 0) -> int:
    page = client.get(f"/reviews/{review_id}")
    count = 0
    while "/items/" in str(page.url):
        response = client.post(
            str(page.url), data=answer(task_type, page.text, variant=variant), follow_redirects=False
        )
        assert response.status_code == 303, response.text[:800]
        count += 1
        page = client.get(response.headers["location"])
    return count


@pytest.mark.parametrize("task_type", rv.TASK_TYPES)
def test_each_task_type_end_to_end(store: Store, task_type: str) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, task_type, ["ann1", "ann2"], overlap=2)
    one, two = _client(store, "ann1"), _client(store, "ann2")
    n = len(REVIEW_ITEMS[task_type])
    assert label_all(one, review_id, task_type) == n
    assert label_all(two, review_id, task_type, variant=1 if task_type != "gold" else 0) == n
    meta = admin.get(f"/reviews/{review_id}/meta")
    assert meta.status_code == 200
    assert f"{2 * n} labels on {n} items" in meta.text
    result = review_meta.meta_evaluation(store.engine, review_id)
    assert result["labels"] == 2 * n
    if task_type != "gold":
        assert result["inter"], result
        assert result["judge"], result
    labels = review_labels.all_labels(store.engine, review_id)
    if task_type == "rank":
        first = next(lab for lab in labels if lab["annotator"] == "ann1")["value"]
        assert [o["rank"] for o in first["outputs"]] == [1, 2, 3]  # canonical order whatever the letters shown
        assert [o["correct"] for o in first["outputs"]] == [True, True, False]
        tau = next(e for e in result["judge"] if "τ" in e.name)
        assert tau.n == 2 * n
        assert tau.value == pytest.approx(0.0)  # ann1 agrees fully (1.0), ann2 reversed (-1.0)
    if task_type == "pairwise":
        assert {lab["value"]["preference"] for lab in labels} == {0, 1}
        rate = next(e for e in result["judge"] if e.name.startswith("preference: agreement"))
        assert rate.value == pytest.approx(0.5)
    if task_type == "agree":
        rate = next(e for e in result["judge"] if "labels agreeing" in e.name)
        assert rate.value == pytest.approx(0.5)
        assert rate.n == 2 * n
    if task_type == "evidence":
        kappa = next(e for e in result["inter"] if e.name == "rel: Cohen's κ")
        assert kappa.n == 2 * n


def test_blinding_hides_identities_and_shuffles_per_annotator(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "rank", ["ann1", "ann2"], overlap=2)
    orders = {}
    for name in ("ann1", "ann2"):
        client = _client(store, name)
        pages = [client.get(f"/reviews/{review_id}/items/{i}").text for i in range(3)]
        for html in pages:
            for secret in ("system-alpha", "system-beta", "system-gamma", "judge", "3.0"):
                assert secret not in html, (name, secret)
        orders[name] = [tuple(_letters_to_canonical("rank", html).values()) for html in pages]
        orders[name + "-items"] = [re.findall(r"Instruction (\d)", html)[0] for html in pages]
    assert orders["ann1"] != orders["ann2"] or orders["ann1-items"] != orders["ann2-items"]
    # seeded: the same annotator sees the same order again
    again = _client(store, "ann1")
    assert [
        tuple(_letters_to_canonical("rank", again.get(f"/reviews/{review_id}/items/{i}").text).values())
        for i in range(3)
    ] == orders["ann1"]
    agree_id = create_review(admin, "agree", ["ann1"], overlap=1)
    html = _client(store, "ann1").get(f"/reviews/{agree_id}/items/0").text
    assert "secret-system" not in html
    assert "severity = 3" in html  # what the judge said is the point of this task


def test_assignment_overlap_and_limits() -> None:
    plan = rv.assign([f"i{n}" for n in range(10)], ["a", "b", "c"], overlap=2, per_annotator=5, seed=1)
    counts = {k: len(v) for k, v in plan.items()}
    assert all(c <= 5 for c in counts.values())
    per_item: dict[str, int] = {}
    for items in plan.values():
        for item in items:
            per_item[item] = per_item.get(item, 0) + 1
    assert set(per_item.values()) == {2}
    assert len(per_item) == 7  # 15 slots / 2 per item
    assert plan == rv.assign([f"i{n}" for n in range(10)], ["a", "b", "c"], overlap=2, per_annotator=5, seed=1)


def test_annotators_reach_only_their_own_assignments(store: Store) -> None:
    admin = _client(store, "admin")
    only_one = create_review(admin, "match", ["ann1"], overlap=1)
    shared = create_review(admin, "evidence", ["ann1", "ann2"], overlap=1, per=2)
    one, two = _client(store, "ann1"), _client(store, "ann2")
    token = csrf_of(two.get("/reviews").text)
    # every review route, as an annotator without an assignment in the review
    for path in (
        f"/reviews/{only_one}",
        f"/reviews/{only_one}/items/0",
        f"/reviews/{only_one}/items/1",
        f"/reviews/{only_one}/done",
    ):
        assert two.get(path, follow_redirects=False).status_code == 404, path
    for path in (f"/reviews/{only_one}/items/0", f"/reviews/{only_one}/submit"):
        assert two.post(path, data={"csrf": token, "span": "NO MATCH"}, follow_redirects=False).status_code == 404, path
    for path in (f"/reviews/{only_one}/meta", f"/reviews/{only_one}/export", "/reviews/new"):
        assert two.get(path, follow_redirects=False).status_code == 403, path
    assert two.post(f"/reviews/{only_one}/import", data={"csrf": token}, follow_redirects=False).status_code == 403
    assert two.post("/reviews", data={"csrf": token}, follow_redirects=False).status_code == 403
    assert only_one not in two.get("/reviews").text
    # in a shared review, positions are each annotator's own: ann2 cannot name ann1's items
    mine = {i: rv.assignment(store.engine, shared, "ann1", i) for i in range(2)}
    theirs = {i: rv.assignment(store.engine, shared, "ann2", i) for i in range(2)}
    assert {a.item_id for a in mine.values() if a}.isdisjoint({a.item_id for a in theirs.values() if a})
    assert two.get(f"/reviews/{shared}/items/2", follow_redirects=False).status_code == 404
    page = two.get(f"/reviews/{shared}/items/0")
    assert theirs[0] is not None
    assert mine[0] is not None
    assert (
        two.post(f"/reviews/{shared}/items/0", data=answer("evidence", page.text), follow_redirects=False).status_code
        == 303
    )
    labels = review_labels.all_labels(store.engine, shared)
    assert [(lab["item_id"], lab["annotator"]) for lab in labels] == [(theirs[0].item_id, "ann2")]
    # ann1's pages show none of ann2's labels
    assert "checked" not in one.get(f"/reviews/{shared}/items/0").text.split("<table")[1]


def test_resume_edit_and_submit(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "agree", ["ann1"], overlap=1)
    one = _client(store, "ann1")
    first = one.get(f"/reviews/{review_id}")
    assert str(first.url).endswith("/items/0")
    one.post(str(first.url), data=answer("agree", first.text))
    assert str(one.get(f"/reviews/{review_id}").url).endswith("/items/1")  # resumes where it was left
    # edit the first label
    page = one.get(f"/reviews/{review_id}/items/0")
    assert 'value="yes" checked' in page.text
    one.post(f"/reviews/{review_id}/items/0", data=answer("agree", page.text, variant=1))
    assert review_labels.all_labels(store.engine, review_id)[0]["value"]["agree"] is False
    # submitting needs every item labelled, then locks
    token = csrf_of(page.text)
    assert one.post(f"/reviews/{review_id}/submit", data={"csrf": token}, follow_redirects=False).status_code == 409
    label_all(one, review_id, "agree")
    done = one.get(f"/reviews/{review_id}/done")
    assert "Submit my labels" in done.text
    assert one.post(f"/reviews/{review_id}/submit", data={"csrf": token}, follow_redirects=False).status_code == 303
    locked = one.post(f"/reviews/{review_id}/items/0", data=answer("agree", page.text), follow_redirects=False)
    assert locked.status_code == 409
    assert "Submitted" in one.get(f"/reviews/{review_id}/done").text


def test_invalid_labels_are_refused_with_the_reason(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "match", ["ann1"], overlap=1)
    one = _client(store, "ann1")
    page = one.get(f"/reviews/{review_id}/items/0")
    bad = one.post(
        f"/reviews/{review_id}/items/0",
        data={"csrf": csrf_of(page.text), "span": "__custom__", "custom_span": "not in it"},
    )
    assert bad.status_code == 400
    assert "must be text of the draft" in bad.text
    assert review_labels.all_labels(store.engine, review_id) == []


def test_exports_are_read_by_bedside_commands(store: Store, tmp_path: Path) -> None:
    from bedside.tasks.citeqa.readers import read_key
    from bedside.tasks.drafting.validation import read_annotations
    from bedside.tasks.instruct.labels import ResponseLabel
    from bedside.tasks.sensemaking.validation import read_labels

    admin = _client(store, "admin")
    ids = {t: create_review(admin, t, ["ann1"], overlap=1) for t in ("match", "rank", "evidence", "agree")}
    one = _client(store, "ann1")
    for t, review_id in ids.items():
        label_all(one, review_id, t)
    drafting = admin.get(f"/reviews/{ids['match']}/export?format=drafting")
    (tmp_path / "m.jsonl").write_text(drafting.text)
    annotations = read_annotations(tmp_path / "m.jsonl")
    assert len(annotations) == 3
    assert annotations[0].gold == "Continue omeprazole every day."
    instruct = admin.get(f"/reviews/{ids['rank']}/export?format=instruct")
    parsed = [ResponseLabel.model_validate(json.loads(line)) for line in instruct.text.splitlines()]
    assert {p.model for p in parsed} == {"system-alpha", "system-beta", "system-gamma"}
    assert all(not p.correct for p in parsed if p.model == "system-gamma")
    key = admin.get(f"/reviews/{ids['evidence']}/export?format=citeqa")
    assert key.headers["content-disposition"].endswith('-key.json"')
    (tmp_path / "key.json").write_text(key.text)
    assert read_key(tmp_path / "key.json")["e0"] == {"1": "essential", "2": "not-relevant"}
    agree = admin.get(f"/reviews/{ids['agree']}/export?format=sensemaking")
    (tmp_path / "agree.jsonl").write_text(agree.text)
    assert len(read_labels(tmp_path / "agree.jsonl")) == 3
    assert admin.get(f"/reviews/{ids['agree']}/export?format=citeqa").status_code == 400
    pq = pytest.importorskip("pyarrow.parquet")
    import io

    table = pq.read_table(io.BytesIO(admin.get(f"/reviews/{ids['agree']}/export?format=parquet").content))
    assert table.num_rows == 3
    assert json.loads(table.column("label")[0].as_py())["agree"] is True


def test_import_labels_collected_elsewhere(store: Store, tmp_path: Path) -> None:
    from bedside.web.security import add_user

    add_user(store.engine, "redcap-1", PASSWORD, "annotator")  # an account for whoever labelled elsewhere
    admin = _client(store, "admin")
    review_id = create_review(admin, "pairwise", ["ann1"], overlap=1)
    lines = [
        json.dumps({"item": f"p{i}", "annotator": "redcap-1", "label": {"preference": 0, "evidence": []}})
        for i in range(3)
    ]
    page = admin.get(f"/reviews/{review_id}")
    response = admin.post(
        f"/reviews/{review_id}/import",
        data={"csrf": csrf_of(page.text)},
        files={"labels": ("l.jsonl", "\n".join(lines).encode())},
        follow_redirects=False,
    )
    assert response.status_code == 303
    result = review_meta.meta_evaluation(store.engine, review_id)
    assert result["labels"] == 3
    assert next(e for e in result["judge"] if "agreement rate" in e.name).value == pytest.approx(1.0)
    bad = admin.post(
        f"/reviews/{review_id}/import",
        data={"csrf": csrf_of(page.text)},
        files={"labels": ("l.jsonl", b'{"item": "nope", "annotator": "x", "label": {}}\n')},
    )
    assert bad.status_code == 400
    assert "no item" in bad.text
    # the CLI: export, then import the same file under another review
    from bedside.cli import app

    runner = CliRunner()
    url = store.url
    out = tmp_path / "labels.jsonl"
    done = runner.invoke(app, ["review", "export", review_id, str(out), "--store", url])
    assert done.exit_code == 0, done.output
    assert (out.stat().st_mode & 0o777) == 0o600
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["annotator"] for r in rows} == {"redcap-1"}
    other = create_review(admin, "pairwise", ["ann2"], overlap=1)
    done = runner.invoke(app, ["review", "import", other, str(out), "--store", url])
    assert done.exit_code == 0, done.output
    assert len(review_labels.all_labels(store.engine, other)) == 3
    done = runner.invoke(app, ["review", "import", "rv-nope", str(out), "--store", url])
    assert done.exit_code == 1
    if __import__("importlib.util").util.find_spec("pyarrow") is not None:
        parquet = tmp_path / "labels.parquet"
        done = runner.invoke(app, ["review", "export", review_id, str(parquet), "--format", "parquet", "--store", url])
        assert done.exit_code == 0, done.output
        assert (parquet.stat().st_mode & 0o777) == 0o600


def test_an_import_from_an_annotator_without_an_account_is_refused(store: Store, tmp_path: Path) -> None:
    """Issue 35: labels from a name nobody holds (a typo, a stranger) were imported and counted."""
    from bedside.cli import app

    admin = _client(store, "admin")
    review_id = create_review(admin, "pairwise", ["ann1"], overlap=1)
    good = {"item": "p0", "annotator": "ann2", "label": {"preference": 0, "evidence": []}}
    ghost = {"item": "p1", "annotator": "anne1", "label": {"preference": 1, "evidence": []}}
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(ghost) + "\n")
    done = CliRunner().invoke(app, ["review", "import", review_id, str(path), "--store", store.url])
    assert done.exit_code == 1
    assert "no account for annotator(s) 'anne1' (line 2)" in done.output
    assert review_labels.all_labels(store.engine, review_id) == []  # nothing imported, not even the good line
    page = admin.get(f"/reviews/{review_id}")
    response = admin.post(
        f"/reviews/{review_id}/import",
        data={"csrf": csrf_of(page.text)},
        files={"labels": ("l.jsonl", path.read_bytes())},
    )
    assert response.status_code == 400
    assert "anne1" in response.text
    assert review_meta.meta_evaluation(store.engine, review_id)["labels"] == 0


def test_an_export_of_a_run_built_review_names_each_outputs_system(store: Store, tmp_path: Path) -> None:
    """Issue 35: the blinding key stays in the store for annotators, but the admin's export unblinds it."""
    from bedside.cli import app

    admin = _client(store, "admin")
    token = csrf_of(admin.get("/reviews/new").text)
    made = {}
    for task_type in ("rank", "agree"):
        response = admin.post(
            "/reviews",
            data={
                "csrf": token,
                "name": task_type,
                "task_type": task_type,
                "annotators": ["ann1"],
                "run": "alpha-111",
                "judge_metric": "judge",
                "per_annotator": "100",
                "overlap": "1",
            },
            follow_redirects=False,
        )
        assert response.status_code == 303, response.text[:600]
        made[task_type] = response.headers["location"].rsplit("/", 1)[1]
    rank_item = next(iter(review_labels.all_items(store.engine, made["rank"])))
    rv_labels = [{"correct": True, "rank": 1, "c1": False, "c2": False, "c3": False}] * 2
    agree_item = next(iter(review_labels.all_items(store.engine, made["agree"])))
    lines = {
        "rank": {"item": rank_item, "annotator": "ann1", "label": {"outputs": rv_labels}},
        "agree": {"item": agree_item, "annotator": "ann1", "label": {"agree": True, "comment": ""}},
    }
    for task_type, review_id in made.items():
        source = tmp_path / f"{task_type}-in.jsonl"
        source.write_text(json.dumps(lines[task_type]) + "\n")
        done = CliRunner().invoke(app, ["review", "import", review_id, str(source), "--store", store.url])
        assert done.exit_code == 0, done.output
        out = tmp_path / f"{task_type}.jsonl"
        done = CliRunner().invoke(app, ["review", "export", review_id, str(out), "--store", store.url])
        assert done.exit_code == 0, done.output
        (row,) = [json.loads(line) for line in out.read_text().splitlines()]
        if task_type == "rank":
            assert row["key"]["systems"] == ["sys-x", "sys-y"]  # the label's outputs, in order
            assert row["key"]["models"] == ["model-x", "model-y"]
        else:
            assert row["key"]["system"] in ("sys-x", "sys-y")
            assert row["key"]["model"] == row["key"]["system"].replace("sys", "model")
        # what the export wrote is what import reads: the round trip keeps the label
        again = CliRunner().invoke(app, ["review", "import", review_id, str(out), "--store", store.url])
        assert again.exit_code == 0, again.output
        assert [lab["value"] for lab in review_labels.all_labels(store.engine, review_id)] == [
            lines[task_type]["label"]
        ]


def test_an_older_review_key_is_unblinded_from_its_cells() -> None:
    key = review_export.unblinded({"cells": ["d/sys-x/openai-compatible/m@http://h/v1", "d/sys-y/m"]})
    assert key["systems"] == ["sys-x", "sys-y"]
    assert review_export.unblinded({"cell": "d/sys-x/m"})["system"] == "sys-x"


def test_reviews_from_a_run(store: Store) -> None:
    admin = _client(store, "admin")
    token = csrf_of(admin.get("/reviews/new").text)
    made = {}
    for task_type in ("rank", "pairwise", "agree"):
        response = admin.post(
            "/reviews",
            data={
                "csrf": token,
                "name": task_type,
                "task_type": task_type,
                "annotators": ["ann1"],
                "run": "alpha-111",
                "judge_metric": "judge",
                "per_annotator": "100",
                "overlap": "1",
                "blind": "on",
            },
            follow_redirects=False,
        )
        assert response.status_code == 303, response.text[:600]
        made[task_type] = response.headers["location"].rsplit("/", 1)[1]
    items = review_labels.all_items(store.engine, made["rank"])
    assert len(items) == 11  # 12 samples; s000000 is an error in one cell, so it has one output only
    one = _client(store, "ann1")
    for task_type, review_id in made.items():
        html = one.get(f"/reviews/{review_id}/items/0").text
        # the stored outputs of this fixture say "from sys-x" in their text; identities must not appear elsewhere
        html = re.sub(r'<div class="text clip">.*?</div>', "", html, flags=re.DOTALL)  # (with any diff marks)
        for secret in ("sys-x", "sys-y", "model-x", "model-y", "d|sys"):
            assert secret not in html, (task_type, secret)
    agree_item = next(iter(review_labels.all_items(store.engine, made["agree"]).values()))
    assert agree_item["payload"]["reasoning"] == "clear"
    refused = admin.post(
        "/reviews",
        data={"csrf": token, "name": "e", "task_type": "evidence", "annotators": ["ann1"], "run": "alpha-111"},
    )
    assert refused.status_code == 400  # a drafting run's hook builds match and gold items, not evidence
    assert "upload a JSONL" in refused.text


def test_review_creation_errors(store: Store) -> None:
    admin = _client(store, "admin")
    token = csrf_of(admin.get("/reviews/new").text)

    def post(task_type: str, body: bytes, **extra: Any) -> Any:
        return admin.post(
            "/reviews",
            data={"csrf": token, "name": "x", "task_type": task_type, "annotators": ["ann1"], **extra},
            files={"items": ("i.jsonl", body)},
        )

    assert "needs sentence, draft" in post("match", b'{"id": "1"}\n').text
    assert "line 1: not valid JSON" in post("match", b"{oops\n").text
    assert "nested too deeply" in post("match", b"[" * 5000 + b"\n").text  # read as every bedside reader reads JSON
    assert "repeat" in post("agree", b"".join([json.dumps(REVIEW_ITEMS["agree"][0]).encode() + b"\n"] * 2)).text
    assert "overlap must be" in post("agree", json.dumps(REVIEW_ITEMS["agree"][0]).encode(), overlap="3").text
    assert (
        "no active account"
        in admin.post(
            "/reviews",
            data={"csrf": token, "name": "x", "task_type": "agree", "annotators": ["ghost"]},
            files={"items": ("i.jsonl", json.dumps(REVIEW_ITEMS["agree"][0]).encode())},
        ).text
    )


def test_audit_records_who_labelled_what(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "agree", ["ann1"], overlap=1)
    label_all(_client(store, "ann1"), review_id, "agree")
    page = admin.get("/audit").text
    assert "label-saved" in page
    assert f"{review_id}/a0" in page
    assert "Sensemaker reply" not in page  # ids, never item text


def test_users_cli(store: Store) -> None:
    from bedside.cli import app

    runner = CliRunner()
    done = runner.invoke(
        app,
        ["users", "add", "clin1", "--role", "annotator", "--password-stdin", "--store", store.url],
        input=PASSWORD + "\n",
    )
    assert done.exit_code == 0, done.output
    done = runner.invoke(
        app, ["users", "add", "clin1", "--password-stdin", "--store", store.url], input=PASSWORD + "\n"
    )
    assert done.exit_code == 1
    listed = runner.invoke(app, ["users", "list", "--json", "--store", store.url])
    assert {"name": "clin1", "role": "annotator", "disabled": False} in json.loads(listed.output)
    assert runner.invoke(app, ["users", "disable", "clin1", "--store", store.url]).exit_code == 0
    listed = runner.invoke(app, ["users", "list", "--json", "--store", store.url])
    assert {"name": "clin1", "role": "annotator", "disabled": True} in json.loads(listed.output)
    assert runner.invoke(app, ["users", "disable", "ghost", "--store", store.url]).exit_code == 1


def test_meta_evaluation_page_is_cached_until_labels_change(store: Store) -> None:
    admin = _client(store, "admin")
    review_id = create_review(admin, "agree", ["ann1", "ann2"], overlap=2)
    one = _client(store, "ann1")
    first = admin.get(f"/reviews/{review_id}/meta").text
    assert "0 labels" in first
    label_all(one, review_id, "agree")
    assert "3 labels on 3 items" in admin.get(f"/reviews/{review_id}/meta").text


def test_an_import_that_would_be_silent_is_refused_naming_the_file_and_line(store: Store, tmp_path: Path) -> None:
    """The second bad-input drill (issue 48): an empty file said "imported 0 labels", a repeated (item, annotator)
    counted twice and kept once, ranks of -5, 99, 1.5 or true were stored, and a closed review took labels."""
    from bedside.cli import app

    admin = _client(store, "admin")
    runner = CliRunner()
    pairwise = create_review(admin, "pairwise", ["ann1"], overlap=1)
    path = tmp_path / "labels.jsonl"

    def attempt(review_id: str, text: str) -> Any:
        path.write_text(text, encoding="utf-8")
        return runner.invoke(app, ["review", "import", review_id, str(path), "--store", store.url])

    empty = attempt(pairwise, "\n\n")
    assert empty.exit_code == 1
    assert f"{path}: the file holds no labels: nothing imported" in empty.output
    label = {"item": "p0", "annotator": "ann2", "label": {"preference": 0, "evidence": []}}
    twice = attempt(pairwise, json.dumps(label) + "\n" + json.dumps(label) + "\n")
    assert twice.exit_code == 1
    assert "line 2: a second label by 'ann2' for item 'p0' (the first is on line 1)" in twice.output
    assert review_labels.all_labels(store.engine, pairwise) == []
    missing = runner.invoke(app, ["review", "import", pairwise, str(tmp_path / "nope.jsonl"), "--store", store.url])
    assert missing.exit_code == 1
    assert f"{tmp_path / 'nope.jsonl'}: cannot read it" in missing.output
    rank = create_review(admin, "rank", ["ann1"], overlap=1)
    for bad in (-5, 99, 1.5, True):
        outputs = [{"rank": bad, "correct": True}, {"rank": 1, "correct": False}, {"rank": 2, "correct": False}]
        done = attempt(rank, json.dumps({"item": "r0", "annotator": "ann2", "label": {"outputs": outputs}}) + "\n")
        assert done.exit_code == 1, bad
        assert "a rank is a whole number from 1 to 3" in done.output, bad
    assert attempt(pairwise, json.dumps(label) + "\n").exit_code == 0
    closed = runner.invoke(app, ["review", "close", pairwise, "--store", store.url])
    assert closed.exit_code == 0, closed.output
    after = attempt(pairwise, json.dumps({**label, "annotator": "ann1"}) + "\n")
    assert after.exit_code == 1
    assert f"review {pairwise} is closed" in after.output


@pytest.mark.parametrize(
    ("task_type", "item", "said"),
    [
        (
            "rank",
            {"id": "r", "context": "c", "outputs": ["a", "b"], "kye": {}},
            "unknown field 'kye' (did you mean 'key'?)",
        ),
        ("rank", {"id": "r", "contxt": "c", "context": "c", "outputs": ["a", "b"]}, "did you mean 'context'?"),
        ("rank", {"id": "r", "context": "c", "outputs": ["a", "  "]}, "outputs[1] is blank"),
        (
            "agree",
            {"id": "a", "context": "c", "output": "o", "metric": "m", "score": "high", "reasoning": ""},
            "score must be a number (or null), not 'high'",
        ),
        (
            "evidence",
            {"id": "e", "question": "q", "sentences": [{"id": "1", "text": "x"}, {"id": "1", "text": "y"}]},
            "sentences[1] repeats the id '1'",
        ),
        (
            "evidence",
            {"id": "e", "question": "q", "sentences": [{"id": "1", "text": "x"}], "judge": {"1": "essental"}},
            "judge: {'1': 'essental'} not one of essential, supplementary, not-relevant",
        ),
    ],
)
def test_an_item_a_review_would_take_silently_is_refused_naming_its_line(
    task_type: str, item: dict[str, Any], said: str
) -> None:
    """The second bad-input drill (issue 48): a misspelt field was dropped, a blank output ranked, a score "high"
    stored, two sentences shared an id, and a judge's label "essental" counted as a disagreement."""
    with pytest.raises(rv.ReviewError, match="line 1: ") as caught:
        rv.items_from_jsonl(task_type, json.dumps(item) + "\n")
    assert said in str(caught.value)


def test_an_agree_review_from_a_run_shows_the_judges_reasoning_and_names_an_unknown_metric(store: Store) -> None:
    """A rubric judgement keeps its reasoning per criterion under ``justifications``, and a task's metric may
    read another judgement's criterion (sensemaking's ``diagnosis_hard`` is ``hard``'s ``correct``): the item
    page said "(no reasoning given)" for both."""
    judgements = {
        "hard": {"aggregate": 1.0, "scores": {"correct": 1.0}, "justifications": {"correct": "It names the label."}},
        "flow": {"scores": {"flow_correctness": 3.0}, "justifications": {"flow_correctness": "Each stage in turn."}},
        "plain": {"reasoning": "Short and right."},
    }
    from bedside.tasks.sensemaking.task import SensemakingTask

    scorers = SensemakingTask.judge_scorers
    assert rv._reasoning(judgements, "diagnosis_hard", scorers) == "It names the label."
    assert rv._reasoning(judgements, "flow", scorers) == "Each stage in turn."
    assert rv._reasoning(judgements, "plain", {}) == "Short and right."
    assert rv._reasoning(judgements, "nothing", {}) == ""
    spec = rv.ReviewSpec("a", "agree", ["ann1"], per_annotator=10, judge_metric="nosuch")
    with pytest.raises(
        rv.ReviewError, match=r"no answered sample of run alpha-111 has the metric 'nosuch'; its metrics:"
    ):
        rv.items_from_run(store, "alpha-111", spec)
