"""Command-line tests: the commands run in this process (`cli`, typer's CliRunner) where what
is checked is what a command does; the real `gpuprices` entry point in a child process (`gp`)
where the process itself is (the nightly's Prefect server, the entry point)."""

import fcntl
import io
import os
import re
import subprocess
import sys
import urllib.request

import pytest
from rich.console import Console
from typer.testing import CliRunner

from gpuprices.flows.cli.main import app
from gpuprices.flows.pipeline import progress
from gpuprices.flows.pipeline.results import DayResult
from gpuprices.warehouse import db
from tests.conftest import FIXTURES, ROOT
from tests.faults.nights import NO_PAUSES_ENV
from tests.prefect_test_server import copy_database

WORKLOADS = ROOT / "sizing" / "workloads.toml"
REPLAY = "gpuprices nightly --replay all"


def gp(*args, env=None, timeout=180):
    full_env = os.environ | {"COLUMNS": "200"} | (env or {})
    return subprocess.run([sys.executable, "-m", "gpuprices", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=full_env)


def cli(*args, env=None) -> subprocess.CompletedProcess:
    """`gpuprices ARGS` run in this process, answered as `gp` answers (exit code, stdout,
    stderr); `env` is set in os.environ for the command's duration (a crawler it starts inherits
    it). An exception that escapes the command is raised here, never read as exit 1."""
    r = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"} | (env or {}),
                           terminal_width=200)
    if env:
        # urllib builds its process-wide default opener with the proxies of the environment it
        # first meets: one built under this command's env (a refusing http_proxy, say) would
        # send every later urlopen of this test process through it.
        urllib.request.install_opener(None)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return subprocess.CompletedProcess(args, r.exit_code, r.stdout, r.stderr)


@pytest.fixture
def dirs(tmp_path, runpod_archive):
    return ["--data-dir", tmp_path / "data", "--archive", runpod_archive]


def test_replay_then_sql(dirs):
    r = cli("crawl", "--replay", "all", "-p", "runpod", *dirs)
    assert r.returncode == 0, r.stderr
    assert "runpod" in r.stdout and "ok" in r.stdout
    # Not a terminal: one progress line per provider and step, with counts.
    assert "replayed runpod: 5 days" in r.stderr and "loaded   runpod: 5 days" in r.stderr
    # The summary opens with the coverage: Runpod alone was read (fresh on its own last day),
    # every other provider the registry declares never was.
    from gpuprices.spiders import registry
    first = r.stdout.split("run summary: ", 1)[1].splitlines()[1]
    assert first.startswith(f"Figures cover 1 of {len(registry.ids())} providers (latest "
                            "snapshot on or before 2026-09-29 at most 14 days old); 0 stale")
    assert first.endswith(f"; {len(registry.ids()) - 1} never read."), first
    r = cli("sql", "select count(distinct day) as days from cheapest_daily", *dirs[:2])
    assert r.returncode == 0 and r.stdout.splitlines() == ["days", "----", "5"]


def test_sql_reports_a_bad_query_and_a_missing_warehouse(tmp_path, dirs):
    r = cli("sql", "select 1", "--data-dir", tmp_path / "empty")
    assert r.returncode == 2 and "no warehouse" in r.stderr
    cli("crawl", "--replay", "2026-08-10", "-p", "runpod", *dirs)
    r = cli("sql", "select nope from offers", *dirs[:2])
    assert r.returncode == 2 and "query failed" in r.stderr


def test_live_without_network_fails_clearly_and_loads_nothing(dirs):
    # Every request goes through a proxy that refuses connections: no network is touched.
    proxy = {"http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"}
    r = cli("crawl", "--live", "-p", "runpod", *dirs, env=proxy | NO_PAUSES_ENV)
    assert r.returncode == 1
    assert "FAILED runpod: https://api.runpod.io/graphql" in r.stderr
    r = cli("sql", "select status, rows from runs", *dirs[:2])
    assert "failed" in r.stdout
    r = cli("sql", "select count(*) as n from offers", *dirs[:2])
    assert r.stdout.splitlines() == ["n", "-", "0"]


def test_import_capture_wraps_a_file(tmp_path):
    src = FIXTURES / "raw" / "runpod" / "runpod_io_pricing_wayback_20260810082317_jsonld.html"
    args = ["import-capture", src, "--provider", "runpod", "--url",
            "https://www.runpod.io/pricing", "--captured-at", "20260810082317",
            "--archive", tmp_path / "snap"]
    r = cli(*args)
    assert r.returncode == 0 and "archived in" in r.stdout
    assert (tmp_path / "snap" / "2026-08-10" / "runpod.warc.gz").exists()
    assert "already in" in cli(*args).stdout


def test_a_second_run_on_the_same_data_folder_refuses_to_start(tmp_path, dirs):
    data = tmp_path / "data"
    data.mkdir()
    with (data / "nightly.lock").open("a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        r = cli("crawl", "--replay", "all", "-p", "runpod", *dirs)
    assert r.returncode == 3 and "in progress" in r.stderr


# On the worker of the session's Prefect server, for its migrated database: the nightly's
# temporary server starts on a copy of it, as on a data folder that ran a night before.
@pytest.mark.xdist_group("prefect-server")
def test_nightly_prefect_flow_replays_and_reports(dirs, tmp_path, prefect_database):
    copy_database(prefect_database, tmp_path / "data" / "prefect")
    r = gp("nightly", "--replay", "all", "-p", "runpod", *dirs, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "runpod" in r.stdout and "2026-09-29" in r.stdout
    assert "replayed runpod: 5 days" in r.stderr and "loaded   runpod: 5 days" in r.stderr
    # The summary opens with the coverage: Runpod alone was read (fresh on its own last day),
    # every other provider the registry declares never was.
    from gpuprices.spiders import registry
    first = r.stdout.split("run summary: ", 1)[1].splitlines()[1]
    assert first.startswith(f"Figures cover 1 of {len(registry.ids())} providers (latest "
                            "snapshot on or before 2026-09-29 at most 14 days old); 0 stale")
    assert first.endswith(f"; {len(registry.ids()) - 1} never read."), first


def test_backfill_imports_real_history_once(tmp_path):
    snap = tmp_path / "snap"
    r = cli("backfill", "-p", "gcp", "--archive", snap)
    assert r.returncode == 0 and "6 archived" in r.stdout
    assert sorted(p.name for p in snap.iterdir())[:2] == ["2023-01-12", "2024-05-17"]
    r = cli("backfill", "-p", "gcp", "--archive", snap)
    assert "0 archived, 6 already there" in r.stdout


def test_load_rebuilds_the_warehouse_from_the_lake_and_compact_keeps_it(dirs, tmp_path):
    assert cli("crawl", "--replay", "all", "-p", "runpod", *dirs).returncode == 0
    count = "select count(*) as n, count(distinct snapshot_date) as days from offers"
    before = cli("sql", count, *dirs[:2]).stdout
    assert before.splitlines()[2].endswith("| 5")
    (tmp_path / "data" / "warehouse.duckdb").unlink()
    r = cli("load", *dirs)
    assert r.returncode == 0, r.stderr
    assert "from 5 partitions" in r.stdout
    assert cli("sql", count, *dirs[:2]).stdout == before
    r = cli("compact", *dirs[:2])
    assert r.returncode == 0 and "MB ->" in r.stdout, r.stderr
    assert cli("sql", count, *dirs[:2]).stdout == before
    assert not list((tmp_path / "data").glob(".*.part"))


def _invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args], terminal_width=200)


def test_help_texts_show_toml_table_names_as_written():
    for command in ("size", "rank", "report"):
        r = _invoke(command, "--help")
        assert r.exit_code == 0 and "[[workload]]" in r.output, r.output


def test_sql_prints_cells_and_headers_as_written(tmp_path):
    con = db.connect(tmp_path / "warehouse.duckdb")
    db.init_schema(con)
    con.close()
    r = _invoke("sql", """select '[red]hi[/red]' as "[b]head[/b]", 'a:x:b' as ":x:", """
                       """'[link=x]y' as c""", "--data-dir", tmp_path)
    assert r.exit_code == 0, r.output
    for text in ("[red]hi[/red]", "a:x:b", "[b]head[/b]", ":x:", "[link=x]y"):
        assert text in r.output


def test_size_takes_data_dir_like_every_command(tmp_path):
    r = _invoke("size", WORKLOADS, "--json", "--data-dir", tmp_path)
    assert r.exit_code == 0, r.output
    assert '"fits"' in r.output


@pytest.mark.parametrize("given, meant", [("H100", "H100-SXM-80GB"),
                                          ("H100 SXM", "H100-SXM-80GB"),
                                          ("A100-80GB", "A100-SXM-80GB"),
                                          ("rtx4090", "RTX4090-24GB")])
def test_an_unknown_gpu_name_suggests_the_close_canonical_ones(tmp_path, given, meant):
    r = _invoke("size", WORKLOADS, "--gpu", given)
    assert r.exit_code == 2 and "did you mean" in r.output and meant in r.output, r.output
    toml = tmp_path / "w.toml"
    toml.write_text(WORKLOADS.read_text().replace('gpu = "L40S-48GB"', f'gpu = "{given}"', 1))
    for command in ("size", "rank"):
        r = _invoke(command, toml, "--data-dir", tmp_path)
        assert r.exit_code == 2 and meant in r.output, r.output


@pytest.mark.parametrize("state", ["missing", "empty"])
def test_commands_reading_the_warehouse_suggest_the_offline_replay(tmp_path, state):
    if state == "empty":
        con = db.connect(tmp_path / "warehouse.duckdb")
        db.init_schema(con)
        con.close()
    for args in (["sql", "select * from offers"], ["rank", WORKLOADS], ["report"],
                 ["compact"], ["load"]):
        if state == "empty" and args[0] == "compact":
            continue  # an empty warehouse compacts fine
        r = _invoke(*args, "--data-dir", tmp_path)
        assert REPLAY in " ".join(r.output.split()), (args, r.output)  # rich wraps lines
        assert "gpuprices nightly first" not in r.output


def test_replay_progress_draws_a_bar_on_a_terminal():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    with progress.shown(console, {"runpod": 2, "aws": 0}):
        for day in (1, 2):
            progress.replayed(DayResult("runpod", None, rows=day))
        progress.replayed(DayResult("aws", None, status="failed"))
        progress.loaded(DayResult("runpod", None))
    assert "replay" in out.getvalue() and "3/3" in out.getvalue()
    progress.replayed(DayResult("runpod", None))  # none shown: ignored


def test_make_run_needs_neither_chromium_nor_root():
    r = subprocess.run(["make", "-n", "-B", "run", "GPUPRICES_CHROMIUM=/nowhere"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "chromium" not in r.stdout.lower() and "apt-get" not in r.stdout
    assert "uv pip install" in r.stdout and "pip install" in r.stdout  # uv, pip as fallback


def _cells(out: str, provider: str) -> list[str]:
    """The cells of `provider`'s row in a printed table."""
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if cells and cells[0] == provider:
            return cells
    raise AssertionError(f"no row for {provider} in:\n{out}")


def _make_run_queries() -> list[str]:
    """The `gpuprices sql` queries `make run` prints after the replay, as the Makefile has them."""
    text = (ROOT / "Makefile").read_text()
    return re.findall(r'gpuprices sql "([^"]+)"', text)


def test_make_run_table_shows_ages_and_no_offer_over_the_age_limit(tmp_path):
    """On the bundled snapshots, as `make run` replays them (AWS's 488 days left out for speed):
    Lambda's latest prices (2026-08-22) are 43 days older than the replay's last day
    (2026-10-04): stale in the status table, absent from the cheapest table, listed after it
    with their date."""
    args = ["--data-dir", tmp_path / "data", "--archive", ROOT / "snapshots"]
    r = cli("crawl", "--replay", "all", *[a for p in ("lambda", "runpod", "nebius", "crusoe")
                                         for a in ("-p", p)], *args)
    assert r.returncode == 0, r.stderr
    assert _cells(r.stdout, "lambda")[2:5] == ["2026-08-22", "43", "ok, stale (43 d)"]
    assert _cells(r.stdout, "crusoe")[2:5] == ["2026-10-04", "0", "ok"]
    cheapest, stale = _make_run_queries()
    r = cli("sql", cheapest, *args[:2])
    assert r.returncode == 0, r.stderr
    csv_out = cli("sql", cheapest, *args[:2], "--format", "csv").stdout.splitlines()
    names = csv_out[0].split(",")
    assert names[-2:] == ["snapshot_date", "age_days"]
    rows = [line.split(",") for line in csv_out[1:]]
    assert len(rows) > 20
    assert all(0 <= int(row[-1]) <= 14 for row in rows)
    assert "lambda" not in {row[names.index("provider")] for row in rows}
    r = cli("sql", stale, *args[:2], "--format", "csv")
    assert next(line.split(",") for line in r.stdout.splitlines()
                if line.startswith("lambda,"))[1:3] == ["2026-08-22", "43"]


def test_a_replay_of_an_older_date_is_judged_on_that_date(dirs):
    """A replayed day without a capture serves the provider's last snapshot on or before it,
    aged from that day: never a later snapshot, never a negative age."""
    assert cli("crawl", "--replay", "all", "-p", "runpod", *dirs).returncode == 0
    r = cli("crawl", "--replay", "2026-09-16", "-p", "runpod", *dirs)
    assert r.returncode == 1
    assert _cells(r.stdout, "runpod")[2:5] == ["2026-08-25", "22", "failed, stale (22 d)"]
    r = cli("crawl", "--replay", "2026-08-20", "-p", "runpod", *dirs)
    assert _cells(r.stdout, "runpod")[2:5] == ["2026-08-10", "10", "failed, serving 2026-08-10"]
    r = cli("crawl", "--replay", "2023-09-29", "-p", "runpod", *dirs)
    assert r.returncode == 0 and _cells(r.stdout, "runpod")[2:5] == ["2023-09-29", "0", "ok"]
    assert not re.search(r"-\d+ d\b", r.stdout)
