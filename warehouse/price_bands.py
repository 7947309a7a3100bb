"""The per-GPU price range each GPU model, currency and pricing model has been seen at
(price_bands.csv): the known range the band gate of flows/pipeline/gates.py widens by its margin.

The table is the warehouse's own history, not a hand-kept list: the lowest and highest
`price_per_gpu_hour` of every real row in the full replay of the bundled snapshots (`make run`),
written by `bench/price_bands.py`. Regenerate it after adding captures that move a model's range
(a new low a reviewer released, a new provider); rows the table does not know are banded by the
providers' last good snapshots alone.
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

BANDS_CSV = Path(__file__).parent / "price_bands.csv"
FIELDS = ("gpu_model", "currency", "pricing_model", "low", "high", "rows", "providers",
          "first_date", "last_date", "source")


@cache
def known_ranges() -> dict[tuple[str, str, str], tuple[float, float]]:
    """(gpu_model, currency, pricing_model) -> (lowest, highest) per-GPU price known."""
    with BANDS_CSV.open(newline="") as fh:
        return {(r["gpu_model"], r["currency"], r["pricing_model"]):
                (float(r["low"]), float(r["high"])) for r in csv.DictReader(fh)}
