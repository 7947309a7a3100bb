"""Marketplace books reduced to what a buyer compares.

A marketplace (Vast.ai, Hyperbolic) lists many offers for one GPU model, from many hosts, at many
prices, and the list changes by the minute. Every listing stays in the archive (the raw answer
is the record); what is loaded is, per GPU model, GPU count and pricing model, three figures of
the book with the number of listings behind them:

- ``min``: the lowest per-GPU price of any listing;
- ``p25``: the lower quartile, what a buyer who is not first in line can expect to pay;
- ``median``: the middle of the book.

Each figure is a nearest-rank statistic (the k-th lowest price, k = ceil(q * n), at least 1), so
it is always a price some listing actually asks, never an average of two; for an even book the
median is the lower of the two middle prices. The book is first reduced to one price per host
(its lowest in the group): a machine that lists the same GPUs several times (Vast lists 1x, 2x,
4x slices of one host) must not count as several sellers.

The three rows are one offer each, told apart by the identity key ``market_stat``
(warehouse/identity.py VARIANT_KEYS), so the gates see three offers, not one price listed three
times. A row keeps the capture, URL and listing of the price it reports (``extra.listing``).

Parsers return one Offer per listing with ``extra["listing_id"]`` (unique in the book) and
``extra["host"]`` (the seller's machine, or None when the marketplace does not say); their
``postprocess`` hook calls ``summarise`` over the whole day, so a book read in several windows
(Vast's ascending and descending pages) is one book, each listing counted once.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from typing import Any

from gpuprices.warehouse.contract import Offer

STAT_KEY = "market_stat"
# (name written in extra.market_stat, quantile of the nearest-rank statistic)
STATS = (("min", 0.0), ("p25", 0.25), ("median", 0.5))
# What a summary row says about how it was computed (in extra.market_rule).
RULE = "nearest-rank over each host's lowest per-GPU price"


def nearest_rank(prices: list[float], q: float) -> int:
    """Index into sorted `prices` of the nearest-rank q-quantile (q=0: the lowest)."""
    if not prices:
        raise ValueError("an empty book has no quantile")
    return max(math.ceil(q * len(prices)) - 1, 0)


def _group_key(o: Offer) -> tuple:
    wording = o.extra.get("gpu_wording")
    return (o.provider, o.gpu_model, wording, o.gpu_count, o.pricing_model, o.currency)


def _per_host(listings: list[Offer]) -> list[Offer]:
    """One listing per host, the cheapest per GPU (ties: the first read); listings without a
    host are each their own seller."""
    best: dict[Any, Offer] = {}
    for i, o in enumerate(listings):
        host = o.extra.get("host")
        key = ("host", host) if host is not None else ("listing", i)
        if key not in best or o.price_per_gpu_hour < best[key].price_per_gpu_hour:
            best[key] = o
    return sorted(best.values(), key=lambda o: o.price_per_gpu_hour)


def unique_listings(listings: list[Offer]) -> list[Offer]:
    """The listings with each `listing_id` once (the first read): overlapping windows of one
    book list some offers twice."""
    seen: set[Any] = set()
    out = []
    for o in listings:
        lid = o.extra.get("listing_id")
        if lid is not None and lid in seen:
            continue
        seen.add(lid)
        out.append(o)
    return out


def group_sku(o: Offer) -> str:
    """The summary row's SKU: the marketplace's own GPU wording and the GPU count."""
    return f"{o.extra.get('gpu_wording') or o.gpu_model}/{o.gpu_count:g}x"


def summarise(listings: list[Offer]) -> list[Offer]:
    """The min / p25 / median rows (STATS) of each (GPU model, GPU count, pricing model) book
    in `listings`, in the order the books were first met."""
    groups: dict[tuple, list[Offer]] = defaultdict(list)
    for o in unique_listings(listings):
        groups[_group_key(o)].append(o)
    out: list[Offer] = []
    for book in groups.values():
        sellers = _per_host(book)
        prices = [o.price_per_gpu_hour for o in sellers]
        hosts = len({o.extra.get("host") for o in book if o.extra.get("host") is not None})
        for stat, q in STATS:
            pick = sellers[nearest_rank(prices, q)]
            out.append(_summary_row(pick, stat, listings=len(book), sellers=len(sellers),
                                    hosts=hosts or None, highest=prices[-1]))
    return out


# Listing fields that describe the one listing, not the book: kept under extra.listing.
_BOOK_KEYS = ("source", "gpu_wording")


def _summary_row(pick: Offer, stat: str, *, listings: int, sellers: int, hosts: int | None,
                 highest: float) -> Offer:
    listing = {k: v for k, v in pick.extra.items() if k not in _BOOK_KEYS}
    for name in ("region", "vcpus", "ram_gb", "interconnect"):
        if getattr(pick, name) is not None:
            listing[name] = getattr(pick, name)
    extra: dict[str, Any] = {k: pick.extra[k] for k in _BOOK_KEYS if k in pick.extra}
    extra.update({
        STAT_KEY: stat,
        "market_rule": RULE,
        "listings": listings,  # distinct listings in this book
        "sellers": sellers,  # after one price per host: the n of the statistic
        "highest_per_gpu_hour": highest,
        "listing": listing,
    })
    if hosts is not None:
        extra["hosts"] = hosts
    return dataclasses.replace(
        pick, sku=group_sku(pick), region=None, vcpus=None, ram_gb=None, interconnect=None,
        extra=extra)
