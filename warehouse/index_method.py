"""The GPU price index's method as pure functions (docs/index.md): the screens of each member's
prices against its own last accepted price, the one price per member per day, the minimum panel,
the interquartile mean and its band. No database here: warehouse/index_store.py reads the
candidates (view index_candidates) and stores what `compute` returns, so a test can build a
day's index by hand from the same inputs."""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction

# Raised whenever a rule or parameter below changes; stored with every published row, so rows
# published under an older method stay as they were (docs/index.md section 7).
METHOD_VERSION = 1

FIRST_DAY = dt.date(2023, 1, 1)  # the index history starts here (issue 26)
MIN_PANEL = 3  # fewer members: a gap (docs/index.md section 6)
OUTLIER_RATIO = 3.0  # a price over 3x or under 1/3 of the member's reference is a gross error
JUMP = 0.25  # a move of 25 % or more needs corroboration (getcomputable METHODOLOGY.md 5.2)
CORROBORATING_MOVE = 0.10  # ... by members moving 10 % or more the same way the same day
CORROBORATING_MEMBERS = 2  # ... at least this many of them
CONFIRM_WITHIN = 0.02  # a held price repeated within 2 % by the next observation is accepted
# A reference older than this is no reference: a price from another month (Runpod's 2023 page
# against its 2026 API) says nothing about today's glitches, and screening against it would hold
# every later price of a market that moved. The member starts afresh, as on its first day.
REFERENCE_MAX_AGE_DAYS = 31
DIGITS = Decimal("0.000001")  # values are stored with 6 decimals (DECIMAL(18,6))

SEGMENTS = ("all", "neocloud", "hyperscaler")
# Registry kind (spiders/registry.py KINDS) -> sub-index segment.
SEGMENT_OF_KIND = {"gpu_cloud": "neocloud", "hyperscaler": "hyperscaler"}


@dataclass(frozen=True)
class Candidate:
    """One member's price for one series on one snapshot (a row of view index_candidates)."""

    snapshot_date: dt.date
    gpu_model: str
    pricing_model: str
    member: str
    provider: str
    currency: str
    price: float  # per GPU-hour, in `currency`


@dataclass(frozen=True)
class Observation:
    """A candidate after the screens: `verdict` 'ok' (accepted) or the screen that held it;
    `reference` the member's last accepted observation before it (None for its first)."""

    cand: Candidate
    verdict: str
    reference: Candidate | None


@dataclass(frozen=True)
class IndexRow:
    day: dt.date
    gpu_model: str
    pricing_model: str
    segment: str
    value_usd: Decimal | None
    band_low_usd: Decimal | None
    band_high_usd: Decimal | None
    panel: int
    members: str  # JSON list, one object per member (sorted by member)
    reason: str | None  # why there is no value (None when there is one)
    method_version: int = METHOD_VERSION


def round6(x: float) -> Decimal:
    """The stored digits of a value: the exact binary value rounded half-even to 6 decimals."""
    return Decimal(x).quantize(DIGITS, rounding=ROUND_HALF_EVEN)


def interquartile_mean(prices: Iterable[float]) -> float:
    """The mean of the central half of the price mass: n sorted prices of mass 1/n each, the part
    of each inside [0.25, 0.75] weighing it (exact fractions, exact summation)."""
    xs = sorted(prices)
    n = len(xs)
    if not n:
        raise ValueError("interquartile mean of no prices")
    lo, hi = Fraction(1, 4), Fraction(3, 4)
    weights = [max(Fraction(0), min(Fraction(i + 1, n), hi) - max(Fraction(i, n), lo))
               for i in range(n)]
    return math.fsum(float(w) * x for w, x in zip(weights, xs, strict=True)) * 2


def quantile(prices: Iterable[float], q: float) -> float:
    """Linear-interpolation quantile of the prices (DuckDB's quantile_cont, numpy's default)."""
    xs = sorted(prices)
    h = (len(xs) - 1) * q
    i = math.floor(h)
    if i + 1 >= len(xs):
        return xs[-1]
    return xs[i] + (h - i) * (xs[i + 1] - xs[i])


def _ratio_verdict(price: float, ref: float) -> tuple[str, float]:
    r = price / ref
    if r > OUTLIER_RATIO or r < 1 / OUTLIER_RATIO:
        return "outlier", r
    if abs(r - 1) >= JUMP:
        return "jump", r
    return "ok", r


def screen(cands: Iterable[Candidate]) -> list[Observation]:
    """Screen one series' candidates (one GPU model and pricing model, every member) in date
    order against each member's last accepted price, in its quoted currency (docs/index.md
    section 4). A jump is accepted when CORROBORATING_MEMBERS other members moved at least
    CORROBORATING_MOVE the same way on the same snapshot day (each against its own reference);
    a held price repeated within CONFIRM_WITHIN by the member's next observation is accepted."""
    by_day: dict[dt.date, list[Candidate]] = defaultdict(list)
    for c in cands:
        by_day[c.snapshot_date].append(c)
    ref: dict[str, Candidate] = {}
    pending: dict[str, Candidate] = {}
    out: list[Observation] = []
    for day in sorted(by_day):
        todays = sorted(by_day[day], key=lambda c: c.member)
        first: dict[str, tuple[str, float]] = {}
        for c in todays:
            r = ref.get(c.member)
            if r is None or (c.snapshot_date - r.snapshot_date).days > REFERENCE_MAX_AGE_DAYS:
                first[c.member] = ("ok", 1.0)
            elif r.currency != c.currency:
                first[c.member] = ("currency", 1.0)
            else:
                first[c.member] = _ratio_verdict(c.price, r.price)
        for c in todays:
            verdict, ratio = first[c.member]
            if verdict == "jump":
                same_way = sum(
                    1 for m, (_, r) in first.items() if m != c.member
                    and ((ratio > 1 and r >= 1 + CORROBORATING_MOVE)
                         or (ratio < 1 and r <= 1 - CORROBORATING_MOVE)))
                if same_way >= CORROBORATING_MEMBERS:
                    verdict = "ok"
            if verdict != "ok":
                p = pending.get(c.member)
                if (p is not None and p.currency == c.currency
                        and abs(c.price / p.price - 1) <= CONFIRM_WITHIN):
                    verdict = "ok"  # the new level, seen twice: a repricing, not a glitch
            r = ref.get(c.member)
            fresh = r is not None and (c.snapshot_date - r.snapshot_date).days \
                <= REFERENCE_MAX_AGE_DAYS
            out.append(Observation(c, verdict, r if fresh else None))
            if verdict == "ok":
                ref[c.member] = c
                pending.pop(c.member, None)
            else:
                pending[c.member] = c
    return out


@dataclass(frozen=True)
class _Member:
    member: str
    provider: str
    price_usd: float
    price: float
    currency: str
    snapshot_date: dt.date
    status: str  # ok, or the screen that held today's price (its reference price is used)


def _member_on(obs: list[Observation], dates: list[dt.date], day: dt.date, max_age_days: int,
               usd: Callable[[str, dt.date], float | None]) -> _Member | None:
    """A member's price on `day`: its latest observation on or before it (`dates`: the
    observations' dates, in order) within the age limit; when that observation was held by a
    screen, its reference (if fresh enough); None: out."""
    i = bisect.bisect_right(dates, day)
    latest = obs[i - 1] if i else None
    if latest is None or (day - latest.cand.snapshot_date).days > max_age_days:
        return None
    c, status = latest.cand, "ok"
    if latest.verdict != "ok":
        if latest.reference is None or (day - latest.reference.snapshot_date).days > max_age_days:
            return None
        c, status = latest.reference, latest.verdict
    factor = usd(c.currency, day)
    if factor is None:
        return None
    return _Member(c.member, c.provider, c.price * factor, c.price, c.currency, c.snapshot_date,
                   status)


def _members_json(members: list[_Member]) -> str:
    return _members_text(tuple(sorted(members, key=lambda m: m.member)))


@functools.lru_cache(maxsize=4096)
def _members_text(members: tuple[_Member, ...]) -> str:
    """The members list as stored (a member's unchanged price gives the same text day after
    day, so it is built once)."""
    return json.dumps([
        {"member": m.member, "provider": m.provider, "price_usd": float(round6(m.price_usd)),
         "price": float(round6(m.price)), "currency": m.currency,
         "snapshot_date": m.snapshot_date.isoformat(), "status": m.status}
        for m in members], separators=(",", ":"))


def index_value(day: dt.date, gpu_model: str, pricing_model: str, segment: str,
                members: list[_Member]) -> IndexRow:
    """The row of one series on one day from its panel: the interquartile mean and the
    interquartile band when the panel has MIN_PANEL members, else a gap with its reason."""
    n = len(members)
    if n < MIN_PANEL:
        names = ", ".join(sorted(m.member for m in members))
        reason = (f"panel {n} < {MIN_PANEL}: {names}" if n else "no eligible price")
        return IndexRow(day, gpu_model, pricing_model, segment, None, None, None, n,
                        _members_json(members), reason)
    prices = [m.price_usd for m in members]
    return IndexRow(day, gpu_model, pricing_model, segment, round6(interquartile_mean(prices)),
                    round6(quantile(prices, 0.25)), round6(quantile(prices, 0.75)), n,
                    _members_json(members), None)


def compute(candidates: Iterable[Candidate], days: Iterable[dt.date],
            segment_of_member: Mapping[str, str | None], max_age_days: int,
            usd: Callable[[str, dt.date], float | None]) -> list[IndexRow]:
    """Every series' row on every index day (`days`, from FIRST_DAY on) from the series' first
    candidate on, per segment: `all`, and each member's segment (SEGMENT_OF_KIND of its
    provider's kind; None: only in `all`) from that segment's first candidate on. `usd(currency,
    day)`: the factor to USD on that day, None without a rate."""
    days = sorted(d for d in set(days) if d >= FIRST_DAY)
    series: dict[tuple[str, str], list[Candidate]] = defaultdict(list)
    for c in candidates:
        series[(c.gpu_model, c.pricing_model)].append(c)
    rows: list[IndexRow] = []
    for (gpu, pricing), cands in sorted(series.items()):
        by_member: dict[str, list[Observation]] = defaultdict(list)
        for o in screen(cands):
            by_member[o.cand.member].append(o)
        dates = {m: [o.cand.snapshot_date for o in obs] for m, obs in by_member.items()}
        starts: dict[str, dt.date] = {}
        for m, obs in by_member.items():
            segs = ["all"] + ([segment_of_member[m]] if segment_of_member.get(m) else [])
            for s in segs:
                first = obs[0].cand.snapshot_date
                starts[s] = min(starts.get(s, first), first)
        for day in days:
            panel = {m: _member_on(obs, dates[m], day, max_age_days, usd)
                     for m, obs in by_member.items()}
            for seg in SEGMENTS:
                if seg not in starts or day < starts[seg]:
                    continue
                members = [p for m, p in panel.items() if p is not None
                           and (seg == "all" or segment_of_member.get(m) == seg)]
                rows.append(index_value(day, gpu, pricing, seg, members))
    return rows
