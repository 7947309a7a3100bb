"""AWS price history from a real daily series: the p5.48xlarge us-east-1 on-demand log.

The series (fixture `raw/aws/amorton45_p5.48xlarge_us-east-1_ondemand_daily_2025-04_2026-08.csv`)
was recorded once a day by a bot calling the AWS Pricing GetProducts API (instanceType
p5.48xlarge, location US East (N. Virginia), Linux, Shared, preInstalledSw NA, capacitystatus
Used). Its rows are not sorted and 13 rows have no price (12 month placeholders and one failed
call). Each date with a price becomes one Capture dated at that row's timestamp; its body is the
CSV header and that one row, so the archive holds the bytes that were read, and the AWS parser
recognises the layout by its header (extra derived=true, source "history").
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from pathlib import Path

from gpuprices.spiders.archive import Capture

# The origin repository file, pinned at the commit the fixture was taken from.
SERIES_REPO = "amorton45/aws-gpu-price-tracker"
SERIES_COMMIT = "b81b52d09be8a9c9dcc8fad26adeee559004c23e"
SERIES_URL = (f"https://raw.githubusercontent.com/{SERIES_REPO}/{SERIES_COMMIT}/gpu_prices.csv")
# The series' query, as its origin note says: one instance type in one region.
SERIES_REGION = "us-east-1"
ORIGIN = (f"repo {SERIES_REPO}, gpu_prices.csv @ {SERIES_COMMIT} (2026-08-22): daily bot capture "
          "via the AWS Pricing GetProducts API (Linux/Shared/NA/Used, US East (N. Virginia)); "
          "one row of the series per capture")


def _timestamp(text: str) -> dt.datetime | None:
    try:
        ts = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    # The bot ran on GitHub Actions, whose clocks are UTC; the log has no zone.
    return ts if ts.tzinfo else ts.replace(tzinfo=dt.UTC)


def captures_from_p5_series(path: str | Path) -> list[Capture]:
    """One Capture per date that has a price (the day's last priced row), sorted by date."""
    text = Path(path).read_text(encoding="utf-8")
    reader = csv.reader(io.StringIO(text))
    header = next(reader)
    if [h.strip() for h in header] != ["timestamp", "instance", "price_usd"]:
        raise ValueError(f"{path}: not a timestamp,instance,price_usd series")
    best: dict[dt.date, tuple[dt.datetime, list[str]]] = {}
    for row in reader:
        if len(row) != 3 or not row[2].strip():
            continue  # placeholder or failed-call rows: no price
        ts = _timestamp(row[0])
        if ts is None:
            continue
        day = ts.date()
        if day not in best or ts > best[day][0]:
            best[day] = (ts, row)
    captures = []
    for day in sorted(best):
        ts, row = best[day]
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        writer.writerow(row)
        captures.append(Capture(
            provider="aws",
            # The fragment names the slice: instance / region / date (parsers read the region).
            url=f"{SERIES_URL}#{row[1].strip()}/{SERIES_REGION}/{day.isoformat()}",
            body=out.getvalue().encode(),
            captured_at=ts,
            headers=[("Content-Type", "text/csv")],
            origin=ORIGIN,
        ))
    return captures
