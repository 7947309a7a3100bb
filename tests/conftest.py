import csv
import json
import os
import shutil
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import NamedTuple

import pytest

from gpuprices.flows import loading
from gpuprices.spiders.crawl import CHROMIUM
from gpuprices.spiders.importer import import_capture, parse_timestamp
from tests.s3_server import BUCKET, S3Server

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"

# The crawler's own lookup (spiders/crawl.py): GPUPRICES_CHROMIUM, else Debian's path. Tests that
# drive a real browser say plainly that they did not run where there is none (`make test`
# installs it when it runs as root; a replay needs no browser).
BROWSER = os.environ.get("GPUPRICES_CHROMIUM", CHROMIUM)
needs_chromium = pytest.mark.skipif(
    not os.access(BROWSER, os.X_OK),
    reason=f"NOT RUN: no Chromium at {BROWSER} - install Debian's chromium (`make test` does, "
           "as root) or set GPUPRICES_CHROMIUM; a replay needs no browser")


# /tmp stays as the suite found it. Everything a test, or a program it starts (xdist workers,
# SeaweedFS, Prefect, crawler processes), writes to "the temporary folder" goes into one folder of
# this run: TMPDIR points there from the start, and children inherit it. The folder is removed at
# the end when every test passed (kept and named when one failed, to look into). Anything that
# still appears beside it in the real temporary folder was written to a hard-coded path: the run
# fails and names it. GPUPRICES_TMP_GUARD=off turns the check off on a machine where other programs
# write there at the same time.
REAL_TMP = Path(tempfile.gettempdir())
RUN_TMP_PREFIX = "gpuprices-tests-"


def _tmp_listing() -> set[str]:
    return set(os.listdir(REAL_TMP))


@pytest.hookimpl(tryfirst=True)  # before pytest's tmp_path factory reads --basetemp
def pytest_configure(config):
    if hasattr(config, "workerinput"):
        return  # an xdist worker: it inherited TMPDIR (and its --basetemp) from the run
    config.stash[_TMP_BEFORE] = _tmp_listing()
    run_tmp = Path(tempfile.mkdtemp(prefix=RUN_TMP_PREFIX, dir=REAL_TMP))
    config.stash[_RUN_TMP] = run_tmp
    if not config.option.basetemp:  # tmp_path under it; xdist gives each worker a folder in it
        config.option.basetemp = str(run_tmp / "p")
    os.environ["TMPDIR"] = str(run_tmp)
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again
    # `make test` runs one xdist worker per core: each DuckDB connection (in the workers and
    # the commands they start) on one thread, instead of one per core contending with the
    # other worker's (3-5 % less CPU for the DuckDB-heavy modules; warehouse/connection.py).
    if getattr(config.option, "numprocesses", None):
        os.environ.setdefault("GPUPRICES_DUCKDB_THREADS", "1")


# Before xdist's own hook, which turns the marks into the work units of --dist loadgroup.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """A test without an xdist group goes to its module's: `make test` then hands each module
    to one worker whole (as --dist loadscope would), so a module-scoped fixture (a warehouse
    re-parsed from the real archive, 2-7 s) is built once per run instead of once on each
    worker that ran some of the module's tests. The named groups still span modules."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.module.__name__.rpartition(".")[2]))
    # The longest groups first (`make test` passes --no-loadscope-reorder, so xdist hands the
    # groups out in this order): xdist's own order, by number of tests, sent the Prefect
    # server's 9 tests (a fifth of the run's time) last, and one worker ran them alone while
    # the other had finished.
    # (list.sort is stable: within a rank, the collection order stays.)
    rank = {name: i for i, name in enumerate(LONGEST_GROUPS_FIRST)}
    items.sort(key=lambda item: rank.get(_group(item), len(rank)))


# The groups that took longest in `make test` (per-group sums of the tests' wall times,
# 2026-12-06, two runs: prefect-server 84-137 s, bundled-warehouse 58-90 s, report 20-32 s,
# test_lake_compact 18-27 s, live-replay 16-18 s, test_nights 14-19 s; every other group
# under 17 s).
LONGEST_GROUPS_FIRST = ("prefect-server", "bundled-warehouse", "report", "test_lake_compact",
                        "live-replay", "test_nights")


def _group(item) -> str:
    mark = item.get_closest_marker("xdist_group")
    return mark.args[0] if mark.args else mark.kwargs.get("name", "")


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if hasattr(config, "workerinput") or _RUN_TMP not in config.stash:
        return
    run_tmp = config.stash[_RUN_TMP]
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if exitstatus == 0:
        shutil.rmtree(run_tmp, ignore_errors=True)
    elif tr is not None:
        tr.write_line(f"temporary files of this run kept in {run_tmp}")
    gained = sorted(_tmp_listing() - config.stash[_TMP_BEFORE] - {run_tmp.name})
    if gained and os.environ.get("GPUPRICES_TMP_GUARD", "").lower() != "off":
        if tr is not None:
            tr.write_line(f"FAILED: the suite left {len(gained)} entries in {REAL_TMP}, outside "
                          f"its own temporary folder: {', '.join(gained[:20])}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_TMP_BEFORE = pytest.StashKey[set]()
_RUN_TMP = pytest.StashKey[Path]()


def manifest_rows(provider: str | None = None) -> list[dict]:
    with (ROOT / "snapshots" / "manifest.csv").open(newline="") as fh:
        return [r for r in csv.DictReader(fh) if provider is None or r["provider"] == provider]


@pytest.fixture
def runpod_archive(tmp_path) -> Path:
    """A raw archive holding the four real Runpod captures under their own dates."""
    root = tmp_path / "snapshots"
    for r in manifest_rows("runpod"):
        import_capture(root, ROOT / r["file"], "runpod", r["url"],
                       parse_timestamp(r["captured_at"]), method=r["method"], origin=r["origin"],
                       partial=r["partial"] or None)
    return root


@pytest.fixture
def manifest_archive(tmp_path):
    """Build a raw archive from the manifest's real captures of the given providers."""

    def build(*providers: str) -> Path:
        root = tmp_path / "snapshots"
        for p in providers:
            for r in manifest_rows(p):
                import_capture(root, ROOT / r["file"], p, r["url"],
                               parse_timestamp(r["captured_at"]), method=r["method"],
                               origin=r["origin"], partial=r["partial"] or None)
        return root

    return build


def to_old_layout(con, *, without: tuple[str, ...] = ()) -> None:
    """Turn a warehouse into the layout warehouses had before the normalised store: a table
    `offers` holding the rows (less the `without` columns, standing for contract columns added
    later) and none of the store's tables."""
    from gpuprices.warehouse import db

    exclude = f" EXCLUDE ({', '.join(without)})" if without else ""
    con.execute(f"CREATE TABLE _rows AS SELECT *{exclude} FROM offers")  # noqa: S608
    for view in reversed(db.VIEWS):
        con.execute(f"DROP VIEW IF EXISTS {Path(view).name}")  # noqa: S608 (macros stay)
    for table in db._STORE_TABLES:
        con.execute(f"DROP TABLE {table}")  # noqa: S608
    con.execute("ALTER TABLE _rows RENAME TO offers")


# The week of the issue "Answers a buyer can act on": its last day, and the bundled snapshots
# each provider had by then.
W41_END = "2026-10-11"


class Post(NamedTuple):
    """One request an HTTPReceiver took: its path, Content-Type and JSON body."""
    path: str
    content_type: str | None
    body: dict


class HTTPReceiver:
    """A local HTTP server that records every JSON POST and answers `status` (200 until a test
    sets another): the alert channels' far end (a Slack-compatible webhook, Apprise's json://)."""

    def __init__(self) -> None:
        self.posts: list[Post] = []
        self.status = 200
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.posts.append(
                    Post(self.path, self.headers.get("Content-Type"), json.loads(body)))
                self.send_response(receiver.status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self._srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._srv.server_address[1]
        threading.Thread(target=self._srv.serve_forever, daemon=True).start()

    def shutdown(self) -> None:
        self._srv.shutdown()
        self._srv.server_close()


@pytest.fixture
def http_receiver(monkeypatch):
    """An HTTPReceiver on 127.0.0.1, reached without a proxy (NO_PROXY set for this test and the
    programs it starts)."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    receiver = HTTPReceiver()
    yield receiver
    receiver.shutdown()


@pytest.fixture(scope="session")
def w41_settings(tmp_path_factory):
    """A warehouse of each provider's latest bundled snapshot on or before 2026-10-11 (the real
    archive under snapshots/, read in place) and the bundled ECB rates: what `gpuprices rank
    --date 2026-10-11` and the 2026-W41 report see after `make run`, in a fraction of its time."""
    import datetime as dt

    from gpuprices.flows.config import Settings
    from gpuprices.flows.pipeline import steps as pipeline
    from gpuprices.spiders.archive import list_archives
    from gpuprices.warehouse.contract import PROVIDERS

    end = dt.date.fromisoformat(W41_END)
    s = Settings(tmp_path_factory.mktemp("w41") / "data", ROOT / "snapshots").ensure()
    results, listings = [], pipeline.Listings()
    # The whole listing, ECB files included: the gates' USD rates are cached under them.
    listings.archived = list_archives(s.archive_root)
    for p in PROVIDERS:
        days = [d for d, _, _ in pipeline.archives(s, [p], listed=listings.archived) if d <= end]
        results += pipeline.reparse(s, p, [max(days)], listings=listings)
    assert all(r.status != "failed" for r in results), [r.errors for r in results]
    loading.load(s, results, "20261011T020000-w41")
    return s


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """A SeaweedFS S3 server on loopback ports, one per test worker, stopped at the end."""
    server = S3Server(tmp_path_factory.mktemp("s3")).start()
    yield server
    server.stop()


@pytest.fixture
def s3(s3_server, monkeypatch, request) -> str:
    """`s3://bucket/<test>`: a prefix of its own for each test, the AWS variables pointing at the
    test server (shared AWS files switched off)."""
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    return f"s3://{BUCKET}/{request.node.name}"


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory):
    """A real Prefect server (`prefect server start`) on a free 127.0.0.1 port with its SQLite
    database in a temporary folder, one per test session (it takes 10-25 s to start); yields
    its API URL and stops it at the end. For the team-mode and service tests only."""
    from gpuprices.flows.ops.service import local_server
    from tests.prefect_test_server import DATABASE, PREFECT_TEST_SERVER_ENV, copy_database

    home = tmp_path_factory.mktemp("prefect-server")
    template = tmp_path_factory.getbasetemp() / "prefect-template"
    # The tests' own Prefect client (imported after this) keeps its files here, never in the
    # user's ~/.prefect.
    env = pytest.MonkeyPatch()
    env.setenv("PREFECT_HOME", str(tmp_path_factory.mktemp("prefect-client")))
    env.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    env.setenv("DO_NOT_TRACK", "1")
    try:
        with local_server(home, ui=False, env=PREFECT_TEST_SERVER_ENV) as api_url:
            # The database as the server left it once migrated and started, copied before any
            # test writes to it: the other servers of this worker start from it
            # (`prefect_database`).
            copy_database(home / DATABASE, template)
            yield api_url
    finally:
        env.undo()


@pytest.fixture(scope="session")
def prefect_database(prefect_server, tmp_path_factory) -> Path:
    """A freshly migrated Prefect database (the session server's, copied right after it
    started): a test that starts a Prefect server of its own (serve's, the nightly's temporary
    one) copies it into that server's PREFECT_HOME first (tests/prefect_test_server.py
    `copy_database`), so that only the session server pays for Prefect's migrations."""
    from tests.prefect_test_server import DATABASE

    return tmp_path_factory.getbasetemp() / "prefect-template" / DATABASE
