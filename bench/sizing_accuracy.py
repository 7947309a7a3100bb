"""Accuracy of the sizing estimator against every published measurement we hold.

    .venv/bin/python bench/sizing_accuracy.py [--csv PATH] [--rows] [--write-margin]

Reads tests/fixtures/sizing/measured_calibration.csv (96 rows, sources per row). Each row is
turned into a workload by the explicit rules below (no per-row constants); rows the model
cannot represent are listed with the reason. Prints, for the estimator and beside it for the
buyers' rules of thumb: median absolute % error of memory and of tokens/s, share within +-25%,
and whether each measured out-of-memory case is predicted not to fit (verdict `no`: the estimate
alone over the card). It also prints the fit margin (sizing/fit.py): the 90th percentile of the
relative under-estimate over the memory rows, beside the figure stored in sizing/fit_margin.csv;
`--write-margin` stores the one computed now. Last, every target of issue 13 with pass / fail in
one block (bench/accuracy_targets.py).

Row -> workload rules: bench/calibration_rows.py.
"""

from __future__ import annotations

import argparse
import csv
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from accuracy_targets import print_targets  # noqa: E402
from calibration_rows import PEFT_SEQ_ASSUMED, row_to_workload  # noqa: E402
from long_context import print_long_context  # noqa: E402
from pcie_cards import print_pcie_cards  # noqa: E402

from gpuprices.sizing import fit  # noqa: E402
from gpuprices.sizing.efficiency import efficiency_for, gpu_class, size_factor  # noqa: E402
from gpuprices.sizing.memory import estimate_memory  # noqa: E402
from gpuprices.sizing.throughput import estimate_throughput  # noqa: E402
from gpuprices.sizing.workload import workload_from_dict  # noqa: E402
from gpuprices.warehouse.gpus import gpu_models  # noqa: E402

CSV = ROOT / "tests/fixtures/sizing/measured_calibration.csv"
CLASS_CSV = ROOT / "tests/fixtures/sizing/throughput_by_class.csv"
def rule_gb(method: str, params_b: float) -> float:
    """Buyers' planning rules (issue 5)."""
    if method == "qlora":
        return 0.75 * params_b
    if method == "lora":
        return 2 * params_b * 1.2
    if method == "full_8bit":
        return 12 * params_b
    return 16 * params_b


def _pct(est: float, meas: float) -> float:
    return abs(est - meas) / meas * 100


def evaluate(path: Path = CSV) -> dict:
    gpus = gpu_models()
    rows = list(csv.DictReader(path.open(newline="")))
    mem, tps, oom, skipped = [], [], [], []
    for r in rows:
        d, why = row_to_workload(r)
        has_mem = bool(r["peak_mem_gb_per_gpu"])
        has_tps = bool(r["tokens_per_sec"])
        is_oom = r["measurement_type"] == "measured_oom"
        if d is None:
            skipped.append((r["model"], r["method"], why))
            continue
        w = workload_from_dict(d)
        g = gpus[d["gpu"]] if d["gpu"] else None  # None: the source names no card
        n = d["gpus"]
        est = estimate_memory(w, gpu=g and g.gpu_model, gpus=n, capacity_gb=g and g.memory_gb)
        shard = n if d["sharding"] != "none" else 1
        rule = rule_gb(w.method, w.arch.params_b) / shard
        label = f"{r['model']} {r['method']} {d['precision']} mb{d['micro_batch']} x{n}"
        if has_mem:
            measured = float(r["peak_mem_gb_per_gpu"])
            value = est.allocated_gb if w.framework == "litgpt" else est.per_gpu_gb
            mem.append(dict(label=label, measured=measured, est=value, rule=rule,
                            err=_pct(value, measured), rule_err=_pct(rule, measured),
                            under=fit.under_estimate(measured, value),
                            verdict=est.verdict, capacity=g and g.memory_gb,
                            source=r["source"]))
        if is_oom:
            oom.append(dict(label=label, capacity=g.memory_gb, est=est.per_gpu_gb,
                            verdict=est.verdict, predicted_oom=est.verdict == "no",
                            rule=rule, rule_oom=rule > g.memory_gb))
        if has_tps:
            per_node = min(n, 8)
            t = estimate_throughput(w, g, gpus_per_node=per_node, nodes=max(1, n // per_node))
            measured = float(r["tokens_per_sec"])
            hfu_m = re.search(r"HFU (\d+(?:\.\d+)?)%", r["other_timing"])
            tps.append(dict(label=label, measured=measured, est=t.tokens_per_s_per_gpu,
                            err=_pct(t.tokens_per_s_per_gpu, measured), gpu=d["gpu"],
                            hfu_used=t.hfu, source=r["source"],
                            hfu_measured=float(hfu_m.group(1)) / 100 if hfu_m else None))
        if not (has_mem or has_tps or is_oom):
            skipped.append((r["model"], r["method"], "no memory or tokens/s figure (MFU only)"))
    # Leave-one-out: the HFU defaults are medians of these same rows, so also score each row
    # with the median HFU of the OTHER rows on its GPU (the estimate is linear in HFU).
    for t in tps:
        others = [o["hfu_measured"] for o in tps
                  if o is not t and o["gpu"] == t["gpu"] and o["hfu_measured"]]
        if others:
            t["est_loo"] = t["est"] * statistics.median(others) / t["hfu_used"]
            t["err_loo"] = _pct(t["est_loo"], t["measured"])
    return dict(mem=mem, tps=tps, oom=oom, skipped=skipped, rows=len(rows))


def summary(res: dict) -> dict:
    mem, tps, oom = res["mem"], res["tps"], res["oom"]

    def within(errs: list[float]) -> float:
        return sum(e <= 25 for e in errs) / len(errs) * 100 if errs else float("nan")

    return dict(
        mem_rows=len(mem),
        mem_median=statistics.median(m["err"] for m in mem),
        mem_within25=within([m["err"] for m in mem]),
        rule_median=statistics.median(m["rule_err"] for m in mem),
        rule_within25=within([m["rule_err"] for m in mem]),
        tps_rows=len(tps),
        tps_median=statistics.median(t["err"] for t in tps) if tps else float("nan"),
        tps_within25=within([t["err"] for t in tps]),
        tps_loo_median=statistics.median(t["err_loo"] for t in tps if "err_loo" in t)
        if tps else float("nan"),
        margin=fit.margin_statistic(m["under"] for m in mem),
        under_rows=sum(m["under"] > 0 for m in mem),
        oom_rows=len(oom),
        oom_caught=sum(o["predicted_oom"] for o in oom),
        rule_oom_caught=sum(o["rule_oom"] for o in oom),
    )


def _hfu_before(gpu_model: str) -> float:
    """The utilisation rule before sizing/gpu_efficiency.csv: A100 64.2%, every other GPU the
    H100's 46.4% (llm-foundry medians)."""
    return 0.642 if gpu_model.startswith("A100") else 0.464


def pcie_multi_gpu(r: dict) -> bool:
    """A utilisation row measured on several PCIe cards (no NVLink): its per-GPU rate carries
    the collectives of a PCIe box, so it measures the step model as much as the card (the
    per-card HFU comes from one-GPU rows); scored with the job's scaling instead."""
    return int(r.get("gpus") or 1) > 1 and gpu_models()[r["gpu_model"]].form_factor == "pcie"


def multi_gpu_pcie_rows(path: Path = CLASS_CSV) -> list[dict]:
    """The rows pcie_multi_gpu() keeps out of the class medians, scored as the estimate's HFU
    x its scaling on that many cards of one box (DDP, no P2P) against the published figure."""
    gpus = gpu_models()
    out = []
    for r in csv.DictReader(path.open(newline="")):
        if not pcie_multi_gpu(r):
            continue
        g, n, params = gpus[r["gpu_model"]], int(r["gpus"]), float(r["params_b"])
        w = workload_from_dict(dict(
            # the row states neither sequence nor batch: 2048 (OpenLLaMA's context) x 4
            name=r["run"], params_b=params, method="full", precision="bf16-mixed",
            framework="hf", optimizer="adamw", seq_len=2048, micro_batch=4,
            grad_checkpointing=False, sharding="none", gpus=n, tokens=1e9))
        tp = estimate_throughput(w, g, gpus_per_node=n)
        est = tp.hfu * tp.scaling_efficiency
        meas = float(r["measured_hfu"])
        out.append(dict(gpu_model=r["gpu_model"], gpus=n, run=r["run"], est=est,
                        measured=meas, err=_pct(est, meas), what=r["measure"],
                        source=r["source"]))
    return out


def tokens_per_s_by_class(res: dict, path: Path = CLASS_CSV) -> list[dict]:
    """Per GPU class: tokens/s median |error| % with the utilisation rule before and after the
    efficiency table, over the calibration set's tokens/s rows and throughput_by_class.csv.

    tokens/s is linear in HFU for a given FLOP count, so a row that publishes a utilisation
    (HFU, or MFU where nothing is recomputed) is scored as |HFU used / HFU measured - 1|:
    the tokens/s error the estimate makes when it counts the run's FLOPs as the source does.
    `out` counts the rows the table's value was NOT taken from (out of sample)."""
    gpus = gpu_models()
    by_class: dict[str, dict[str, list]] = {}

    def add(gpu_model: str, before: float, after: float, in_table: bool) -> None:
        c = by_class.setdefault(gpu_class(gpus[gpu_model]),
                                {"before": [], "after": [], "after_out": []})
        c["before"].append(before)
        c["after"].append(after)
        if not in_table:
            c["after_out"].append(after)

    for t in res["tps"]:  # llm-foundry rows: the A100 / H100 values are their medians
        scale = _hfu_before(t["gpu"]) / t["hfu_used"]
        # the Megatron papers' rows (issue 27) are not among the rows the table's HFU came from
        add(t["gpu"], _pct(t["est"] * scale, t["measured"]), t["err"],
            "llm-foundry" in t["source"])
    for r in csv.DictReader(path.open(newline="")):
        g, meas = r["gpu_model"], float(r["measured_hfu"])
        if pcie_multi_gpu(r):
            continue  # scored in multi_gpu_pcie_rows: its per-GPU rate is not the card's
        eff = efficiency_for(gpus[g])
        after = eff.hfu
        if r.get("params_b"):  # moved along the size trend, as the estimate does
            after *= size_factor(float(r["params_b"]) * 1e9, eff.gpu_class,
                                 eff.reference_params)[0]
        add(g, _pct(_hfu_before(g), meas), _pct(after, meas), r["in_efficiency_table"] == "yes")
    out = []
    for cls, c in sorted(by_class.items()):
        out.append(dict(gpu_class=cls, rows=len(c["after"]), out_rows=len(c["after_out"]),
                        before=statistics.median(c["before"]),
                        after=statistics.median(c["after"]),
                        after_out=statistics.median(c["after_out"]) if c["after_out"]
                        else float("nan")))
    return out


def print_tokens_per_s_by_class(res: dict) -> None:
    rows = tokens_per_s_by_class(res)
    print("\ntokens/s median |error| % per GPU class (utilisation before / after the efficiency "
          "table; out of sample: rows the table's value was not taken from)")
    print(f"  {'class':14}{'rows':>6}{'before':>9}{'after':>8}{'out rows':>10}{'after, out':>12}")
    for r in rows:
        print(f"  {r['gpu_class']:14}{r['rows']:>6}{r['before']:>9.1f}{r['after']:>8.1f}"
              f"{r['out_rows']:>10}{r['after_out']:>12.1f}")
    outs = [r["after_out"] for r in rows if r["out_rows"]]
    before = statistics.median(r["before"] for r in rows)
    after = statistics.median(r["after"] for r in rows)
    print(f"  {'all classes':14}{'':>6}{before:>9.1f}{after:>8.1f}{'':>10}"
          f"{statistics.median(outs) if outs else float('nan'):>12.1f}"
          "  (median of the class medians)")
    for m in multi_gpu_pcie_rows():
        print(f"  not in the medians: {m['gpu_model']} x {m['gpus']} (PCIe), {m['run'][:40]}: "
              f"estimate HFU x scaling {m['est']:.1%} vs published {m['measured']:.1%} "
              f"({m['err']:+.1f}%; {m['what'][:60]})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", type=Path, default=CSV)
    ap.add_argument("--rows", action="store_true", help="print every row")
    ap.add_argument("--write-margin", action="store_true",
                    help="store the fit margin computed now in sizing/fit_margin.csv")
    args = ap.parse_args()
    res = evaluate(args.csv)
    s = summary(res)
    if args.write_margin:
        fit.write_margin(s["margin"], s["mem_rows"], _calibration_name(args.csv),
                         "bench/sizing_accuracy.py --write-margin")
    print(f"measured rows: {res['rows']}  (memory {s['mem_rows']}, tokens/s {s['tps_rows']}, "
          f"OOM {s['oom_rows']}, not comparable {len(res['skipped'])})")
    print(f"{'':34}{'estimator':>12}{'buyers rules':>14}")
    print(f"{'memory median |error| %':34}{s['mem_median']:>12.1f}{s['rule_median']:>14.1f}")
    print(f"{'memory within +-25% (share %)':34}{s['mem_within25']:>12.0f}"
          f"{s['rule_within25']:>14.0f}")
    print(f"{'OOM predicted no (estimate > card)':34}{s['oom_caught']:>9}/{s['oom_rows']:<2}"
          f"{s['rule_oom_caught']:>11}/{s['oom_rows']:<2}")
    print(f"{'tokens/s median |error| %':34}{s['tps_median']:>12.1f}{'n/a':>14}")
    print(f"{'tokens/s within +-25% (share %)':34}{s['tps_within25']:>12.0f}{'n/a':>14}")
    print(f"{'tokens/s median, leave-one-out':34}{s['tps_loo_median']:>12.1f}{'n/a':>14}"
          "  (HFU default from the other rows only)")
    print("(buyers' rules: QLoRA 0.75 GB/B params; LoRA 2 B/param +20%; full 16 B/param; "
          "8-bit Adam 12 B/param; divided by GPUs when sharded; they give no tokens/s)")
    print(f"(PEFT rows: sequence length {PEFT_SEQ_ASSUMED} tokens is an assumption)")
    _print_memory_by_source(res)
    print_tokens_per_s_by_class(res)
    print_parallel_rows(res)
    print_pcie_cards()
    _print_margin(s)
    print_targets(res, s, tokens_per_s_by_class(res))
    print_long_context()
    if args.rows:
        print("\nmemory rows: measured / estimator / rule GB")
        for m in res["mem"]:
            print(f"  {m['label'][:60]:60} {m['measured']:7.2f} {m['est']:7.2f} "
                  f"({m['err']:5.1f}%) {m['rule']:7.2f} ({m['rule_err']:5.1f}%)")
        print("\nOOM rows: capacity / estimate / verdict / rule GB")
        for o in res["oom"]:
            print(f"  {o['label'][:60]:60} {o['capacity']:5.0f} {o['est']:7.1f} "
                  f"{o['verdict']:5} {o['rule']:7.1f} {'OOM' if o['rule_oom'] else 'FITS'}")
        print("\ntokens/s rows (per GPU): measured / estimator")
        for t in res["tps"]:
            print(f"  {t['label'][:60]:60} {t['measured']:8.0f} {t['est']:8.0f} "
                  f"({t['err']:5.1f}%)")
        print("\nnot comparable:")
        for model, method, why in res["skipped"]:
            print(f"  {model} {method}: {why}")


# Sources of the tensor x pipeline parallel rows (issue 27): the Megatron papers.
PARALLEL_SOURCES = ("Narayanan 2021", "Korthikanti 2022")
PARALLEL_WITHIN = 25.0  # %


def parallel_rows(res: dict) -> list[dict]:
    """The TP x PP rows' tokens/s: measured, estimate, |error| %."""
    return [t for t in res["tps"] if t["source"].startswith(PARALLEL_SOURCES)]


def print_parallel_rows(res: dict) -> None:
    rows = parallel_rows(res)
    print(f"\nTP x PP rows (Megatron papers, issue 27): tokens/s per GPU, measured / estimate, "
          f"target within +-{PARALLEL_WITHIN:g}%")
    for t in rows:
        print(f"  {t['label'][:58]:58} {t['measured']:7.2f} {t['est']:7.2f} ({t['err']:4.1f}%) "
              f"{'pass' if t['err'] <= PARALLEL_WITHIN else 'FAIL'}")


def _print_memory_by_source(res: dict) -> None:
    """Memory rows per source: how many, their median |error| and signed median (+ = over)."""
    by: dict[str, list[dict]] = {}
    for m in res["mem"]:
        by.setdefault(m["source"], []).append(m)
    print("\nmemory rows per source: rows, median |error| %, median signed error % (+ over)")
    for src, ms in sorted(by.items()):
        signed = statistics.median((m["est"] - m["measured"]) / m["measured"] * 100 for m in ms)
        print(f"  {src[:62]:62}{len(ms):>4}{statistics.median(m['err'] for m in ms):>8.1f}"
              f"{signed:>+8.1f}")


def _calibration_name(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _print_margin(s: dict) -> None:
    """The fit margin the calibration data gives now, and whether sizing/fit_margin.csv holds
    it."""
    stored = fit.measured_margin()
    same = "matches the stored figure" if stored.margin == s["margin"] else (
        f"DIFFERS from the stored {stored.margin:.1%} ({stored.rows} rows): "
        "rerun with --write-margin")
    print(f"fit margin (90th percentile of measured/estimated - 1, {s['mem_rows']} memory rows, "
          f"{s['under_rows']} under-estimated): {s['margin']:.1%}  {same}")


if __name__ == "__main__":
    main()
