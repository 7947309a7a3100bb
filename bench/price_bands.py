"""Write warehouse/price_bands.csv from the full replay of the bundled snapshots: per GPU
model, currency and pricing model, the lowest and highest per-GPU price of every loaded row and
of every row the band gate held in that replay. The bundled captures are real prices, so a row
the band held there (a new provider's cheaper V100) is a price the table did not know yet; after
adding captures, run this and `make run` again: the second replay holds no row for its band.

    make run && .venv/bin/python bench/price_bands.py [--data data]
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402

from gpuprices.warehouse.price_bands import BANDS_CSV, FIELDS  # noqa: E402

QUERY = """
WITH known AS (
    SELECT gpu_model, currency, pricing_model, price_per_gpu_hour, provider, snapshot_date
    FROM offers
    UNION ALL
    SELECT gpu_model, currency, pricing_model, price_per_gpu_hour, provider, snapshot_date
    FROM read_parquet(?, hive_partitioning = false)
    WHERE reason LIKE 'band:%'
)
SELECT gpu_model, currency, pricing_model,
       min(price_per_gpu_hour), max(price_per_gpu_hour), count(*), count(DISTINCT provider),
       min(snapshot_date), max(snapshot_date)
FROM known GROUP BY ALL ORDER BY ALL
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT / "data",
                    help="The data folder of the replay (warehouse.duckdb and lake/).")
    args = ap.parse_args()
    held = args.data / "lake" / "quarantine" / "*" / "*" / "*.parquet"
    con = duckdb.connect(str(args.data / "warehouse.duckdb"), read_only=True)
    try:
        rows = con.execute(QUERY, [str(held)]).fetchall()
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
