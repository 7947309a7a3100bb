"""Long context at the card's limit: the verdict of setups published as fitting or running out
of memory, and the loss term against its published memory (bench/sizing_accuracy.py prints
this section).

Rows: tests/fixtures/sizing/long_context_limits.csv (each with its source and page; a documented
fit must get `fits` or `tight`, a documented OOM `no`) and tests/fixtures/sizing/loss_memory.csv
(the loss computation's memory as a paper measured it, against the estimate's logits term).
Reserved sources (issue 27) are not used.
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

from gpuprices.sizing.memory import estimate_memory
from gpuprices.sizing.workload import workload_from_dict
from gpuprices.warehouse.gpus import gpu_models

ROOT = Path(__file__).resolve().parents[1]
LIMITS_CSV = ROOT / "tests/fixtures/sizing/long_context_limits.csv"
LOSS_CSV = ROOT / "tests/fixtures/sizing/loss_memory.csv"


def _workload(r: dict[str, str]) -> dict:
    return dict(name=f"{r['model']} {r['method']} {r['loss']} {r['seq_len']}", model=r["model"],
                method=r["method"], precision=r["precision"], framework=r["framework"],
                loss=r["loss"], optimizer=r["optimizer"], gpus=int(r["gpus"]),
                gpu=r["gpu_model"], seq_len=int(r["seq_len"]), micro_batch=int(r["micro_batch"]),
                grad_checkpointing=r["grad_checkpointing"] == "true", sharding=r["sharding"],
                activation_offload=r["activation_offload"] == "true",
                tiled_mlp=r["tiled_mlp"] == "true", offload_params=r["offload_params"] == "true")


def limit_rows(path: Path = LIMITS_CSV) -> list[dict]:
    """Every row with its estimate, verdict and whether the verdict agrees with the source."""
    gpus = gpu_models()
    out = []
    for r in csv.DictReader(path.open(newline="")):
        d = _workload(r)
        g = gpus[d["gpu"]]
        est = estimate_memory(workload_from_dict(d), gpu=g.gpu_model, gpus=d["gpus"],
                              capacity_gb=g.memory_gb)
        ok = est.verdict == "no" if r["documented"] == "oom" else est.verdict in ("fits", "tight")
        measured = float(r["measured_gb"]) if r["measured_gb"] else None
        out.append(dict(label=d["name"], gpus=d["gpus"], gpu=g.gpu_model, capacity=g.memory_gb,
                        est=est.per_gpu_gb, verdict=est.verdict, documented=r["documented"],
                        ok=ok, source=r["source"], measured=measured,
                        err=(est.per_gpu_gb - measured) / measured * 100 if measured else None))
    return out


def loss_rows(path: Path = LOSS_CSV) -> list[dict]:
    """The estimate's logits term (one micro-batch of `tokens`) against the paper's figure."""
    out = []
    for r in csv.DictReader(path.open(newline="")):
        w = workload_from_dict(dict(name="loss", model=r["model"], method="full",
                                    precision="bf16-true", framework=r["framework"],
                                    loss=r["loss"],
                                    optimizer="adamw", seq_len=int(r["tokens"]), micro_batch=1,
                                    grad_checkpointing=True))
        est = estimate_memory(w).breakdown["logits"]
        out.append(dict(label=f"{r['model']} {r['tokens']} tokens, loss {r['loss']}",
                        measured=float(r["measured_gb"]), est=est, source=r["source"]))
    return out


def print_long_context() -> bool:
    """Prints the section; True when every documented fit is `fits`/`tight` and every
    documented OOM `no`."""
    rows = limit_rows()
    print("\nlong context at the card's limit (documented fits must be fits or tight, "
          "documented OOM no)")
    for r in rows:
        meas = f"measured {r['measured']:6.1f} ({r['err']:+5.1f}%)" if r["measured"] else \
            f"{'':23}"
        print(f"  {r['label'][:44]:44} {r['gpus']}x{r['gpu']:14} {r['est']:7.1f} of "
              f"{r['capacity']:g} GB  {meas}  {r['verdict']:5}  documented {r['documented']:4} "
              f"{'ok' if r['ok'] else 'WRONG'}  ({r['source']})")
    fits = [r for r in rows if r["documented"] == "fits"]
    ooms = [r for r in rows if r["documented"] == "oom"]
    all_ok = all(r["ok"] for r in rows)
    errs = sorted(abs(r["err"]) for r in rows if r["err"] is not None)
    if errs:
        within = sum(e <= 25 for e in errs)
        print(f"  rows with a published peak: {len(errs)}, median |error| "
              f"{statistics.median(errs):.1f}%, within +-25%: {within}/{len(errs)}")
        all_ok = all_ok and within == len(errs)
    print(f"  documented fits -> fits or tight: {sum(r['ok'] for r in fits)}/{len(fits)}; "
          f"documented OOM -> no: {sum(r['ok'] for r in ooms)}/{len(ooms)}  "
          f"{'pass' if all_ok else 'FAIL'}")
    print("  loss computation memory (logits term) against its published figure:")
    for r in loss_rows():
        print(f"    {r['label']:40} measured {r['measured']:8.3f} GB  estimate "
              f"{r['est']:8.3f} GB  ({r['source']})")
    return all_ok
