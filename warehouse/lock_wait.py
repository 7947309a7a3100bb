"""Opening the warehouse for writing while a reader (`gpuprices sql`, a report) holds it.

DuckDB lets one process write a database file, or any number read it, never both: a writer's
open fails (connection.connect raises WarehouseBusy) while a read-only connection is open
elsewhere. A load that gives up at once loses its night (its lake partitions stay unloaded until
a later run loads them), so it waits a bounded time, trying again after growing pauses.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from gpuprices.warehouse.connection import WarehouseBusy, connect

# Pauses between attempts: short at first (a quick query ends in a second or two), then at most
# this long, so a freed warehouse is taken within 15 s.
FIRST_PAUSE_S = 0.5
LONGEST_PAUSE_S = 15.0


def pauses(max_wait_s: float) -> list[float]:
    """The pauses of a wait of at most `max_wait_s` seconds: 0.5, 1, 2, 4, 8, 15, 15, ...,
    the last one cut so that they add up to the bound."""
    out: list[float] = []
    pause, left = FIRST_PAUSE_S, max_wait_s
    while left > 0:
        out.append(min(pause, left))
        left -= out[-1]
        pause = min(pause * 2, LONGEST_PAUSE_S)
    return out


def connect_when_free(db_path: Path | str, max_wait_s: float,
                      on_wait: Callable[[str], None] | None = None,
                      sleep: Callable[[float], None] = time.sleep) -> duckdb.DuckDBPyConnection:
    """Open the warehouse for writing, waiting up to `max_wait_s` seconds while another process
    holds it. `on_wait` hears once what is being waited for. Raises WarehouseBusy (naming the
    wait and DuckDB's words) when it is still held after the wait; other errors at once."""
    waited = 0.0
    for pause in [*pauses(max_wait_s), None]:
        try:
            return connect(db_path)
        except WarehouseBusy as exc:
            if pause is None:
                held = exc.__cause__ or exc
                raise WarehouseBusy(f"the warehouse {db_path} stayed busy for {waited:g} s: "
                                    f"another process holds it ({held})") from exc
            if waited == 0 and on_wait is not None:
                on_wait(f"the warehouse is held by another process; waiting up to "
                        f"{max_wait_s:g} s")
        sleep(pause)
        waited += pause
    raise AssertionError("unreachable")
