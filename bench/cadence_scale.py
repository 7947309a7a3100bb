"""Three years of snapshots of every provider at its declared cadence: what they do to the lake
(files, bytes, before and after `gpuprices compact-lake`), to the warehouse (bytes, a full
rebuild from the lake, one hour's load) and to its questions.

    .venv/bin/python bench/cadence_scale.py [--days 1095] [--dir DIR [--reuse]]
        [--cadence declared|daily]

Quick run: `--days 14` (a few minutes). Prices: the real offer mix (the largest parsed snapshot
of every provider from the bundled captures, bench/warehouse_scale.py real_offers), moved hour
by hour: a spot or marketplace price moves with probability 2% an hour, a list price 0.2% a day
(spread over its hours), by a few percent; 0.1% of listed offers are withdrawn a day and 3% of
withdrawn ones come back.

Cadence: each provider as its package declares it (spiders/registry.py `cadence`): the hourly
ones (marketplaces and spot feeds: Azure, Hyperbolic, Lium, GPU.ai, Vast) are crawled every hour
of every simulated day, 24 snapshots a day each, and the rest once a night at 02:05, as the
deployed schedules do (flows/team/deploy.py). `--cadence daily` crawls everyone nightly, for
comparison. The lake holds one file per (snapshot_date, provider) with every snapshot of the
day in it (snapshot_at), as the pipeline writes it.

The last simulated day is written up to 19:05; "one hour's load" is then the next crawl of the
hourly providers (20:05, 21:05, ...: each one's day file rewritten with one more snapshot and
`db.load_lake` of that day, which appends only the new snapshots, warehouse/bulk_append.py).
"The nightly hour's load" is 02:05 of the day after, when the nightly providers come in too:
all 31 providers' files written and loaded in one `load_lake` (timed once: it happens once).

"Rebuild from the lake" is `gpuprices load`'s path (db.load_lake) into an empty warehouse:
batches of a month, each one set of bulk statements, a compacted month file read once.

Targets (issue 29, 2 cores): one hour's load <= 2 s, rebuild <= 10 min, every query <= 1 s,
warehouse <= 3 GB; each printed with PASS or FAIL.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

import warehouse_scale as ws  # noqa: E402  (real_offers, Year, timed, du)

from gpuprices.flows.config import Settings  # noqa: E402
from gpuprices.reports.render import write_report  # noqa: E402
from gpuprices.sizing.workload import load_workloads  # noqa: E402
from gpuprices.spiders import registry  # noqa: E402
from gpuprices.warehouse import db, index_store, lake, lake_compact, lake_sync  # noqa: E402

TARGETS = {"one hour's load": 2.0, "the nightly hour's load": 2.0,
           "rebuild from the lake": 600.0, "cheapest_daily": 1.0,
           "price_changes (7 d)": 1.0, "offer_history (one offer)": 1.0,
           "price index (a year)": 1.0,
           "weekly report": 30.0}  # not a query: issue 6's target for the report
WAREHOUSE_TARGET = 3e9
NIGHTLY_HOUR = 2  # the nightly providers' crawl, 02:05 (flows/team/deploy.py's nightly cron)
FIRST_TIMED_HOUR = 20  # the last day holds hours 0-19, then ws.timed loads 4 more (1 + 3 runs)


class Hours(ws.Year):
    """ws.Year stepped hourly: a spot price moves 2% of hours, a list price 0.2% of days."""

    MOVE_SD, WITHDRAWN, BACK = 0.04, 0.001 / 24, 0.03 / 24

    def __init__(self, base: pa.Table) -> None:
        super().__init__(base)
        spot = self.move_rate > 0.01
        self.move_rate = np.where(spot, 0.02, 0.002 / 24)

    def snapshot(self, day: dt.date, hour: int, providers) -> dict[str, pa.Table]:
        """The offers of `providers` now, as their crawl at `hour` of `day` (its capture and
        snapshot time)."""
        at = pa.array([dt.datetime.combine(day, dt.time(hour, 5), dt.UTC)],
                      pa.timestamp("us", tz="UTC"))
        out = {}
        for p, t in self.night(day, providers).items():
            taken = pa.repeat(at[0], t.num_rows)
            for name in ("captured_at", "snapshot_at"):
                t = t.set_column(t.schema.get_field_index(name), name, taken)
            out[p] = t
        return out

    def night(self, day: dt.date, providers=None) -> dict[str, pa.Table]:
        keep = self.by_provider
        if providers is not None:
            self.by_provider = {p: keep[p] for p in providers}
        try:
            return super().night(day)
        finally:
            self.by_provider = keep


class Day:
    """One simulated day's crawls: every snapshot taken so far, per provider."""

    def __init__(self, hours: Hours, day: dt.date, hourly: set[str]) -> None:
        self.hours, self.day, self.hourly = hours, day, hourly
        self.taken: dict[str, list[pa.Table]] = {}
        self.next_hour = 0

    def crawl_to(self, hour: int) -> set[str]:
        """Step the prices to `hour` (inclusive) and take each provider's crawls due by then;
        returns the providers crawled."""
        crawled: set[str] = set()
        for h in range(self.next_hour, hour + 1):
            self.hours.step()
            due = [p for p in self.hours.by_provider
                   if p in self.hourly or h == NIGHTLY_HOUR]
            for p, table in self.hours.snapshot(self.day, h, due).items():
                self.taken.setdefault(p, []).append(table)
            crawled.update(due)
        self.next_hour = hour + 1
        return crawled

    def write(self, root, providers) -> int:
        """Each provider's day file as the pipeline writes it: all its snapshots of the day."""
        n = 0
        for p in sorted(providers):
            t = pa.concat_tables(self.taken[p])
            lake.write_partition(root, self.day, p, t)
            n += t.num_rows
        return n


def lake_size(root: Path) -> tuple[int, int]:
    files = [p for p in root.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def verdict(name: str, value: float, target: float, unit: str = "s") -> str:
    ok = "PASS" if value <= target else "FAIL"
    return f"  {name:<28} {value:>10.2f} {unit:<2} target <= {target:g} {unit}  {ok}"


def run(work: Path, args: argparse.Namespace) -> None:
    t0 = time.perf_counter()
    base = ws.real_offers(work)
    providers = sorted(set(base.column("provider").to_pylist()))
    hourly = set() if args.cadence == "daily" else {
        p for p in providers if registry.cadence(p) == "hourly"}
    print(f"real offer mix: {base.num_rows:,} offers of {len(providers)} providers "
          f"({time.perf_counter() - t0:.0f} s); hourly: {', '.join(sorted(hourly)) or 'none'}")
    s = Settings(work / "data", work / "real_snapshots").ensure()
    hours = Hours(base)
    first = dt.date(2023, 1, 1)
    days = [first + dt.timedelta(days=i) for i in range(args.days)]
    saved = work / "lake-compacted"  # the lake as compacted, for --reuse (below)
    if args.reuse and (saved / "figures.json").exists():
        # The generator is seeded: stepping it as the write did gives the same prices (taking
        # snapshots draws nothing), so the timed part continues the same history.
        for _ in days[:-1]:
            for _ in range(24):
                hours.step()
        last = Day(hours, days[-1], hourly)
        last.crawl_to(FIRST_TIMED_HOUR - 1)
        shutil.rmtree(s.lake_root)
        shutil.copytree(saved / "lake", s.lake_root)
        s.db_path.unlink(missing_ok=True)
        figures = json.loads((saved / "figures.json").read_text())
        rows, out = figures["rows"], figures["lines"]
        print(f"lake of {len(days)} days reused from {saved} (--reuse)")
    else:
        t = time.perf_counter()
        rows = 0
        for i, day in enumerate(days[:-1]):
            today = Day(hours, day, hourly)
            rows += today.write(s.lake_root, today.crawl_to(23))
            if (i + 1) % 100 == 0:
                print(f"  {i + 1} days, {rows:,} rows, {time.perf_counter() - t:.0f} s",
                      flush=True)
        last = Day(hours, days[-1], hourly)
        rows += last.write(s.lake_root, last.crawl_to(FIRST_TIMED_HOUR - 1))
        print(f"lake written: {len(days)} days, {rows:,} rows ({time.perf_counter() - t:.0f} s)",
              flush=True)
        out = []
        files, size = lake_size(s.lake_root)
        t = time.perf_counter()
        after_day = days[-1] + dt.timedelta(days=1)
        today = after_day if after_day.day == 1 else (after_day.replace(day=1) + dt.timedelta(
            days=32)).replace(day=1)  # every simulated month closed
        done = lake_compact.compact_lake(s.lake_root, today=today)
        compact_s = time.perf_counter() - t
        files2, size2 = lake_size(s.lake_root)
        out.append(f"  lake: {rows:,} rows; files {files:,} -> {files2:,} after compaction "
                   f"({sum(1 for r in done if not r.skipped)} provider-months, "
                   f"{compact_s:.0f} s); bytes {size / 1e6:,.1f} MB -> {size2 / 1e6:,.1f} MB")
        if hourly:
            snaps = 365 * (24 * len(hourly) + len(providers) - len(hourly))
            out.append(f"  with one file per snapshot instead of per provider-day the lake "
                       f"would hold ~{snaps:,} files a year before compaction")
        if args.dir:
            shutil.rmtree(saved, ignore_errors=True)
            shutil.copytree(s.lake_root, saved / "lake")
            (saved / "figures.json").write_text(json.dumps({"rows": rows, "lines": out}))
    per_day = {p: sum(x.num_rows for x in ts) for p, ts in last.taken.items()}

    t = time.perf_counter()
    con = db.connect(s.db_path)
    db.init_schema(con)
    counts = db.load_lake(con, s.lake_root)
    lake_sync.record_loaded(con, s.lake_root, list(counts))
    rebuild = time.perf_counter() - t
    print(f"rebuilt from the lake (gpuprices load): {sum(counts.values()):,} rows in "
          f"{rebuild:.0f} s", flush=True)
    timings = {"rebuild from the lake": rebuild}
    split: list[tuple[float, float]] = []

    def crawl_and_load(day: Day, hour: int) -> None:
        crawled = day.crawl_to(hour)
        t = time.perf_counter()
        day.write(s.lake_root, crawled)
        t2 = time.perf_counter()
        db.load_lake(con, s.lake_root, dates=[day.day], providers=crawled)
        split.append((t2 - t, time.perf_counter() - t2))

    before = con.execute("SELECT count(*) FROM offer_points").fetchall()[0][0]
    next_hour = iter(range(FIRST_TIMED_HOUR, 24))
    watched = hourly or set(providers)
    timings["one hour's load"], _ = ws.timed(lambda: crawl_and_load(last, next(next_hour)))
    added = con.execute("SELECT count(*) FROM offer_points").fetchall()[0][0] - before
    snap = sum(last.taken[p][-1].num_rows for p in watched)
    out.append(f"  one hour's load: the crawl of {len(watched)} hourly providers appended to "
               f"their day files ({snap:,} rows a snapshot, {added:,} rows in 4 hours), each file "
               f"holding {FIRST_TIMED_HOUR + 1}-24 snapshots; median "
               f"{statistics.median(w for w, _ in split[1:]):.2f} s writing the files (atomic, "
               f"fsynced, checksummed) + {statistics.median(ld for _, ld in split[1:]):.2f} s "
               f"`load_lake` (read, compare fingerprints, append)")
    if hourly:
        nextday = Day(hours, days[-1] + dt.timedelta(days=1), hourly)
        crawl_and_load(nextday, NIGHTLY_HOUR - 1)  # 00:05 and 01:05 of the hourly providers
        split.clear()
        t = time.perf_counter()
        crawl_and_load(nextday, NIGHTLY_HOUR)
        timings["the nightly hour's load"] = time.perf_counter() - t
        out.append(f"  the nightly hour's load (02:05 of {nextday.day}): all "
                   f"{len(providers)} providers' crawls, "
                   f"{sum(ts[-1].num_rows for ts in nextday.taken.values()):,} rows, "
                   f"{split[0][0]:.2f} s writing + {split[0][1]:.2f} s `load_lake` "
                   f"(one run: it happens once a day)")
    else:
        timings["the nightly hour's load"] = timings["one hour's load"]
    out.append(f"  rows a day: {sum(per_day.values()):,} "
               f"({sum(v for p, v in per_day.items() if p in hourly):,} of hourly providers "
               f"up to 19:05)")
    timings["cheapest_daily"], _ = ws.timed(
        lambda: con.sql("SELECT * FROM cheapest_daily").to_arrow_table())
    timings["price_changes (7 d)"], _ = ws.timed(
        lambda: con.sql("SELECT * FROM price_changes WHERE new_date > ?",
                        params=[last.day - dt.timedelta(days=7)]).to_arrow_table())
    offer = con.execute("SELECT offer_id FROM offer_history WHERE gpu_model = ? "
                        "GROUP BY offer_id ORDER BY count(*) DESC LIMIT 1",
                        [ws.HISTORY_GPU]).fetchall()[0][0]
    timings["offer_history (one offer)"], _ = ws.timed(
        lambda: con.sql("SELECT * FROM offer_history WHERE offer_id = ?",
                        params=[offer]).to_arrow_table())
    t = time.perf_counter()
    index_store.update(con, "bench")
    index_build = time.perf_counter() - t
    timings["price index (a year)"], _ = ws.timed(
        lambda: con.sql("SELECT * FROM price_index_daily WHERE day > ?",
                        params=[last.day - dt.timedelta(days=365)]).to_arrow_table())
    workloads = load_workloads(ws.ROOT / "sizing" / "workloads.toml")
    timings["weekly report"], _ = ws.timed(
        lambda: write_report(con, work / "reports", None, "EUR", workloads), runs=1)
    total = con.execute("SELECT count(*) FROM offer_points").fetchall()[0][0]
    con.close()
    wh = s.db_path.stat().st_size

    print(f"\ncadence_scale: {len(days)} days, {len(providers)} providers at their "
          f"{args.cadence} cadence, {total:,} price points stored, {os.cpu_count()} cores")
    for line in out:
        print(line)
    print(f"  price index computed (whole history) in {index_build:.1f} s (informational)")
    for name, target in TARGETS.items():
        print(verdict(name, timings[name], target))
    print(verdict("warehouse size", wh / 1e9, WAREHOUSE_TARGET / 1e9, "GB")
          + f" ({wh / 1e6:,.1f} MB)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=3 * 365, help="days simulated (default 1095)")
    ap.add_argument("--dir", type=Path, help="work folder to keep (default: a temporary one)")
    ap.add_argument("--reuse", action="store_true",
                    help="with --dir: take the compacted lake a previous run kept there instead "
                         "of writing it again (to time the rest on a quieter machine)")
    ap.add_argument("--cadence", choices=("declared", "daily"), default="declared",
                    help="each provider's declared cadence, or everyone nightly")
    args = ap.parse_args()
    if args.dir:
        args.dir.mkdir(parents=True, exist_ok=True)
        run(args.dir, args)
        return 0
    work = Path(tempfile.mkdtemp(prefix="cadence-scale-"))
    try:
        run(work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
