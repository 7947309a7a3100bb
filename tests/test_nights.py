"""Nights that fail or stall on something outside the pipeline (docs/operations.md, "Nights
that fail or stall"): a reader holding the warehouse, a webhook that trickles bytes, a run killed
mid-load, a full disk, no name resolution. Each on the real Runpod captures and a real
warehouse; the webhook is a loopback server."""

import datetime as dt
import fcntl
import io
import re

import duckdb
import pytest
from rich.console import Console
from typer.testing import CliRunner

from gpuprices.flows import loading
from gpuprices.flows.cli.main import app
from gpuprices.flows.config import Settings
from gpuprices.flows.ops import notify, run_journal
from gpuprices.flows.ops.status import status_table
from gpuprices.flows.ops.warehouse_state import interrupted_runs
from gpuprices.flows.pipeline import live
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.flows.pipeline.results import DayResult
from gpuprices.reports import sections
from gpuprices.spiders.net_failures import unhealable
from gpuprices.warehouse import lake
from tests.faults.kill import DAY, run_killed
from tests.faults.nights import (
    EARLIER,
    NO_DNS_ENV,
    NO_PAUSES_ENV,
    disk_full,
    reader_holding,
    reader_until_waited_on,
    trickling_webhook,
)
from tests.test_cli import gp
from tests.test_pipeline import _q


@pytest.fixture
def settings(tmp_path, runpod_archive):
    return Settings(data_dir=tmp_path / "data", archive_root=runpod_archive).ensure()


def _night(settings, day):
    (path,) = [p for _, _, p in pipeline.archives(settings, ["runpod"], [day])]
    return pipeline.store_day(settings, "runpod", day, pipeline.parse_archive(path, "runpod"))


def _days(settings):
    return dict(_q(settings, "select snapshot_date, count(*) from offers group by 1"))


# ---------------------------------------------------------------------------------------------
# 6. A reader holding the warehouse; the lake is the source of truth

def test_the_load_waits_for_a_reader_then_loads(settings, capsys):
    loading.load(settings, [_night(settings, EARLIER)], "r1")
    night = _night(settings, DAY)
    with reader_until_waited_on(settings.db_path):
        loading.load(settings, [night], "r2")
    assert night.status == "ok" and _days(settings)[DAY] == night.rows
    assert "waiting: the warehouse is held by another process; waiting up to 300 s" \
        in capsys.readouterr().err


def test_a_reader_past_the_wait_costs_the_night_and_the_next_run_loads_it(settings,
                                                                           monkeypatch):
    monkeypatch.setenv("GPUPRICES_WAREHOUSE_WAIT_S", "1")
    loading.load(settings, [_night(settings, EARLIER)], "r1")
    night = _night(settings, DAY)
    rows = night.rows
    with reader_holding(settings.db_path):
        summary = loading.load(settings, [night], "r2")
    assert night.status == "failed" and DAY not in _days(settings)
    assert re.search(r"runpod: warehouse unavailable: the warehouse \S+ stayed busy for 1 s: "
                     r"another process holds it \(IO Error: Could not set lock on file .*\) "
                     r"\(its lake partition is loaded by the next run\)$", night.errors[-1])
    assert "stayed busy for 1 s" in summary.read_text()
    # The next run read nothing for Runpod (another provider failed): its load still takes
    # what the lake holds and the warehouse lacks.
    results = [DayResult("lambda", None, status="failed", errors=["lambda: nothing fetched"])]
    summary = loading.load(settings, results, "r3")
    assert [(r.provider, r.snapshot_date, r.status, r.rows, r.caught_up) for r in results[1:]] \
        == [("runpod", DAY, "ok", rows, True)]
    assert _days(settings)[DAY] == rows
    assert _q(settings, "select status, rows, message from runs where run_id = 'r3' "
                        "and provider = 'runpod'") == [
        ("ok", rows, "caught up: written to the lake by an earlier run, loaded by this one")]
    assert "| runpod | 2026-09-29 | ok (caught up: an earlier run wrote it, this one loaded it)" \
        in summary.read_text()
    # Level again: the run after catches up nothing.
    again = []
    loading.load(settings, again, "r4")
    assert again == []


def test_a_partition_rewritten_in_the_lake_replaces_the_warehouses_copy(settings):
    night = _night(settings, DAY)
    loading.load(settings, [night], "r1")
    # A reparse wrote the day again (here: ten of its rows) and its load never happened.
    ten = lake.read_partition(settings.lake_root, DAY, "runpod").slice(0, 10)
    lake.write_partition(settings.lake_root, DAY, "runpod", ten)
    results = []
    loading.load(settings, results, "r2")
    assert [(r.snapshot_date, r.rows) for r in results] == [(DAY, 10)]
    assert _days(settings)[DAY] == 10 < night.rows


def test_a_warehouse_loaded_before_file_states_were_kept_is_not_reloaded(settings):
    loading.load(settings, [_night(settings, DAY)], "r1")
    con = duckdb.connect(str(settings.db_path))
    con.execute("delete from lake_loads")  # as a warehouse of the previous version
    con.close()
    results = []
    loading.load(settings, results, "r2")
    assert results == []
    assert _q(settings, "select snapshot_date, provider from lake_loads") == [(DAY, "runpod")]


# ---------------------------------------------------------------------------------------------
# 7. A webhook that trickles bytes

def test_a_trickling_webhook_costs_one_deadline_and_is_hung_up_on():
    # One byte every 0.5 s: a per-read timeout of 1.5 s never fires (the answer takes ~35 s).
    with trickling_webhook(gap_s=0.5, body_bytes=0) as (url, hung_up):
        problem = notify.send("t", "x", timeout=1.5, found=[notify.legacy_target(url)])
        assert problem == "alert send abandoned: no complete answer within the 1.5 s deadline"
        assert hung_up.wait(10)  # the socket was shut, nothing lingers


def test_a_run_alerting_a_trickling_webhook_ends_and_frees_its_lock(tmp_path, runpod_archive):
    data = tmp_path / "data"
    with trickling_webhook(gap_s=5) as (url, hung_up):
        # A date with no capture: a failure to alert on.
        r = gp("crawl", "--replay", "2026-10-01", "-p", "runpod", "--data-dir", data,
               "--archive", runpod_archive,
               env={"GPUPRICES_WEBHOOK_URL": url, "GPUPRICES_WEBHOOK_TIMEOUT_S": "2"})
        assert hung_up.is_set()
    assert r.returncode == 1
    assert ("alert not delivered: alert send abandoned: no complete answer within the 2 s "
            "deadline") in r.stderr
    summary = re.search(r"run summary: (\S+)", r.stdout).group(1)
    assert "Alerts: NOT delivered (alert send abandoned" in open(summary).read()
    with (data / "nightly.lock").open("a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: raises if anyone still holds it


# ---------------------------------------------------------------------------------------------
# 8. A run killed mid-load

def _rendered(table) -> str:
    out = Console(file=io.StringIO(), width=300)
    out.print(table)
    return out.file.getvalue()


def test_a_run_killed_mid_load_shows_as_interrupted(settings):
    loading.load(settings, [_night(settings, EARLIER)], "20261201T000000-complete")
    assert run_killed("duckdb", settings.data_dir, settings.archive_root) == -9
    assert _q(settings, "select run_id, finished_at is null from run_log order by started_at") \
        == [("20261201T000000-complete", False), ("killed-run", True)]
    cut = interrupted_runs(settings.db_path, 14)
    assert [(c["run_id"], c["providers"]) for c in cut] == [("killed-run", ["runpod"])]
    shown = _rendered(status_table([], 14, interrupted=cut))
    assert re.search(r"runpod .* interrupted .* run killed-run started \d{4}-\d\d-\d\d \d\d:\d\d "
                     r"and never finished", shown)
    # The report's data health for the week the run started in.
    today = dt.datetime.now(dt.UTC).date()
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        health = {r["provider"]: r for r in sections.health(
            con, today - dt.timedelta(days=6), today, 400).rows}
    finally:
        con.close()
    assert health["runpod"]["state"] == "interrupted"
    assert "run killed-run was interrupted (started, never finished)" \
        in health["runpod"]["last_error"]
    # The next run finishes; the killed one stays interrupted, and its night, written to the
    # lake before the kill, is loaded now.
    results = []
    loading.load(settings, results, "20261201T030000-next")
    assert [(r.snapshot_date, r.caught_up) for r in results] == [(DAY, True)]
    assert [c["run_id"] for c in interrupted_runs(settings.db_path, 14)] == ["killed-run"]


def test_a_run_that_died_before_its_load_is_recorded_as_interrupted(settings):
    run_journal.begin(settings, "20261201T010000-dead", ["runpod", "lambda"])  # then killed
    assert run_journal.journal_path(settings, "20261201T010000-dead").exists()
    run_journal.begin(settings, "20261201T020000-next", ["runpod"])
    loading.load(settings, [_night(settings, DAY)], "20261201T020000-next")
    assert [(c["run_id"], c["providers"]) for c in interrupted_runs(settings.db_path, 14)] == [
        ("20261201T010000-dead", ["runpod", "lambda"])]
    assert list(settings.runs_dir.glob("*.open")) == []  # folded in, and the next one closed
    assert _q(settings, "select interrupted from provider_runs") == [(False,)]


# ---------------------------------------------------------------------------------------------
# 9. A full disk

def test_a_full_disk_ends_with_a_message_exit_1_and_the_warehouse_intact(settings):
    args = ["--data-dir", str(settings.data_dir), "--archive", str(settings.archive_root)]
    runner = CliRunner()
    ok = runner.invoke(app, ["crawl", "--replay", str(EARLIER), "-p", "runpod", *args])
    assert ok.exit_code == 0, ok.output
    before = _days(settings)
    with disk_full(settings.data_dir):
        full = runner.invoke(app, ["crawl", "--replay", str(DAY), "-p", "runpod", *args])
    assert full.exit_code == 1 and isinstance(full.exception, SystemExit), full.output
    assert "Traceback" not in full.output
    assert "providers" in full.stdout and "runpod" in full.stdout  # the status table
    assert "could not write the lake partition for 2026-09-29: No space left on device" \
        in full.stderr
    assert re.search(r"error: the run summary could not be written to \S+\.md \(disk full\): "
                     r"No space left on device", full.stderr)
    assert "did not finish recording itself" in full.stderr
    assert list(settings.runs_dir.glob(".*")) == []  # no hidden .part left behind
    assert _days(settings) == before  # the previous warehouse, whole
    # Leftovers of a run that died mid-write (as before this was handled) go with the next run.
    (settings.runs_dir / ".20261201T000000-x.md.part").write_text("half")
    folder = lake.partition_path(settings.lake_root, EARLIER, "runpod").parent
    (folder / ".part-0.parquet.0123456789ab.part").write_bytes(b"PAR1")
    again = runner.invoke(app, ["crawl", "--replay", str(DAY), "-p", "runpod", *args])
    assert again.exit_code == 0, again.output
    assert list(settings.runs_dir.glob(".*")) == []
    assert [p.name for p in folder.iterdir() if p.name.endswith(".part")] == []


# ---------------------------------------------------------------------------------------------
# 10. No network

# What a crawl reported (its summary's errors) with no DNS and no route: Scrapy 2.19 on Twisted
# 26.10 (the first two captured here, offline), Twisted's NoRouteError text for ENETUNREACH.
NO_NAME = ["runpod: https://api.runpod.io/graphql: CannotResolveHostError: DNS lookup failed: "
           "address 'proxy.invalid' not found: [Errno -2] Name or service not known.",
           "lambda: https://lambda.ai/pricing: CannotResolveHostError: DNS lookup failed: "
           "no results for hostname lookup: lambda.ai."]
NO_ROUTE = ["aws: https://pricing.us-east-1.amazonaws.com/x: NoRouteError: No route to host."]
CAN_HEAL = ["runpod: https://api.runpod.io/graphql: DownloadConnectionRefusedError: "
            "Connection was refused by other side: 111: Connection refused.",
            "runpod: https://api.runpod.io/graphql: HTTP 503"]


def test_failures_that_cannot_heal_in_minutes_are_told_apart():
    assert unhealable(NO_NAME) == "no name resolution"
    assert unhealable(NO_ROUTE) == "no route to the host"
    assert unhealable(NO_NAME + NO_ROUTE) == "no name resolution and no route to the host"
    assert unhealable(NO_NAME + CAN_HEAL[:1]) is None
    assert unhealable(CAN_HEAL) is None and unhealable([]) is None


def test_no_name_resolution_fails_fast_instead_of_waiting_for_the_backoff(settings,
                                                                          monkeypatch):
    for k, v in (NO_DNS_ENV | NO_PAUSES_ENV).items():
        monkeypatch.setenv(k, v)
    slept = []
    res = live.live_day_with_backoff(settings, "runpod", [60, 300], sleep=slept.append)
    assert slept == [] and res.status == "failed"
    assert "DNS lookup failed" in res.errors[0]
    assert res.errors[-1] == "runpod: not retried: no name resolution does not heal in minutes"


def test_a_refused_connection_keeps_its_retries(settings, monkeypatch):
    outcomes = [DayResult("runpod", None, status="failed", errors=CAN_HEAL[:1]),
                DayResult("runpod", DAY, rows=61)]
    monkeypatch.setattr(live, "live_day", lambda s, p: outcomes.pop(0))
    slept = []
    res = live.live_day_with_backoff(settings, "runpod", [60, 300], sleep=slept.append)
    assert (res.status, slept) == ("ok", [60])
