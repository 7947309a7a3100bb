"""What bench/trace_vs_closed_form.py (one GPU) and bench/trace_sharded.py (one FSDP rank)
share: both engines' estimates of a workload and the printed calibration table.

Not a bench itself; the two scripts import it (bench/ is on sys.path when they run).
"""

from __future__ import annotations

from gpuprices.sizing import trace
from gpuprices.sizing.fit import verdict
from gpuprices.sizing.memory import estimate_memory
from gpuprices.warehouse.gpus import gpu_models


def pct(est: float, meas: float) -> float:
    return (est - meas) / meas * 100


def both(w, gpu: str, gpus: int = 1):
    """The closed-form estimate, the traced one and the card's memory (GB)."""
    g = gpu_models()[gpu]
    cf = estimate_memory(w, gpu=gpu, gpus=gpus, capacity_gb=g.memory_gb)
    return cf, trace.trace(w, gpus), g.memory_gb


def print_header(width: int) -> None:
    print(f"{'row':{width}} {'meas':>6} {'closed':>7} {'err%':>6} {'trace':>7} {'err%':>6}"
          f" {'s':>5}")


def print_row(label: str, width: int, measured: dict, w, cf, tr, cap: float,
              errs_cf: list[float], errs_tr: list[float]) -> tuple[bool, bool] | None:
    """One calibration row: against the measured peak (both |errors| appended to errs_*), or,
    for a measured out-of-memory row, both verdicts, returned as (closed form said no, trace
    said no). LitGPT rows print torch.cuda.max_memory_allocated: compared without the CUDA
    context."""
    litgpt = w.framework == "litgpt"
    c = cf.allocated_gb if litgpt else cf.per_gpu_gb
    t = tr.allocated_gb if litgpt else tr.per_gpu_gb
    if measured["peak_mem_gb_per_gpu"]:
        m = float(measured["peak_mem_gb_per_gpu"])
        errs_cf.append(abs(pct(c, m)))
        errs_tr.append(abs(pct(t, m)))
        print(f"{label:{width}} {m:6.2f} {c:7.2f} {pct(c, m):+6.1f} {t:7.2f} {pct(t, m):+6.1f}"
              f" {tr.seconds:5.1f}")
        return None
    v_tr = verdict(tr.per_gpu_gb, cap, cf.margin)
    print(f"{label:{width}} {'OOM':>6} {c:7.2f} {cf.verdict:>6} {t:7.2f} {v_tr:>6}"
          f" {tr.seconds:5.1f}   (card {cap:g} GB)")
    return cf.verdict == "no", v_tr == "no"
