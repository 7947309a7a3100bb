"""What a run, its status table and summary, and the report's data health say of each configured
provider: one of STATES, never left out. One rule for all of them (`provider_state`); the run
statuses it reads are gpuprices.warehouse.tables.RUN_STATUSES as `runs` records them."""

from __future__ import annotations

from collections.abc import Iterable

STATES = ("ok", "degraded", "failed", "interrupted", "stale", "not run")
# A provider's day statuses, worst first: the one its line shows when a run read several days.
RUN_WORST_FIRST = ("failed", "degraded", "ok")


def provider_state(statuses: Iterable[str], age_days: int | None, max_age: int | None,
                   interrupted: bool = False) -> str:
    """A provider's state from the statuses of the days a run (or a report's week) read for it
    and the age of its latest good snapshot (None: it has none): failed when a day failed;
    interrupted when a run that set out to read it never finished (`interrupted`: what it
    recorded is not a complete run's); stale when that snapshot is older than `max_age` days
    (its offers are in no "now" figure); otherwise its worst day status, or "not run" when
    nothing was read for it."""
    seen = set(statuses)
    worst = next((s for s in RUN_WORST_FIRST if s in seen), None)
    if worst == "failed":
        return "failed"
    if interrupted:
        return "interrupted"
    if age_days is not None and max_age is not None and age_days > max_age:
        return "stale"
    return worst or "not run"
