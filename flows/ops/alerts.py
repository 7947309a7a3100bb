"""The run summary (Markdown, one file per run) and the run's alert (sent through Apprise).

Every run writes <data_dir>/runs/<run_id>.md: providers, rows, failures (a failed provider keeps
serving its last good snapshot, shown as stale with its age), quarantined rows by reason,
degraded providers, unmapped GPU names and the largest price moves.

When GPUPRICES_NOTIFY (Apprise URLs) or GPUPRICES_WEBHOOK_URL is set, failures, degraded
(held) providers, quarantined rows and price moves of at least GPUPRICES_ALERT_MOVE_PCT percent
(default 20) are sent as one message (flows/ops/notify.py). A price move is against the
provider's previous snapshot only when that snapshot is at most the age limit of "now" older
(14 days by default, $GPUPRICES_MAX_AGE_DAYS): a difference against an older one is counted apart
in the summary, never alerted on (a row the gates held is, always). The URLs are credentials:
they and every value of an environment variable named like a key, token, secret or password are
removed from anything we write or print (`redact`).
"""

from __future__ import annotations

import datetime as dt
import errno
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gpuprices.flows.config import Settings
from gpuprices.flows.ops import notify, warehouse_state
from gpuprices.flows.pipeline import gates
from gpuprices.flows.pipeline.results import DayResult, NotRun
from gpuprices.flows.redaction import (  # the variables alert callers set, re-exported
    NOTIFY_ENV,  # noqa: F401
    WEBHOOK_ENV,  # noqa: F401
    redact,
)
from gpuprices.reports.markdown_text import md_text

MOVE_PCT_ENV = "GPUPRICES_ALERT_MOVE_PCT"
DEFAULT_MOVE_PCT = 20.0
# A chat message is read, not searched: past these the run summary holds the rest.
_LINE_CHARS = 1000
_MAX_LINES = 45


def md_cell(text: object) -> str:
    """Provider text made safe inside a Markdown table cell or list item: secrets redacted,
    then the report's one escaping rule (reports/markdown_text.py: no row or column breaks, no
    raw HTML, no link, image, emphasis, heading or list)."""
    return md_text(redact(str(text)))


def move_threshold_pct() -> float:
    try:
        return float(os.environ.get(MOVE_PCT_ENV, DEFAULT_MOVE_PCT))
    except ValueError:
        return DEFAULT_MOVE_PCT


def _status(r: DayResult) -> str:
    if r.status == "failed" and r.stale_since is not None:
        return f"stale (failed; serving {r.stale_since}, {r.stale_days} days old)"
    if r.caught_up:
        return f"{r.status} (caught up: an earlier run wrote it, this one loaded it)"
    return r.status


def _gap_days(r: DayResult, m: gates.Move) -> int | None:
    return (r.snapshot_date - m.old_date).days if r.snapshot_date else None


def _moves(results: Iterable[DayResult], max_age: int | None = None
           ) -> list[tuple[str, gates.Move]]:
    """The run's price moves: against a snapshot at most `max_age` days older (the age limit of
    "now"; None: every move). A price against a snapshot older than that is no move of the last
    days (Runpod's 2026 API against its 2023 page), unless the gates held it (quarantined): a
    held row is news whatever the gap."""
    return [(r.provider, m) for r in results for m in r.moves
            if max_age is None or m.quarantined or (_gap_days(r, m) or 0) <= max_age]


def _far_moves(results: Iterable[DayResult], max_age: int | None
               ) -> dict[str, tuple[int, dt.date]]:
    """Per provider, the price differences _moves leaves out: how many, and the oldest date."""
    out: dict[str, tuple[int, dt.date]] = {}
    if max_age is None:
        return out
    for r in results:
        for m in r.moves:
            if not m.quarantined and (_gap_days(r, m) or 0) > max_age:
                n, since = out.get(r.provider, (0, m.old_date))
                out[r.provider] = (n + 1, min(since, m.old_date))
    return out


def _summary_head(run_id: str, results: list[DayResult]) -> list[str]:
    now = dt.datetime.now(dt.UTC)
    failed = sum(r.status == "failed" for r in results)
    degraded = sum(r.status == "degraded" for r in results)
    total_q = sum(r.quarantined for r in results)
    return [f"# gpuprices run {md_cell(run_id)}", "",
            f"Written {now:%Y-%m-%d %H:%M:%SZ}.", "",
            f"**{len(results)} provider-days: {sum(r.rows for r in results)} rows loaded, "
            f"{failed} failed, {degraded} degraded, {total_q} rows quarantined.**"]


def _providers_section(results: list[DayResult], others: Iterable[NotRun] = ()) -> list[str]:
    lines = ["", "## Providers", "",
             "| provider | snapshot | status | rows | quarantined | captures | problem |",
             "|---|---|---|---:|---:|---:|---|"]
    for r in results:
        problem = r.errors[0] + (f" (+{len(r.errors) - 1} more)" if len(r.errors) > 1 else "") \
            if r.errors else ""
        lines.append(f"| {md_cell(r.provider)} | {r.snapshot_date or '-'} | "
                     f"{md_cell(_status(r))} | {r.rows} | {r.quarantined} | {r.captures} | "
                     f"{md_cell(problem)} |")
    for o in others:  # configured but not read by this run: listed, never left out
        serving = (f"serving {o.last_good}, {o.age_days} days old" if o.last_good
                   else "no snapshot loaded")
        lines.append(f"| {md_cell(o.provider)} | - | {md_cell(o.describe())} | 0 | 0 | 0 | "
                     f"not in this run; {serving} |")
    return lines


def _failures_section(results: list[DayResult]) -> list[str]:
    failed = [r for r in results if r.status == "failed"]
    if not failed:
        return []
    lines = ["", "## Failures", ""]
    for r in failed:
        stale = (f" Still serving its {r.stale_since} snapshot ({r.stale_days} days old)."
                 if r.stale_since else " No earlier snapshot to serve.")
        lines.append(f"- **{md_cell(r.provider)}** {r.snapshot_date or ''}:{stale}")
        lines += [f"  - {md_cell(e)}" for e in r.errors]
    return lines


def _degraded_section(results: list[DayResult]) -> list[str]:
    degraded = [r for r in results if r.status == "degraded"]
    if not degraded:
        return []
    return ["", "## Degraded", ""] + [
        f"- **{md_cell(r.provider)}** {r.snapshot_date}: " + md_cell(r.degraded or r.message)
        for r in degraded]


def _reasons_section(title: str, intro: str, rows: list[tuple[DayResult, int, str]]
                     ) -> list[str]:
    """A section of one line per provider-day: how many rows, and why."""
    if not rows:
        return []
    lines = ["", f"## {title}", "", intro, "",
             "| provider | snapshot | rows | reasons |", "|---|---|---:|---|"]
    for r, n, reasons in rows:
        lines.append(f"| {md_cell(r.provider)} | {r.snapshot_date} | {n} | {md_cell(reasons)} |")
    return lines


def _quarantine_section(results: list[DayResult]) -> list[str]:
    return _reasons_section(
        "Quarantined rows",
        "Review with `gpuprices quarantine list --date D`; load reviewed rows with "
        "`gpuprices quarantine release --date D --provider P [--reason-like TEXT]`.",
        [(r, r.quarantined,
          ", ".join(f"{k}: {v}" for k, v in sorted(r.quarantine_reasons.items())))
         for r in results if r.quarantined])


def _skipped_section(results: list[DayResult], n_reasons: int = 8) -> list[str]:
    rows = []
    for r in results:
        top = sorted(r.skipped.items(), key=lambda kv: (-kv[1], kv[0]))
        more = f" (+{len(top) - n_reasons} more reasons)" if len(top) > n_reasons else ""
        text = ", ".join(f"{k}: {v}" for k, v in top[:n_reasons]) + more
        if top:
            rows.append((r, sum(r.skipped.values()), text))
    return _reasons_section(
        "Rows the parsers passed over",
        "Rows of a page that named an instance but no readable price (or were cut short); "
        "'Contact sales' is routine, a price given as 'N/A' in an API is not.", rows)


def _unmapped_section(results: list[DayResult]) -> list[str]:
    unmapped: dict[str, set[str]] = {}
    for r in results:
        unmapped.setdefault(r.provider, set()).update(r.unmapped)
    if not any(unmapped.values()):
        return []
    return ["", "## Unmapped GPU names", "",
            "Rows quarantined until warehouse/gpu_aliases.csv maps them (then reparse).",
            ""] + [f"- {md_cell(p)}: {', '.join(md_cell(n) for n in sorted(names))}"
                   for p, names in unmapped.items() if names]


def _moves_section(results: list[DayResult], n_moves: int, max_age: int | None = None
                   ) -> list[str]:
    moves = _moves(results, max_age)
    far = _far_moves(results, max_age)
    lines = ["", "## Largest price moves", ""]
    if far:
        lines += [f"Not counted as moves (against a snapshot more than {max_age} days older, "
                  "the age limit): " + "; ".join(
                      f"{md_cell(p)} {n} price differences, against prices as old as {since}"
                      for p, (n, since) in sorted(far.items())) + ".", ""]
    if not moves:
        lines.append("No price changed against the provider's previous snapshot"
                     + (f" within {max_age} days." if far else "."))
        return lines
    lines += ["| provider | offer | old | new | change | since |",
              "|---|---|---:|---:|---:|---|"]
    top = gates.largest_moves([m for _, m in moves], n_moves)
    owner = {id(m): p for p, m in moves}
    for m in top:
        lines.append(f"| {md_cell(owner[id(m)])} | {md_cell(gates.identity_text(m.ident))} "
                     f"| {m.old:g} | {m.new:g} {md_cell(m.currency)} | {m.pct:+.1f} %"
                     f"{' (quarantined)' if m.quarantined else ''} "
                     f"| {m.old_date} |")
    return lines


def _no_band_section(results: list[DayResult]) -> list[str]:
    no_band: dict[str, set[str]] = {}
    for r in results:
        no_band.setdefault(r.provider, set()).update(r.no_band)
    if not any(no_band.values()):
        return []
    return ["", "## Not checked against a price band", "",
            "No earlier price of the same GPU model, currency and pricing model (first "
            "snapshots): the schema and move gates still applied.", ""] + [
        f"- {md_cell(p)}: {len(v)} (e.g. {md_cell(', '.join(sorted(v)[:5]))})"
        for p, v in no_band.items() if v]


def render_summary(run_id: str, results: list[DayResult], *, n_moves: int = 10,
                   others: Iterable[NotRun] = (), max_age: int | None = None) -> str:
    """The run summary as Markdown: a head, then one section per kind of news (a section with
    nothing to say is left out, except providers and price moves). `others`: the configured
    providers the run did not read, each listed as not run (or stale). `max_age`: the age
    limit in days; price moves against an older snapshot are counted apart, not listed."""
    lines = (_summary_head(run_id, results) + _providers_section(results, others)
             + _failures_section(results) + _degraded_section(results)
             + _quarantine_section(results) + _skipped_section(results)
             + _unmapped_section(results)
             + _moves_section(results, n_moves, max_age) + _no_band_section(results))
    return "\n".join(lines) + "\n"


@dataclass
class Alert:
    """What a run has to say to the channels: a title, one line per item, and how bad."""
    title: str
    lines: list[str]
    kind: str  # notify.KINDS: "failure" when a provider failed, else "warning"

    @property
    def body(self) -> str:
        return "\n".join(self.lines)


def _quarantine_lines(results: list[DayResult]) -> list[str]:
    out = []
    for r in results:
        if r.quarantined and r.status != "degraded":  # a degraded day has its own line
            reasons = ", ".join(f"{k}: {v}" for k, v in sorted(r.quarantine_reasons.items()))
            out.append(f"QUARANTINED {r.provider} {r.snapshot_date}: {r.quarantined} rows "
                       f"held ({reasons or 'no reason recorded'})")
    return out


def alert_message(run_id: str, results: list[DayResult], threshold_pct: float | None = None,
                  max_age: int | None = None) -> Alert | None:
    """The run's alert: failures, degraded (held) providers, quarantined rows and price moves
    of at least the threshold, as plain text (each channel's Apprise plugin escapes what its
    format needs); None when there is nothing to alert on. A price against a snapshot more than
    `max_age` days older is no move to alert on (_moves)."""
    threshold = move_threshold_pct() if threshold_pct is None else threshold_pct
    lines: list[str] = []
    for r in results:
        if r.status == "failed":
            stale = (f" (stale: serving {r.stale_since}, {r.stale_days} days old)"
                     if r.stale_since else "")
            day = f" {r.snapshot_date}" if r.snapshot_date else ""
            lines.append(f"FAILED {r.provider}{day}{stale}: {r.message}")
    for r in results:
        if r.status == "degraded" and r.degraded:
            lines.append(f"DEGRADED {r.provider} {r.snapshot_date}: held, {r.degraded}")
    lines += _quarantine_lines(results)
    big = [(p, m) for p, m in _moves(results, max_age) if abs(m.pct) >= threshold]
    big.sort(key=lambda pm: -abs(pm[1].pct))
    for p, m in big:
        held = " (quarantined, not loaded)" if m.quarantined else ""
        lines.append(f"MOVE {p} {m.describe()}{held}")
    if not lines:
        return None
    title = (f"gpuprices run {run_id}: {sum(r.status == 'failed' for r in results)} failed, "
             f"{sum(r.status == 'degraded' for r in results)} degraded, "
             f"{sum(r.quarantined for r in results)} rows quarantined, {len(big)} price moves "
             f">= {threshold:g} %")
    shown = [redact(line)[:_LINE_CHARS] for line in lines[:_MAX_LINES]]
    if len(lines) > len(shown):
        shown.append(f"... and {len(lines) - len(shown)} more (see the run summary)")
    kind = "failure" if any(r.status == "failed" for r in results) else "warning"
    return Alert(redact(title), shown, kind)


def finish_run(settings: Settings, run_id: str, results: list[DayResult],
               others: Iterable[NotRun] = ()) -> Path:
    """Write the run summary, send the alert if a channel is set, print the summary's path
    (or, when it cannot be written, why: the caller finds no file there)."""
    max_age = warehouse_state.age_limit(settings.db_path)
    text = render_summary(run_id, results, others=others, max_age=max_age)
    if notify.configured():
        alert = alert_message(run_id, results, max_age=max_age)
        if alert is None:
            text += "\nAlerts: nothing to alert on.\n"
        else:
            problem = notify.send(alert.title, alert.body, alert.kind)
            if problem:
                print(f"alert not delivered: {problem}", file=sys.stderr)
                text += f"\nAlerts: NOT delivered ({md_cell(problem)}).\n"
            else:
                text += f"\nAlerts: {len(alert.lines)} alerts sent.\n"
    path = settings.runs_dir / f"{run_id}.md"
    tmp = path.with_name(f".{path.name}.part")
    try:
        settings.runs_dir.mkdir(parents=True, exist_ok=True, mode=0o755)
        tmp.write_text(redact(text))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:  # a full disk: say so plainly; the status table still prints
        tmp.unlink(missing_ok=True)
        full = " (disk full)" if exc.errno == errno.ENOSPC else ""
        print(f"error: the run summary could not be written to {path}{full}: "
              f"{exc.strerror or exc}", file=sys.stderr)
        return path
    print(f"run summary: {path}")
    return path
