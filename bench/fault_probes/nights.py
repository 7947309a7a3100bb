"""Probes for nights that fail or stall on something outside the pipeline (issue 14, items
6-10; docs/operations.md "Nights that fail or stall"), each on the real Runpod captures in a
fresh data folder. tests/test_nights.py holds the same cases as assertions; these report what
happened and how long it took.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path
from unittest import mock

import duckdb
from typer.testing import CliRunner

from bench.fault_probes import Probe, ProbeResult
from bench.faults import _fresh
from gpuprices.flows import loading
from gpuprices.flows.cli.main import app
from gpuprices.flows.config import Settings
from gpuprices.flows.ops.warehouse_state import interrupted_runs
from gpuprices.flows.pipeline import live
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.flows.pipeline.results import DayResult
from tests.faults.kill import DAY, run_killed
from tests.faults.nights import (
    EARLIER,
    NO_DNS_ENV,
    disk_full,
    elapsed,
    reader_holding,
    trickling_webhook,
)

WEBHOOK_GAP_S = 5  # the endpoint: one byte every 5 s


def _settings(tmp: Path) -> Settings:
    return _fresh(tmp)  # the real Runpod captures, as bench/faults.py's crash cases use


def _night(settings: Settings, day) -> DayResult:
    (path,) = [p for _, _, p in pipeline.archives(settings, ["runpod"], [day])]
    return pipeline.store_day(settings, "runpod", day, pipeline.parse_archive(path, "runpod"))


def _rows(settings: Settings, day) -> int:
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        return con.execute("select count(*) from offers where snapshot_date = ?",
                           [day]).fetchone()[0]
    finally:
        con.close()


@contextlib.contextmanager
def _quiet():
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


def reader_during_load(tmp: Path) -> ProbeResult:
    settings = _settings(tmp)
    with _quiet():
        loading.load(settings, [_night(settings, EARLIER)], "r1")
        night = _night(settings, DAY)
        expected = night.rows
        with reader_holding(settings.db_path, for_s=5):
            _, took = elapsed(loading.load, settings, [night], "r2")
    got = _rows(settings, DAY)
    return ProbeResult(night.status == "ok" and got == expected, rows_lost=expected - got,
                       detail=f"a reader held the warehouse 5 s: the load waited, {took:.0f} s, "
                              f"{got}/{expected} rows")


def reader_past_the_wait(tmp: Path) -> ProbeResult:
    settings = _settings(tmp)
    with _quiet(), mock.patch.dict(os.environ, {"GPUPRICES_WAREHOUSE_WAIT_S": "2"}):
        loading.load(settings, [_night(settings, EARLIER)], "r1")
        night = _night(settings, DAY)
        expected = night.rows
        with reader_holding(settings.db_path):
            loading.load(settings, [night], "r2")
        missed = _rows(settings, DAY)
        later: list[DayResult] = []
        loading.load(settings, later, "r3")
    got = _rows(settings, DAY)
    return ProbeResult(night.status == "failed" and missed == 0 and got == expected,
                       rows_lost=expected - got,
                       detail=f"night failed as busy after the 2 s wait; next run "
                              f"caught up {len(later)} partition(s), {got}/{expected} rows")


def trickling_webhook_probe(tmp: Path) -> ProbeResult:
    settings = _settings(tmp)
    failed = DayResult("runpod", None, status="failed", errors=["runpod: nothing fetched"])
    with trickling_webhook(gap_s=WEBHOOK_GAP_S) as (url, hung_up), _quiet(), \
            mock.patch.dict(os.environ, {"GPUPRICES_WEBHOOK_URL": url}):
        os.environ.pop("GPUPRICES_WEBHOOK_TIMEOUT_S", None)
        summary, took = elapsed(loading.load, settings, [failed], "r1")
        cut = hung_up.wait(10)
    said = "NOT delivered (alert send abandoned" in summary.read_text()
    return ProbeResult(said and cut and took < 30,
                       detail=f"1 byte / {WEBHOOK_GAP_S} s: the load ended after {took:.0f} s "
                              f"(deadline 10 s), endpoint hung up on: {cut}")


def killed_mid_load(tmp: Path) -> ProbeResult:
    settings = _settings(tmp)
    with _quiet():
        loading.load(settings, [_night(settings, EARLIER)], "r1")
        expected = _night(settings, DAY).rows
    run_killed("duckdb", settings.data_dir, settings.archive_root)
    cut = [c["run_id"] for c in interrupted_runs(settings.db_path, 14)]
    with _quiet():
        loading.load(settings, [], "r3")
    got = _rows(settings, DAY)
    return ProbeResult(cut == ["killed-run"] and got == expected, rows_lost=expected - got,
                       detail=f"interrupted runs: {cut}; next run loaded the night, "
                              f"{got}/{expected} rows")


def full_disk(tmp: Path) -> ProbeResult:
    settings = _settings(tmp)
    args = ["--data-dir", str(settings.data_dir), "--archive", str(settings.archive_root)]
    run = CliRunner().invoke
    run(app, ["crawl", "--replay", str(EARLIER), "-p", "runpod", *args])
    before = _rows(settings, EARLIER)
    with disk_full(settings.data_dir):
        full = run(app, ["crawl", "--replay", str(DAY), "-p", "runpod", *args])
    clean = (full.exit_code == 1 and isinstance(full.exception, SystemExit)
             and "No space left on device" in full.stderr and "providers" in full.stdout)
    leftovers = [p.name for p in settings.runs_dir.glob(".*")]
    intact = _rows(settings, EARLIER) == before
    again = run(app, ["crawl", "--replay", str(DAY), "-p", "runpod", *args])
    expected = _night(settings, DAY).rows if again.exit_code == 0 else -1
    got = _rows(settings, DAY)
    return ProbeResult(clean and not leftovers and intact and got == expected,
                       rows_lost=max(expected - got, 0),
                       detail=f"exit {full.exit_code}, clear message {clean}, leftovers "
                              f"{leftovers}, warehouse intact {intact}; rerun {got} rows")


def no_name_resolution(tmp: Path) -> ProbeResult:
    settings = _settings(tmp)
    slept: list[float] = []
    delays = live.backoff_delays()  # the nightly's default: 60 s, then 300 s
    with mock.patch.dict(os.environ, NO_DNS_ENV):
        res, took = elapsed(live.live_day_with_backoff, settings, "runpod", delays,
                            sleep=slept.append)
    fast = not slept and res.status == "failed" and "not retried" in res.errors[-1]
    return ProbeResult(fast, detail=f"live crawl without DNS: failed after {took:.0f} s of "
                                    f"crawling, {sum(slept):g} of {sum(delays):g} s of backoff "
                                    "waited")


PROBES = [
    Probe("6", "reader holds the warehouse during the load", reader_during_load),
    Probe("6", "reader past the wait; next run catches up", reader_past_the_wait),
    Probe("7", "webhook trickles 1 byte every 5 s", trickling_webhook_probe),
    Probe("8", "SIGKILL mid-load shows as interrupted", killed_mid_load),
    Probe("9", "disk full during a run", full_disk),
    Probe("10", "no name resolution in a live night", no_name_resolution),
]

if __name__ == "__main__":  # one group alone: python -m bench.fault_probes.nights
    for probe in PROBES:
        with tempfile.TemporaryDirectory() as tmp:
            r = probe.run(Path(tmp))
        print(f"item {probe.item:3s} {probe.name:45s} {'survived' if r.survived else 'FAILED'} "
              f"lost {r.rows_lost} wrong {r.wrong_loaded}  {r.detail}", file=sys.stdout)
