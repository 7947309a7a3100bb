"""Speed of ranking: 20 workloads x all offers of a day (target < 2 s after start-up).

    .venv/bin/python bench/sizing_rank_speed.py [--data-dir DIR] [--synthetic N]

Workloads: the 5 shipped in sizing/workloads.toml, each in 4 variants (sequence length and
micro-batch), = 20. Offers: the latest day of `<data-dir>/warehouse.duckdb` when it exists,
and a synthetic day of N offers (default 5000: every canonical GPU x 1/2/4/8 per instance x
pricing models x regions, for scale only: prices are made up) so the figure does not depend
on how many providers the bundled snapshots cover.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpuprices.sizing.rank import rank  # noqa: E402
from gpuprices.sizing.workload import load_workloads  # noqa: E402
from gpuprices.warehouse.gpus import gpu_models  # noqa: E402


def twenty_workloads():
    base = load_workloads(ROOT / "sizing/workloads.toml")
    out = []
    for w in base:
        for k, (seq_mul, mb) in enumerate([(1, 1), (2, 1), (1, 2), (0.5, 4)]):
            seq = max(256, int(w.seq_len * seq_mul))
            out.append(replace(w, name=f"{w.name}#{k}", seq_len=seq, micro_batch=mb))
    return out


def synthetic_offers(n: int) -> list[dict]:
    gpus = [g for g in gpu_models().values()]
    combos = itertools.cycle(itertools.product(
        gpus, (1, 2, 4, 8), ("on_demand", "spot", "reserved"), ("us", "eu", "ap")))
    offers = []
    for i, (g, count, pm, region) in zip(range(n), combos, strict=False):
        offers.append(dict(
            provider="synthetic", sku=f"s{i}", region=region, gpu_model=g.gpu_model,
            gpu_count=count, price_per_hour=count * (0.5 + (g.bf16_dense_tflops or 100) / 400),
            currency="USD", pricing_model=pm, billing_increment_s=60, min_billing_s=60,
            extra='{"interruption_band": "5-10%"}' if pm == "spot" else "{}"))
    return offers


def warehouse_offers(data_dir: Path) -> tuple[str, list[dict]] | None:
    db = data_dir / "warehouse.duckdb"
    if not db.exists():
        return None
    from gpuprices.flows.cli.rank_inputs import read_offers

    day, offers, _ = read_offers(db, None)
    return str(day), offers


def timed(workloads, offers, top: int | None = 10) -> float:
    """Seconds for one ranking; top=10 is what `gpuprices rank` prints by default."""
    t0 = time.perf_counter()
    rank(workloads, offers, top=top)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", type=Path,
                    default=Path(os.environ.get("GPUPRICES_HOME", ROOT / "data")))
    ap.add_argument("--synthetic", type=int, default=5000)
    args = ap.parse_args()
    ws = twenty_workloads()
    real = warehouse_offers(args.data_dir)
    if real:
        day, offers = real
        print(f"warehouse {day}: {len(ws)} workloads x {len(offers)} offers: "
              f"{timed(ws, offers):.3f} s (top 10), {timed(ws, offers, None):.3f} s (all rows)")
    else:
        print(f"no warehouse under {args.data_dir}: skipped the real day")
    offers = synthetic_offers(args.synthetic)
    print(f"synthetic day: {len(ws)} workloads x {len(offers)} offers: "
          f"{timed(ws, offers):.3f} s with --top 10 (target < 2 s); every row built in full: "
          f"{timed(ws, offers, None):.3f} s")


if __name__ == "__main__":
    main()
