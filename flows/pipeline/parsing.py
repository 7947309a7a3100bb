"""Parsing one archive file: its captures split into snapshots (one a day for a daily provider,
one per crawl for an hourly one: spiders/registry.py CADENCES), in each snapshot for each request
its latest capture that parses, each page parsed alone, pages in a layout no parser knows held
for review (the parse step of flows/pipeline/steps.py)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from gpuprices.spiders import generic, registry
from gpuprices.spiders.archive import Capture, captures_per_request, future_problem, read_archive
from gpuprices.spiders.parsers import ParseError, parse_body_counted, postprocess, wants
from gpuprices.warehouse.contract import Offer

# An hourly provider's day holds one crawl an hour; a crawl's requests follow each other within
# seconds (pagination, Scrapy's retries), so a quiet spell this long starts the next snapshot.
# A crawl that ran into the next one's start (more than 45 minutes long) merges with it: for each
# request its latest capture counts, as within a daily provider's day.
SNAPSHOT_GAP = dt.timedelta(minutes=15)


@dataclass
class Parsed:
    offers: list[Offer]
    errors: list[ParseError]
    captures: int
    # Candidate rows of pages in a layout no parser knows, each with its quarantine reason:
    # held for review, never loaded on their own (store_day).
    held: list[tuple[Offer, str]] = field(default_factory=list)
    held_from: list[str] = field(default_factory=list)  # what the parser said of each page
    skipped: dict[str, int] = field(default_factory=dict)  # rows a parser passed over, by reason


def _parse_one(cap: Capture, provider: str) -> tuple[list[Offer], dict[str, int]]:
    """One capture's offers and the rows its parser passed over; a parser bug is a ParseError
    of that page, never the run's. A capture the archive could not give back whole (cut short,
    a digest that does not match, over the body cap) is a failed capture, never parsed."""
    if cap.damaged:
        raise ParseError(provider, cap.url, f"damaged capture in the archive: {cap.damaged}")
    try:
        return parse_body_counted(cap.body, cap.meta())
    except ParseError:
        raise
    except Exception as exc:
        raise ParseError(provider, cap.url, f"parser crashed: {exc!r}") from exc


def _at(cap: Capture) -> str:
    return f"{cap.captured_at.astimezone(dt.UTC):%Y-%m-%d %H:%M:%SZ}"


def snapshots_of(caps: list[Capture], provider: str) -> list[list[Capture]]:
    """A day's captures as snapshots, oldest first: the whole day for a daily provider, one per
    crawl (captures no more than SNAPSHOT_GAP apart) for an hourly one."""
    if registry.cadence(provider) != "hourly" or not caps:
        return [caps]
    ordered = sorted(caps, key=lambda c: c.captured_at)
    out = [[ordered[0]]]
    for cap in ordered[1:]:
        if cap.captured_at - out[-1][-1].captured_at > SNAPSHOT_GAP:
            out.append([])
        out[-1].append(cap)
    return out


def parse_archive(path: Path, provider: str) -> Parsed:
    """Offers from one archive file, snapshot by snapshot (snapshots_of): in each, for each
    request its latest capture that parses (a later one that fails is reported and the earlier
    good one used), each page parsed alone so that one broken page does not hide the others.
    Every offer's snapshot_at is the earliest capture time among its snapshot's offers.
    Captures dated later than now are refused; what made the file unreadable past some point is
    an error of the day naming the file."""
    now = dt.datetime.now(dt.UTC)
    errors: list[ParseError] = []
    caps = []
    read = read_archive(path, registry.body_cap(provider))
    errors += [ParseError(provider, str(path), problem) for problem in read.problems]
    for cap in read.captures:
        problem = future_problem(cap.captured_at, now)
        if problem:
            errors.append(ParseError(provider, cap.url, problem))
        else:
            caps.append(cap)
    out = Parsed(offers=[], errors=errors, captures=0)
    for snapshot in snapshots_of(caps, provider):
        _parse_snapshot(snapshot, provider, out)
    return out


def _parse_snapshot(caps: list[Capture], provider: str, out: Parsed) -> None:
    """One snapshot's captures parsed into `out` (offers, errors, held rows, counts)."""
    errors = out.errors
    offers: list[Offer] = []
    held: list[tuple[Offer, str]] = []
    held_from: list[str] = []
    skipped: dict[str, int] = {}
    used, chosen = [], []
    partial: list[str] = []  # why each parsed capture is partial, for postprocess's rows
    for group in captures_per_request(caps):
        if not wants(group[0].meta()):
            chosen.append(group[0])
            continue
        used.append(group[0])
        failures: list[ParseError] = []
        for cap in group:
            try:
                found, skips = _parse_one(cap, provider)
            except ParseError as exc:
                failures.append(exc)
                continue
            if cap.partial:  # offers absent from this capture were not read (offer_turnover)
                partial.append(cap.partial)
                for o in found:
                    o.extra["capture_partial"] = cap.partial
            offers.extend(found)
            chosen.append(cap)
            for reason, n in skips.items():
                skipped[reason] = skipped.get(reason, 0) + n
            if failures:
                errors.append(ParseError(provider, cap.url, (
                    f"the later capture of {_at(group[0])} could not be read "
                    f"({failures[0].problem}); used the capture of {_at(cap)}")))
            break
        else:  # no capture of this request parses: a page in an unknown layout is held
            candidates = (None if group[0].damaged else
                          generic.held(failures[0], group[0].body, group[0].meta()))
            if candidates:
                held += candidates
                held_from.append(str(failures[0]))
            else:
                errors.append(failures[0])
    if offers:
        offers = postprocess(provider, offers, sorted(chosen, key=lambda c: c.captured_at))
        if partial and not any("capture_partial" in o.extra for o in offers):
            # The postprocess rebuilt the rows (a marketplace's statistics over its listings:
            # Hyperbolic, Vast, Lium), so the listings' marks are gone; a figure computed from a
            # partial capture is partial, and the snapshot must stay marked (partial_snapshots).
            why = "; ".join(sorted(set(partial)))
            for o in offers:
                o.extra["capture_partial"] = why
    rows = offers + [o for o, _ in held]
    if rows:
        taken = min(o.captured_at for o in rows)
        for o in rows:
            o.snapshot_at = taken
    out.offers += offers
    out.captures += len(used)
    out.held += held
    out.held_from += held_from
    for reason, n in skipped.items():
        out.skipped[reason] = out.skipped.get(reason, 0) + n
