"""Probes of the issue's security items (11-14) and the busy warehouse (15), on a warehouse of the
real Runpod captures: what a careful operator typed, and whether it was refused."""

from __future__ import annotations

import atexit
import csv
import datetime as dt
import functools
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from unittest import mock

from bench.fault_probes import Probe, ProbeResult
from gpuprices.flows.ops import alerts, notify
from gpuprices.flows.pipeline.results import DayResult
from gpuprices.reports.render import write_csv
from gpuprices.reports.tables import Column, Table
from tests.conftest import ROOT, manifest_rows


def _gp(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpuprices", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


@functools.cache
def _warehouse() -> Path:
    """A data folder holding the real Runpod captures, loaded once for every probe here."""
    root = Path(tempfile.mkdtemp(prefix="probe-security-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    archive = root / "snap"
    manifest = root / "repo" / "snapshots" / "manifest.csv"
    manifest.parent.mkdir(parents=True)
    (root / "repo" / "tests").symlink_to(ROOT / "tests")
    with manifest.open("w", newline="") as fh:
        rows = manifest_rows("runpod")
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    _gp("import-capture", "--manifest", manifest, "--archive", archive)
    _gp("crawl", "--replay", "all", "-p", "runpod", "--data-dir", root / "data",
        "--archive", archive)
    return root / "data"


def _offers(data: Path) -> int:
    r = _gp("sql", "SELECT count(*) AS n FROM offers", "--format", "csv", "--data-dir", data)
    return int(r.stdout.split()[-1]) if r.returncode == 0 else -1


def _sql_refused(query: str, leak: str | None = None):
    def run(tmp: Path) -> ProbeResult:
        data = _warehouse()
        before = _offers(data)
        r = _gp("sql", query.format(tmp=tmp), "--data-dir", data)
        leaked = (leak is not None and (tmp / leak).exists()) or "root:" in r.stdout
        ok = r.returncode == 2 and not leaked and _offers(data) == before
        return ProbeResult(ok, rows_lost=max(0, before - _offers(data)),
                           detail=(r.stderr.strip().splitlines() or ["(no message)"])[0][:90])
    return run


def _slack(tmp: Path) -> ProbeResult:
    bad = DayResult(provider="runpod", snapshot_date=dt.date(2026, 10, 4), status="failed",
                    errors=["runpod: reply: <!channel> <http://evil.example|runpod.io>"])
    alert = alerts.alert_message("p", [bad], threshold_pct=20)
    sent: list[str] = []

    class Answer:
        status_code, content, text = 200, b"ok", "ok"

    def post(method, url, **kwargs):  # what Apprise's Slack plugin would POST to Slack
        sent.append(kwargs["data"])
        return Answer()

    with mock.patch("requests.request", post):
        notify.send(alert.title, alert.body, alert.kind, found=[notify.Target(
            "https://hooks.slack.com/services/T0PROBE/B0PROBE/probeprobeprobe")])
    text = "".join(sent)
    ok = bool(sent) and "<!channel>" not in text and "<http://evil" not in text
    return ProbeResult(ok, detail="escaped" if ok else "control sequences sent verbatim")


def _manifest(tmp: Path) -> ProbeResult:
    repo = tmp / "repo" / "snapshots"
    repo.mkdir(parents=True)
    row = manifest_rows("runpod")[0] | {"provider": "../../escaped"}
    with (repo / "manifest.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(row))
        w.writeheader()
        w.writerow(row)
    r = _gp("import-capture", "--manifest", repo / "manifest.csv", "--archive", tmp / "a" / "b")
    escaped = list(tmp.rglob("escaped*"))
    return ProbeResult(r.returncode == 2 and not escaped,
                       detail=(r.stderr.strip().splitlines() or [""])[0][:90])


def _csv(tmp: Path) -> ProbeResult:
    t = Table("t", "t", [Column("sku", "SKU")], [{"sku": '=HYPERLINK("http://evil","x")'}])
    write_csv(t, tmp / "t.csv")
    cell = (tmp / "t.csv").read_text().splitlines()[1]
    return ProbeResult(not cell.lstrip('"').startswith("="), detail=cell[:60])


def _busy(command: tuple[str, ...]):
    def run(tmp: Path) -> ProbeResult:
        data = _warehouse()
        holder = subprocess.Popen(
            [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
             "print('held', flush=True); time.sleep(60)", str(data / "warehouse.duckdb")],
            stdout=subprocess.PIPE, text=True)
        try:
            holder.stdout.readline()
            r = _gp(*command, "--data-dir", data)
        finally:
            holder.kill()
            holder.wait()
        ok = r.returncode == 2 and "busy" in r.stderr and "Traceback" not in r.stderr
        return ProbeResult(ok, detail=(r.stderr.strip().splitlines() or [""])[0][:90])
    return run


PROBES = [
    Probe("11", "sql COPY … TO a file", _sql_refused("COPY offers TO '{tmp}/x.csv'", "x.csv")),
    Probe("11", "sql read_text('/etc/passwd')",
          _sql_refused("SELECT * FROM read_text('/etc/passwd')")),
    Probe("11", "sql read_csv('/etc/passwd')",
          _sql_refused("SELECT * FROM read_csv('/etc/passwd')")),
    Probe("11", "sql INSTALL httpfs", _sql_refused("INSTALL httpfs")),
    Probe("11", "sql SET external access on", _sql_refused("SET enable_external_access = true")),
    Probe("11", "sql two statements", _sql_refused("SELECT 1; DELETE FROM offers")),
    Probe("11", "sql DELETE FROM offers", _sql_refused("DELETE FROM offers")),
    Probe("12", "Slack <!channel> and hidden link", _slack),
    Probe("13", "manifest provider ../../escaped", _manifest),
    Probe("14", "CSV cell =HYPERLINK(…)", _csv),
    Probe("15", "sql while a load holds the file", _busy(("sql", "SELECT 1"))),
    Probe("15", "report while a load holds the file", _busy(("report",))),
]
