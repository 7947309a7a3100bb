"""Fault bench: the mutation corpus and the crash cases, with a one-screen summary.

    .venv/bin/python bench/faults.py [--rows]

Mutation corpus: every real capture in tests/fixtures/raw/ (snapshots/manifest.csv, the
AWS p5 daily series and the remaining raw files) x 12 mutations (truncated, emptied, tags
stripped, prices as text, tables reordered, another provider's page, random bytes, ...). A
case survives when the parser raises ParseError or returns only offers of the original capture
at identical prices.

Crash cases, each on the real Runpod captures in a fresh data folder: SIGKILL during the Parquet
write (first write and rewrite), SIGKILL during the DuckDB load (first load and reload), a full
disk (ENOSPC) during the Parquet write and during the DuckDB load; then the run is repeated.
A case survives when the rerun completes with no partial partition and no duplicate row.
Rows lost = rows of the clean run missing from the warehouse after the rerun (must be 0).

Operator probes (bench/fault_probes/): what a careful operator tried beyond the corpus - wrong
prices, future-dated captures, a busy warehouse, slow webhooks, file access through `sql`,
archive files cut short or changed after archiving, bodies over the cap, unknown currencies,
out-of-range values in real captures - each on the real captures, counted as survived / rows
lost / wrong prices loaded.
"""

from __future__ import annotations

import argparse
import collections
import errno
import os
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from bench.fault_probes import Probe, ProbeResult, probes  # noqa: E402
from gpuprices.flows import loading  # noqa: E402
from gpuprices.flows.config import Settings  # noqa: E402
from gpuprices.flows.pipeline import steps as pipeline  # noqa: E402
from gpuprices.spiders.importer import import_capture, parse_timestamp  # noqa: E402
from gpuprices.warehouse import lake, store  # noqa: E402
from tests.conftest import manifest_rows  # noqa: E402
from tests.faults.kill import DAY, run_killed  # noqa: E402
from tests.faults.mutations import run_corpus  # noqa: E402


def _fresh(tmp: Path) -> Settings:
    snap = tmp / "snap"
    for r in manifest_rows("runpod"):
        import_capture(snap, ROOT / r["file"], "runpod", r["url"],
                       parse_timestamp(r["captured_at"]), method=r["method"], origin=r["origin"])
    return Settings(data_dir=tmp / "data", archive_root=snap).ensure()


def _night(settings: Settings) -> pipeline.Parsed:
    (path,) = [p for _, _, p in pipeline.archives(settings, ["runpod"], [DAY])]
    return pipeline.parse_archive(path, "runpod")


def _rows(settings: Settings) -> tuple[int, int]:
    if not settings.db_path.exists():  # killed before the first load created it
        return 0, 0
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        return con.execute(
            "select count(*), count(distinct (sku, region, pricing_model, price_per_hour, "
            "source_url, extra)) from offers where snapshot_date = ?", [DAY]).fetchone()
    finally:
        con.close()


def _run(settings: Settings) -> pipeline.DayResult:
    res = pipeline.store_day(settings, "runpod", DAY, _night(settings))
    with open(os.devnull, "w") as quiet:
        old, sys.stdout = sys.stdout, quiet
        try:
            loading.load(settings, [res], pipeline.new_run_id())
        finally:
            sys.stdout = old
    return res


def _enospc(*_a, **_k):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


# Where a full disk strikes: the Parquet write, the DuckDB insert.
_ENOSPC_IN = {"enospc-parquet": (pq, "write_table"), "enospc-duckdb": (store, "_insert_offers")}


def crash_case(name: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        settings = _fresh(Path(tmp))
        expected = _run(settings).rows  # the clean run
        if name == "kill-parquet-first-write":
            lake.partition_path(settings.lake_root, DAY, "runpod").unlink()
            settings.db_path.unlink()  # a first load: no warehouse yet
            run_killed("parquet", settings.data_dir, settings.archive_root)
        elif name == "kill-parquet-rewrite":
            run_killed("parquet", settings.data_dir, settings.archive_root)
        elif name == "kill-duckdb-first-load":
            settings.db_path.unlink()  # a first load: no warehouse yet
            run_killed("duckdb", settings.data_dir, settings.archive_root)
        elif name == "kill-duckdb-reload":
            run_killed("duckdb", settings.data_dir, settings.archive_root)
        elif name in _ENOSPC_IN:
            with mock.patch.object(*_ENOSPC_IN[name], _enospc):
                failed = _run(settings)
            assert failed.status == "failed", failed
        # After the fault: no partial partition visible, the warehouse whole.
        parts = [p for d, _, p in lake.list_partitions(settings.lake_root) if d == DAY]
        partial = any(pq.read_table(p).num_rows not in (expected,) for p in parts)
        total_mid, distinct_mid = _rows(settings)
        # The rerun.
        res = _run(settings)
        total, distinct = _rows(settings)
        return {
            "case": name, "expected": expected,
            "after_fault": total_mid, "partial_partition": partial,
            "duplicates_after_fault": total_mid - distinct_mid,
            "rerun_status": res.status, "loaded": total, "duplicates": total - distinct,
            "rows_lost": expected - distinct,
            "survived": (res.status == "ok" and not partial and total == distinct == expected
                         and total_mid == distinct_mid),
        }


CRASH_CASES = ["kill-parquet-first-write", "kill-parquet-rewrite", "kill-duckdb-first-load",
               "kill-duckdb-reload", "enospc-parquet", "enospc-duckdb"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", action="store_true", help="print every case")
    args = ap.parse_args()
    t0 = time.monotonic()
    corpus = list(run_corpus())
    by_provider: dict[str, collections.Counter] = {}
    for c in corpus:
        by_provider.setdefault(c.provider, collections.Counter())[
            "survived" if c.survived else "failed"] += 1
    print(f"mutation corpus: {len(corpus)} cases from "
          f"{len({c.origin for c in corpus})} real captures")
    for p, n in sorted(by_provider.items()):
        print(f"  {p:10s} {sum(n.values()):4d} tried  {n['survived']:4d} survived")
    outcomes = collections.Counter(c.outcome.split(":")[0] for c in corpus)
    print(f"  outcomes: {dict(outcomes)}")
    for c in corpus:
        if not c.survived or args.rows:
            print(f"  {'FAILED ' if not c.survived else ''}{c.provider} {c.origin} "
                  f"{c.mutation}: {c.outcome}")
    crashes = [crash_case(name) for name in CRASH_CASES]
    print(f"crash cases: {len(crashes)}")
    for r in crashes:
        print(f"  {r['case']:26s} {'survived' if r['survived'] else 'FAILED':8s} "
              f"expected {r['expected']} rows, after the fault {r['after_fault']} "
              f"(partial partition: {r['partial_partition']}), after the rerun {r['loaded']} "
              f"(duplicates {r['duplicates']}, lost {r['rows_lost']})")
    probed = run_probes()
    tried = len(corpus) + len(crashes) + len(probed)
    survived = (sum(c.survived for c in corpus) + sum(r["survived"] for r in crashes)
                + sum(r.survived for _, r in probed))
    lost = sum(r["rows_lost"] for r in crashes) + sum(r.rows_lost for _, r in probed)
    wrong = sum(r.wrong_loaded for _, r in probed)
    print(f"\nTOTAL: {tried} cases tried, {survived} survived, rows lost: {lost}, "
          f"wrong prices loaded: {wrong} ({time.monotonic() - t0:.1f} s)")
    ok = lost == 0 and wrong == 0 and all(r["survived"] for r in crashes)
    return 0 if ok and all(r.survived for _, r in probed) else 1


def run_probes() -> list[tuple[Probe, ProbeResult]]:
    found = probes()
    print(f"operator probes: {len(found)}")
    results = []
    for probe in found:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                res = probe.run(Path(tmp))
            except Exception as exc:  # a probe that crashes is a case not survived, not a crash
                res = ProbeResult(False, detail=f"probe raised {type(exc).__name__}: {exc}")
        results.append((probe, res))
        print(f"  item {probe.item:5s} {probe.name:40s} "
              f"{'survived' if res.survived else 'FAILED':8s} lost {res.rows_lost} "
              f"wrong {res.wrong_loaded}  {res.detail}")
    return results


if __name__ == "__main__":
    sys.exit(main())
