"""A year of nightly history at realistic size, through the real load path, and how fast the
warehouse answers.

    .venv/bin/python bench/warehouse_scale.py [--nights 365] [--offers 30000] [--dir DIR]

1. Real offers: every capture of snapshots/manifest.csv is archived in a temporary raw archive and
   parsed with today's parsers (gpuprices.flows.pipeline.steps.reparse), plus the bundled ECB
   rates.
2. Synthetic year: the real offers are replicated into extra regions until a night holds at
   least --offers listed rows; night by night a few prices move (0.2% of fixed-price offers,
   5% of spot offers, by a few percent), a few offers are withdrawn and come back. Each night
   goes through gpuprices.warehouse.lake.write_partition and gpuprices.warehouse.db.load_partition
   per provider, like the pipeline's load.
3. Timed (median of 3 runs, after one warm-up): one more night's load; cheapest_daily over the
   year; price_changes of the last 7 days; offer_history of one GPU model; the weekly report.
   Then the same questions with pandas over CSV files (one per night), as ratios.
4. Disk: the lake plus warehouse.duckdb as the loads left it, then after `gpuprices compact`.

Targets (issue 6, on a 2-core machine): each query < 1 s, a night's load < 5 s, the report
< 30 s, the year's lake + warehouse < 300 MB.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpuprices.flows.config import Settings  # noqa: E402
from gpuprices.flows.pipeline import steps as pipeline  # noqa: E402
from gpuprices.reports.render import write_report  # noqa: E402
from gpuprices.sizing.workload import load_workloads  # noqa: E402
from gpuprices.spiders import fx  # noqa: E402
from gpuprices.spiders.archive import append_captures  # noqa: E402
from gpuprices.spiders.importer import import_capture, parse_timestamp  # noqa: E402
from gpuprices.spiders.providers.azure.history import captures_from_azure_history  # noqa: E402
from gpuprices.spiders.providers.gcp.history import captures_from_gcp_history  # noqa: E402
from gpuprices.warehouse import db, lake  # noqa: E402
from gpuprices.warehouse.contract import OFFER_SCHEMA, PROVIDERS  # noqa: E402

TARGETS = {"load one night": 5.0, "cheapest_daily (year)": 1.0,
           "price_changes (last 7 days)": 1.0, "offer_history (one GPU model)": 1.0,
           "weekly report": 30.0}
HISTORY_GPU = "H100-SXM-80GB"
SORT_KEYS = [(k, "ascending") for k in ("gpu_model", "pricing_model", "sku", "region")]
SEED = 20261130


def real_offers(work: Path) -> pa.Table:
    """The largest parsed snapshot of every provider, from the real bundled captures (the
    manifest's and the bundled GCP / Azure / AWS history series)."""
    s = Settings(work / "real", work / "real_snapshots").ensure()
    with (ROOT / "snapshots" / "manifest.csv").open(newline="") as fh:
        for r in csv.DictReader(fh):
            import_capture(s.archive_root, ROOT / r["file"], r["provider"], r["url"],
                           parse_timestamp(r["captured_at"]), method=r["method"] or "GET",
                           origin=r["origin"])
    hist = ROOT / "tests" / "fixtures" / "history"
    append_captures(s.archive_root, captures_from_gcp_history(hist / "gcp"))
    append_captures(s.archive_root, captures_from_azure_history(hist / "azure"))
    tables = []
    for p in PROVIDERS:
        results = [r for r in pipeline.reparse(s, p) if r.status != "failed"]
        if results:
            best = max(results, key=lambda r: (r.rows, r.snapshot_date))
            tables.append(lake.read_partition(s.lake_root, best.snapshot_date, p))
    return pa.concat_tables(tables)


def replicate(base: pa.Table, n_target: int) -> pa.Table:
    """Copies of the real offers in extra regions (`<region>~2`, …) up to n_target rows."""
    k = -(-n_target // base.num_rows)
    parts = []
    for j in range(k):
        t = base
        if j:
            region = pc.binary_join_element_wise(
                pc.fill_null(t.column("region"), "global"), pa.scalar(f"~{j + 1}"), "")
            t = t.set_column(t.schema.get_field_index("region"), "region", region)
        parts.append(t)
    return pa.concat_tables(parts)


class Year:
    """Night-by-night prices around the real ones."""

    # A moved price is multiplied by a normal factor (sd MOVE_SD, clipped to 0.7-1.3). 0.1% of
    # listed offers are withdrawn each night, 3% of withdrawn ones come back: the listed share
    # stays near 97% all year.
    MOVE_SD, WITHDRAWN, BACK = 0.06, 0.001, 0.03

    def __init__(self, base: pa.Table, seed: int = SEED) -> None:
        self.base = base
        self.rng = np.random.default_rng(seed)
        self.price = base.column("price_per_hour").to_numpy().astype(float).copy()
        self.count = base.column("gpu_count").to_numpy().astype(float)
        spot = pc.equal(base.column("pricing_model"), "spot").to_numpy(zero_copy_only=False)
        self.move_rate = np.where(spot, 0.05, 0.002)
        self.active = self.rng.random(base.num_rows) < 0.97
        providers = base.column("provider").to_numpy(zero_copy_only=False)
        self.by_provider = {p: np.flatnonzero(providers == p) for p in np.unique(providers)}

    def step(self) -> None:
        n = len(self.price)
        move = self.rng.random(n) < self.move_rate
        self.price[move] *= np.clip(self.rng.normal(1.0, self.MOVE_SD, move.sum()), 0.7, 1.3)
        self.price = np.round(self.price, 4)
        r = self.rng.random(n)
        self.active = np.where(self.active, r >= self.WITHDRAWN, r < self.BACK)

    def night(self, day: dt.date) -> dict[str, pa.Table]:
        captured = dt.datetime.combine(day, dt.time(2, 5), dt.UTC)
        out = {}
        for p, idx in self.by_provider.items():
            idx = idx[self.active[idx]]
            t = self.base.take(pa.array(idx))
            price = self.price[idx]
            t = t.set_column(t.schema.get_field_index("price_per_hour"), OFFER_SCHEMA.field(
                "price_per_hour"), pa.array(price))
            t = t.set_column(t.schema.get_field_index("price_per_gpu_hour"), OFFER_SCHEMA.field(
                "price_per_gpu_hour"), pa.array(price / self.count[idx]))
            t = t.set_column(t.schema.get_field_index("snapshot_date"), OFFER_SCHEMA.field(
                "snapshot_date"), pa.array([day] * len(idx), pa.date32()))
            t = t.set_column(t.schema.get_field_index("captured_at"), OFFER_SCHEMA.field(
                "captured_at"), pa.array([captured] * len(idx), pa.timestamp("us", tz="UTC")))
            out[p] = t
        return out


def load_night(settings: Settings, con, day: dt.date, tables: dict[str, pa.Table]) -> int:
    n = 0
    for p, t in tables.items():
        lake.write_partition(settings.lake_root, day, p, t)
        n += db.load_partition(con, day, p, lake.read_partition(settings.lake_root, day, p))
    return n


def timed(fn: Callable[[], object], runs: int = 3) -> tuple[float, object]:
    fn()  # warm-up: first touch of the file pages
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


# --- pandas over CSV ----------------------------------------------------------------------

ID_COLS = ["provider", "sku", "region", "gpu_model", "gpu_count", "pricing_model",
           "commitment_months", "effective_from", "currency", "extra"]


def pandas_side(csv_dir: Path, fx_csv: Path, last_day: dt.date) -> dict[str, float]:
    out: dict[str, float] = {}
    t = time.perf_counter()
    files = sorted(csv_dir.glob("*.csv"))
    df = pd.concat((pd.read_csv(f, keep_default_na=True) for f in files), ignore_index=True)
    df["snapshot_date"] = pd.to_datetime(df["snapshot_date"])
    out["read CSVs"] = time.perf_counter() - t
    rates = pd.read_csv(fx_csv, parse_dates=["date"]).sort_values("date")

    t = time.perf_counter()
    usd = rates[rates.currency == "USD"][["date", "rate_per_eur"]].rename(
        columns={"rate_per_eur": "usd"})
    d = df[df.effective_from.isna() | (pd.to_datetime(df.effective_from) <= df.snapshot_date)]
    d = pd.merge_asof(d.sort_values("snapshot_date"), usd, left_on="snapshot_date",
                      right_on="date")
    cur = rates.rename(columns={"rate_per_eur": "cur", "currency": "currency"})
    d = pd.merge_asof(d.sort_values("snapshot_date"), cur[["date", "currency", "cur"]],
                      left_on="snapshot_date", right_on="date", by="currency",
                      suffixes=("", "_c"))
    d["cur"] = np.where(d.currency == "EUR", 1.0, d["cur"])
    d["usd_price"] = np.where(d.currency == "USD", d.price_per_gpu_hour,
                              d.price_per_gpu_hour * d.usd / d.cur)
    d = d.dropna(subset=["usd_price"])
    idx = d.groupby(["snapshot_date", "gpu_model", "pricing_model"])["usd_price"].idxmin()
    cheapest = d.loc[idx]
    out["cheapest_daily (year)"] = time.perf_counter() - t
    assert len(cheapest)

    def with_prev(frame: pd.DataFrame) -> pd.DataFrame:
        key = frame.groupby(ID_COLS, dropna=False, sort=False).ngroup()
        frame = frame.assign(key=key).sort_values(["key", "snapshot_date"])
        frame["prev"] = frame.groupby("key")["price_per_hour"].shift()
        return frame

    t = time.perf_counter()
    f = with_prev(df)
    since = pd.Timestamp(last_day - dt.timedelta(days=6))
    changes = f[(f.snapshot_date >= since) & f.prev.notna() & (f.price_per_hour != f.prev)]
    out["price_changes (last 7 days)"] = time.perf_counter() - t
    assert changes is not None

    t = time.perf_counter()
    g = with_prev(df[df.gpu_model == HISTORY_GPU].copy())
    g["run"] = (g.price_per_hour != g.prev).cumsum()
    hist = g.groupby(["key", "run"]).agg(valid_from=("snapshot_date", "min"),
                                        valid_to=("snapshot_date", "max"))
    out["offer_history (one GPU model)"] = time.perf_counter() - t
    assert len(hist)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, default=365)
    ap.add_argument("--offers", type=int, default=30000, help="offers per night (at least)")
    ap.add_argument("--dir", type=Path, default=None, help="work folder (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--no-pandas", action="store_true")
    ap.add_argument("--sort-nights", action="store_true",
                    help="sort each night by provider, gpu_model, pricing_model, sku, region "
                         "before the load path (what the pipeline could do to compress better)")
    args = ap.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="gpuprices-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"work folder: {work}")
    try:
        run(work, args)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def _night(year: Year, day: dt.date, sort_nights: bool) -> dict[str, pa.Table]:
    night = year.night(day)
    if sort_nights:
        night = {p: t.sort_by(SORT_KEYS) for p, t in night.items()}
    return night


def load_year(s: Settings, con, year: Year, days: list[dt.date],
              sort_nights: bool) -> tuple[int, float]:
    """Every night of `days` through the load path: (rows loaded, seconds)."""
    rows = 0
    t = time.perf_counter()
    for i, day in enumerate(days):
        if i:
            year.step()
        rows += load_night(s, con, day, _night(year, day, sort_nights))
        if (i + 1) % 50 == 0:
            print(f"  {i + 1} nights, {rows:,} rows, {time.perf_counter() - t:.0f} s")
    return rows, time.perf_counter() - t


def time_warehouse(s: Settings, con, work: Path, year: Year, extra_day: dt.date,
                   sort_nights: bool) -> tuple[dict[str, float], dict[str, pa.Table]]:
    """The warehouse's timings: one more night's load (`extra_day`, also returned), the
    questions, the weekly report."""
    results: dict[str, float] = {}
    year.step()
    night = _night(year, extra_day, sort_nights)
    results["load one night"], _ = timed(lambda: load_night(s, con, extra_day, night))
    last = extra_day
    results["cheapest_daily (year)"], cd = timed(
        lambda: con.sql("SELECT * FROM cheapest_daily").to_arrow_table())
    results["price_changes (last 7 days)"], ch = timed(
        lambda: con.sql("SELECT * FROM price_changes WHERE new_date > ?",
                        params=[last - dt.timedelta(days=7)]).to_arrow_table())
    results["offer_history (one GPU model)"], oh = timed(
        lambda: con.sql("SELECT * FROM offer_history WHERE gpu_model = ?",
                        params=[HISTORY_GPU]).to_arrow_table())
    workloads = load_workloads(ROOT / "sizing" / "workloads.toml")
    results["weekly report"], html = timed(
        lambda: write_report(con, work / "reports", None, "EUR", workloads), runs=1)
    print(f"result sizes: cheapest_daily {cd.num_rows:,} rows, price_changes (7 d) "
          f"{ch.num_rows:,}, offer_history ({HISTORY_GPU}) {oh.num_rows:,}; report {html}")
    return results, night


def time_pandas(con, work: Path, days: list[dt.date], extra_day: dt.date,
                night: dict[str, pa.Table]) -> dict[str, float]:
    """The same year as one CSV file a night, `night` written as CSV, and the questions."""
    pandas_s: dict[str, float] = {}
    csv_dir = work / "csv"
    csv_dir.mkdir()
    cols = ", ".join(["snapshot_date"] + ID_COLS + ["price_per_hour", "price_per_gpu_hour"])
    t = time.perf_counter()
    for day in days + [extra_day]:
        con.execute(f"COPY (SELECT {cols} FROM offers WHERE snapshot_date = ?) "  # noqa: S608
                    f"TO '{csv_dir / (day.isoformat() + '.csv')}' (HEADER)", [day])
    con.execute(f"COPY fx_rates TO '{work / 'fx.csv'}' (HEADER)")
    print(f"wrote {len(days) + 1} CSV files in {time.perf_counter() - t:.0f} s "
          f"({du(csv_dir) / 1e6:,.0f} MB)")
    one = pa.concat_tables(list(night.values())).to_pandas()
    t = time.perf_counter()
    one.to_csv(work / "one_night.csv", index=False)
    pandas_s["load one night"] = time.perf_counter() - t
    pandas_s.update(pandas_side(csv_dir, work / "fx.csv", extra_day))
    return pandas_s


def print_timings(results: dict[str, float], pandas_s: dict[str, float]) -> None:
    print()
    print(f"{'measure':34} {'duckdb s':>9} {'target s':>9} {'ok':>3} {'pandas s':>9} "
          f"{'pandas/duckdb':>14}")
    for k, v in results.items():
        p = pandas_s.get(k)
        ratio = f"{p / v:14.1f}" if p else f"{'—':>14}"
        ok = "yes" if v < TARGETS[k] else "NO"
        print(f"{k:34} {v:9.3f} {TARGETS[k]:9.1f} {ok:>3} "
              f"{(f'{p:9.3f}' if p else '—'):>9} {ratio}")
    if "read CSVs" in pandas_s:
        print(f"{'(pandas: reading the CSV files)':34} {'':9} {'':9} {'':3} "
              f"{pandas_s['read CSVs']:9.3f}")


def print_disk(s: Settings, disk: dict[str, int]) -> None:
    """Disk use as the loads left it, then compacted."""
    total_mb = sum(disk.values()) / 1e6
    print(f"disk: lake {disk['lake'] / 1e6:,.1f} MB + warehouse "
          f"{disk['warehouse.duckdb'] / 1e6:,.1f} MB = {total_mb:,.1f} MB "
          f"(target < 300 MB: {'yes' if total_mb < 300 else 'NO'})")
    t = time.perf_counter()
    before, after = db.compact(s.db_path)
    print(f"after `gpuprices compact` ({time.perf_counter() - t:.0f} s): warehouse "
          f"{before / 1e6:,.1f} -> {after / 1e6:,.1f} MB, lake + warehouse "
          f"{(disk['lake'] + after) / 1e6:,.1f} MB")


def run(work: Path, args: argparse.Namespace) -> None:
    t0 = time.perf_counter()
    base = real_offers(work)
    counts = pc.value_counts(base.column("provider")).to_pylist()
    print(f"real offers: {base.num_rows} from "
          + ", ".join(f"{c['values']} {c['counts']}" for c in counts))
    # ~3% of offers are withdrawn on a given night (see Year.step): replicate a little more.
    table = replicate(base, int(args.offers / 0.96) + 1)
    year = Year(table)
    s = Settings(work / "data", work / "snapshots").ensure()
    con = db.connect(s.db_path)
    db.init_schema(con)
    n_fx = fx.load_fx_from_archive(ROOT / "snapshots", con)
    first = dt.date(2025, 11, 1)
    days = [first + dt.timedelta(days=i) for i in range(args.nights)]
    rows, build_s = load_year(s, con, year, days, args.sort_nights)
    print(f"built {len(days)} nights, {rows:,} rows ({rows / len(days):,.0f} a night) in "
          f"{build_s:.0f} s; {n_fx} ECB rates")
    con.execute("CHECKPOINT")
    disk = {"lake": du(s.lake_root), "warehouse.duckdb": s.db_path.stat().st_size}
    extra_day = days[-1] + dt.timedelta(days=1)
    results, night = time_warehouse(s, con, work, year, extra_day, args.sort_nights)
    pandas_s = {} if args.no_pandas else time_pandas(con, work, days, extra_day, night)
    con.close()
    print_timings(results, pandas_s)
    print_disk(s, disk)
    print(f"total bench time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
