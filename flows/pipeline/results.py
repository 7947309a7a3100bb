"""What a run did, per provider and snapshot date: the record the pipeline fills in and the
status table, the run summary and the alerts read."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from gpuprices.flows.pipeline import gates
from gpuprices.warehouse.states import provider_state


@dataclass
class DayResult:
    """What happened to one provider on one snapshot date."""

    provider: str
    snapshot_date: dt.date | None
    status: str = "ok"  # ok | failed | degraded
    rows: int = 0
    quarantined: int = 0
    captures: int = 0
    errors: list[str] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)
    moves: list[gates.Move] = field(default_factory=list)  # price changes vs previous snapshot
    quarantine_reasons: dict[str, int] = field(default_factory=dict)  # reason kind -> rows
    no_band: list[str] = field(default_factory=list)  # GPU models too new for the band gate
    skipped: dict[str, int] = field(default_factory=dict)  # rows the parsers passed over, by why
    degraded: str | None = None  # why the gates marked the provider degraded
    stale_since: dt.date | None = None  # a failed provider's last good snapshot still served
    # The day the run is about: the replayed date of `--replay DATE` (None: the snapshot date,
    # else today). A failed provider serves its last good snapshot on or before this day.
    run_date: dt.date | None = None
    # Loaded by this run from a lake partition an earlier run wrote but never loaded.
    caught_up: bool = False

    @property
    def message(self) -> str:
        return "; ".join(self.errors)

    @property
    def as_of(self) -> dt.date:
        """The day this result is judged on: run_date, else its snapshot date, else today."""
        return self.run_date or self.snapshot_date or dt.datetime.now(dt.UTC).date()

    @property
    def stale_days(self) -> int | None:
        if self.stale_since is None:
            return None
        return (self.as_of - self.stale_since).days


@dataclass(frozen=True)
class NotRun:
    """A configured provider the run did not read, with its last good snapshot on the run's day
    (from the warehouse) and that snapshot's age."""

    provider: str
    last_good: dt.date | None
    age_days: int | None
    state: str  # "not run", or "stale" when its last good snapshot is past the age limit

    def describe(self) -> str:
        """The status text of its line: 'not run' or 'not run, stale (N d)'."""
        return "not run" if self.state == "not run" else f"not run, stale ({self.age_days} d)"


def not_run(results: Iterable[DayResult], configured: Iterable[str],
            last_good: Mapping[str, dt.date], day: dt.date, max_age: int | None
            ) -> list[NotRun]:
    """The configured providers (in their order) that `results` holds no day of: every provider
    is listed in a run, never left out."""
    ran = {r.provider for r in results}
    out = []
    for p in configured:
        if p in ran:
            continue
        seen = last_good.get(p)
        age = (day - seen).days if seen else None
        out.append(NotRun(p, seen, age, provider_state((), age, max_age)))
    return out
