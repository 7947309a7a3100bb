"""One pipeline run per data folder at a time: the nightly, the direct crawl, `load`, `compact`,
`quarantine release` and the scheduled nightly all take the same lock."""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import sys
from collections.abc import Iterator

import typer

from gpuprices.flows.config import Settings

# The exit code of a run that found another one holding the lock (README "Operations").
BUSY_EXIT = 3


@contextlib.contextmanager
def run_lock(settings: Settings) -> Iterator[None]:
    """At most one pipeline run per data folder: a second one says so and exits."""
    path = settings.data_dir / "nightly.lock"
    fh = path.open("a+")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.seek(0)
        holder = fh.read().strip() or "another process"
        print(f"another gpuprices run is in progress ({holder}); not starting a second one",
              file=sys.stderr)
        raise typer.Exit(BUSY_EXIT) from None
    fh.seek(0)
    fh.truncate()
    fh.write(f"pid {os.getpid()} since {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M:%SZ}")
    fh.flush()
    try:
        yield
    finally:
        fcntl.flock(fh, fcntl.LOCK_UN)
        fh.close()
