"""How current the warehouse is: providers too old to count as "now", and its last load."""

from __future__ import annotations

from typing import Any

from gpuprices.warehouse.queries.source import Source, arrow, out, reading


def stale_providers(source: Source, *, pandas: bool = False,
                    timeout_s: float | None = None) -> Any:
    """stale_providers: per provider whose latest snapshot is older than the age limit, its
    date, age in days and offer count (cheapest_now leaves them out)."""
    with reading(source, timeout_s) as con:
        return out(arrow(con, "SELECT * FROM stale_providers ORDER BY provider"), pandas)


def last_load(source: Source) -> dict[str, Any]:
    """What the last load left: the newest snapshot date and as-of day, when the last run
    finished and a lake partition was last loaded, and the offers count. Every load changes
    at least one of these (a load that loads nothing records nothing), so together they tag
    a version of the warehouse's answers (the API's ETag)."""
    with reading(source) as con:
        snap, as_of = con.execute("SELECT snapshot_date, as_of FROM latest_snapshot").fetchall()[0]
        run = con.execute("SELECT max(finished_at), count(*) FROM run_log").fetchall()[0]
        part = con.execute("SELECT max(loaded_at), count(*) FROM lake_loads").fetchall()[0]
    return {"snapshot_date": snap, "as_of": as_of, "last_run_finished_at": run[0],
            "runs": run[1], "last_partition_loaded_at": part[0], "partitions": part[1]}
