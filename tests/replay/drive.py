"""Run providers' real fetch plans through the crawler against a replay server, and compare
what the crawl archived with the direct replay of the archive."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from gpuprices.spiders.archive import Capture, latest_per_request, list_archives, read_captures
from gpuprices.spiders.importer import import_manifest
from gpuprices.spiders.parsers import ParseError, parse_body, postprocess, wants
from gpuprices.warehouse.contract import Offer
from tests.replay.loopback import settings_json
from tests.replay.server import Fault, Pager, ReplayIndex, ReplayServer, Seen

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")
# Fields that say when and under which URL a capture was made, not what it says: a crawl made
# now under a plan URL with a query differs from the archived capture in these only.
CAPTURE_FIELDS = ("snapshot_date", "captured_at", "source_url")


@dataclass
class Crawl:
    provider: str
    summary: dict
    archive_root: Path

    def captures(self) -> list[Capture]:
        return [c for _, p, path in list_archives(self.archive_root) if p == self.provider
                for c in read_captures(path)]


def crawl_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The crawl's environment: this one less the secrets and knobs a plan reads (so each
    test says which it sets), with the project importable for the loopback handler."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("GOOGLE_CLOUD_API_KEY", "AWS_REGIONS")}
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), base.get("PYTHONPATH")]))
    return base | dict(env or {})


def crawl_many(providers: Iterable[str], server: ReplayServer, work: Path,
               env: Mapping[str, str] | None = None, timeout: float = 120,
               **settings) -> dict[str, Crawl]:
    """Crawl the providers' real plans in one crawler process (`tests.replay.crawl_all`)."""
    providers = list(providers)
    for p in providers:
        (work / p / "snapshots").mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "tests.replay.crawl_all", "--providers", ",".join(providers),
           "--work", str(work), "--settings", settings_json(server.address, **settings)]
    proc = subprocess.run(cmd, cwd=ROOT, env=crawl_env(env), capture_output=True,  # noqa: S603
                          timeout=timeout, check=False)
    crawls = {}
    for p in providers:
        out = work / p / "summary.json"
        if not out.exists():
            log = proc.stderr.decode()[-2000:]
            raise AssertionError(f"{p}: the crawl wrote no summary:\n{log}")
        summary = json.loads(out.read_text())
        crawls[p] = Crawl(p, summary, work / p / "snapshots")
    return crawls


def day_offers(provider: str, captures: list[Capture]) -> tuple[list[Offer], list[ParseError]]:
    """Offers of captures parsed as `gpuprices.flows.pipeline.steps.parse_archive` parses a day:
    each alone (a parser refusing one page does not hide the others), then the provider's whole-day
    step."""
    offers: list[Offer] = []
    errors: list[ParseError] = []
    for cap in captures:
        meta = cap.meta()
        if not wants(meta):
            continue
        try:
            offers.extend(parse_body(cap.body, meta))
        except ParseError as exc:
            errors.append(exc)
    return (postprocess(provider, offers, captures) if offers else offers), errors


def comparable(offers: Iterable[Offer], ignore: tuple[str, ...] = ()) -> list[tuple]:
    """Offers without their capture time and URL (and the `ignore` fields), sorted, for
    comparing two replays."""
    rows = []
    skip = set(CAPTURE_FIELDS) | set(ignore)
    for o in offers:
        d = dataclasses.asdict(o)
        rows.append(tuple((k, repr(v)) for k, v in d.items() if k not in skip))
    return sorted(rows)


def build_archive(root: Path) -> Path:
    """The project's archive, built from snapshots/manifest.csv by the importer."""
    import_manifest(root, ROOT / "snapshots" / "manifest.csv")
    return root


# The replay test modules on one xdist worker: they share the replayed archive and nights
# (`once`), which another worker would otherwise sit waiting for (5-6 s each, idle).
REPLAY_GROUP = pytest.mark.xdist_group("live-replay")


def shared_archive(tmp_path_factory) -> Path:
    """build_archive once per test session, for every replay test module and worker."""
    return once(tmp_path_factory, "replay-archive", lambda d: build_archive(d / "snapshots"))


@dataclass
class Night:
    """A replayed live night: what the server saw and each provider's crawl."""

    seen: list[Seen]
    crawls: dict[str, Crawl]

    def offers(self, provider: str) -> tuple[list[tuple], list[tuple]]:
        """(offers parsed from what the crawl archived, offers parsed from the archived
        captures the server replayed to it), comparable."""
        live, _ = day_offers(provider, latest_per_request(self.crawls[provider].captures()))
        served = [s.served for s in self.seen if s.served is not None
                  and s.served.provider == provider and s.status == 200]
        direct, _ = day_offers(provider, served)
        return comparable(live), comparable(direct)


def replay_night(archive_root: Path, work: Path, providers: Iterable[str],
                 env: Mapping[str, str] | None = None,
                 faults: Mapping[str, list[Fault]] | None = None,
                 pagers: Mapping[str, Pager] | None = None, **settings) -> Night:
    """Crawl the providers' real plans against a replay server of the archive."""
    with ReplayServer(ReplayIndex(archive_root)) as server:
        for url, fs in (faults or {}).items():
            server.inject(url, *fs)
        server.pagers.update(pagers or {})
        crawls = crawl_many(providers, server, work, env, **settings)
    return Night(list(server.seen), crawls)


def once(tmp_path_factory, name: str, build: Callable[[Path], T], wait_s: float = 600) -> T:
    """`build(folder)` run once per test session even when pytest-xdist runs several workers
    (`make test`): the first worker builds and pickles the result into the temporary folder the
    workers share, the others wait for it (pytest-xdist's documented pattern for session-scoped
    fixtures). A build that fails is reported to every worker that waited for it."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    result, lock = shared / f"{name}.pickle", shared / f"{name}.lock"
    try:
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL))
        first = True
    except FileExistsError:
        first = False
    if not first:
        return _wait_for(result, name, wait_s)
    outcome: tuple[bool, object] = (False, "interrupted")
    try:
        value = build(shared / name)
        outcome = (True, value)
    except Exception as exc:
        outcome = (False, f"{type(exc).__name__}: {exc}")
        raise
    finally:
        part = result.with_suffix(".part")
        part.write_bytes(pickle.dumps(outcome))
        part.rename(result)
    return value


def _wait_for(result: Path, name: str, wait_s: float):
    deadline = time.monotonic() + wait_s
    while not result.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{name}: the worker building it did not finish")
        time.sleep(0.2)
    ok, value = pickle.loads(result.read_bytes())  # noqa: S301 (written by this test session)
    if not ok:
        raise RuntimeError(f"{name} failed in another worker: {value}")
    return value
