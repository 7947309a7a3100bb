"""Backfill captures from the azure-pricing-radar history export (tests/fixtures/history/azure).

Each `<date>_eu_regions_radar.csv` is our filtered export of andy-diericks/azure-pricing-radar
`data/latest/vm-<scope>.json` as of that date: GPU meters only, key split into columns. The radar
files behind one date sit at different commits (one per scope), so each (date, scope) becomes one
capture whose URL names that scope's file at its commit, and whose body is the CSV header plus
that scope's rows (still the layout `gpuprices.spiders.providers.azure.parser` reads as derived
history). Commits per scope and date: tests/fixtures/SOURCES.md (the radar line).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from pathlib import Path

from gpuprices.spiders.archive import Capture

REPO = "andy-diericks/azure-pricing-radar"
# Last commit touching data/latest/vm-<scope>.json on or before each date (SOURCES.md).
COMMITS: dict[str, dict[str, str]] = {
    "2026-07-26": {"vm-eu-west": "25ddcc86", "vm-northeurope": "3757edff",
                   "vm-swedencentral": "ae9039b4", "vm-francecentral": "3757edff",
                   "vm-belgium": "fe228559"},
    "2026-08-22": {"vm-eu-west": "1b7f5544", "vm-northeurope": "6d33a657",
                   "vm-swedencentral": "1b7f5544", "vm-francecentral": "1b7f5544",
                   "vm-belgium": "6d33a657"},
}
_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})_.*radar\.csv$")


def radar_url(commit: str, scope: str) -> str:
    return f"https://github.com/{REPO}/blob/{commit}/data/latest/{scope}.json"


def captures_from_azure_history(path: Path) -> list[Capture]:
    """One capture per (file date, radar scope) for a CSV file or every such file in a folder.
    captured_at is the date at 12:00 UTC: the radar commits are from that day, time unknown."""
    path = Path(path)
    files = sorted(path.glob("*_radar.csv")) if path.is_dir() else [path]
    captures = []
    for f in files:
        m = _NAME.match(f.name)
        if not m:
            raise ValueError(f"{f}: not a <date>_..._radar.csv history file")
        day = m.group(1)
        text = f.read_text(encoding="utf-8")
        reader = csv.DictReader(io.StringIO(text))
        by_scope: dict[str, list[dict[str, str]]] = {}
        for row in reader:
            by_scope.setdefault(row["scope"], []).append(row)
        for scope, rows in sorted(by_scope.items()):
            commit = COMMITS.get(day, {}).get(scope)
            if commit is None:
                raise ValueError(f"{f}: no recorded commit for scope {scope} on {day}")
            out = io.StringIO()
            writer = csv.DictWriter(out, fieldnames=reader.fieldnames, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
            captures.append(Capture(
                provider="azure",
                url=radar_url(commit, scope),
                body=out.getvalue().encode("utf-8"),
                captured_at=dt.datetime.fromisoformat(f"{day}T12:00:00+00:00"),
                headers=[("Content-Type", "text/csv; charset=utf-8")],
                origin=(f"{REPO} data/latest/{scope}.json at {commit} ({day}); filtered export "
                        f"tests/fixtures/history/azure/{f.name} (GPU meters only, derived)"),
            ))
    return captures
