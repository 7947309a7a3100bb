"""What a run did, per provider and snapshot date: the record the pipeline fills in and the
status table, the run summary and the alerts read."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from flows import gates


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
