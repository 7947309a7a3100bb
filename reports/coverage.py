"""The coverage sentence the report and `gpuprices nightly` open with: how many providers the
figures cover on a day, how many are stale (listed below it), from the warehouse's
provider_coverage. One function, so the numbers are the same everywhere."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import duckdb


@dataclass(frozen=True)
class Coverage:
    as_of: dt.date
    max_age_days: int
    fresh: tuple[str, ...]
    stale: tuple[str, ...]
    no_data: tuple[str, ...]

    @property
    def known(self) -> int:
        return len(self.fresh) + len(self.stale) + len(self.no_data)

    def line(self) -> str:
        never = f"; {len(self.no_data)} never read" if self.no_data else ""
        return (f"Figures cover {len(self.fresh)} of {self.known} providers (latest snapshot on "
                f"or before {self.as_of} at most {self.max_age_days} days old); "
                f"{len(self.stale)} stale, listed below{never}.")


def coverage(con: duckdb.DuckDBPyConnection, as_of: dt.date, max_age_days: int) -> Coverage:
    rows = con.execute("SELECT provider, coverage FROM provider_coverage(?::DATE, "
                       "max_age_days := ?)", [as_of, max_age_days]).fetchall()

    def named(kind: str) -> tuple[str, ...]:
        return tuple(p for p, c in rows if c == kind)

    return Coverage(as_of, max_age_days, named("fresh"), named("stale"), named("no data"))
