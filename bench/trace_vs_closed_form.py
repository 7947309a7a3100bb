"""The trace engine (sizing/trace.py) against the closed-form engine (sizing/memory.py).

    .venv/bin/python bench/trace_vs_closed_form.py        (needs: pip install 'gpuprices[trace]')

Two parts:
* every single-GPU LoRA row of the calibration set the trace engine can run
  (tests/fixtures/sizing/measured_calibration.csv, turned into workloads by
  bench/sizing_accuracy.py's rules): measured peak, both estimates and their errors; for the
  measured out-of-memory rows, both verdicts;
* configurations nobody has published (the shipped lora-qwen2.5-32b workload and a few more):
  both estimates and how far apart they are.
LitGPT rows print torch.cuda.max_memory_allocated, so both engines are compared without the
CUDA context there (as bench/sizing_accuracy.py does). Last: median errors, seconds per
estimate and the peak host memory (resident set) of this process.
"""

from __future__ import annotations

import csv
import resource
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sizing_accuracy import CSV, row_to_workload  # noqa: E402
from trace_rows import both, pct, print_header, print_row  # noqa: E402

from gpuprices.sizing import trace  # noqa: E402
from gpuprices.sizing.workload import load_workloads, workload_from_dict  # noqa: E402

# Configurations with no published peak: the shipped 32B LoRA workload, issue 13's tight 32B
# example (r=16, seq 2048, checkpointing, one 80 GB card), and variants that move one term each:
# micro-batch without checkpointing, attention without FlashAttention, full fine-tuning.
UNPUBLISHED = [
    dict(name="qwen2.5-32b lora r16 seq2048 ckpt (issue 13)", model="Qwen2.5 32B",
         method="lora", seq_len=2048, grad_checkpointing=True, gpu="H100-SXM-80GB"),
    dict(name="llama3.1-8b lora r16 seq2048 mb4", model="Llama 3.1 8B", method="lora",
         seq_len=2048, micro_batch=4, gpu="H100-SXM-80GB"),
    dict(name="llama3.1-8b lora r16 seq2048 eager attention", model="Llama 3.1 8B",
         method="lora", seq_len=2048, flash_attention=False, gpu="H100-SXM-80GB"),
    dict(name="qwen2.5-3b full bf16-true seq2048 ckpt", model="Qwen2.5 3B", method="full",
         seq_len=2048, grad_checkpointing=True, gpu="A100-SXM-80GB"),
    dict(name="qwen2.5-1.5b full bf16-mixed seq1024", model="Qwen2.5 1.5B", method="full",
         precision="bf16-mixed", seq_len=1024, gpu="A100-SXM-80GB"),
]


def calibration_rows() -> list[tuple[dict, dict]]:
    out = []
    for r in csv.DictReader(CSV.open(newline="")):
        if r["gpus"] != "1" or r["method"] != "lora":
            continue
        d, _ = row_to_workload(r)
        if d is None or "model" not in d:  # inferred architectures are not the real model
            continue
        out.append((r, d))
    return out


def main() -> None:
    if not trace.available():
        sys.exit(trace.EXTRA_HINT)
    errs_cf, errs_tr, secs = [], [], []
    print("calibration: single-GPU LoRA rows (GB; LitGPT: allocated, without CUDA context)")
    print_header(58)
    for r, d in calibration_rows():
        w = workload_from_dict(d)
        if why := trace.unsupported(w):
            print(f"{d['name']:58} not traced: {why}")
            continue
        cf, tr, cap = both(w, d["gpu"])
        secs.append(tr.seconds)
        print_row(f"{d['name']} {w.precision}", 58, r, w, cf, tr, cap, errs_cf, errs_tr)
    print("\nunpublished configurations (GB per GPU incl. CUDA context)")
    print(f"{'workload':58} {'closed':>7} {'trace':>7} {'diff%':>6} {'s':>5}")
    shipped = [w for w in load_workloads(ROOT / "sizing/workloads.toml")
               if w.name == "lora-qwen2.5-32b"]
    for w in shipped + [workload_from_dict(d) for d in UNPUBLISHED]:
        cf, tr, _ = both(w, w.gpu)
        secs.append(tr.seconds)
        print(f"{w.name:58} {cf.per_gpu_gb:7.2f} {tr.per_gpu_gb:7.2f}"
              f" {pct(cf.per_gpu_gb, tr.per_gpu_gb):+6.1f} {tr.seconds:5.1f}")
    print(f"\nmedian |error| vs measured over {len(errs_tr)} rows: closed form "
          f"{statistics.median(errs_cf):.1f}%, trace {statistics.median(errs_tr):.1f}% "
          f"(worst {max(errs_tr):.1f}%)")
    print(f"seconds per trace: median {statistics.median(secs):.1f}, max {max(secs):.1f}")
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    print(f"peak host memory (resident set) of this process: {rss_mb:.0f} MB")


if __name__ == "__main__":
    main()
