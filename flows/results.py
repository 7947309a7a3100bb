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
    degraded: str | None = None  # why the gates marked the provider degraded
    stale_since: dt.date | None = None  # a failed provider's last good snapshot still served

    @property
    def message(self) -> str:
        return "; ".join(self.errors)

    @property
    def stale_days(self) -> int | None:
        if self.stale_since is None:
            return None
        return ((self.snapshot_date or dt.datetime.now(dt.UTC).date()) - self.stale_since).days
