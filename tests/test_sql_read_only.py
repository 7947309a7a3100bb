"""`gpuprices sql` reads the warehouse and nothing else (issue #11, item 11), and a busy
warehouse is a clear "busy", exit 2, for sql and report (item 15)."""

import datetime as dt
import re
import subprocess
import sys

import duckdb
import pytest

from tests.cli_batch import gp_batch
from tests.conftest import ROOT
from tests.test_cli import gp

README_QUERIES = re.findall(r'^(?:\.venv/bin/)?gpuprices sql "(.+?)"$',
                            (ROOT / "README.md").read_text(), re.DOTALL | re.MULTILINE)
# The module's one child process of read-only queries (`answers` below) runs once per run:
# `make test` (--dist loadgroup) runs the whole module on one xdist worker.
pytestmark = pytest.mark.xdist_group("sql-read-only")


def test_the_readme_has_queries_to_check():
    assert len(README_QUERIES) >= 10


REFUSED = [
    ("COPY (SELECT * FROM offers) TO '{tmp}/leak.csv'", "leak.csv"),
    ("SELECT * FROM read_text('/etc/passwd')", None),
    ("SELECT * FROM read_csv('/etc/passwd')", None),
    ("INSTALL httpfs", None),
    ("ATTACH '{tmp}/other.duckdb' AS other", "other.duckdb"),
    ("SET enable_external_access = true", None),
    ("EXPORT DATABASE '{tmp}/dump'", "dump"),
]
CHECKS = ["SELECT 1; SELECT 2", "DELETE FROM offers", "SELECT count(*) AS n FROM offers"]


@pytest.fixture(scope="module")
def answers(w41_settings, tmp_path_factory):
    """Every `gpuprices sql` of this module that only reads the warehouse, run in one child
    process (tests/cli_batch.py: a process per query would spend most of its time importing),
    in order: the README's queries, each refused query with a folder of its own as {tmp}, then
    CHECKS. Returns the README's results in order, and {query as written: (its folder, its
    result)} of the refused queries and of CHECKS (folder None)."""
    tmps = {q: tmp_path_factory.mktemp("refused") for q, _ in REFUSED}
    queries = [*README_QUERIES, *(q.format(tmp=tmps[q]) for q, _ in REFUSED), *CHECKS]
    runs = gp_batch(*(["sql", q, "--data-dir", w41_settings.data_dir] for q in queries))
    n = len(README_QUERIES)
    written = [*(q for q, _ in REFUSED), *CHECKS]
    return runs[:n], {q: (tmps.get(q), r) for q, r in zip(written, runs[n:], strict=True)}


def test_every_readme_query_still_answers(answers):
    failed = [(q, r.stdout[-500:] + r.stderr[-500:])
              for q, r in zip(README_QUERIES, answers[0], strict=True) if r.returncode]
    assert not failed


@pytest.mark.parametrize("query, path_seen", REFUSED)
def test_file_network_and_settings_access_is_refused(answers, query, path_seen):
    tmp_path, r = answers[1][query]
    assert r.returncode == 2 and "query failed" in r.stderr, (r.stdout, r.stderr)
    assert "root:" not in r.stdout  # /etc/passwd's first line never printed
    if path_seen:
        assert not (tmp_path / path_seen).exists()


def test_several_statements_are_refused_before_any_runs(answers):
    r = answers[1]["SELECT 1; SELECT 2"][1]
    assert r.returncode == 2 and "one statement at a time" in r.stderr


def test_writes_to_the_warehouse_are_refused(answers):
    r = answers[1]["DELETE FROM offers"][1]
    assert r.returncode == 2 and "query failed" in r.stderr
    r = answers[1]["SELECT count(*) AS n FROM offers"][1]
    assert r.returncode == 0 and re.search(r"\b[1-9]\d+\b", r.stdout)


def test_sql_and_report_say_busy_while_a_load_holds_the_warehouse(w41_settings, tmp_path):
    # Another process holds the file as a load does (one writing process, no readers beside it).
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
         "c.execute('BEGIN'); print('held', flush=True); time.sleep(120)",
         str(w41_settings.db_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        # Both commands in one child process (tests/cli_batch.py), beside the holder.
        held = (["sql", "SELECT 1"], ["report", "--week", "2026-W41"])
        runs = gp_batch(*([*args, "--data-dir", w41_settings.data_dir] for args in held))
        for args, r in zip(held, runs, strict=True):
            assert r.returncode == 2, (args, r.stderr)
            assert "is busy" in r.stderr and "Traceback" not in r.stderr, r.stderr
    finally:
        holder.kill()
        holder.wait()
    # Released: the same query answers again.
    assert gp("sql", "SELECT 1 AS one", "--data-dir", w41_settings.data_dir).returncode == 0


def test_the_lock_error_is_a_duckdb_io_error_for_callers_that_retry():
    from gpuprices.warehouse.db import WarehouseBusy
    assert issubclass(WarehouseBusy, duckdb.IOException)


def test_replaying_an_older_day_never_prints_a_negative_age(tmp_path, runpod_archive):
    dirs = ["--data-dir", tmp_path / "data", "--archive", runpod_archive]
    # Both replays in one child process, in order (tests/cli_batch.py).
    first, r = gp_batch(["crawl", "--replay", "all", "-p", "runpod", *dirs],
                        # A day between two archived Runpod days, after the warehouse already
                        # holds the later ones.
                        ["crawl", "--replay", "2024-06-01", "-p", "runpod", *dirs])
    assert first.returncode == 0
    row = next(line for line in r.stdout.splitlines() if "runpod" in line and "│" in line)
    cells = [c.strip() for c in row.split("│")[1:-1]]
    assert cells[2] == "2023-09-29"
    assert int(cells[3]) == (dt.date(2024, 6, 1) - dt.date(2023, 9, 29)).days
    assert "-" not in cells[3] and "(-" not in r.stdout and "(−" not in r.stdout
