"""The status table never counts a failed day as served (issue 30, item 11): it names the
snapshot the provider really serves and its age, as the run summary does."""

import datetime as dt

from rich.console import Console

from gpuprices.flows.ops.alerts import render_summary
from gpuprices.flows.ops.status import status_table
from gpuprices.flows.pipeline.results import DayResult

FAILED_ON = dt.date(2026, 10, 6)
LAST_GOOD = dt.date(2026, 8, 22)


def _text(table) -> str:
    console = Console(record=True, width=250)
    console.print(table)
    return console.export_text()


def _row(text: str, provider: str) -> str:
    (line,) = [ln for ln in text.splitlines() if f"│ {provider} " in ln]
    return " ".join(line.replace("│", " ").split())


def _results():
    return [DayResult("lambda", FAILED_ON, status="failed", errors=["lambda: HTTP 503"],
                      stale_since=LAST_GOOD, run_date=FAILED_ON),
            DayResult("runpod", FAILED_ON, rows=87, run_date=FAILED_ON)]


def test_a_failed_day_serves_the_last_good_snapshot_with_its_age():
    summary = render_summary("r1", _results())
    assert "serving 2026-08-22, 45 days old" in summary
    # Without an age limit: the snapshot served and its age, never the failed day, never 0.
    row = _row(_text(status_table(_results())), "lambda")
    assert row.startswith("lambda 1 2026-08-22 45 failed, serving 2026-08-22 0 "), row
    assert "2026-10-06" not in row
    # With the 14-day limit it is stale, by the same 45 days.
    row = _row(_text(status_table(_results(), 14)), "lambda")
    assert "2026-08-22 45 failed, stale (45 d)" in row, row
    # The provider that loaded keeps its day.
    assert _row(_text(status_table(_results(), 14)), "runpod").startswith(
        "runpod 1 2026-10-06 0 ok 87")


def test_a_failed_day_of_a_provider_never_loaded_serves_nothing():
    results = [DayResult("lambda", FAILED_ON, status="failed", errors=["lambda: HTTP 503"],
                         run_date=FAILED_ON)]
    row = _row(_text(status_table(results, 14)), "lambda")
    assert row.startswith("lambda 1 - - failed 0"), row
