"""Backfill captures from the Cyclenerd pricing history export (tests/fixtures/history/gcp).

Each `<date>.csv` is our filtered export of Cyclenerd/google-cloud-pricing-cost-calculator
`pricing.yml` at the commit of that date (the file's own 'generated' date): GPU machine types x
region, machine totals the maintainer summed from Billing Catalog SKUs. One capture per file, URL
naming pricing.yml at that commit, origin noted; gpuprices.spiders.providers.gcp.parser reads the
body as derived history (extra["derived"] = True, source "history").
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from gpuprices.spiders.archive import Capture

REPO = "Cyclenerd/google-cloud-pricing-cost-calculator"
# pricing.yml commit per export date (tests/fixtures/SOURCES.md, history/gcp line).
COMMITS = {
    "2023-01-12": "a1e3388b11c09e5e1cadcabc86792ae5d6f8f50e",
    "2024-05-17": "cc7959e03c6553b08b9c3f3a99b45bd33e136e27",
    "2024-12-26": "6f7e253ecfb33f109ed54f56d3a595dd4c2fa2e4",
    "2025-06-26": "922843932d5270651adff2d29f0600b9b89692d7",
    "2026-01-22": "d862b4033f56bbb453556865c320601c842091ac",
    "2026-07-30": "fd66b26ff84fee5cdd94f341ea89206e76c06b99",
}
_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})\.csv$")


def pricing_url(commit: str) -> str:
    return f"https://github.com/{REPO}/blob/{commit}/pricing.yml"


def captures_from_gcp_history(path: Path) -> list[Capture]:
    """One capture per dated CSV (a file, or every <date>.csv in a folder). captured_at is the
    date at 12:00 UTC: the commit date is known, not the hour of the SKU fetch behind it."""
    path = Path(path)
    files = sorted(path.glob("*.csv")) if path.is_dir() else [path]
    captures = []
    for f in files:
        m = _NAME.match(f.name)
        if not m:
            raise ValueError(f"{f}: not a <date>.csv history file")
        day = m.group(1)
        commit = COMMITS.get(day)
        if commit is None:
            raise ValueError(f"{f}: no recorded pricing.yml commit for {day}")
        captures.append(Capture(
            provider="gcp",
            url=pricing_url(commit),
            body=f.read_bytes(),
            captured_at=dt.datetime.fromisoformat(f"{day}T12:00:00+00:00"),
            headers=[("Content-Type", "text/csv; charset=utf-8")],
            origin=(f"{REPO} pricing.yml at {commit} ({day}); filtered export "
                    f"tests/fixtures/history/gcp/{f.name} (GPU machine totals, derived)"),
        ))
    return captures
