"""Where an offer runs: its provider's region -> ISO 3166-1 alpha-2 country (regions.csv), each
row with the provider documentation it is read from, or an empty country and the reason it is
unknown (an area such as CoreWeave's "Europe", an opaque location id, a row with no region).

A row with an empty `region` speaks for the provider's offers that carry none. Vast.ai's
listings carry their own place (extra.listing.geolocation, e.g. "Utah, US"): its last part is
the country. Nothing is guessed from a region's name: a region no row names is unknown.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from gpuprices.warehouse.provider_ids import PROVIDERS

REGIONS_CSV = Path(__file__).parent / "regions.csv"
_ISO = re.compile(r"^[A-Z]{2}$")


@dataclass(frozen=True)
class RegionCountry:
    provider: str
    region: str  # "" for the provider's offers without a region
    country: str | None  # ISO 3166-1 alpha-2; None when unknown (source says why)
    source: str


@cache
def region_table() -> dict[tuple[str, str], RegionCountry]:
    """{(provider, region): row}; ValueError naming the row when one is malformed."""
    out: dict[tuple[str, str], RegionCountry] = {}
    with REGIONS_CSV.open(newline="") as f:
        for i, r in enumerate(csv.DictReader(f)):
            where = f"{REGIONS_CSV.name} row {i + 2} ({r.get('provider')!r}, {r.get('region')!r})"
            if r["provider"] not in PROVIDERS:
                raise ValueError(f"{where}: unknown provider")
            country = r["country"].strip() or None
            if country and not _ISO.match(country):
                raise ValueError(f"{where}: country {country!r} is not an ISO 3166-1 alpha-2 code")
            if not r["source"].strip():
                raise ValueError(f"{where}: no source")
            if not country and not r["source"].startswith("unknown"):
                raise ValueError(f"{where}: no country and no 'unknown: why' source")
            key = (r["provider"], r["region"].strip())
            if key in out:
                raise ValueError(f"{where}: listed twice")
            out[key] = RegionCountry(key[0], key[1], country, r["source"])
    return out


def _listing_country(extra: Any) -> str | None:
    """A marketplace listing's own country: the last part of extra.listing.geolocation."""
    if isinstance(extra, str) and "geolocation" in extra:
        try:
            extra = json.loads(extra)
        except json.JSONDecodeError:
            return None
    if not isinstance(extra, dict):
        return None
    listing = extra.get("listing")
    geo = listing.get("geolocation") if isinstance(listing, dict) else None
    if not isinstance(geo, str):
        return None
    code = geo.rsplit(",", 1)[-1].strip().upper()
    return code if _ISO.match(code) else None


def country_of(provider: str, region: str | None, extra: Any = None) -> tuple[str | None, str]:
    """(ISO country or None, why): the table's country for the offer's region, or the
    listing's own place, or None with the reason it is unknown."""
    if not region:
        code = _listing_country(extra)
        if code:
            return code, "the listing's geolocation"
    row = region_table().get((provider, region or ""))
    if row is None:
        return None, (f"unknown: region {region!r} of {provider} is not in "
                      f"warehouse/{REGIONS_CSV.name}")
    return row.country, row.source
