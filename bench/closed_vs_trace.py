"""The closed form (sizing/memory.py) before and after the trace engine's corrections, against
recorded trace figures, on a small grid nobody published: models x sequence x checkpointing on
/ off x LoRA / full, single GPU, framework hf.

    .venv/bin/python bench/closed_vs_trace.py            (reads the recorded trace figures)
    .venv/bin/python bench/closed_vs_trace.py --record   (re-traces the grid: needs
                                                           gpuprices[trace]; ~1 min per row)

The recorded figures are tests/fixtures/sizing/closed_vs_trace.csv (what `--record` wrote, with
the torch / transformers / peft versions it ran). "before" is the closed form without the terms
the trace engine showed missing (`sizing/upcasts.py`: the breakdown's `fp32 upcasts`), "after"
with them. Both are compared on allocated memory (no CUDA context), as the trace measures it.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpuprices.sizing.memory import estimate_memory  # noqa: E402
from gpuprices.sizing.workload import workload_from_dict  # noqa: E402

CSV = ROOT / "tests/fixtures/sizing/closed_vs_trace.csv"
# Rows: each moves one thing against a neighbour (the model, the sequence, checkpointing, LoRA
# vs full); the 256k-vocabulary Gemma 7B rows are issue 27's large-vocabulary case.
GRID = [
    dict(name="llama3.1-8b lora seq2048", model="Llama 3.1 8B", method="lora", seq_len=2048),
    dict(name="llama3.1-8b lora seq2048 ckpt", model="Llama 3.1 8B", method="lora",
         seq_len=2048, grad_checkpointing=True),
    dict(name="llama3.1-8b lora seq512", model="Llama 3.1 8B", method="lora", seq_len=512),
    dict(name="qwen2.5-3b lora seq4096", model="Qwen2.5 3B", method="lora", seq_len=4096),
    dict(name="gemma-7b lora seq512", model="Gemma 7B", method="lora", seq_len=512),
    dict(name="gemma-7b lora seq512 ckpt", model="Gemma 7B", method="lora", seq_len=512,
         grad_checkpointing=True),
    dict(name="qwen2.5-1.5b full seq1024", model="Qwen2.5 1.5B", method="full", seq_len=1024),
    dict(name="qwen2.5-1.5b full seq1024 ckpt", model="Qwen2.5 1.5B", method="full",
         seq_len=1024, grad_checkpointing=True),
]


def workload(row: dict):
    d = dict(framework="hf", precision="bf16-true", optimizer="adamw", gpus=1)
    d.update(row)
    return workload_from_dict(d)


def record() -> None:
    import peft
    import torch
    import transformers

    from gpuprices.sizing import trace

    if not trace.available():
        sys.exit(trace.EXTRA_HINT)
    versions = f"torch {torch.__version__}, transformers {transformers.__version__}, " \
               f"peft {peft.__version__}"
    rows = []
    for g in GRID:
        t = trace.trace(workload(g))
        print(f"{g['name']:36} {t.allocated_gb:8.2f} GB  {t.seconds:5.0f} s", flush=True)
        rows.append(dict(name=g["name"], trace_allocated_gb=round(t.allocated_gb, 3),
                         seconds=round(t.seconds, 1), versions=versions))
    with CSV.open("w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)


def compare() -> list[dict]:
    """Per grid row: trace, closed form before / after (allocated GB) and their errors."""
    traced = {r["name"]: float(r["trace_allocated_gb"])
              for r in csv.DictReader(CSV.open(newline=""))}
    out = []
    for g in GRID:
        est = estimate_memory(workload(g), gpus=1)
        after = est.allocated_gb
        before = after - est.breakdown.get("fp32 upcasts", 0.0)
        tr = traced[g["name"]]
        out.append(dict(name=g["name"], trace=tr, before=before, after=after,
                        err_before=(before - tr) / tr * 100, err_after=(after - tr) / tr * 100))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--record", action="store_true", help="re-trace the grid (needs torch)")
    if ap.parse_args().record:
        record()
    rows = compare()
    print(f"{'configuration (hf, bf16-true, 1 GPU)':36} {'trace':>7} {'before':>7} {'err%':>7} "
          f"{'after':>7} {'err%':>7}")
    for r in rows:
        print(f"{r['name']:36} {r['trace']:7.2f} {r['before']:7.2f} {r['err_before']:+7.1f} "
              f"{r['after']:7.2f} {r['err_after']:+7.1f}")
    for key in ("err_before", "err_after"):
        errs = [abs(r[key]) for r in rows]
        print(f"median |error| {key[4:]:6}: {statistics.median(errs):.1f}%  "
              f"(worst {max(errs):.1f}%)")


if __name__ == "__main__":
    main()
