"""What makes two offer rows "the same offer", and which of a provider-day's prices for one offer
stands: the one definition the quality gates (one price per offer, day-over-day moves), the
warehouse store (offer_ids, the history views) and quarantine releases all use.

An identity is the offer's identity COLUMNS (what a buyer would name: provider, SKU, region,
GPU model and count, pricing model, term, the day an announced price takes effect, currency)
plus the VARIANT_KEYS of its `extra`: words a provider prints beside one SKU's several prices,
which make them different things to buy rather than one price that moved. Where a price was
read (`extra.source`: api, page, spot_feed, history, radar_diff, derived; a Wayback capture is
read as the page it archived) is NOT part of it: GCP's a2-highgpu-1g spot in us-central1 is
one offer whether the history export or the pricing page gave its price, so a change of source
is not an offer withdrawn and another listed, and a price that moved while the source changed
is a price change (identity VERSION 3). Each key, and which providers' parsers set it
(spiders/providers/*/parser.py; checked when `source` was dropped):

- `provider_term`: the provider's word for the pricing model when ours is coarser. Azure
  prints "Spot" and the legacy "Low Priority" meters for one SKU, both `spot`, at different
  prices (parser and its history rows alike, both through `_offer`); GCP, CoreWeave and AWS's
  spot feed print "Spot"; Lambda's tier stands in for a term when the page gives no length.
  Stays: Azure's two spot meters are two things to buy.
- `tier`: Lambda's plan tier, printed beside per-GPU prices of one instance type. Stays: two
  tiers are two prices of one instance type on one page.
- `price_kind`: Nebius "from $X" prices (`from`): a lower bound, not the price of the row
  without it. Stays: a floor and a firm price are different offers.
- `gcp_model`: GCP's purchase option when it shares our pricing model with another on one page
  (DWS Flex-start beside on-demand, resource-based beside flexible CUDs; the history export
  marks its CUD rows `resource_cud` as the page does). Stays: before it was a key, the gates
  held back the second of each pair as a duplicate of the first.
- `offer_key`: no parser sets it today; it is the key a parser author sets when a provider lists
  two rows the keys above do not tell apart (docs/warehouse.md).
- `market_stat`: which figure of a marketplace's book a row is (`min`, `p25`, `median`;
  spiders/marketplace.py, used by the Vast.ai and Hyperbolic parsers). Stays: the lowest and the
  median of one book are two figures, not one price listed twice. Appended last, so every
  variant stored before it is unchanged (its value is '' there and trailing '|' are removed):
  no identity moves, VERSION stays.
- `cluster_duration`, `cluster_gpus`: Lambda's 1-Click Clusters table prints one per-GPU price
  per term ("2 weeks – 1 year") and cluster size ("16", "64", "256+") of one plan: each pair is
  its own committed offer with its own history.

`extra.variant`, which the gates once read too, is not a key: no parser ever set it, and the
warehouse column of that name is built from the keys above.

One price per offer per provider-day. When a day lists one identity more than once (two
sources, or two pages of one source), SOURCE_PRECEDENCE decides which price stands
(`standing`), and the gates quarantine the others as superseded, naming both prices:

1. `api`: the provider's machine-readable price list (Runpod GraphQL, GCP billing catalogue,
   Azure retail prices, AWS offer file), the figure its billing uses;
2. `spot_feed`: AWS's spot price feed, machine-readable and published for that purpose;
3. `page`: the rendered pricing page, written for people: rounded, sometimes behind the API;
4. `history`: a bundled history export (GCP, AWS, Azure), prices recomputed from another
   publisher's record of the provider's list, dated by when that record was taken;
5. `radar_diff`: a third party's diff of Azure's list, partial by design;
6. `derived`: a value computed from other figures (CoreWeave's becloudready JSON layout).

A source not listed ranks after them all; among equal ranks the row read first stands (captures
are parsed in a fixed order, so a reparse keeps the same one). On the bundled snapshots no
provider-day lists one identity from two sources (each day was read from one source), so this
rule decides nothing there yet; a live night that reads Runpod's API and page, or GCP's page and
billing API, is where it does.

The warehouse stores the keys joined into one text column, `variant`: each key's value in
VARIANT_KEYS order (missing or empty = ''), joined by '|', trailing '|' removed. Given values
without '|', that is one text per combination of keys, so grouping by `variant` groups exactly
as grouping by the keys. variant_sql() is the same rule in SQL, for the store's staging query.

Changing COLUMNS, VARIANT_KEYS or the rule changes the identity of stored offers: bump VERSION,
and init_schema re-stores every identity of an existing warehouse (warehouse/schema.py).
Quarantine releases are stored by name (to_record); a release recorded under an older VERSION
still reads: names that are no longer keys (`source`) are ignored.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from gpuprices.warehouse.contract import Offer

# 1: variant = offer_key|source|provider_term, nulls skipped (before this module).
# 2: source|provider_term|tier|price_kind|gcp_model|offer_key, positional.
# 3: VARIANT_KEYS below (no source): one offer whatever it was read from (stored with
#    warehouse/store.py PRICE_TOLERANCE: prices one part in a million apart are one price).
# 4: + cluster_duration, cluster_gpus (Lambda's 1-Click Clusters: one price per size and term).
VERSION = 4

COLUMNS = ("provider", "sku", "region", "gpu_model", "gpu_count", "pricing_model",
           "commitment_months", "effective_from", "currency")
VARIANT_KEYS = ("provider_term", "tier", "price_kind", "gcp_model", "offer_key",
                "market_stat", "cluster_duration", "cluster_gpus")

# Which source's price stands when one provider-day lists an offer more than once (best first).
SOURCE_PRECEDENCE = ("api", "spot_feed", "page", "history", "radar_diff", "derived")

# The warehouse's identity columns (offer_ids): the columns, then the keys as one text.
STORED = (*COLUMNS, "variant")


class Identity(NamedTuple):
    """One offer identity: COLUMNS, then VARIANT_KEYS (as text, None when not set)."""

    provider: str
    sku: str
    region: str | None
    gpu_model: str | None
    gpu_count: float | None
    pricing_model: str
    commitment_months: int | None
    effective_from: dt.date | None
    currency: str
    provider_term: str | None
    tier: str | None
    price_kind: str | None
    gcp_model: str | None
    offer_key: str | None
    market_stat: str | None = None
    cluster_duration: str | None = None
    cluster_gpus: str | None = None

    @property
    def variant(self) -> str:
        """The variant keys as the warehouse stores them (see the module docstring)."""
        return "|".join(getattr(self, k) or "" for k in VARIANT_KEYS).rstrip("|")

    def stored(self) -> tuple:
        """The identity as the warehouse's offer_ids columns (STORED)."""
        return (*self[:len(COLUMNS)], self.variant)


# One definition: the field list above must be COLUMNS then VARIANT_KEYS.
assert Identity._fields == COLUMNS + VARIANT_KEYS


def _text(value: Any) -> str | None:
    """A variant key's value as text, as DuckDB's json_extract_string gives it."""
    if isinstance(value, str):
        return value or None
    if value is None:  # most keys of most offers; the JSON round trip below gives None too
        return None
    # As the contract writes extra (default=str), then as DuckDB prints a JSON value.
    value = json.loads(json.dumps(value, default=str))
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _date(value: Any) -> dt.date | None:
    if value is None or value == "" or isinstance(value, dt.date):
        return value or None
    return dt.date.fromisoformat(str(value))


def _make(columns: Mapping[str, Any], extra: Mapping[str, Any]) -> Identity:
    count = columns.get("gpu_count")
    months = columns.get("commitment_months")
    return Identity(
        columns["provider"], columns["sku"], columns.get("region"), columns.get("gpu_model"),
        None if count is None else float(count), columns["pricing_model"],
        None if months is None else int(months), _date(columns.get("effective_from")),
        columns["currency"], *(_text(extra.get(k)) for k in VARIANT_KEYS))


def of_offer(o: Offer) -> Identity:
    """The identity of a parsed offer."""
    return _make({c: getattr(o, c) for c in COLUMNS},
                 o.extra if isinstance(o.extra, dict) else {})


def of_row(row: Mapping[str, Any]) -> Identity:
    """The identity of a row dict: a lake or `offers` row (`extra` as JSON text or a dict), or
    an offer_ids / history-view row (`variant` instead of `extra`)."""
    if "extra" not in row and "variant" in row:
        parts = (row["variant"] or "").split("|")
        return _make(row, dict(zip(VARIANT_KEYS, parts, strict=False)))
    extra = row.get("extra")
    if isinstance(extra, str):
        try:
            extra = json.loads(extra)
        except ValueError:
            extra = {}
    return _make(row, extra if isinstance(extra, dict) else {})


def to_record(ident: Identity) -> dict[str, Any]:
    """The identity as a JSON-ready object, by name (dates as ISO text)."""
    rec = ident._asdict()
    if ident.effective_from is not None:
        rec["effective_from"] = ident.effective_from.isoformat()
    return rec


def from_record(rec: Mapping[str, Any]) -> Identity:
    """The identity of a to_record object (names missing from it are None)."""
    return _make({c: rec.get(c) for c in COLUMNS}, rec)


# The order of the identities released before records were written by name: the gates' tuple
# (sku, region, gpu_model, pricing_model, commitment_months, effective_from, currency, then
# extra source, variant, price_kind, provider_term, tier). It had no provider (the record has
# one beside it) and no gpu_count.
_POSITIONAL_V1 = ("sku", "region", "gpu_model", "pricing_model", "commitment_months",
                  "effective_from", "currency", "source", "variant", "price_kind",
                  "provider_term", "tier")


def from_positional_v1(values: Sequence[Any], provider: str) -> Identity:
    """An identity stored by position by the first quarantine releases (lake/quarantine/
    released.jsonl). gpu_count is None: those records do not have it."""
    rec = dict(zip(_POSITIONAL_V1, values, strict=False))
    return _make({**rec, "provider": provider, "gpu_count": None}, rec)


def source_rank(source: Any) -> int:
    """Where a price read from `source` stands in SOURCE_PRECEDENCE (0 = first); a source not
    listed ranks after all of them."""
    try:
        return SOURCE_PRECEDENCE.index(source)
    except ValueError:
        return len(SOURCE_PRECEDENCE)


def variant_sql(extra: str = "extra") -> str:
    """SQL of the `variant` text of JSON column `extra` (our own identifier), by the rule of
    Identity.variant. The keys are read by one json_extract_string call, written out once per
    key: DuckDB evaluates the repeated call once per row (as fast as a subquery reading it)."""
    paths = ", ".join(f"'$.{k}'" for k in VARIANT_KEYS)  # our constants, never data
    values = f"json_extract_string({extra}, [{paths}])"
    parts = ", ".join(f"coalesce({values}[{i}], '')" for i in range(1, len(VARIANT_KEYS) + 1))
    return f"rtrim(concat_ws('|', {parts}), '|')"
