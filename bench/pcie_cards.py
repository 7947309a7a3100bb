"""Ada / Ampere GDDR / PCIe cards against published measurements: tokens/s of one training code
on the card relative to a reference card (the H100 in LLMQ, the A100 in whyNLP/tinyllama; same
model), before and after the per-card rows of sizing/same_stack_ratio.csv, and NCCL collective
rates on PCIe boxes against the rates the step model uses (bench/sizing_accuracy.py prints this
section).

Rows: tests/fixtures/sizing/pcie_cards.csv, each with its source. `use` says whether a row feeds
the model (`in-model`: sizing/same_stack_ratio.csv holds the same figures), is checked out of
sample (`out-of-sample`: LLMQ's 4-GPU rows, which the ratio never saw) or is left out with the
reason (`excluded`: runs bound by their host link, which the step model does not time).

A training row is scored as a ratio to the H100 because LLMQ is a hand-written CUDA trainer,
faster than the PyTorch stacks the Hopper row was measured with: the ratio between two cards in
one code is what carries over, not LLMQ's absolute utilisation.
"""

from __future__ import annotations

import csv
import os
import statistics
from contextlib import contextmanager
from pathlib import Path

from gpuprices.sizing.efficiency import card_ceiling, efficiency_table, gpu_class, size_factor
from gpuprices.sizing.throughput import (
    P2P_ENV,
    PCIE_COLLECTIVE_GBS,
    PCIE_NO_P2P_COLLECTIVE_GBS,
    PCIE_NO_P2P_HOST_GBS,
    estimate_throughput,
)
from gpuprices.sizing.workload import workload_from_dict
from gpuprices.warehouse.gpus import gpu_models

ROOT = Path(__file__).resolve().parents[1]
PCIE_CSV = ROOT / "tests/fixtures/sizing/pcie_cards.csv"
# LLMQ's benchmark command runs 1024-token sequences (its --seq-len default) with
# --grad-accumulation=8 (README "Command used"); the ratio does not depend on either (same
# model and settings on both cards), the 4-GPU rows' collectives a little on the second.
LLMQ_SEQ_LEN = 1024
LLMQ_GRAD_ACCUM = 8


# TinyLlama 1.1B is not in sizing/models.csv: its shapes from its config.json
# (huggingface.co/TinyLlama/TinyLlama-1.1B-intermediate-step-955k-token-2T; litgpt config.py
# "tiny-llama-1.1b"): 22 layers, hidden 2048, 32 heads, 4 KV heads, MLP 5632, vocab 32000.
TINYLLAMA = dict(params_b=1.1, hidden_size=2048, num_layers=22, num_attention_heads=32,
                 num_kv_heads=4, intermediate_size=5632, vocab_size=32000)


# Qwen3 0.6B, as sonnetx/pluggy trains it: huggingface.co/Qwen/Qwen3-0.6B config.json (hidden
# 1024, 28 layers, 16 heads of 128, 8 KV heads, MLP 3072, vocab 151936, tied embeddings);
# 0.6B parameters ("the fp32 grad payload is 2.26 GiB/step (0.6B params)", notes/DDP.md).
QWEN3_06B = dict(params_b=0.607, hidden_size=1024, num_layers=28, num_attention_heads=16,
                 num_kv_heads=8, head_dim=128, intermediate_size=3072, vocab_size=151936,
                 tie_embeddings=True)


def _workload(model: str, micro_batch: int, grad_checkpointing: bool, gpus: int,
              seq_len: int = LLMQ_SEQ_LEN, grad_accum: int = LLMQ_GRAD_ACCUM,
              sharding: str = "none"):
    # LLMQ's default ZeRO-1 moves the gradient bytes of an all-reduce once per step (sharding
    # "none" here); bf16 weights and optimizer states do not change the time. whyNLP/tinyllama
    # runs 2048-token blocks without accumulation (run_clm.sh), DDP or DeepSpeed ZeRO-2.
    # LLMQ keeps its weights in bf16, so its all-reduce moves 16-bit gradients ("bf16-true");
    # whyNLP's HF / Accelerate runs are torch.autocast bf16 over fp32 weights ("bf16-mixed":
    # DDP reduces fp32 gradients, sizing/throughput.py ddp_grad_bytes), DeepSpeed's bf16 mode
    # holds bf16 weights (ZeRO-2's bytes are 16-bit either way).
    # sonnetx/pluggy's DDP (bucketed fp32 all-reduce from backward hooks) runs bf16 autocast.
    arch = {"TinyLlama 1.1B": TINYLLAMA, "Qwen3 0.6B": QWEN3_06B}.get(model, dict(model=model))
    return workload_from_dict(dict(
        name=f"{model} on {gpus}", **arch, method="full",
        precision="bf16-true" if model.startswith("Qwen2.5") else "bf16-mixed",
        framework="hf", optimizer="adamw", seq_len=seq_len, micro_batch=micro_batch,
        grad_accum=grad_accum, grad_checkpointing=grad_checkpointing, sharding=sharding,
        gpus=gpus, tokens=1e9))


def _row_workload(r: dict, gpus: int, micro_batch: int, grad_checkpointing: bool):
    return _workload(r["model"], micro_batch, grad_checkpointing, gpus,
                     int(r["seq_len"] or LLMQ_SEQ_LEN), int(r["grad_accum"] or LLMQ_GRAD_ACCUM),
                     r["sharding"] or "none")


def hfu_before(gpu_model: str, params: float) -> float:
    """The rule before the per-card rows: for Ada cards the `ada` class row (nanoGPT, GPT-2 124M
    on an RTX 4090) x the card's matmul share against the 4090's x the size trend from 124M; for
    Ampere GDDR cards the `ampere-gddr` row (one A10, 43.5%) as it was, not moved by size."""
    gpu = gpu_models()[gpu_model]
    cls = gpu_class(gpu)
    if cls == "ampere-gddr":
        return efficiency_table()[(cls, "any")][0] * card_ceiling(gpu, cls)[0]
    return (efficiency_table()[("ada", "any")][0] * card_ceiling(gpu, "ada")[0]
            * size_factor(params, "ada")[0])


def training_rows(path: Path = PCIE_CSV) -> list[dict]:
    """Per training row: measured and estimated (before / after) tokens/s per GPU relative to
    the H100's on one GPU, and the errors in %."""
    gpus = gpu_models()
    out = []
    for r in csv.DictReader(path.open(newline="")):
        if r["kind"] != "training" or r["use"] == "excluded":
            continue
        n = int(r["gpus"])
        w = _row_workload(r, n, int(r["micro_batch"]), r["grad_checkpointing"] == "true")
        ref = _row_workload(r, 1, int(r["ref_micro_batch"]), False)
        card = estimate_throughput(w, gpus[r["gpu_model"]], gpus_per_node=n)
        h100 = estimate_throughput(ref, gpus[r["ref_gpu_model"]])
        after = card.tokens_per_s / n / h100.tokens_per_s
        # against one card of the same box the card's HFU cancels: only the box is scored
        before = after if r["ref_gpu_model"] == r["gpu_model"] else (
            after * hfu_before(r["gpu_model"], w.arch.params) / card.hfu)
        measured = float(r["measured"]) / n / float(r["ref_measured"])
        # the box's collectives before issue 27's shared-host rate, and with P2P assumed
        unshared = estimate_throughput(w, gpus[r["gpu_model"]], gpus_per_node=n,
                                       shared_host=False).tokens_per_s / n / h100.tokens_per_s
        with _p2p_assumed():
            p2p = estimate_throughput(w, gpus[r["gpu_model"]], gpus_per_node=n
                                      ).tokens_per_s / n / h100.tokens_per_s
        out.append(dict(gpu_model=r["gpu_model"], gpus=n, model=r["model"], use=r["use"],
                        ref=r["ref_gpu_model"], sharding=r["sharding"] or "none",
                        measured=measured, before=before, after=after,
                        err_before=(before / measured - 1) * 100,
                        err_after=(after / measured - 1) * 100,
                        unshared=unshared, err_unshared=(unshared / measured - 1) * 100,
                        p2p=p2p, err_p2p=(p2p / measured - 1) * 100, source=r["source"]))
    return out


@contextmanager
def _p2p_assumed():
    old = os.environ.get(P2P_ENV)
    os.environ[P2P_ENV] = "1"
    try:
        yield
    finally:
        if old is None:
            del os.environ[P2P_ENV]
        else:
            os.environ[P2P_ENV] = old


def box_summary(rows: list[dict]) -> dict[str, tuple[int, float, float, float]]:
    """{use: (box rows, median |error| unshared %, shared host %, P2P %)} over the
    multi-GPU rows (the single-card rows do not move)."""
    out = {}
    for use in ("in-model", "out-of-sample"):
        rs = [r for r in rows if r["use"] == use and r["gpus"] > 1]
        if rs:
            out[use] = (len(rs), statistics.median(abs(r["err_unshared"]) for r in rs),
                        statistics.median(abs(r["err_after"]) for r in rs),
                        statistics.median(abs(r["err_p2p"]) for r in rs))
    return out


def collective_rows(path: Path = PCIE_CSV) -> list[dict]:
    """Per collective row: the published GB/s against the rate the step model uses for the
    same PCIe generation and P2P setting (both rates where the source does not say)."""
    out = []
    for r in csv.DictReader(path.open(newline="")):
        if r["kind"] != "collective":
            continue
        gen = r["pcie_gen"]
        p2p = PCIE_COLLECTIVE_GBS[gen]
        # without P2P the box's GPUs share the host (sizing/throughput.py link_bandwidth)
        no_p2p = min(PCIE_NO_P2P_COLLECTIVE_GBS[gen],
                     PCIE_NO_P2P_HOST_GBS.get(gen, float("inf")) / int(r["gpus"]))
        model = {"yes": p2p, "no": no_p2p}.get(r["p2p"], no_p2p)
        out.append(dict(gpu_model=r["gpu_model"], gpus=int(r["gpus"]), p2p=r["p2p"], gen=gen,
                        measured=float(r["measured"]), model=model, model_p2p=p2p,
                        model_no_p2p=no_p2p, use=r["use"], what=r["flags"],
                        source=r["source"]))
    return out


def summary(rows: list[dict]) -> dict[str, tuple[int, float, float]]:
    """{use: (rows, median |error| before %, after %)} over the training rows."""
    out = {}
    for use in ("in-model", "out-of-sample"):
        rs = [r for r in rows if r["use"] == use]
        if rs:
            out[use] = (len(rs), statistics.median(abs(r["err_before"]) for r in rs),
                        statistics.median(abs(r["err_after"]) for r in rs))
    return out


def print_pcie_cards() -> None:
    rows = training_rows()
    print("\nAda / Ampere GDDR / PCIe cards: tokens/s per GPU relative to one reference card "
          "(H100: LLMQ; A100: whyNLP/tinyllama), same model, one training code; before = the "
          "nanoGPT class value x matmul share (Ada), the A10 class value (Ampere GDDR)")
    print(f"  {'card':14}{'GPUs':>5} {'model':15}{'ref':6}{'shard':6}{'measured':>9}{'before':>8}"
          f"{'after':>8}{'err before':>11}{'err after':>10}  use")
    for r in rows:
        print(f"  {r['gpu_model']:14}{r['gpus']:>5} {r['model']:15}{r['ref'].split('-')[0]:6}"
              f"{r['sharding']:6}{r['measured']:>9.3f}"
              f"{r['before']:>8.3f}{r['after']:>8.3f}{r['err_before']:>+10.1f}%"
              f"{r['err_after']:>+9.1f}%  {r['use']}")
    for use, (n, b, a) in summary(rows).items():
        print(f"  median |error| {use:14} {n} rows: before {b:.1f}%, after {a:.1f}%")
    print("\nMulti-GPU PCIe boxes: the step model's per-GPU rate (same units) with the box's "
          "collectives at the rate before issue 27's shared host (each GPU 20 GB/s without P2P), "
          "now (host memory shared by the box's GPUs, the default), and with P2P assumed")
    print(f"  {'card':14}{'GPUs':>5} {'model':15}{'shard':6}{'measured':>9}{'before':>8}"
          f"{'shared':>8}{'P2P':>8}{'err before':>11}{'err shared':>11}{'err P2P':>9}  use")
    for r in rows:
        if r["gpus"] > 1:
            print(f"  {r['gpu_model']:14}{r['gpus']:>5} {r['model']:15}{r['sharding']:6}"
                  f"{r['measured']:>9.3f}{r['unshared']:>8.3f}{r['after']:>8.3f}"
                  f"{r['p2p']:>8.3f}{r['err_unshared']:>+10.1f}%{r['err_after']:>+10.1f}%"
                  f"{r['err_p2p']:>+8.1f}%  {r['use']}")
    for use, (n, b, a, p) in box_summary(rows).items():
        print(f"  median |error| {use:14} {n} box rows: before {b:.1f}%, shared host "
              f"{a:.1f}%, P2P {p:.1f}%")
    print("\nPCIe collectives (GB/s of bus bandwidth) against the step model's rate "
          "(P2P / without P2P, the default)")
    for c in collective_rows():
        print(f"  {c['gpu_model']:14}{c['gpus']:>3} GPUs {c['gen']} P2P {c['p2p']:8}"
              f"published {c['measured']:>6.2f}  model {c['model_p2p']:g} / "
              f"{c['model_no_p2p']:g}  ({c['source']}: {c['what'][:70]})")
