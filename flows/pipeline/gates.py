"""Quality gates between parse and load: pure functions over offers and a reference built from
earlier good data. Nothing here reads files; flows/pipeline/steps.py builds the `Reference` from
the lake and writes what the gates quarantine.

The gates, in order, for each parsed offer:

1. schema and types: known provider and pricing model, a non-empty SKU, a finite positive price
   and GPU count, a three-letter currency, `price_per_gpu_hour` = `price_per_hour / gpu_count`;
2. unmapped GPU wording (gpu_model None): quarantined and listed, never guessed;
3. one price per offer (warehouse/identity.py): of the rows of one identity, the row of the
   source first in identity.SOURCE_PRECEDENCE stands (among equals, the first read); another row
   of the same page is a duplicate, a row of another source or page is superseded, and its
   reason names both prices ("superseded: same offer read from the api at 3.49; page said
   2.99"). So the warehouse never gets one offer at two prices on one day from reading it twice.
   This step runs on the rows that passed 1 and 2, before 4 and 5: the price that stands is
   decided by where it was read, not by which of the prices the later gates would have kept;
4. plausible per-GPU band: `price_per_gpu_hour` must lie between half the lowest and twice the
   highest per-GPU price known for the same GPU model, currency and pricing model. Known: the
   range the warehouse's own history spans (warehouse/price_bands.csv, every real price of the
   full replay of the bundled snapshots) widened by the prices in every provider's last good
   snapshot (at most BAND_WINDOW_DAYS old), so the band follows the market once a reviewer
   releases a new low. Per pricing model because spot and committed prices sit far below
   on-demand ones by design. Why x/÷ BAND_MARGIN (2) around the known range and not the old
   x/÷ 20 around a median: a band wider than 10 cannot stop a x10 unit error, and the known
   range of most models is already 1.5-7x wide; a GPU price may still halve below its lowest or
   double above its highest and load. Of the 17,748 real rows of the full replay, a x10 copy of
   95 % (99.0 % of on-demand rows; Crusoe's H100 3.90 -> 39.00 among them) falls outside the
   band; the rest sit in models whose real spread is itself near 10 (spot L4 0.08-1.44).
   Without any known price the band is not applied (the run summary lists those models):
   the first night of a GPU model, currency and pricing model has nothing to compare with;
5. move: against the same offer identity's (warehouse/identity.py) price in the provider's
   last good snapshot, whatever its age; a move beyond MOVE_FACTOR (3x) either way is
   quarantined when that snapshot is at most MOVE_LONG_GAP_DAYS (31) old, beyond
   MOVE_FACTOR_LONG_GAP (6x) when it is older. Genuine moves across long gaps are larger (GCP
   spot a3-highgpu 98.65 -> 21.57 USD/h, 4.6x, between the 2025-06-26 and 2026-01-22
   snapshots, the largest in the bundled history) but smaller than the unit errors the gate is
   for: an 8-GPU node's price read as one GPU's (x8), a x10 slip, cents read as dollars (x100),
   a monthly price read as hourly (x730).

Three more checks run between 3 and 4 on the rows that stand (issue 30): an on-demand price
below a committed or reserved price of the same offer that day (`commitment: …`), and an
on-demand or committed price below a third of the same offer's median across at least 3 of the
provider's regions that day (`regions: …`), have lost a part and are held; a price in a currency
the archived ECB rates do not quote on or before its day is held (`currency: …`), and a price in
another currency than USD is judged by the band of its own currency when one is known, else by
the USD band after conversion, and by the move gate in USD when the offer's currency changed.

Per provider-day, a row count below half the last good snapshot's (when that snapshot is at
most ROW_COUNT_WINDOW_DAYS old: years of replayed history change a page's size for real)
marks the provider degraded: it still loads, and the run summary and the alert say so.
Rows released by a reviewer (`gpuprices quarantine release`) are exempt from gates 4 and 5 for
that date, provider, identity and price, and stand in gate 3 over the row that superseded them,
so a reparse does not quarantine them again.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gpuprices.warehouse import identity
from gpuprices.warehouse.contract import CONTRACT_PROBLEM, PRICING_MODELS, PROVIDERS, Offer

MOVE_FACTOR = 3.0
MOVE_LONG_GAP_DAYS = 31
MOVE_FACTOR_LONG_GAP = 6.0
ROW_COUNT_WINDOW_DAYS = 7
BAND_MARGIN = 2.0
BAND_WINDOW_DAYS = 365
DROP_RATIO = 0.5

_CURRENCY = re.compile(r"^[A-Z]{3}$")

# What makes two rows on two dates 'the same offer': warehouse/identity.py, shared with the
# warehouse's history and with quarantine releases.
Identity = identity.Identity


def identity_text(ident: Identity) -> str:
    months = ident.commitment_months
    parts = [str(ident.sku), ident.region or "-",
             f"{ident.pricing_model}" + (f" {months}m" if months else "")]
    if ident.effective_from:
        parts.append(f"from {ident.effective_from}")
    parts += [str(v) for v in ident[len(identity.COLUMNS):] if v]
    return " / ".join(parts)


def is_released(ref: Reference, ident: Identity, price: float) -> bool:
    """Whether a reviewer released this identity at this price. Releases recorded before
    identities were stored by name have no gpu_count (None): they match any count."""
    price = round(price, 6)
    return ((ident, price) in ref.released
            or (ident._replace(gpu_count=None), price) in ref.released)


@dataclass(frozen=True)
class Move:
    """A price change of one offer identity against its previous snapshot."""

    ident: Identity
    old: float
    new: float
    old_date: dt.date
    currency: str
    quarantined: bool = False  # beyond MOVE_FACTOR: held back, not loaded

    @property
    def ratio(self) -> float:
        return self.new / self.old

    @property
    def pct(self) -> float:
        return (self.ratio - 1.0) * 100.0

    def describe(self) -> str:
        return (f"{identity_text(self.ident)}: {self.old:g} -> {self.new:g} {self.currency}/h "
                f"({self.pct:+.1f} % since {self.old_date})")


@dataclass
class Reference:
    """Earlier good data the gates compare against."""

    prev_date: dt.date | None = None  # the provider's last good snapshot, whatever its age
    prev_prices: dict[Identity, tuple[float, float]] = field(default_factory=dict)  # min, max
    prev_rows: int | None = None  # its row count, when inside ROW_COUNT_WINDOW_DAYS
    # (gpu_model, currency, pricing_model) -> per-GPU prices of every provider's last snapshot
    band: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)
    # (gpu_model, currency, pricing_model) -> (lowest, highest) per-GPU price in the history
    known: dict[tuple[str, str, str], tuple[float, float]] = field(default_factory=dict)
    released: set[tuple[Identity, float]] = field(default_factory=set)
    # units of a currency per USD on a day (flows/pipeline/usd_rates.py), None when the ECB has
    # no rate for it: a price in another currency is judged in USD, or held without a rate.
    per_usd: Callable[[str, dt.date], float | None] | None = None

    def usd_factor(self, currency: str, day: dt.date) -> float | None:
        """Units of `currency` per USD on `day`; 1 for USD; None without a rate."""
        if currency == "USD":
            return 1.0
        return self.per_usd(currency, day) if self.per_usd is not None else None


@dataclass
class GateResult:
    good: list[Offer] = field(default_factory=list)
    bad: list[tuple[Offer, str]] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)
    degraded: str | None = None
    no_band: list[str] = field(default_factory=list)  # GPU models the band could not check


def schema_problem(o: Offer) -> str | None:
    """Why a row breaks the offer contract, or None."""
    if isinstance(o.extra, dict) and o.extra.get(CONTRACT_PROBLEM):  # what make_offer found
        return str(o.extra[CONTRACT_PROBLEM])
    if o.provider not in PROVIDERS:
        return f"unknown provider {o.provider!r}"
    if o.pricing_model not in PRICING_MODELS:
        return f"unknown pricing_model {o.pricing_model!r}"
    if not isinstance(o.sku, str) or not o.sku.strip():
        return "empty sku"
    if not isinstance(o.snapshot_date, dt.date) or isinstance(o.snapshot_date, dt.datetime):
        return f"snapshot_date {o.snapshot_date!r} is not a date"
    for name in ("price_per_hour", "price_per_gpu_hour", "gpu_count"):
        v = getattr(o, name)
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            return f"{name} {v!r} is not a number"
        if v <= 0:
            return f"{name} {v!r} is not positive"
    if not isinstance(o.currency, str) or not _CURRENCY.match(o.currency):
        return f"currency {o.currency!r} is not an ISO code"
    if not math.isclose(o.price_per_gpu_hour, o.price_per_hour / o.gpu_count, rel_tol=1e-6):
        return (f"price_per_gpu_hour {o.price_per_gpu_hour} is not price_per_hour / gpu_count "
                f"({o.price_per_hour} / {o.gpu_count})")
    if not isinstance(o.extra, dict):
        return "extra is not an object"
    return None


def band_key(o: Offer) -> tuple[str, str, str]:
    return (o.gpu_model, o.currency, o.pricing_model)


def band_for(ref: Reference, o: Offer, key: tuple[str, str, str] | None = None
             ) -> tuple[float, float] | None:
    """The plausible per-GPU price range of the offer's GPU model, currency and pricing model
    (or of `key`), or None when no price of them is known."""
    key = key or band_key(o)
    prices = list(ref.band.get(key, ())) + list(ref.known.get(key, ()))
    if not prices:
        return None
    return min(prices) / BAND_MARGIN, max(prices) * BAND_MARGIN


def move_limit(gap_days: int) -> float:
    """How far a price may move against its last good price `gap_days` older and still load."""
    return MOVE_FACTOR if gap_days <= MOVE_LONG_GAP_DAYS else MOVE_FACTOR_LONG_GAP


def _source(o: Offer) -> str:
    return str(o.extra.get("source") or "unknown source")


def superseded_reason(loser: Offer, winner: Offer) -> str:
    """Why `loser` does not stand beside `winner`, the row of the same offer that does."""
    if loser.source_url == winner.source_url:
        return "duplicate of another row from the same page"
    if _source(loser) == _source(winner):
        return (f"superseded: same offer read from {winner.source_url} at "
                f"{winner.price_per_hour:g}; {loser.source_url} said {loser.price_per_hour:g}")
    return (f"superseded: same offer read from the {_source(winner)} at "
            f"{winner.price_per_hour:g}; {_source(loser)} said {loser.price_per_hour:g}")


def one_price_per_offer(offers: Iterable[Offer], ref: Reference | None = None
                        ) -> tuple[list[Offer], list[tuple[Offer, str]]]:
    """One provider-day's rows split into the one row per offer identity that stands and the
    others, each with the reason it was held back. The row that stands: one a reviewer released
    at its price (`ref.released`: the reviewer chose it over the one that stood), else the first
    by identity.SOURCE_PRECEDENCE, then the order read. Rows keep the order read."""
    offers = list(offers)
    ref = ref or Reference()

    def rank(o: Offer) -> tuple[int, int]:
        released = is_released(ref, identity.of_offer(o), o.price_per_hour)
        return (0 if released else 1, identity.source_rank(o.extra.get("source")))

    best: dict[Identity, int] = {}
    for i, o in enumerate(offers):
        ident = identity.of_offer(o)
        j = best.get(ident)
        if j is None or rank(o) < rank(offers[j]):
            best[ident] = i
    winners = set(best.values())
    standing = [o for i, o in enumerate(offers) if i in winners]
    held = [(o, superseded_reason(o, offers[best[identity.of_offer(o)]]))
            for i, o in enumerate(offers) if i not in winners]
    return standing, held


COMMITTED_MODELS = ("committed", "reserved")


def _hold_unreleased(offers: list[Offer], ref: Reference, reason: Callable[[Offer], str | None]
                     ) -> tuple[list[Offer], list[tuple[Offer, str]]]:
    """(kept, held): an offer is held with `reason(o)` where that names one and no reviewer's
    release covers the offer at its price; every other offer is kept, in order."""
    keep, held = [], []
    for o in offers:
        why = reason(o)
        if why is not None and not is_released(ref, identity.of_offer(o), o.price_per_hour):
            held.append((o, why))
        else:
            keep.append(o)
    return keep, held


def _same_offer_any_term(o: Offer) -> tuple:
    """What an on-demand row and its own commitment rows share: the thing bought, where, in
    what currency, from when (not the term, nor its pricing model or wording)."""
    return (o.provider, o.sku, o.region, o.gpu_model, o.gpu_count, o.currency, o.effective_from)


def _below_own_commitment(offers: list[Offer], ref: Reference
                          ) -> tuple[list[Offer], list[tuple[Offer, str]]]:
    """On-demand rows priced below a commitment price of the same offer the same day, held:
    a commitment is a discount on the on-demand price, so an on-demand price below it has lost
    a part (GCP's 2023-01-12 history: northamerica-northeast2 a2-highgpu-1g on-demand 0.814064/h
    without its GPU, its 1-year commitment 2.546/h). A reviewer's release lets one load."""
    lowest: dict[tuple, Offer] = {}
    for o in offers:
        if o.pricing_model in COMMITTED_MODELS:
            key = _same_offer_any_term(o)
            if key not in lowest or o.price_per_hour < lowest[key].price_per_hour:
                lowest[key] = o

    def reason(o: Offer) -> str | None:
        c = lowest.get(_same_offer_any_term(o)) if o.pricing_model == "on_demand" else None
        if c is None or not o.price_per_hour < c.price_per_hour:  # not `>=`: NaN is kept
            return None
        term = f"{c.commitment_months}-month " if c.commitment_months else ""
        return (f"commitment: on-demand {o.price_per_hour:g} {o.currency}/h is below the "
                f"{term}{c.pricing_model} price {c.price_per_hour:g} of the same offer")

    return _hold_unreleased(offers, ref, reason)


# A list price (on-demand or committed, not spot) below this share of the median price of the same
# offer across the provider's other regions that day has lost a part. The real regional spread
# of on-demand and committed prices in the full replay of the bundled snapshots is 0.73-1.97 of
# that median (Azure, AWS, GCP; 12,121 rows); GCP's 2024-05-17 history lists its
# northamerica-northeast2 A2 prices without the GPU at 0.12-0.19 of it. Spot prices are left
# out: their real regional spread reaches 0.23 (GCP 2025-06-26).
REGION_FLOOR = 1 / 3
REGION_MIN = 3  # regions needed for a median that means something
_LIST_PRICES = ("on_demand", *COMMITTED_MODELS)


def _far_below_other_regions(offers: list[Offer], ref: Reference
                             ) -> tuple[list[Offer], list[tuple[Offer, str]]]:
    """List prices below REGION_FLOOR of the median of the same offer across the day's regions,
    held (a reviewer's release lets one load)."""
    groups: dict[Identity, list[float]] = {}
    for o in offers:
        if o.pricing_model in _LIST_PRICES and o.region:
            groups.setdefault(identity.of_offer(o)._replace(region=None), []).append(
                o.price_per_hour)

    def reason(o: Offer) -> str | None:
        prices = (groups.get(identity.of_offer(o)._replace(region=None), [])
                  if o.pricing_model in _LIST_PRICES and o.region else [])
        med = statistics.median(prices) if len(prices) >= REGION_MIN else None
        if med is None or not o.price_per_hour < med * REGION_FLOOR:
            return None
        return (f"regions: {o.price_per_hour:g} {o.currency}/h in {o.region} is below a third "
                f"of the median {med:g} of the same offer in {len(prices)} regions")

    return _hold_unreleased(offers, ref, reason)


def _without_currency(ident: Identity) -> Identity:
    return ident._replace(currency=None)


def _by_identity_without_currency(ref: Reference) -> dict[Identity, list[Identity]]:
    found: dict[Identity, list[Identity]] = {}
    for ident in ref.prev_prices:
        found.setdefault(_without_currency(ident), []).append(ident)
    return found


def run_gates(offers: Iterable[Offer], ref: Reference | None = None) -> GateResult:
    """Split one provider-day's parsed offers into loadable rows and quarantined rows (with
    their reason), collect price moves against the previous snapshot and decide whether the
    provider is degraded."""
    ref = ref or Reference()
    out = GateResult()
    no_band: set[str] = set()
    mapped: list[Offer] = []
    for o in offers:
        problem = schema_problem(o)
        if problem:
            out.bad.append((o, f"schema: {problem}"))
        elif o.gpu_model is None:
            wording = o.extra.get("gpu_wording", o.sku)
            out.bad.append((o, f"unmapped GPU wording {wording!r}"))
        else:
            mapped.append(o)
    standing, superseded = one_price_per_offer(mapped, ref)
    out.bad.extend(superseded)
    other_currency = _by_identity_without_currency(ref)
    standing, below_commitment = _below_own_commitment(standing, ref)
    out.bad.extend(below_commitment)
    standing, below_regions = _far_below_other_regions(standing, ref)
    out.bad.extend(below_regions)
    for o in standing:
        ident = identity.of_offer(o)
        released = is_released(ref, ident, o.price_per_hour)
        per_usd = ref.usd_factor(o.currency, o.snapshot_date)
        if per_usd is None:  # never released: its USD price would be NULL in every view
            out.bad.append((o, (
                f"currency: {o.currency!r} has no ECB reference rate on or before "
                f"{o.snapshot_date}: the price cannot be converted to USD nor checked "
                "against a band")))
            continue
        band, value, unit = band_for(ref, o), o.price_per_gpu_hour, o.currency
        if band is None and o.currency != "USD":  # no band in its own currency: judge in USD
            band = band_for(ref, o, (o.gpu_model, "USD", o.pricing_model))
            value, unit = o.price_per_gpu_hour / per_usd, f"USD (from {o.currency})"
        if band is None:
            no_band.add(f"{o.gpu_model} {o.pricing_model} ({o.currency})")
        elif not released and not band[0] <= value <= band[1]:
            out.bad.append((o, (
                f"band: {value:g} {unit}/GPU-h outside "
                f"{band[0]:.4g}..{band[1]:.4g} (the lowest and highest known {o.gpu_model} "
                f"{o.pricing_model} prices ÷/x {BAND_MARGIN:g})")))
            continue
        prev, price, cur = ref.prev_prices.get(ident), o.price_per_hour, o.currency
        if prev is None and ref.prev_date is not None:
            # The same offer last priced in another currency: compare both in USD, so a
            # currency switch never lets a price escape the move gate.
            for old_ident in other_currency.get(_without_currency(ident), ()):
                old_per_usd = ref.usd_factor(old_ident.currency, ref.prev_date)
                if old_per_usd:
                    lo, hi = ref.prev_prices[old_ident]
                    prev = (lo / old_per_usd, hi / old_per_usd)
                    price, cur = o.price_per_hour / per_usd, f"USD (from {o.currency})"
                    break
        if prev is not None and ref.prev_date is not None:
            lo, hi = prev
            old = hi if price > hi else lo if price < lo else None
            if old is not None:
                move = Move(ident, old, price, ref.prev_date, cur)
                out.moves.append(move)
                limit = move_limit((o.snapshot_date - ref.prev_date).days)
                if not released and (move.ratio > limit or move.ratio < 1 / limit):
                    out.moves[-1] = dataclasses.replace(move, quarantined=True)
                    out.bad.append((o, f"move: {move.describe()} is beyond {limit:g}x"))
                    continue
        out.good.append(o)
    out.unmapped = sorted({str(o.extra.get("gpu_wording", o.sku)) for o, r in out.bad
                           if r.startswith("unmapped")})
    out.no_band = sorted(no_band)
    if ref.prev_rows and len(out.good) < ref.prev_rows * DROP_RATIO:
        out.degraded = (f"row count dropped to {len(out.good)} from {ref.prev_rows} on "
                        f"{ref.prev_date} (more than {DROP_RATIO:.0%} fewer)")
    return out


def largest_moves(moves: Iterable[Move], n: int = 10) -> list[Move]:
    """The n largest moves by size either way (a halving ranks with a doubling)."""
    return sorted(moves, key=lambda m: -abs(math.log(m.ratio)))[:n]
