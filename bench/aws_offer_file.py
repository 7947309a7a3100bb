"""Benchmark: the streaming AWS offer-file parser against a plain json.load, on a synthetic file.

Writes an offer file of at least --size-mb (default 600) in the real Price List shape, built from
the real slices in tests/fixtures/raw/aws/ (their products and terms repeated with new SKUs,
regions and instance types, GPU and non-GPU mixed as in a real region file, on-demand and
reserved terms), into a temporary directory that is deleted afterwards. Then, each in its own
child process (so peak RSS is that run's alone, read with resource.getrusage(RUSAGE_SELF)):

- `scan`: ijson tokenising the file without building anything (the floor for any ijson parse);
- `stream`: gpuprices.spiders.providers.aws.parser.iter_offer_file over the open file;
- `json.load`: the whole file loaded, then the same GPU filter applied.

Prints MB/s, peak RSS and the ratios. Targets (issue 17): peak RSS <= 300 MB whatever the file
size, >= 100 MB/s wall (printed beside the ijson floor and json.load of the same run).

    .venv/bin/python bench/aws_offer_file.py [--size-mb 600] [--keep DIR]
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "tests" / "fixtures" / "raw" / "aws"
SLICES = ["opencost_offer_slice_us-east-1_p4d_20240528.json",
          "opencost_offer_slice_us-east-2_20230322.json",
          "opencost_offer_slice_cn-northwest-1_CNY_20230314.json"]
REGIONS = [("us-east-1", "US East (N. Virginia)"), ("us-east-2", "US East (Ohio)"),
           ("us-west-2", "US West (Oregon)"), ("eu-west-1", "EU (Ireland)"),
           ("ap-northeast-1", "Asia Pacific (Tokyo)"), ("sa-east-1", "South America (Sao Paulo)")]
GPU_TYPES = ["p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5en.48xlarge", "g5.xlarge",
             "g5.48xlarge", "g6.xlarge", "g6e.12xlarge", "p6-b200.48xlarge", "g6f.large"]
CPU_TYPES = ["m5.large", "c6i.large", "r7g.xlarge", "m7i.2xlarge", "t3.micro"]
SKU_CHARS = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


def _dump(obj, level: int) -> str:
    """Laid out as AWS's files are: two-space indents throughout, `"key" : value`."""
    return json.dumps(obj, indent=2, separators=(",", " : ")).replace("\n", "\n" + " " * level)


def _real_slices() -> tuple[list[dict], dict[str, dict]]:
    """The compute products and the on-demand terms of the real slices."""
    products, on_demand = [], {}
    for name in SLICES:
        data = json.loads((RAW / name).read_bytes())
        products += [p for p in data["products"].values() if p["productFamily"].startswith(
            "Compute")]
        on_demand.update(data["terms"]["OnDemand"])
    return products, on_demand


def _write_products(fh: TextIO, rng: random.Random, products: list[dict], until: float,
                    counts: dict[str, int]) -> list[tuple[str, str, bool]]:
    """Products with new SKUs until the file reaches `until` bytes: (sku, base sku, GPU)."""
    skus: list[tuple[str, str, bool]] = []
    first = True
    while fh.tell() < until:
        base = rng.choice(products)
        sku = "".join(rng.choice(SKU_CHARS) for _ in range(16))
        p = copy.deepcopy(base)
        p["sku"] = sku
        attrs = p["attributes"]
        region, location = rng.choice(REGIONS)
        attrs["regionCode"], attrs["location"] = region, location
        gpu = rng.random() < 0.2  # a minority of a region's products are GPU types
        attrs["instanceType"] = rng.choice(GPU_TYPES if gpu else CPU_TYPES)
        if not gpu:
            attrs.pop("gpu", None)
        fh.write(("" if first else ",\n") + f'    "{sku}" : ' + _dump(p, 4))
        first = False
        counts["products"] += 1
        counts["gpu_products"] += gpu
        skus.append((sku, base["sku"], gpu))
    return skus


def _write_on_demand(fh: TextIO, skus: list[tuple[str, str, bool]],
                     on_demand: dict[str, dict]) -> None:
    """Each product's on-demand terms: those of the real product it copies, re-keyed."""
    first = True
    for sku, base_sku, _gpu in skus:
        terms = {}
        for code, term in on_demand[base_sku].items():
            t = copy.deepcopy(term)
            t["sku"] = sku
            terms[code.replace(base_sku, sku)] = t
        fh.write(("" if first else ",\n") + f'      "{sku}" : ' + _dump(terms, 6))
        first = False


def _write_reserved(fh: TextIO, rng: random.Random, skus: list[tuple[str, str, bool]],
                    fee: dict, target: int, counts: dict[str, int]) -> None:
    """Three reserved terms per product, shaped like `fee`, until the file reaches `target`."""
    first = True
    for sku, _base, _gpu in skus:
        if fh.tell() >= target:
            break
        terms = {}
        for length, option in (("1yr", "No Upfront"), ("3yr", "All Upfront"),
                               ("3yr", "Partial Upfront")):
            t = copy.deepcopy(fee)
            t["sku"] = sku
            t["termAttributes"] = {"LeaseContractLength": length, "OfferingClass": "standard",
                                   "PurchaseOption": option}
            t["priceDimensions"]["X.Y.6YS6EN2CT7"] = {
                "unit": "Hrs", "rateCode": "X.Y.6YS6EN2CT7",
                "pricePerUnit": {"USD": f"{rng.uniform(0.05, 40):.10f}"}}
            terms[f"{sku}.{length}{option[:3]}"] = t
        fh.write(("" if first else ",\n") + f'      "{sku}" : ' + _dump(terms, 6))
        first = False
        counts["reserved"] += 1


def write_offer_file(path: Path, size_mb: int, seed: int = 7) -> dict[str, int]:
    """Stream a synthetic offer file to path; products first, then terms (as AWS does)."""
    rng = random.Random(seed)
    products, on_demand = _real_slices()
    # the real RI "Upfront Fee" term (filed under OnDemand in us-east-2): kept there, and reused
    # as the shape of the Reserved terms
    fee = next(iter(on_demand["8D49XP354UEYTHGM"].values()))
    target = size_mb * 1024 * 1024
    share_products = 0.55
    counts = {"products": 0, "gpu_products": 0, "reserved": 0}
    with path.open("w") as fh:
        fh.write('{\n  "formatVersion" : "v1.0",\n  "offerCode" : "AmazonEC2",\n'
                 '  "version" : "20240528203522",\n'
                 '  "publicationDate" : "2024-05-28T20:35:22Z",\n  "products" : {\n')
        skus = _write_products(fh, rng, products, target * share_products, counts)
        fh.write('\n  },\n  "terms" : {\n    "OnDemand" : {\n')
        _write_on_demand(fh, skus, on_demand)
        fh.write('\n    },\n    "Reserved" : {\n')
        _write_reserved(fh, rng, skus, fee, target, counts)
        fh.write('\n    }\n  },\n  "attributesList" : { }\n}\n')
    return counts


def _child(mode: str, path: str) -> None:
    sys.path.insert(0, str(ROOT))
    import ijson

    from gpuprices.spiders.providers.aws.offer_file import skip_reason
    from gpuprices.spiders.providers.aws.parser import iter_offer_file
    from gpuprices.spiders.providers.aws.tables import is_gpu_type
    from gpuprices.warehouse.contract import CaptureMeta

    meta = CaptureMeta(provider="aws", url="file://" + path,
                       captured_at=dt.datetime(2024, 5, 28, tzinfo=dt.UTC))
    t0 = time.perf_counter()
    c0 = time.process_time()
    if mode == "scan":  # ijson tokenising the file, building nothing: the floor for any ijson use
        with open(path, "rb") as fh:
            n = sum(1 for _ in ijson.kvitems(fh, "no.such.prefix", buf_size=1 << 20))
    elif mode == "stream":
        with open(path, "rb") as fh:
            n = sum(1 for _ in iter_offer_file(fh, meta))
    else:
        with open(path, "rb") as fh:
            data = json.load(fh)
        gpu = {s for s, p in data["products"].items()
               if is_gpu_type(p["attributes"].get("instanceType", ""))
               and not skip_reason(p["attributes"])}
        n = sum(len(data["terms"]["OnDemand"].get(s, {})) + len(data["terms"]["Reserved"].get(
            s, {})) for s in gpu)
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"mode": mode, "offers": n, "seconds": elapsed, "cpu_seconds": cpu,
                      "peak_rss_mb": peak_kb / 1024, "ijson_backend": ijson.backend}))


def run_child(mode: str, path: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", mode, str(path)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=600)
    ap.add_argument("--child", nargs=2, metavar=("MODE", "PATH"))
    ap.add_argument("--skip-json-load", action="store_true")
    args = ap.parse_args()
    if args.child:
        _child(*args.child)
        return
    tmp = Path(tempfile.mkdtemp(prefix="aws_offer_bench_"))
    try:
        path = tmp / "index.json"
        t0 = time.perf_counter()
        counts = write_offer_file(path, args.size_mb)
        size_mb = os.path.getsize(path) / 1e6

        def rate(r: dict) -> str:
            return (f"{r['seconds']:.1f}s wall = {size_mb / r['seconds']:.0f} MB/s, "
                    f"{r['cpu_seconds']:.1f}s CPU = {size_mb / r['cpu_seconds']:.0f} MB/CPU-s")
        print(f"synthetic offer file: {size_mb:.0f} MB, {counts['products']} products "
              f"({counts['gpu_products']} GPU), reserved terms for {counts['reserved']} SKUs, "
              f"written in {time.perf_counter() - t0:.1f}s")
        scan = run_child("scan", path)
        print(f"ijson scan only ({scan['ijson_backend']}, builds nothing): {rate(scan)} "
              "(the floor for any ijson parse here)")
        stream = run_child("stream", path)
        print(f"stream     (structural scan): {stream['offers']} offers, "
              f"{rate(stream)}, peak RSS {stream['peak_rss_mb']:.0f} MB; "
              f"{scan['seconds'] / stream['seconds']:.2f} of the ijson floor's speed")
        if not args.skip_json_load:
            full = run_child("json.load", path)
            print(f"json.load: {full['offers']} term entries, {rate(full)}, "
                  f"peak RSS {full['peak_rss_mb']:.0f} MB")
            print(f"ratios stream / json.load: wall time {stream['seconds'] / full['seconds']:.2f}"
                  f", CPU time {stream['cpu_seconds'] / full['cpu_seconds']:.2f}, "
                  f"peak RSS {stream['peak_rss_mb'] / full['peak_rss_mb']:.3f}")
        # Wall time on a shared machine depends on the neighbours; CPU time much less so.
        ok = stream["peak_rss_mb"] <= 300 and size_mb / stream["seconds"] >= 100
        print("targets (<= 300 MB peak RSS, >= 100 MB/s wall):",
              "met" if ok else "NOT met",
              f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
