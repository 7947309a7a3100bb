"""ISO weeks: a report covers one, Monday to Sunday."""

from __future__ import annotations

import datetime as dt


def iso_week(day: dt.date) -> str:
    """The ISO week of `day`: '2026-W40'."""
    y, w, _ = day.isocalendar()
    return f"{y}-W{w:02d}"


def week_bounds(week: str) -> tuple[dt.date, dt.date]:
    """'2026-W48' -> (Monday, Sunday)."""
    try:
        year, num = week.upper().split("-W")
        monday = dt.date.fromisocalendar(int(year), int(num), 1)
    except ValueError:
        raise ValueError(f"week {week!r} is not YYYY-Www (e.g. 2026-W48)") from None
    return monday, monday + dt.timedelta(days=6)
