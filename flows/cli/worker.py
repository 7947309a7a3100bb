"""`gpuprices worker`: a Prefect worker of the team mode on this machine (flows/team/deploy.py).

It creates the work pool when missing, the global concurrency limits, registers the crawl and
load deployments, then runs the worker in this process (not a `prefect worker start` child: one
process to supervise, whose SIGTERM and Ctrl-C stop the worker cleanly, exit 0). Flow runs
still run in their own child processes, so a crawl that crashes never takes the worker down.
"""

from __future__ import annotations

import contextlib
import os
from typing import Annotated

import typer
from rich.console import Console

from gpuprices.flows.cli.options import ArchiveDir, DataDir, providers_or_all
from gpuprices.flows.config import prefect_env, settings_from
from gpuprices.flows.ops.service import WORKER_GRACE_S, sigterm_as_interrupt
from gpuprices.flows.schedules import LOAD_CRON, NIGHTLY_CRON

console = Console(width=None if os.isatty(1) else 160)
err = Console(stderr=True, soft_wrap=True)  # messages stay whole lines (a path never splits)

NO_SERVER = ("a worker needs a Prefect server that every machine reaches: set PREFECT_API_URL "
             "(e.g. http://prefect.internal:4200/api; start one with `prefect server start "
             "--host 0.0.0.0`), see docs/deploy.md")


def worker(
    pool: Annotated[str, typer.Option("--pool", help="Work pool name (created if missing).")],
    pool_type: Annotated[str, typer.Option(
        "--type", help="Work pool type: process, or docker / kubernetes with their Prefect "
                       "worker package installed.")] = "process",
    name: Annotated[str | None, typer.Option(
        help="Worker name. Default: Prefect's (type and a random suffix).")] = None,
    limit: Annotated[int | None, typer.Option(
        help="Flow runs this worker runs at once (crawls spread over workers when it is "
             "small). Default: no limit.")] = None,
    load: Annotated[bool, typer.Option(
        "--load/--no-load", help="Also run the load (the warehouse's only writer): on exactly "
                                 "one worker, the machine whose data folder keeps the "
                                 "warehouse.")] = False,
    image: Annotated[str | None, typer.Option(
        envvar="GPUPRICES_IMAGE", help="Image of the deployments on docker / kubernetes pools.")]
    = None,
    grace: Annotated[float, typer.Option(
        help="Seconds a stopped worker lets its running flow runs finish before it stops them "
             "(marked Crashed).")] = WORKER_GRACE_S,
    crawl_cron: Annotated[str, typer.Option(help="Cron (UTC) of the crawls.")] = NIGHTLY_CRON,
    load_cron: Annotated[str, typer.Option(help="Cron (UTC) of the load.")] = LOAD_CRON,
    register_deployments: Annotated[bool, typer.Option(
        "--register/--no-register",
        help="Register the deployments and limits before starting.")] = True,
    data_dir: DataDir = None,
    archive: ArchiveDir = None,
) -> None:
    """Run a Prefect worker that crawls providers and loads the lake on this machine, for the
    Prefect server at PREFECT_API_URL. Stops cleanly on SIGTERM or Ctrl-C."""
    if not os.environ.get("PREFECT_API_URL"):
        err.print(NO_SERVER, highlight=False, markup=False)
        raise typer.Exit(2)
    settings = settings_from(data_dir, archive).ensure()
    # The flow runs (child processes) inherit where this machine keeps its data.
    os.environ["GPUPRICES_HOME"] = str(settings.data_dir)
    os.environ["GPUPRICES_ARCHIVE"] = str(settings.archive_root)
    for key, value in prefect_env(settings).items():
        os.environ.setdefault(key, value)
    # Prefect reads its settings when first imported: imported only now.
    from gpuprices.flows.team import deploy as team_deploy

    providers = providers_or_all(None)
    with sigterm_as_interrupt(), contextlib.suppress(KeyboardInterrupt):
        deployments = (team_deploy.build_deployments(providers, pool, crawl_cron, load_cron,
                                                     image) if register_deployments else None)
        try:
            created, applied = team_deploy.set_up(pool, pool_type, providers, deployments)
        except team_deploy.SetupError as exc:
            err.print(str(exc), highlight=False, markup=False)
            raise typer.Exit(2) from None
        console.print(f"work pool {pool!r} ({pool_type}){' created' if created else ''} on "
                      f"{os.environ['PREFECT_API_URL']}", highlight=False)
        if deployments is not None:
            names = ", ".join(f"{d.flow_name}/{d.name}" for d in applied) or "none"
            console.print(f"deployments registered ({len(applied)} of {len(deployments)}, the "
                          f"others already current): {names}", highlight=False)
        console.print(f"taking crawls{' and the load' if load else ''} "
                      f"(data folder {settings.data_dir})", highlight=False)
        team_deploy.run_worker(pool, pool_type, name, limit, load, grace,
                               printer=lambda m: console.print(m, highlight=False))
    console.print("worker stopped", highlight=False)


def register(app: typer.Typer) -> None:
    """Add `worker` to the main gpuprices app."""
    app.command("worker")(worker)
