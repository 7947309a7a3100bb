"""Write warehouse/price_bands.csv from a warehouse holding the full replay of the bundled
snapshots: per GPU model, currency and pricing model, the lowest and highest per-GPU price of
every loaded row.

    make run && .venv/bin/python bench/price_bands.py [--db data/warehouse.duckdb]
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402

from warehouse.price_bands import BANDS_CSV, FIELDS  # noqa: E402

QUERY = """
SELECT gpu_model, currency, pricing_model,
       min(price_per_gpu_hour), max(price_per_gpu_hour), count(*), count(DISTINCT provider),
       min(snapshot_date), max(snapshot_date)
FROM offers GROUP BY ALL ORDER BY ALL
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", type=Path, default=ROOT / "data" / "warehouse.duckdb")
    args = ap.parse_args()
    con = duckdb.connect(str(args.db), read_only=True)
    try:
        rows = con.execute(QUERY).fetchall()
    finally:
        con.close()
    source = "full replay of the bundled snapshots (bench/price_bands.py)"
    with BANDS_CSV.open("w", newline="") as fh:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(FIELDS)
        for r in rows:
            out.writerow([*r[:3], f"{r[3]:.6g}", f"{r[4]:.6g}", *r[5:7], r[7], r[8], source])
    print(f"{BANDS_CSV}: {len(rows)} ranges from {sum(r[5] for r in rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
