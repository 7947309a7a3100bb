"""The team mode on a Prefect server: the work pool, the global concurrency limits, one
deployment per provider crawl and one for the load (flows/team/flows.py), and a worker that runs
them.

The deployments name their flows by module path (`gpuprices.flows.team.flows.crawl_provider`), not
by a file of the machine that registered them: the package installed on the worker (a virtualenv, a
Docker image, a Kubernetes pod) is the code, so no pull step fetches any and the same
deployments run on a process, Docker or Kubernetes pool unchanged (an image for the latter two
comes from `--image` / GPUPRICES_IMAGE as the job variable `image`).

Every worker registers the same deployments when it starts, so the server knows them as soon as
one worker is up. Each deployment's version is a fingerprint of what registering it sends
(`spec_version`): a worker applies only the deployments the server lacks or holds at another
version (a new package, other crons, another pool or image), so a worker joining a team whose
deployments are current sends one read, not 32 updates (each of which also rewrites the
deployment's schedules and its automations on the server).

Import this module only after Prefect's environment is set (gpuprices.flows.config.prefect_env).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import time
from pathlib import Path

import httpx  # Prefect's HTTP client: its errors are what an unreachable server raises
from prefect._internal.versioning import VersionType
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate, WorkPoolCreate
from prefect.client.schemas.filters import (
    FlowFilter,
    FlowFilterName,
    FlowRunFilter,
    FlowRunFilterState,
    FlowRunFilterStateType,
    WorkPoolFilter,
    WorkPoolFilterName,
)
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.deployments.runner import RunnerDeployment
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound
from prefect.schedules import Cron
from prefect.states import Crashed
from prefect.workers.base import BaseWorker

from gpuprices import __version__
from gpuprices.flows.ops.service import WORKER_GRACE_S, run_until_signal
from gpuprices.flows.schedules import HOURLY_CRON, LOAD_CRON, NIGHTLY_CRON, TIMEZONE
from gpuprices.flows.serve import (
    ONE_AT_A_TIME,  # a run due while one is going is cancelled, not queued
)
from gpuprices.flows.team import flows as team
from gpuprices.spiders import registry

CRAWL_ENTRYPOINT = "gpuprices.flows.team.flows.crawl_provider"
LOAD_ENTRYPOINT = "gpuprices.flows.team.flows.load_lake"
LOAD_DEPLOYMENT = "gpuprices-load/load"
# Work queues of the pool: every worker takes crawls; only the worker started with --load takes
# the load, so the warehouse file lives on one known machine (its data folder).
CRAWL_QUEUE = "crawl"
LOAD_QUEUE = "load"


class SetupError(RuntimeError):
    """The worker cannot start: the server cannot be reached, the pool is of another type, or
    no worker for the pool's type is installed here."""


def crawl_deployment_name(provider: str) -> str:
    return f"gpuprices-crawl/{provider}"


def _deployment(entrypoint: str, name: str, pool: str, queue: str, cron: str | None,
                parameters: dict, description: str, tags: list[str], image: str | None
                ) -> RunnerDeployment:
    d = RunnerDeployment.from_entrypoint(
        entrypoint, name=name, work_pool_name=pool, work_queue_name=queue,
        parameters=parameters,
        schedules=[Cron(cron, timezone=TIMEZONE)] if cron else None,
        concurrency_limit=ONE_AT_A_TIME, description=description, tags=["gpuprices", *tags],
        job_variables={"image": image} if image else None)
    # Not the registering machine's folder: the worker imports the installed package.
    d._path = None
    # Our version, as given: left to infer one, Prefect sends the commit of a git checkout the
    # worker runs in (a clone with a remote) in its place, which differs from spec_version,
    # and every worker would register everything again.
    d.version_type = VersionType.SIMPLE
    d.version = spec_version(d)
    return d


def spec_version(d: RunnerDeployment) -> str:
    """The version a deployment is registered at: gpuprices' version and a hash of everything
    its registration sends (entrypoint, pool, queue, schedules, parameters, limit, tags, job
    variables) and of the flows' code (flows/team/flows.py, both entrypoints' module)."""
    spec = {"package": __version__, "code": _flows_code_hash(),
            **d.model_dump(mode="json", exclude={"storage", "version"})}
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
    return f"{__version__}+{digest[:12]}"


def build_deployments(providers: list[str], pool: str, crawl_cron: str | None = NIGHTLY_CRON,
                      load_cron: str | None = LOAD_CRON, image: str | None = None,
                      hourly_cron: str | None = HOURLY_CRON) -> list[RunnerDeployment]:
    """One crawl deployment per provider (scheduled together at `crawl_cron`: the workers
    share them out; a provider of hourly cadence at `hourly_cron`) and the load (every
    `load_cron`: picks up what the crawls wrote)."""
    hourly = set(registry.hourly())
    out = [_deployment(CRAWL_ENTRYPOINT, p, pool, CRAWL_QUEUE,
                       hourly_cron if p in hourly else crawl_cron,
                       {"provider": p, "data_dir": "", "archive_root": "", "replay": ""},
                       f"Crawl {p}, parse, check and write its lake partition.", ["crawl", p],
                       image) for p in providers]
    out.append(_deployment(LOAD_ENTRYPOINT, "load", pool, LOAD_QUEUE, load_cron,
                           {"data_dir": "", "archive_root": ""},
                           "Load every lake partition the warehouse lacks; write the run "
                           "summary. The only writer of the warehouse.", ["load"], image))
    return out


def ensure_pool(pool: str, pool_type: str) -> bool:
    """Create the work pool with its type's default job template unless it exists; True when
    created. Refuses a pool of another type, or a type no installed worker runs."""
    with get_client(sync_client=True) as client:
        try:
            found = client.read_work_pool(pool)
        except ObjectNotFound:
            found = None
        if found is not None:
            if found.type != pool_type:
                raise SetupError(f"work pool {pool!r} is of type {found.type!r}, not "
                                f"{pool_type!r}: start the worker with --type {found.type}")
            return False
        worker_cls = worker_class(pool_type)
        try:
            client.create_work_pool(WorkPoolCreate(
                name=pool, type=pool_type,
                base_job_template=worker_cls.get_default_base_job_template()))
        except ObjectAlreadyExists:  # another worker created it a moment ago
            return False
    return True


def worker_class(pool_type: str) -> type[BaseWorker]:
    cls = BaseWorker.get_worker_class_from_type(pool_type)
    if cls is None:
        raise SetupError(f"no Prefect worker for pools of type {pool_type!r} is installed here "
                        f"(docker: pip install prefect-docker; kubernetes: pip install "
                        f"prefect-kubernetes)")
    return cls


def ensure_limits(providers: list[str]) -> list[str]:
    """The global concurrency limits the flows take (1 slot each), created when missing; an
    existing one is left as its operator set it. Returns the names created."""
    created = []
    with get_client(sync_client=True) as client:
        for name in [team.WAREHOUSE_LIMIT, *(team.crawl_limit(p) for p in providers)]:
            try:
                client.read_global_concurrency_limit_by_name(name)
                continue
            except ObjectNotFound:
                pass
            try:
                client.create_global_concurrency_limit(
                    GlobalConcurrencyLimitCreate(name=name, limit=1))
                created.append(name)
            except ObjectAlreadyExists:
                continue
    return created


@functools.cache
def _flows_code_hash() -> str:
    return hashlib.sha256(Path(team.__file__).read_bytes()).hexdigest()


def registered_versions(flow_names: list[str]) -> dict[tuple[str, str], str | None]:
    """(flow name, deployment name) -> version of the deployments of these flows on the
    server."""
    names = FlowFilter(name=FlowFilterName(any_=sorted(set(flow_names))))
    with get_client(sync_client=True) as client:
        flows = {f.id: f.name for f in client.read_flows(flow_filter=names)}
        # One deployment per provider and flow name at most: far below a page (200).
        found = client.read_deployments(flow_filter=names)
    return {(flows.get(d.flow_id), d.name): d.version for d in found}


def register(deployments: list[RunnerDeployment]) -> list[RunnerDeployment]:
    """Apply the deployments the server lacks or holds at another version; returns those
    applied (none when another worker registered the same ones)."""
    held = registered_versions([d.flow_name for d in deployments])
    stale = [d for d in deployments if held.get((d.flow_name, d.name)) != d.version]
    for d in stale:
        d.apply()
    return stale


def set_up(pool: str, pool_type: str, providers: list[str],
           deployments: list[RunnerDeployment] | None
           ) -> tuple[bool, list[RunnerDeployment]]:
    """The pool, and when `deployments` are given the limits and the deployments, on the
    server; returns whether the pool was created and the deployments applied. A server that
    cannot be reached is a SetupError naming it, not a traceback."""
    worker_class(pool_type)  # no worker for this type here: said before anything is created
    applied: list[RunnerDeployment] = []
    try:
        created = ensure_pool(pool, pool_type)
        if deployments is not None:
            ensure_limits(providers)
            applied = register(deployments)
    except (httpx.HTTPError, OSError) as exc:
        raise SetupError(f"the Prefect server at {get_client().api_url} cannot be reached "
                         f"({type(exc).__name__}: {exc}); is PREFECT_API_URL right and the "
                         f"server up?") from None
    return created, applied


def run_worker(pool: str, pool_type: str, name: str | None, limit: int | None, load: bool,
               grace_s: float = WORKER_GRACE_S, printer=print) -> list[str]:
    """Run a worker of the pool in this process until SIGTERM or Ctrl-C, taking crawls (and the
    load when `load`); each flow run it takes runs in its own child process (process pools) or
    container. On a signal it takes no new run, gives the running ones `grace_s` seconds to
    finish, then stops them and marks them Crashed, naming this worker (a run left "Running"
    would hold its deployment's one-at-a-time slot); returns the names of those runs."""
    queues = [CRAWL_QUEUE, LOAD_QUEUE] if load else [CRAWL_QUEUE]
    worker = worker_class(pool_type)(work_pool_name=pool, work_queues=queues, name=name,
                                     limit=limit)
    draining = False
    poll = worker.get_and_submit_flow_runs

    async def poll_unless_draining() -> list:
        return [] if draining else await poll()

    # The worker's polling loop calls this attribute: once draining, it takes nothing new.
    worker.get_and_submit_flow_runs = poll_unless_draining
    left: list[FlowRun] = []

    async def drain(task) -> None:
        nonlocal draining, left
        draining = True
        deadline = time.monotonic() + grace_s
        while (left := await _runs_of(pool, worker.name)) and time.monotonic() < deadline:
            printer(f"stopping: waiting for {len(left)} run(s) to finish "
                    f"({deadline - time.monotonic():.0f} s left)")
            await asyncio.sleep(2)
        task.cancel()  # leaves the pool; its children (runs still going) are stopped

    run_until_signal(worker.start(printer=printer), stop=drain)
    if left:
        asyncio.run(_mark_crashed(left, worker.name))
        printer(f"stopped mid-run, marked Crashed: {', '.join(r.name for r in left)}")
    return [r.name for r in left]


async def _runs_of(pool: str, worker_name: str) -> list[FlowRun]:
    """The flow runs this worker started that have not ended (Prefect labels each run with the
    name of the worker that took it)."""
    async with get_client() as client:
        runs = await client.read_flow_runs(
            work_pool_filter=WorkPoolFilter(name=WorkPoolFilterName(any_=[pool])),
            flow_run_filter=FlowRunFilter(state=FlowRunFilterState(type=FlowRunFilterStateType(
                any_=[StateType.PENDING, StateType.RUNNING]))))
    return [r for r in runs if r.labels.get("prefect.worker.name") == worker_name]


async def _mark_crashed(runs: list[FlowRun], worker_name: str) -> None:
    async with get_client() as client:
        for r in runs:
            await client.set_flow_run_state(
                r.id, Crashed(message=f"worker {worker_name} was stopped while this run was "
                                      f"going; run the deployment again"), force=True)
