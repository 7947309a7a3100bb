"""The fault suite: the network failing, bad bytes, the process killed mid-write, a full disk,
two runs at once, and the security basics. Nothing here touches the network: servers are local,
proxies point at a closed port."""

import ast
import collections
import errno
import json
import os
import re
import subprocess
import sys
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from gpuprices.flows import loading
from gpuprices.flows.config import Settings
from gpuprices.flows.pipeline import live
from gpuprices.flows.pipeline import steps as pipeline
from gpuprices.spiders.archive import list_archives, read_captures
from gpuprices.spiders.crawl import crawl_settings
from gpuprices.warehouse import lake, store
from gpuprices.warehouse.contract import PROVIDERS
from tests.conftest import FIXTURES, ROOT
from tests.faults.kill import DAY, run_killed
from tests.faults.mutations import MUTATIONS, run_corpus
from tests.faults.nights import NO_PAUSES_ENV
from tests.local_http import QuietHandler
from tests.test_cli import cli, gp

# ---------------------------------------------------------------------------------------------
# The mutation corpus

# Parser weaknesses the corpus found, reported to the parsers' owners (spiders/providers/ is not
# ours to edit). Listed exactly so that the test fails when one is fixed (remove it here) or a
# new one appears. Both are contained by the pipeline: parse_archive turns a crash into that
# page's ParseError, and neither affects the other captures.
KNOWN_PARSER_WEAKNESSES: set[tuple[str, str, str]] = set()


@pytest.fixture(scope="module")
def corpus():
    return list(run_corpus())


@pytest.mark.xdist_group("faults_corpus")  # the corpus is built once, on one worker
def test_the_corpus_covers_every_provider_with_at_least_ten_mutants(corpus):
    per_provider = collections.Counter(c.provider for c in corpus)
    assert set(per_provider) == set(PROVIDERS)
    assert min(per_provider.values()) >= 10
    assert {c.mutation for c in corpus} == set(MUTATIONS)
    # Not a corpus of trivially broken bytes only: some mutants still parse, correctly.
    assert sum(c.outcome == "correct" for c in corpus) >= 20


@pytest.mark.xdist_group("faults_corpus")
@pytest.mark.parametrize("provider", PROVIDERS)
def test_mutants_give_a_parse_error_or_correct_offers(corpus, provider):
    failed = {(c.provider, c.origin, c.mutation): c.outcome for c in corpus
              if c.provider == provider and not c.survived}
    known = {k for k in KNOWN_PARSER_WEAKNESSES if k[0] == provider}
    assert set(failed) == known, failed


def test_a_crashing_parser_is_contained_by_the_pipeline(tmp_path, monkeypatch):
    """What the known weaknesses mean for a run: the page fails with its URL, nothing loads."""
    from gpuprices.spiders.importer import import_capture, parse_timestamp

    body = json.loads((FIXTURES / "raw" / "gcp" /
                       "opencost_billing_catalog_skus_a100_a2_20230810.json").read_bytes())
    text = json.dumps(body)
    text = re.sub(r'"units": "(\d+)"', '"units": "call us"', text)
    text = re.sub(r'"nanos": \d+', '"nanos": "call us"', text)
    src = tmp_path / "skus.json"
    src.write_text(text)
    url = "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus"
    import_capture(tmp_path / "snap", src, "gcp", url, parse_timestamp("2023-08-10T12:00:00Z"))
    settings = Settings(data_dir=tmp_path / "data", archive_root=tmp_path / "snap").ensure()
    (res,) = pipeline.reparse(settings, "gcp")
    assert res.status == "failed" and res.errors[0].startswith(f"gcp: {url}: ")
    assert not lake.list_partitions(settings.lake_root)


# ---------------------------------------------------------------------------------------------
# The network: unreachable, 429, 500, a read timeout, a response over the size bound, robots.txt

API_BODY = (FIXTURES / "raw" / "runpod" / "runpod_graphql_gpuTypes_ewyluda_fixture.json"
            ).read_bytes()


class Flaky(QuietHandler):
    hits: collections.Counter = collections.Counter()

    def do_GET(self):
        Flaky.hits[self.path] += 1
        if self.path == "/robots.txt":
            self._send(200, b"User-agent: *\nDisallow: /private\n")
        elif self.path == "/throttled":
            self._send(429, b"slow down")
        elif self.path == "/broken":
            self._send(500, b"oops")
        elif self.path == "/slow":
            time.sleep(4)  # past DOWNLOAD_TIMEOUT (1 s)
            self._send(200, b"late")
        elif self.path == "/big":
            self._send(200, b"x" * 200_000)
        else:
            self._send(404, b"no")

    def do_POST(self):
        Flaky.hits[self.path] += 1
        self.rfile.read(int(self.headers["Content-Length"]))
        self._send(200, API_BODY, "application/json")


@pytest.fixture(scope="module")
def faulty_crawl(tmp_path_factory):
    """One crawl (one Scrapy start-up) of a plan where every request but one meets a fault."""
    Flaky.hits.clear()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    tmp = tmp_path_factory.mktemp("crawl")
    plan = [
        {"url": f"{base}/graphql", "method": "POST", "body": '{"query": "{ gpuTypes { id } }"}',
         "headers": {"Content-Type": "application/json"}},
        {"url": f"{base}/throttled"},
        {"url": f"{base}/broken"},
        {"url": f"{base}/slow"},
        {"url": f"{base}/big", "max_bytes": 50_000},
        # Another host name for the same server: its own downloader slot and robots.txt, so
        # the slow and failing requests above cannot delay the robots.txt fetch.
        {"url": f"{base.replace('127.0.0.1', 'localhost')}/private/pricing"},
        {"url": f"{base.replace('127.0.0.1', 'localhost')}/public/pricing"},
    ]
    (tmp / "plan.json").write_text(json.dumps(plan))
    settings = {"RETRY_TIMES": 2, "DOWNLOAD_DELAY": 0, "AUTOTHROTTLE_ENABLED": False,
                "DOWNLOAD_TIMEOUT": 1, "ROBOTSTXT_OBEY": True,
                "GPUPRICES_CRAWL_LOG_LEVEL": "INFO", "LOG_LEVEL": "INFO"}
    proc = subprocess.run(
        [sys.executable, "-m", "gpuprices.spiders.crawl", "--provider", "runpod", "--archive-root",
         str(tmp / "snap"), "--plan", str(tmp / "plan.json"), "--summary",
         str(tmp / "summary.json"), "--settings", json.dumps(settings)],
        capture_output=True, text=True, timeout=120, env=os.environ | {"no_proxy": "*"})
    srv.shutdown()
    summary = json.loads((tmp / "summary.json").read_text())
    return {"base": base, "tmp": tmp, "proc": proc, "summary": summary}


def _error(summary, base, path):
    (e,) = [e["error"] for e in summary["errors"] if e["url"] == f"{base}{path}"]
    return e


@pytest.mark.xdist_group("faulty_crawl")  # one crawl, on one worker
def test_429_and_500_are_retried_then_fail_cleanly(faulty_crawl):
    s, base = faulty_crawl["summary"], faulty_crawl["base"]
    assert faulty_crawl["proc"].returncode == 1
    assert Flaky.hits["/throttled"] == 3 and Flaky.hits["/broken"] == 3  # 1 try + 2 retries
    assert _error(s, base, "/throttled") == "HTTP 429"
    assert _error(s, base, "/broken") == "HTTP 500"


@pytest.mark.xdist_group("faulty_crawl")
def test_a_read_timeout_is_retried_then_reported(faulty_crawl):
    s, base = faulty_crawl["summary"], faulty_crawl["base"]
    assert Flaky.hits["/slow"] == 3
    assert "TimeoutError" in _error(s, base, "/slow") or "took longer" in _error(s, base, "/slow")


@pytest.mark.xdist_group("faulty_crawl")
def test_a_response_over_the_bound_is_refused_with_a_clear_error(faulty_crawl):
    s, base = faulty_crawl["summary"], faulty_crawl["base"]
    assert _error(s, base, "/big") == "response larger than the 50000 byte bound"
    assert Flaky.hits["/big"] == 1  # refused, not retried
    assert not [a for a in s["archived"] if a["url"].endswith("/big")]


@pytest.mark.xdist_group("faulty_crawl")
def test_robots_txt_is_obeyed_and_each_decision_logged(faulty_crawl):
    s, base = faulty_crawl["summary"], faulty_crawl["base"]
    local = base.replace("127.0.0.1", "localhost")
    assert Flaky.hits["/private/pricing"] == 0 and Flaky.hits["/public/pricing"] == 1
    decisions = {d["url"]: d["decision"] for d in s["robots"]}
    assert decisions[f"{local}/private/pricing"] == "forbidden"
    assert decisions[f"{local}/public/pricing"] == "allowed"
    assert decisions[f"{base}/graphql"] == "allowed"
    assert "Forbidden by robots.txt" in _error(s, local, "/private/pricing")
    assert f"robots.txt forbidden: {local}/private/pricing" in faulty_crawl["proc"].stderr


@pytest.mark.xdist_group("faulty_crawl")
def test_the_faulty_night_loads_only_the_good_page(faulty_crawl):
    """Failed responses stay archived (429/500 with their status), fail their page only, and
    nothing of them reaches the warehouse."""
    tmp = faulty_crawl["tmp"]
    ((day, _, path),) = list_archives(tmp / "snap")
    statuses = collections.Counter(c.status for c in read_captures(path))
    assert statuses == {200: 1, 429: 1, 500: 1, 404: 1}
    settings = Settings(data_dir=tmp / "data", archive_root=tmp / "snap").ensure()
    (res,) = pipeline.reparse(settings, "runpod")
    loading.load(settings, [res], "faulty")
    assert res.status == "degraded" and res.rows > 0
    assert sorted(e.rsplit(": ", 1)[1] for e in res.errors) == [
        "HTTP status 404, no prices to read", "HTTP status 429, no prices to read",
        "HTTP status 500, no prices to read"]
    con = duckdb.connect(str(settings.db_path), read_only=True)
    assert con.execute("select count(distinct source_url) from offers").fetchall() == [(1,)]
    con.close()


def test_network_unreachable_fails_cleanly_and_keeps_the_last_good_snapshot(tmp_path,
                                                                            runpod_archive):
    args = ["--data-dir", tmp_path / "data", "--archive", runpod_archive]
    assert cli("crawl", "--replay", "all", "-p", "runpod", *args).returncode == 0
    proxy = {"http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
             "GPUPRICES_PROVIDER_BACKOFF": "", "no_proxy": ""}
    r = cli("crawl", "--live", "-p", "runpod", *args, env=proxy | NO_PAUSES_ENV)
    assert r.returncode == 1 and "FAILED runpod: https://api.runpod.io/graphql" in r.stderr
    summary = Path(re.search(r"run summary: (\S+)", r.stdout).group(1)).read_text()
    assert re.search(r"\| runpod \| - \| stale \(failed; serving 2026-09-29, \d+ days old\) \|",
                     summary)
    r = cli("sql", "select distinct snapshot_date::varchar as d from latest_offers", *args[:2])
    assert "2026-09-29" in r.stdout


# ---------------------------------------------------------------------------------------------
# SIGKILL mid-write, a full disk

@pytest.fixture
def settings(tmp_path, runpod_archive):
    return Settings(data_dir=tmp_path / "data", archive_root=runpod_archive).ensure()


def _night(settings):
    (path,) = [p for _, _, p in pipeline.archives(settings, ["runpod"], [DAY])]
    return pipeline.parse_archive(path, "runpod")


def _offers(settings):
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        total, distinct = con.execute(
            "select count(*), count(distinct (sku, region, pricing_model, price_per_hour, "
            "source_url, extra)) from offers where snapshot_date = ?", [DAY]).fetchone()
        return total, distinct
    finally:
        con.close()


def _lake_ok(settings, expect_rows):
    """The partition is whole (it reads, with the expected rows) and no hidden leftover is
    visible to readers."""
    parts = [p for d, prov, p in lake.list_partitions(settings.lake_root) if d == DAY]
    if expect_rows is None:
        assert parts == []
        return
    (part,) = parts
    assert pq.read_table(part).num_rows == expect_rows


@pytest.mark.parametrize("first_write", [True, False], ids=["first-write", "rewrite"])
def test_sigkill_during_the_parquet_write_leaves_no_partial_partition(settings, first_write):
    good = pipeline.store_day(settings, "runpod", DAY, _night(settings))
    if first_write:
        lake.partition_path(settings.lake_root, DAY, "runpod").unlink()
    rc = run_killed("parquet", settings.data_dir, settings.archive_root)
    assert rc == -9
    _lake_ok(settings, None if first_write else good.rows)
    # The rerun completes, with every row once.
    res = pipeline.store_day(settings, "runpod", DAY, _night(settings))
    loading.load(settings, [res], "rerun")
    _lake_ok(settings, good.rows)
    assert _offers(settings) == (good.rows, good.rows)
    folder = lake.partition_path(settings.lake_root, DAY, "runpod").parent
    # Leftovers swept: the partition and its recorded checksum, which matches.
    assert sorted(p.name for p in folder.iterdir()) == [".part-0.parquet.sha256",
                                                         "part-0.parquet"]
    assert lake.checksum_problem(folder / "part-0.parquet") is None


@pytest.mark.parametrize("loaded_before", [False, True], ids=["first-load", "reload"])
def test_sigkill_during_the_duckdb_load_leaves_no_partial_day(settings, loaded_before):
    res = pipeline.store_day(settings, "runpod", DAY, _night(settings))
    if loaded_before:
        loading.load(settings, [res], "before")
    rc = run_killed("duckdb", settings.data_dir, settings.archive_root)
    assert rc == -9
    expected = (res.rows, res.rows) if loaded_before else (0, 0)
    assert _offers(settings) == expected  # the killed transaction left nothing behind
    loading.load(settings, [res], "rerun")
    assert _offers(settings) == (res.rows, res.rows)


def test_a_full_disk_during_the_parquet_write_is_a_clear_failure(settings, monkeypatch):
    good = pipeline.store_day(settings, "runpod", DAY, _night(settings))
    before = lake.partition_path(settings.lake_root, DAY, "runpod").read_bytes()

    def full(table, where, **kw):
        where.write(b"PAR1" + b"\0" * 1000)  # some bytes made it before the disk filled
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(pq, "write_table", full)
    res = pipeline.store_day(settings, "runpod", DAY, _night(settings))
    loading.load(settings, [res], "disk-full")
    assert res.status == "failed"
    assert res.errors[-1] == (f"runpod: could not write the lake partition for {DAY}: "
                              "No space left on device")
    folder = lake.partition_path(settings.lake_root, DAY, "runpod").parent
    # No half-written file: the old partition and its checksum, which still matches.
    assert sorted(p.name for p in folder.iterdir()) == [".part-0.parquet.sha256",
                                                         "part-0.parquet"]
    assert (folder / "part-0.parquet").read_bytes() == before
    assert lake.checksum_problem(folder / "part-0.parquet") is None
    assert _offers(settings) == (0, 0) and good.rows > 0  # nothing half-loaded either


def test_a_full_disk_during_the_duckdb_load_is_a_clear_failure(settings, monkeypatch):
    res = pipeline.store_day(settings, "runpod", DAY, _night(settings))
    loading.load(settings, [res], "first")
    real = store._insert_offers

    def full(con, day, provider, table):
        real(con, day, provider, table)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(store, "_insert_offers", full)
    again = pipeline.store_day(settings, "runpod", DAY, _night(settings))
    summary = loading.load(settings, [again], "disk-full")
    assert again.status == "failed"
    assert "loading 2026-09-29 into the warehouse failed: [Errno 28] No space left on device" \
        in again.errors[-1]
    assert _offers(settings) == (res.rows, res.rows)  # the previous load stands, whole
    assert "No space left on device" in summary.read_text()


# ---------------------------------------------------------------------------------------------
# Two nightly runs at once

def test_a_second_concurrent_nightly_run_exits_3_with_a_message(tmp_path, runpod_archive):
    data = tmp_path / "data"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from gpuprices.flows.ops.lock import run_lock; "
         "from gpuprices.flows.config import settings_from\n"
         "with run_lock(settings_from(sys.argv[1]).ensure()):\n"
         "    print('locked', flush=True); time.sleep(120)", str(data)],
        cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        r = gp("nightly", "--replay", "all", "-p", "runpod", "--data-dir", data,
               "--archive", runpod_archive)
        assert r.returncode == 3
        assert f"another gpuprices run is in progress (pid {holder.pid} since" in r.stderr
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    assert not (data / "warehouse.duckdb").exists()


# ---------------------------------------------------------------------------------------------
# Security basics

OUR_CODE = [p for d in ("warehouse", "spiders", "sizing", "flows", "bench")
            for p in (ROOT / d).rglob("*.py")]
SQL_WORDS = re.compile(r"\b(SELECT|INSERT\s+INTO|DELETE\s+FROM|UPDATE\s+\w+\s+SET|"
                       r"CREATE\s+(OR\s+REPLACE\s+)?(TABLE|VIEW)|ALTER\s+TABLE)\b", re.I)
HOLE = "\x00"
# Where a formatted hole stands for a value, not an identifier or a SQL fragment of ours: inside
# quotes, or right after a comparison, IN, LIKE, LIMIT, INTERVAL or VALUES.
VALUE_SPOT = re.compile(
    r"'[^'\s]*\x00|\x00[^'\s]*'|(=|<|>|\bIN|\bLIKE|\bLIMIT|\bOFFSET|\bINTERVAL|\bVALUES)"
    r"\s*\(?\x00",
    re.I)
# Reviewed exceptions, listed exactly so the test fails when another appears.
KNOWN_FORMATTED_CONSTANTS = {
    # COPY ... TO '<file>' takes no parameter for the file name in DuckDB; a temp path of ours.
    ("bench/warehouse_scale.py", "csv_dir / (day.isoformat() + '.csv')"),
}


def _sql_built_from_text(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, hole) for every value formatted into SQL text (f-string, .format or %)."""
    found = []
    for node in ast.walk(tree):
        holes: list[str] = []
        text = ""
        if isinstance(node, ast.JoinedStr):
            for v in node.values:
                if isinstance(v, ast.Constant):
                    text += v.value
                else:
                    text += HOLE
                    holes.append(ast.unparse(v.value))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "format" and isinstance(node.func.value, ast.Constant)
              and isinstance(node.func.value.value, str)):
            text = re.sub(r"\{[^}]*\}", HOLE, node.func.value.value)
            holes = [".format()"] * text.count(HOLE)
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)
              and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)):
            text = re.sub(r"%[sdrf]", HOLE, node.left.value)
            holes = ["%"] * text.count(HOLE)
        if not holes or not SQL_WORDS.search(text):
            continue
        pieces = text.split(HOLE)
        for i, hole in enumerate(holes):
            around = pieces[i][-40:] + HOLE + pieces[i + 1][:40]
            if VALUE_SPOT.search(around):
                found.append((node.lineno, hole))
    return found


def test_sql_takes_values_as_parameters_only():
    problems, known = [], set()
    for path in OUR_CODE:
        rel = str(path.relative_to(ROOT))
        for line, hole in _sql_built_from_text(ast.parse(path.read_text())):
            if (rel, hole) in KNOWN_FORMATTED_CONSTANTS:
                known.add((rel, hole))
            else:
                problems.append(f"{rel}:{line}: {hole}")
    assert problems == []
    assert known == KNOWN_FORMATTED_CONSTANTS  # fixed ones must leave the list
    # ruff's S608 (SQL built by string formatting) is on for the whole repository too.
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "S608", "--quiet",
                        *map(str, OUR_CODE)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout


def test_the_sql_check_catches_a_value_formatted_into_sql():
    for code in ['con.execute(f"SELECT * FROM offers WHERE provider = \'{p}\'")',
                 'con.execute(f"SELECT * FROM offers WHERE price > {p}")',
                 'con.execute("SELECT * FROM offers WHERE sku IN ({})".format(p))',
                 'con.execute("DELETE FROM offers WHERE sku LIKE %s" % p)']:
        assert _sql_built_from_text(ast.parse(code)), code
    fine = 'con.execute(f"INSERT INTO offers ({cols}) SELECT {cols} FROM {name}")'
    assert _sql_built_from_text(ast.parse(fine)) == []


def test_scrapy_remote_control_and_telnet_are_off():
    for browser in (False, True):
        s = crawl_settings(browser)
        assert s["REMOTE_CONTROL_ENABLED"] is False and s["TELNETCONSOLE_ENABLED"] is False
        assert s["ROBOTSTXT_OBEY"] is True
        assert s["DOWNLOADER_MIDDLEWARES"]["gpuprices.spiders.robots_log.RobotsDecisionLog"] == 101


def test_archive_and_data_folder_are_owner_writable_only(tmp_path):
    """Even under a permissive umask (0o002), what gpuprices creates is 0o755 / 0o644."""
    src = FIXTURES / "raw" / "runpod" / "runpod_io_pricing_wayback_20260810082317_jsonld.html"
    env = os.environ | {"COLUMNS": "200"}

    def run(*args):
        return subprocess.run([sys.executable, "-m", "gpuprices", *map(str, args)], env=env,
                              capture_output=True, text=True, timeout=120, cwd=ROOT,
                              preexec_fn=lambda: os.umask(0o002))

    snap, data = tmp_path / "snap", tmp_path / "data"
    r = run("import-capture", src, "--provider", "runpod", "--url",
            "https://www.runpod.io/pricing", "--captured-at", "20260810082317", "--archive", snap)
    assert r.returncode == 0, r.stderr
    r = run("crawl", "--replay", "all", "-p", "runpod", "--data-dir", data, "--archive", snap)
    assert r.returncode == 0, r.stderr
    made = [p for root in (snap, data) for p in [root, *root.rglob("*")]]
    assert any(p.suffix == ".parquet" for p in made) and any(p.suffix == ".md" for p in made)
    loose = {str(p.relative_to(tmp_path)): oct(p.stat().st_mode & 0o777) for p in made
             if p.stat().st_mode & 0o022}
    assert loose == {}


def test_an_unusable_warehouse_still_writes_the_summary(settings):
    res = pipeline.store_day(settings, "runpod", DAY, _night(settings))
    settings.db_path.mkdir(parents=True)  # a folder where the DuckDB file should be
    summary = loading.load(settings, [res], "no-db")
    assert res.status == "failed" and res.rows == 0
    assert "runpod: warehouse unavailable: " in res.errors[-1]
    assert "warehouse unavailable" in summary.read_text()


def test_a_provider_that_fetched_nothing_is_retried_with_backoff(settings, monkeypatch):
    outcomes = [
        pipeline.DayResult("runpod", None, status="failed", errors=["runpod: (crawl): refused"]),
        pipeline.DayResult("runpod", None, status="failed", errors=["runpod: (crawl): 429"]),
        pipeline.DayResult("runpod", DAY, rows=61),
    ]
    monkeypatch.setattr(live, "live_day", lambda s, p: outcomes.pop(0))
    slept = []
    res = live.live_day_with_backoff(settings, "runpod", [60, 300], sleep=slept.append)
    assert (res.status, res.rows, slept) == ("ok", 61, [60, 300])
    # Out of attempts: every attempt's error is kept.
    outcomes[:] = [pipeline.DayResult("runpod", None, status="failed", errors=[f"e{i}"])
                   for i in range(2)]
    res = live.live_day_with_backoff(settings, "runpod", [5], sleep=slept.append)
    assert res.status == "failed" and res.errors == ["e0", "runpod: attempt 2 after 5 s: e1"]
    # Pages fetched but unreadable: not retried, the bytes would be the same.
    outcomes[:] = [pipeline.DayResult("runpod", DAY, status="failed", errors=["layout"])]
    slept.clear()
    assert live.live_day_with_backoff(settings, "runpod", [5], sleep=slept.append).errors \
        == ["layout"] and slept == []
