"""`bedside serve` (the run viewer and review app), `bedside users ...` and `bedside review ...` (extra `web`)."""

from __future__ import annotations

import getpass
import json
import logging
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from bedside.cli.app import DEFAULT_STORE, JsonOption, StoreOption, app, read_store
from bedside.console import data_table, err, out, show_table


def _need_web() -> None:
    try:
        import argon2  # noqa: F401
        import fastapi  # noqa: F401
    except ImportError:
        err.print("[red]error:[/] the web app needs the `web` extra: pip install 'bedside[web]'")
        raise typer.Exit(1) from None


@app.command()
def serve(
    store: StoreOption = DEFAULT_STORE,
    host: Annotated[str, typer.Option(help="Address to bind; only this machine by default.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(help="Port; 0 takes a free one (the line 'bedside web on http://HOST:PORT/' names it).")
    ] = 8400,
    idle_minutes: Annotated[float, typer.Option(help="Sessions end after this long unused.")] = 30.0,
    max_upload_mb: Annotated[float, typer.Option(help="Largest accepted request body (uploads).")] = 10.0,
    trusted_proxy: Annotated[
        list[str] | None,
        typer.Option(
            "--trusted-proxy",
            help="Address of a reverse proxy in front (repeatable): only its X-Forwarded-For names the client "
            "for login throttling and audit; from anyone else the header is ignored.",
        ),
    ] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="A host name clients use to reach the app (repeatable), beside the bound address and the "
            "loopback names; requests naming any other Host are refused (DNS rebinding).",
        ),
    ] = None,
) -> None:
    """Serve the run viewer and the review app over the store (log in with an account from `bedside users add`)."""
    _need_web()
    import uvicorn

    from bedside.llm.secrets import RedactingFilter
    from bedside.runs.store import Store
    from bedside.web.app import WebSettings, create_app
    from bedside.web.db import create_web_tables
    from bedside.web.security import list_users

    opened = Store(store)
    create_web_tables(opened.engine)  # a store a run made has none yet: the app would make them, too late to ask
    if not list_users(opened.engine):
        err.print("[yellow]no accounts yet:[/] add one with `bedside users add NAME --role admin`")
    if host not in ("127.0.0.1", "localhost", "::1"):
        err.print(f"[yellow]warning:[/] serving on {host}: reachable from other machines; put TLS in front of it")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    handler.addFilter(RedactingFilter())
    web_log = logging.getLogger("bedside.web")
    web_log.addHandler(handler)
    web_log.setLevel(logging.INFO)
    web_log.propagate = False
    settings = WebSettings(
        idle_s=idle_minutes * 60,
        max_upload_bytes=int(max_upload_mb * 1024 * 1024),
        trusted_proxies=frozenset(trusted_proxy or ()),
        allowed_hosts=allowed_hosts(host, allowed_host or []),
    )
    if host in WILDCARD_HOSTS and not allowed_host:
        err.print(
            f"[yellow]warning:[/] bound to {host}: only the loopback names are allowed as Host; give "
            "--allowed-host NAME for each name or address clients use"
        )
    from bedside.web.listen import listen

    try:
        listener = listen(host, port)
    except OSError as exc:
        err.print(f"[red]error:[/] cannot listen on {escape(host)}:{port}: {exc.strerror or exc}")
        raise typer.Exit(1) from None
    bound = int(listener.getsockname()[1])
    shown = f"[{host}]" if ":" in host else host
    err.print(escape(f"bedside web on http://{shown}:{bound}/ (store {opened.url.split('@')[-1]})"), soft_wrap=True)
    # uvicorn's own access log writes paths with their query strings: off; bedside.web logs route templates.
    # proxy_headers off: uvicorn would otherwise believe X-Forwarded-For from any loopback client; the app reads
    # it itself, from --trusted-proxy addresses only.
    config = uvicorn.Config(
        create_app(opened, settings),
        host=host,
        port=bound,
        access_log=False,
        log_level="warning",
        proxy_headers=False,
    )
    try:
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        listener.close()


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
WILDCARD_HOSTS = ("0.0.0.0", "::", "[::]")


def allowed_hosts(host: str, extra: list[str]) -> tuple[str, ...]:
    """The Host header values ``bedside serve`` answers: the loopback names, the bound address (unless a
    wildcard) and ``--allowed-host`` names."""
    bound = () if host in WILDCARD_HOSTS else (host, f"[{host}]" if ":" in host else host)
    return tuple(dict.fromkeys((*LOOPBACK_HOSTS, *bound, *extra)))


users_app = typer.Typer(help="Accounts of the web app (roles: admin, annotator, adjudicator).", no_args_is_help=True)
app.add_typer(users_app, name="users")


@users_app.command("add")
def users_add(
    name: Annotated[str, typer.Argument(help="User name (letters, digits, - _ .).")],
    role: Annotated[str, typer.Option(help="admin, annotator or adjudicator.")] = "annotator",
    store: StoreOption = DEFAULT_STORE,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from standard input, not a prompt.")
    ] = False,
) -> None:
    """Add an account; the password is asked for (or read from stdin), never taken as an argument."""
    _need_web()
    from bedside.runs.store import Store
    from bedside.web.db import audit, create_web_tables
    from bedside.web.security import AccountError, add_user

    if password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = getpass.getpass("password: ")
        if getpass.getpass("again: ") != password:
            err.print("[red]error:[/] the passwords differ")
            raise typer.Exit(1)
    opened = Store(store)
    create_web_tables(opened.engine)
    try:
        add_user(opened.engine, name, password, role)
    except AccountError as exc:
        err.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from None
    audit(opened.engine, os.environ.get("USER", "cli"), "user-added", name, role=role)
    out.print(f"added {name} ({role})")


@users_app.command("list")
def users_list(store: StoreOption = DEFAULT_STORE, as_json: JsonOption = False) -> None:
    """The accounts, their roles and whether they are disabled."""
    _need_web()
    from rich.table import Table

    from bedside.web.db import create_web_tables
    from bedside.web.security import list_users

    opened = read_store(store)
    create_web_tables(opened.engine)
    users = list_users(opened.engine)
    if as_json:
        typer.echo(json.dumps([{k: u[k] for k in ("name", "role", "disabled")} for u in users], indent=2))
        return
    table = Table(title="Accounts")
    for column in ("name", "role", "disabled"):
        table.add_column(column)
    for user in users:
        table.add_row(user["name"], user["role"], "yes" if user["disabled"] else "no")
    show_table(table)


@users_app.command("disable")
def users_disable(name: str, store: StoreOption = DEFAULT_STORE) -> None:
    """Disable an account and end its sessions (its labels and audit entries stay)."""
    _need_web()
    from bedside.runs.store import Store
    from bedside.web.db import audit, create_web_tables
    from bedside.web.security import AccountError, disable_user

    opened = Store(store)
    create_web_tables(opened.engine)
    try:
        disable_user(opened.engine, name)
    except AccountError as exc:
        err.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from None
    audit(opened.engine, os.environ.get("USER", "cli"), "user-disabled", name)
    out.print(f"disabled {name}")


def _read_password(password_stdin: bool) -> str:
    if password_stdin:
        return sys.stdin.readline().rstrip("\n")
    password = getpass.getpass("new password: ")
    if getpass.getpass("again: ") != password:
        err.print("[red]error:[/] the passwords differ")
        raise typer.Exit(1)
    return password


def _account_change(name: str, store: str, action: str, change: Any) -> None:
    """Run one account change on the store's web tables, audited; an AccountError is a clear exit 1."""
    from bedside.runs.store import Store
    from bedside.web.db import audit, create_web_tables
    from bedside.web.security import AccountError

    opened = Store(store)
    create_web_tables(opened.engine)
    try:
        change(opened.engine)
    except AccountError as exc:
        err.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from None
    audit(opened.engine, os.environ.get("USER", "cli"), action, name)


@users_app.command("enable")
def users_enable(name: str, store: StoreOption = DEFAULT_STORE) -> None:
    """Let a disabled account log in again."""
    _need_web()
    from bedside.web.security import enable_user

    _account_change(name, store, "user-enabled", lambda engine: enable_user(engine, name))
    out.print(f"enabled {name}")


@users_app.command("reset")
def users_reset(
    name: str,
    store: StoreOption = DEFAULT_STORE,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the new password from standard input, not a prompt.")
    ] = False,
) -> None:
    """Set a new password for an account and end its sessions."""
    _need_web()
    from bedside.web.security import reset_password

    password = _read_password(password_stdin)
    _account_change(name, store, "user-password-reset", lambda engine: reset_password(engine, name, password))
    out.print(f"new password set for {name}; its sessions are ended")


@users_app.command("delete")
def users_delete(name: str, store: StoreOption = DEFAULT_STORE) -> None:
    """Delete an account with no labels or assignments (otherwise disable it: its labels stay attributed)."""
    _need_web()
    from bedside.web.security import delete_user

    _account_change(name, store, "user-deleted", lambda engine: delete_user(engine, name))
    out.print(f"deleted {name}")


review_app = typer.Typer(
    help="Reviews of the web app: list them, change their annotators, close labelling, import and export labels."
)
app.add_typer(review_app, name="review")


@review_app.command("list")
def review_list(store: StoreOption = DEFAULT_STORE, as_json: JsonOption = False) -> None:
    """Every review: id, name, type, source, items (and how many no annotator was assigned), progress."""
    _need_web()
    from bedside.web.db import create_web_tables
    from bedside.web.review import item_count, reviews_for, unassigned_items

    opened = read_store(store)
    create_web_tables(opened.engine)
    listed = []
    for found in reviews_for(opened.engine, None):
        progress = found["progress"]
        listed.append(
            {
                "id": found["id"],
                "name": found["name"],
                "type": found["task_type"],
                "source": found["source"],
                "items": item_count(opened.engine, found["id"]),
                "unassigned": len(unassigned_items(opened.engine, found["id"])),
                "labelling": "closed" if found["closed"] else "open",
                "annotators": len(progress),
                "labelled": sum(p.labelled for p in progress),
                "assigned": sum(p.assigned for p in progress),
                "submitted": sum(p.submitted for p in progress),
            }
        )
    opened.close()
    if as_json:
        typer.echo(json.dumps(listed, indent=2))
        return
    columns = [
        *("id", "name", "type", "source", "labelling", "items", "unassigned"),
        *("annotators", "labelled", "assigned", "submitted"),
    ]
    show_table(data_table("Reviews", columns, [[str(r[c]) for c in columns] for r in listed]))
    for r in listed:
        if r["unassigned"]:
            err.print(
                f"[yellow]{escape(r['id'])}[/]: {r['unassigned']} of {r['items']} item(s) are assigned to nobody "
                "(capacity: items per annotator × annotators ÷ overlap)",
                highlight=False,
            )


@review_app.command("create")
def review_create(
    name: Annotated[str, typer.Argument(help="The review's name (shown to annotators).")],
    task_type: Annotated[
        str, typer.Option("--type", help="rank, pairwise, agree, gold, match or evidence (docs/web.md).")
    ],
    annotators: Annotated[
        list[str], typer.Option("--annotator", "-a", help="An annotator's account (repeatable; bedside users add).")
    ],
    run: Annotated[str | None, typer.Option("--run", help="Build the items from this run's outputs.")] = None,
    items: Annotated[
        Path | None, typer.Option("--items", help="Or a JSONL of items (one object a line; docs/web.md).")
    ] = None,
    cells: Annotated[
        list[str] | None,
        typer.Option("--cell", help="From a run: a cell to rank or pair (repeatable; pairwise takes two)."),
    ] = None,
    judge_metric: Annotated[
        str, typer.Option("--judge-metric", help="From a run: the judge's score to agree with, or to rank by.")
    ] = "",
    per_annotator: Annotated[int, typer.Option("--per-annotator", min=1, help="Items each annotator gets.")] = 50,
    overlap: Annotated[int, typer.Option("--overlap", min=1, help="Annotators per item (for agreement).")] = 1,
    instructions: Annotated[str, typer.Option("--instructions", help="Shown above every item.")] = "",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the blinding and the item order.")] = 0,
    store: StoreOption = DEFAULT_STORE,
    as_json: JsonOption = False,
) -> None:
    """Create a review from a run or a JSONL of items, as the web form does: items assigned, outputs blinded and
    shuffled per annotator. Prints the review's id."""
    _need_web()
    from bedside.inputs import read_text
    from bedside.web.review import ReviewSpec, item_count, new_review, unassigned_items

    if (run is None) == (items is None):
        err.print("[red]error:[/] give one of --run RUN or --items FILE.jsonl")
        raise typer.Exit(1)
    try:
        text = read_text(items) if items is not None else ""
    except (OSError, ValueError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(1) from None
    spec = ReviewSpec(
        name=name,
        task_type=task_type,
        annotators=annotators,
        per_annotator=per_annotator,
        overlap=overlap,
        seed=seed,
        instructions=instructions,
        judge_metric=judge_metric,
        cells=list(cells or []),
    )

    from bedside.runs.store import Store
    from bedside.web.db import create_web_tables
    from bedside.web.review import ReviewError

    opened = Store(store)
    create_web_tables(opened.engine)
    try:
        run_id = opened.run(run)["id"] if run else ""
        review_id = new_review(opened, spec, run_id=run_id, items_text=text, created_by=os.environ.get("USER", "cli"))
        made = {
            "id": review_id,
            "items": item_count(opened.engine, review_id),
            "unassigned": len(unassigned_items(opened.engine, review_id)),
        }
    except (ReviewError, LookupError) as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(1) from None
    finally:
        opened.close()
    if as_json:
        typer.echo(json.dumps(made))
        return
    out.print(f"review {made['id']}: {made['items']} item(s)", highlight=False)
    if made["unassigned"]:
        err.print(
            f"[yellow]{made['unassigned']} item(s) are assigned to nobody[/] (capacity: items per annotator × "
            "annotators ÷ overlap): `bedside review add-annotators` gives them out",
            highlight=False,
        )


def _review_change(store: str, change: Any) -> Any:
    """Run one review_edit change on the store (audited there as the OS user); a ReviewError is a clear exit 1."""
    from bedside.runs.store import Store
    from bedside.web.db import create_web_tables
    from bedside.web.review import ReviewError

    opened = Store(store)
    create_web_tables(opened.engine)
    try:
        return change(opened.engine, os.environ.get("USER", "cli"))
    except ReviewError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(1) from None
    finally:
        opened.close()


@review_app.command("add-annotators")
def review_add_annotators(
    review: Annotated[str, typer.Argument(help="Review id.")],
    names: Annotated[list[str], typer.Argument(help="Accounts to add (active, not yet on the review).")],
    store: StoreOption = DEFAULT_STORE,
) -> None:
    """Add annotators; they get the items the review is short of (assigned to nobody or to fewer than the
    overlap), as the web page's form does."""
    _need_web()
    from bedside.web.review_edit import add_annotators

    plan = _review_change(store, lambda engine, by: add_annotators(engine, review, names, by=by))
    for name, items in plan.items():
        out.print(f"{escape(name)}: {len(items)} item(s)", highlight=False)


@review_app.command("move")
def review_move(
    review: Annotated[str, typer.Argument(help="Review id.")],
    source: Annotated[str, typer.Argument(help="The annotator whose unlabelled items move.")],
    to: Annotated[
        str | None, typer.Option("--to", help="The account that takes them; without it they are released.")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--items", min=1, help="Move at most this many (their last ones).")
    ] = None,
    store: StoreOption = DEFAULT_STORE,
) -> None:
    """Move an annotator's unlabelled items to another account, or release them (labelled items and every label
    stay theirs)."""
    _need_web()
    from bedside.web.review_edit import move_items

    done = _review_change(store, lambda engine, by: move_items(engine, review, source, to, by=by, limit=limit))
    where = f"to {to}" if to else "released"
    out.print(f"{len(done.moved)} item(s) of {escape(source)} {escape(where)}", highlight=False)
    if done.kept:
        out.print(f"{len(done.kept)} stay with {escape(source)}: {escape(str(to))} already has them", highlight=False)


@review_app.command("close")
def review_close(review: Annotated[str, typer.Argument(help="Review id.")], store: StoreOption = DEFAULT_STORE) -> None:
    """Close labelling: annotators can no longer give or change labels (those given are kept)."""
    _need_web()
    from bedside.web.review_edit import close_labelling

    _review_change(store, lambda engine, by: close_labelling(engine, review, by=by))
    out.print(f"closed labelling of {review}")


@review_app.command("open")
def review_open(review: Annotated[str, typer.Argument(help="Review id.")], store: StoreOption = DEFAULT_STORE) -> None:
    """Reopen labelling of a closed review."""
    _need_web()
    from bedside.web.review_edit import open_labelling

    _review_change(store, lambda engine, by: open_labelling(engine, review, by=by))
    out.print(f"reopened labelling of {review}")


@review_app.command("import")
def review_import(
    review: Annotated[str, typer.Argument(help="Review id.")],
    labels: Annotated[Path, typer.Argument(help="JSONL: {item, annotator, label} per line (the export's format).")],
    store: StoreOption = DEFAULT_STORE,
) -> None:
    """Add labels collected elsewhere (REDCap, a spreadsheet, ...) to a review, as submitted labels."""
    _need_web()
    from bedside.runs.store import Store
    from bedside.web.db import create_web_tables
    from bedside.web.review import ReviewError
    from bedside.web.review_export import import_labels

    opened = Store(store)
    create_web_tables(opened.engine)
    try:
        count = import_labels(opened.engine, review, labels.read_text(encoding="utf-8"), user="cli")
    except OSError as exc:
        err.print(f"[red]error:[/] {labels}: cannot read it: {exc.strerror or exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    except ReviewError as exc:
        err.print(f"[red]error:[/] {labels}: {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    out.print(f"imported {count} labels into {review}")


@review_app.command("export")
def review_export(
    review: Annotated[str, typer.Argument(help="Review id.")],
    output: Annotated[Path, typer.Argument(help="File to write (0600).")],
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="labels (generic JSONL, what `review import` reads), drafting (match annotations), instruct "
            "(response labels), citeqa (relevance key JSON), sensemaking (agree labels), adjudicated (one line "
            "per item: the adjudicated or shared label and the originals), parquet.",
        ),
    ] = "labels",
    store: StoreOption = DEFAULT_STORE,
) -> None:
    """Write a review's labels in the format a bedside command reads."""
    _need_web()
    from bedside.private_files import write_private_text
    from bedside.web.db import create_web_tables
    from bedside.web.review import ReviewError
    from bedside.web.review_export import export_labels, export_parquet

    opened = read_store(store)
    create_web_tables(opened.engine)
    try:
        if fmt == "parquet":
            export_parquet(opened.engine, review, output)
        elif fmt == "adjudicated":
            from bedside.web.adjudication import export_adjudicated

            write_private_text(output, export_adjudicated(opened.engine, review))
        else:
            text, _ = export_labels(opened.engine, review, fmt)
            write_private_text(output, text)
    except ReviewError as exc:
        err.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from None
    out.print(f"wrote {output}")


@review_app.command("meta")
def review_meta(
    review: Annotated[str, typer.Argument(help="Review id.")],
    store: StoreOption = DEFAULT_STORE,
    as_json: JsonOption = False,
) -> None:
    """A review's meta-evaluation (agreement between annotators and with the judge, with bootstrap CIs): the same
    bedside.stats computation as the web page."""
    _need_web()
    import dataclasses

    from bedside.runs.store import Store
    from bedside.web.db import create_web_tables
    from bedside.web.review import ReviewError
    from bedside.web.review_meta import meta_evaluation

    opened = Store(store)
    create_web_tables(opened.engine)
    try:
        meta = meta_evaluation(opened.engine, review)
    except ReviewError as exc:
        err.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from None
    rows = [{"group": group, **dataclasses.asdict(e)} for group in ("inter", "judge") for e in meta[group]]
    if as_json:
        typer.echo(json.dumps({"labels": meta["labels"], "statistics": rows, "safety": meta["safety"]}, indent=2))
        return
    out.print(f"{meta['labels']} labels on {meta['items_labelled']} items from {len(meta['annotators'])} annotators")

    def shown(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    from rich.table import Table

    table = Table("between", "statistic", "value", "95% CI", "n")
    for r in rows:
        table.add_row(
            "annotators" if r["group"] == "inter" else "judge",
            r["name"],
            shown(r["value"]),
            f"[{shown(r['low'])}, {shown(r['high'])}]" if r["low"] is not None else "–",
            str(r["n"]),
        )
    show_table(table)
