"""Negotiated prices: the buyer's discounts file, applied to the offers before they are ranked
(docs/sizing.md "Negotiated prices"). The warehouse keeps the list prices; only the rows handed to
the ranking, the plan, `compare` and the report carry the negotiated one, with the sentence that
says so ("negotiated: -28% AWS EDP, expires 2027-06-30") and the list price beside it.

    [[discount]]
    provider = "aws"                 # required: a provider id
    pricing_model = "on_demand"      # optional: on_demand, spot, reserved, committed, community
    gpu_model = "H100-SXM-80GB"      # optional: a canonical GPU model (warehouse/gpus.csv)
    sku = "^p5\\."                    # optional: a regular expression over the SKU
    percent_off = 28                 # a percentage off the list price ...
    # price_per_gpu_hour = 2.10      # ... or a fixed price per GPU-hour
    # currency = "USD"               # of price_per_gpu_hour (USD or EUR; default USD)
    label = "AWS EDP"                # required: what the agreement is called
    expires = 2027-06-30             # required: the last day it applies

The first entry (in file order) that matches an offer prices it; an entry past its expiry date
is ignored, and said. The file is given with `--discounts PATH` or $GPUPRICES_DISCOUNTS.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuprices.sizing.toml_tables import read_tables

ENV_VAR = "GPUPRICES_DISCOUNTS"
PRICING_MODELS = ("on_demand", "spot", "reserved", "committed", "community")
_KEYS = {"provider", "pricing_model", "gpu_model", "sku", "percent_off", "price_per_gpu_hour",
         "currency", "label", "expires"}


class DiscountError(ValueError):
    """A discounts file that cannot be used; the message names the file, entry and field."""


@dataclass(frozen=True)
class Discount:
    provider: str
    label: str
    expires: dt.date
    pricing_model: str | None = None
    gpu_model: str | None = None
    sku: re.Pattern[str] | None = None
    percent_off: float | None = None
    price_per_gpu_hour: float | None = None
    currency: str = "USD"

    def matches(self, o: dict[str, Any]) -> bool:
        return (o.get("provider") == self.provider
                and (self.pricing_model is None or o.get("pricing_model") == self.pricing_model)
                and (self.gpu_model is None or o.get("gpu_model") == self.gpu_model)
                and (self.sku is None or bool(self.sku.search(str(o.get("sku") or "")))))

    def sentence(self) -> str:
        what = (f"-{self.percent_off:g}%" if self.percent_off is not None
                else f"{self.price_per_gpu_hour:g} {self.currency} per GPU-hour")
        return f"negotiated: {what} {self.label}, expires {self.expires.isoformat()}"


def _entry(i: int, d: Any, where: str, known_providers: set[str] | None,
           known_gpus: set[str] | None) -> Discount:
    at = f"{where}: [[discount]] #{i + 1}"
    if not isinstance(d, dict):
        raise DiscountError(f"{at}: not a table")
    unknown = set(d) - _KEYS
    if unknown:
        raise DiscountError(f"{at}: unknown field(s) {sorted(unknown)}")
    for key in ("provider", "label", "expires"):
        if key not in d:
            raise DiscountError(f"{at}: needs `{key}`")
    at = f"{at} ({d['label']!r})"
    provider = d["provider"]
    if not isinstance(provider, str) or (known_providers and provider not in known_providers):
        raise DiscountError(f"{at}: provider {provider!r} is not a provider id")
    expires = d["expires"]
    if isinstance(expires, str):
        try:
            expires = dt.date.fromisoformat(expires)
        except ValueError:
            raise DiscountError(f"{at}: expires {expires!r} is not YYYY-MM-DD") from None
    if not isinstance(expires, dt.date) or isinstance(expires, dt.datetime):
        raise DiscountError(f"{at}: expires = {expires!r}; expected a date such as 2027-06-30")
    model = d.get("pricing_model")
    if model is not None and model not in PRICING_MODELS:
        raise DiscountError(f"{at}: pricing_model {model!r}; expected one of {PRICING_MODELS}")
    gpu = d.get("gpu_model")
    if gpu is not None and known_gpus is not None and gpu not in known_gpus:
        raise DiscountError(f"{at}: gpu_model {gpu!r} is not in warehouse/gpus.csv")
    sku = None
    if "sku" in d:
        try:
            sku = re.compile(str(d["sku"]))
        except re.error as exc:
            raise DiscountError(f"{at}: sku {d['sku']!r} is not a regular expression ({exc})"
                                ) from None
    has_pct, has_fixed = "percent_off" in d, "price_per_gpu_hour" in d
    if has_pct == has_fixed:
        raise DiscountError(f"{at}: give percent_off or price_per_gpu_hour (one of them)")
    value = d["percent_off"] if has_pct else d["price_per_gpu_hour"]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DiscountError(f"{at}: {'percent_off' if has_pct else 'price_per_gpu_hour'} "
                            f"= {value!r} is not a number")
    if has_pct and not 0 < value < 100:
        raise DiscountError(f"{at}: percent_off must be above 0 and below 100, got {value}")
    if has_fixed and value <= 0:
        raise DiscountError(f"{at}: price_per_gpu_hour must be positive, got {value}")
    currency = str(d.get("currency", "USD")).upper()
    if currency not in ("USD", "EUR"):
        raise DiscountError(f"{at}: currency must be USD or EUR, got {currency}")
    return Discount(provider, str(d["label"]), expires, model, gpu, sku,
                    float(value) if has_pct else None, None if has_pct else float(value),
                    currency)


def load(path: str | Path, known_providers: set[str] | None = None,
         known_gpus: set[str] | None = None) -> list[Discount]:
    path = Path(path)
    tables = read_tables(path, "discount", DiscountError)
    return [_entry(i, d, str(path), known_providers, known_gpus) for i, d in enumerate(tables)]


def path_from(option: Path | None) -> Path | None:
    """The discounts file: the option, else $GPUPRICES_DISCOUNTS, else none."""
    if option:
        return option
    env = os.environ.get(ENV_VAR, "").strip()
    return Path(env) if env else None


def expired(discounts: Sequence[Discount], today: dt.date) -> list[str]:
    """What to say of the entries past their expiry date on `today` (they are ignored)."""
    return [f"discount {d.label!r} ({d.provider}) expired {d.expires.isoformat()}: ignored, "
            "list prices used" for d in discounts if d.expires < today]


def apply(offers: Sequence[dict[str, Any]], discounts: Sequence[Discount], today: dt.date,
          currency: str, usd_to_currency: float | None
          ) -> tuple[list[dict[str, Any]], list[str]]:
    """The offers with each matching entry's price (new dicts; the list price kept in
    `list_price_per_hour`, the sentence in `negotiated`), and the notes: expired entries and
    entries that matched nothing. `offers` are priced in `currency`; `usd_to_currency`
    converts a fixed price in USD to it (its inverse a fixed EUR price to USD)."""
    live = [d for d in discounts if d.expires >= today]
    notes = expired(discounts, today)
    used: set[int] = set()
    out = []
    for o in offers:
        d_i = next((i for i, d in enumerate(live) if d.matches(o)), None)
        listed = o.get("price_per_hour")
        if d_i is None or listed is None:
            out.append(o)
            continue
        d = live[d_i]
        new = _price(d, o, listed, currency, usd_to_currency)
        if new is None:
            out.append(o)
            continue
        used.add(d_i)
        per_gpu = o.get("price_per_gpu_hour")
        out.append(dict(o, price_per_hour=new, list_price_per_hour=listed,
                        negotiated=d.sentence(),
                        price_per_gpu_hour=(per_gpu * new / listed if per_gpu is not None
                                            and listed else per_gpu)))
    notes += [f"discount {d.label!r} ({d.provider}) matched no offer" for i, d in
              enumerate(live) if i not in used]
    return out, notes


def _price(d: Discount, o: dict[str, Any], listed: float, currency: str,
           usd_to_currency: float | None) -> float | None:
    if d.percent_off is not None:
        return listed * (1 - d.percent_off / 100)
    count = float(o.get("gpu_count") or 0)
    if count <= 0 or d.price_per_gpu_hour is None:
        return None
    fixed = d.price_per_gpu_hour
    if d.currency != currency:
        if not usd_to_currency:
            return None
        fixed = fixed * usd_to_currency if d.currency == "USD" else fixed / usd_to_currency
    return fixed * count
