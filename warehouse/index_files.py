"""The published GPU price index as files beside the warehouse (docs/index.md section 8):
`<data>/index/price_index_daily.csv` and `.parquet`, every published row, in key order, so a
reader without DuckDB can quote it. Each file is written as a hidden part and renamed over the
old one (a reader sees the old file or the new one)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from gpuprices.warehouse import index_store

FOLDER = "index"
STEM = "price_index_daily"
_COLUMNS = ("day, gpu_model, pricing_model, segment, value_usd, band_low_usd, band_high_usd, "
            "panel, members, reason, method_version, published_run")


def write(con: duckdb.DuckDBPyConnection, data_dir: Path) -> list[Path]:
    """Write the CSV and the Parquet file of price_index_daily into <data_dir>/index/; returns
    their paths (none when the warehouse has no index yet)."""
    if not index_store.has_index(con):
        return []
    folder = data_dir / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    # Read once as Arrow and written by pyarrow: no file path is ever formatted into SQL.
    # con.sql: an execute() result turned into Arrow is copied once more (DuckDB warns).
    table = con.sql(f"SELECT {_COLUMNS} FROM price_index_daily "  # noqa: S608 (our names)
                    "ORDER BY day, gpu_model, pricing_model, segment").to_arrow_table()
    out = []
    for suffix in (".csv", ".parquet"):
        final = folder / f"{STEM}{suffix}"
        part = folder / f".{STEM}{suffix}.part"
        if suffix == ".csv":  # pyarrow quotes every header name: the plain header first
            with part.open("wb") as fh:
                fh.write((",".join(table.column_names) + "\n").encode())
                pacsv.write_csv(table, fh, pacsv.WriteOptions(include_header=False,
                                                              quoting_style="needed"))
        else:
            with part.open("wb") as fh:
                pq.write_table(table, fh, compression="zstd")
        part.replace(final)
        out.append(final)
    return out
