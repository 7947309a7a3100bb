"""Progress of a replay on the command line: provider-days parsed and checked, then loaded.

On a terminal a bar per step; otherwise (a log file, CI) one line per provider when its days are
done, so a log keeps counts instead of a redrawn bar. The pipeline reports through the module
functions `replayed` and `loaded`: the nightly flow's Prefect tasks call them from their worker
threads, and a display object cannot travel as a task or flow parameter (Prefect records those
with the run), so the display in force is held here while `shown` is open.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from gpuprices.flows.pipeline.results import DayResult


class RunProgress:
    """Counts provider-days per step against the days each provider has in the archive."""

    def __init__(self, console: Console, days: dict[str, int]):
        self.console = console
        self.days = {p: max(n, 1) for p, n in days.items()}  # a provider with none fails once
        self.done: dict[tuple[str, str], list[DayResult]] = {}
        self.lock = threading.Lock()
        self.bar: Progress | None = None
        self.tasks: dict[str, int] = {}

    def start(self) -> None:
        if not self.console.is_terminal:
            return
        self.bar = Progress(TextColumn("{task.description:<8}"), BarColumn(),
                            MofNCompleteColumn(), TextColumn("provider-days {task.fields[at]}"),
                            TimeElapsedColumn(), console=self.console, transient=False)
        total = sum(self.days.values())
        # The load's clock starts with its first provider-day, not with the replay's.
        self.tasks = {step: self.bar.add_task(step, total=total, at="", start=step == "replay")
                      for step in ("replay", "load")}
        self.bar.start()

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()

    def step_done(self, step: str, r: DayResult) -> None:
        with self.lock:
            got = self.done.setdefault((step, r.provider), [])
            got.append(r)
            if self.bar is not None:
                self.bar.start_task(self.tasks[step])
                self.bar.update(self.tasks[step], advance=1,
                                at=f"{r.provider} {r.snapshot_date or ''}")
            elif len(got) == self.days.get(r.provider, 1):
                self.console.print(_line(step, r.provider, got), highlight=False, markup=False)


def _line(step: str, provider: str, results: list[DayResult]) -> str:
    days = sum(r.snapshot_date is not None for r in results)
    failed = sum(r.status == "failed" for r in results)
    if step == "replay":
        return (f"replayed {provider}: {days} days, {sum(r.rows for r in results):,} rows, "
                f"{sum(r.quarantined for r in results):,} quarantined, {failed} failed")
    return f"loaded   {provider}: {days} days, {failed} failed"


_shown: RunProgress | None = None


@contextlib.contextmanager
def shown(console: Console, days: dict[str, int]) -> Iterator[RunProgress]:
    """Show the progress of a replay of `days` (provider -> archived days) while open."""
    global _shown
    display = RunProgress(console, days)
    display.start()
    _shown = display
    try:
        yield display
    finally:
        _shown = None
        display.stop()


def replayed(r: DayResult) -> None:
    """One provider-day parsed, checked and written to the lake."""
    if _shown is not None:
        _shown.step_done("replay", r)


def loaded(r: DayResult) -> None:
    """One provider-day loaded into the warehouse (or recorded as failed)."""
    if _shown is not None:
        _shown.step_done("load", r)
