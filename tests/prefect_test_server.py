"""The Prefect server settings of the tests' real servers (tests/conftest.py `prefect_server`,
the one `gpuprices serve` starts in tests/test_service_stop.py, the nightly's temporary one in
tests/test_cli.py)."""

import sqlite3
from pathlib import Path

# The server loops the tests never wait on, switched off on the tests' servers. Above all the
# scheduler: it would create runs of the registered deployments' crons (hourly crawls at :00, the
# load at :30), which the test workers then take, so a test running across such a minute saw a
# live crawl block a worker, or a scheduled load load the lake first. The others (late runs,
# worker heartbeats, pauses, cancellations, automations, expired leases) only cost CPU here.
# The event persister too: no test reads Prefect's event feed, and its batched writes to the
# SQLite database made the registration of deployments fail with "database is locked" (a 503
# the client retries after ~2 s of sleep, several times per worker start).
PREFECT_TEST_SERVER_ENV = {f"PREFECT_SERVER_SERVICES_{name}_ENABLED": "false" for name in (
    "SCHEDULER", "LATE_RUNS", "FOREMAN", "PAUSE_EXPIRATIONS", "CANCELLATION_CLEANUP",
    "TRIGGERS", "REPOSSESSOR", "EVENT_PERSISTER")} | {
    # A run refused a global concurrency slot retries after the limit's average occupancy
    # (up to 30 s by default): capped at 1 s, a test that releases a slot sees the waiting
    # run take it within a second.
    "PREFECT_SERVER_CONCURRENCY_MAXIMUM_CONCURRENCY_SLOT_WAIT_SECONDS": "1"}


# A new server's database: Prefect's default location inside PREFECT_HOME (its setting
# PREFECT_API_DATABASE_CONNECTION_URL, unset in the tests).
DATABASE = "prefect.db"


def copy_database(source: Path, home: Path) -> Path:
    """A consistent copy of the SQLite database `source` (a live server's, WAL mode: its
    newest pages may still be in the -wal file, which sqlite3's backup reads) as the database
    of a server that will start in `home`. The session's server migrated `source` with
    Prefect's own migrations; a server started on the copy finds it at the head revision and
    skips the ~120 migrations that take 7-8 s of CPU on a fresh database."""
    home.mkdir(parents=True, exist_ok=True)
    dest = home / DATABASE
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    out = sqlite3.connect(dest)
    try:
        src.backup(out)
    finally:
        out.close()
        src.close()
    return dest
