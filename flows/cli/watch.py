"""`gpuprices watch RULES.toml`: evaluate price rules now (flows/ops/watching.py) and send their
news through the alert channels; the same rules run after every load when $GPUPRICES_WATCH (or
<data_dir>/watch.toml) names them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpuprices.flows.cli.options import DataDir
from gpuprices.flows.cli.user_file import read_or_exit
from gpuprices.flows.config import settings_from


def watch(
    rules: Annotated[Path, typer.Argument(help="The rules file ([[rule]] tables; "
                                                "docs/watch.example.toml)")],
    check: Annotated[bool, typer.Option(
        "--check", help="Only check the rules file and say what each rule matches now; "
                        "send nothing, record nothing")] = False,
    data_dir: DataDir = None,
) -> None:
    """Evaluate price watch rules against the warehouse and send each rule's new matches once
    (offer, price, snapshot date, the report's link) through $GPUPRICES_NOTIFY /
    $GPUPRICES_WEBHOOK_URL; what was sent is kept in <data_dir>/watch_state.json, so an
    unchanged night sends nothing. Exit 1 when a message could not be delivered, 2 on a bad
    rules file or no warehouse."""
    from gpuprices.flows.ops import notify, watching
    from gpuprices.flows.ops.warehouse_state import warehouse_problem

    parsed = read_or_exit(watching.load_rules, rules, watching.WatchError)
    settings = settings_from(data_dir).ensure()
    problem = warehouse_problem(settings.db_path)
    if problem:
        typer.echo(problem, err=True)
        raise typer.Exit(2)
    if not check and not notify.configured():
        typer.echo(f"note: neither {notify.NOTIFY_ENV} nor {notify.WEBHOOK_ENV} is set: "
                   "nothing is sent, and nothing recorded (--check shows the matches)", err=True)
    send = not check and notify.configured()
    outcomes = watching.evaluate(settings, parsed, send=send)
    for o in outcomes:
        typer.echo(watching.describe(o))
        for m in o.new:
            typer.echo(f"  {m.line}")
    if any(o.problem for o in outcomes):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(watch)
