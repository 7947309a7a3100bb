"""Hardware-FLOPs utilisation (HFU) per GPU class, read from sizing/gpu_efficiency.csv.

Each row is keyed by GPU class and method (`any`, or `lora` / `qlora` / `full` where the
measurement distinguishes them) and carries its public source. `basis` says what kind of
measurement it is:

* `training`: a published training run's utilisation on that class (the value is used as is);
* `small-model`: a training run of the class, but only of a sub-1B model (GPT-2 124M); used,
  moved along the size trend from 124M (clamped to 1B), and flagged assumed;
* `gemm-derived`: no published training run was found; the value scales the Hopper training
  HFU by how close the class's own measured BF16 matmul gets to its datasheet peak, against how
  close the H100's does (same benchmark). Consumer cards reach their (FP32-accumulate) peak in
  a plain matmul, the H100 about 80% of its, so the same software loses less on them. It is a
  measurement of the card, not of training: the estimate says "efficiency assumed".

A class with no row gets the Hopper value (the reference the previous model used for every
GPU) and is flagged assumed as well.

Within a class, cards differ in how much of their datasheet peak a plain BF16 matmul reaches
(sizing/gemm_ceiling.csv, `card_ceiling`): the RTX 4090 reaches all of its 165 TFLOPS, the
L40S 74% of its 362 (power-limited at 350 W), the L4 59%. A class's training HFU was measured on
one card (`REFERENCE_CARD`); another card of the class gets it x (its matmul / its peak) /
(the reference's matmul / its peak), when both are measured (else unchanged, and the note says
so). Without this the RTX 4090's 54.8% of 165 TFLOPS was applied to the RTX 6000 Ada's
364 TFLOPS: twice the rate the 4090 sustained, on the same die at two thirds of its power.

Better than a matmul share is a training measurement of the card itself: where one training
code was timed on the card and on the H100 with the same model (sizing/same_stack_ratio.csv,
`same_stack_ratio`), the card's HFU is the Hopper class HFU x (the card's HFU / the H100's HFU
in that code). The Ada cards have such rows (LLMQ, 1.5B-7B); the RTX 4090's 124M nanoGPT run
then only covers Ada cards without one. A card that borrows another card's rows (`proxy_of`:
the RTX 6000 Ada takes the L40S's) is flagged assumed. The reference may be the A100 instead
(whyNLP/tinyllama timed TinyLlama 1.1B on the RTX 3090, RTX A6000 and A100 in one code): the
card's HFU is then the Ampere DC row's x the ratio. A same-stack HFU moved along the size trend
is capped at what the card's plain matmul reaches (`hfu_ceiling`).
"""

from __future__ import annotations

import csv
import math
import statistics
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from gpuprices.warehouse.gpus import GpuModel, gpu_models

CSV_PATH = Path(__file__).with_name("gpu_efficiency.csv")
GEMM_CSV_PATH = Path(__file__).with_name("gemm_ceiling.csv")
SAME_STACK_CSV_PATH = Path(__file__).with_name("same_stack_ratio.csv")
# The card each class's training row was measured on (its source in gpu_efficiency.csv names
# it); blackwell-gddr's row is derived from the RTX 5090's matmul.
REFERENCE_CARD = {"ada": "RTX4090-24GB", "hopper": "H100-SXM-80GB",
                  "ampere-dc": "A100-SXM-80GB", "blackwell-dc": "B200-180GB",
                  "blackwell-gddr": "RTX5090-32GB", "ampere-gddr": "A10-24GB",
                  "cdna3": "MI300X-192GB"}
FALLBACK_CLASS = "hopper"
MEASURED_BASIS = "training"
# A training measurement of the card against the H100 in one code (same_stack_ratio): measured.
SAME_STACK_BASIS = "same-stack"
# The same, measured on another card of the same die (proxy_of): assumed.
PROXY_BASIS = "proxy-card"
MEASURED_BASES = (MEASURED_BASIS, SAME_STACK_BASIS)
# A training measurement of the class made only on a sub-1B model (GPT-2 124M): the size trend
# starts at 1B, so how the value carries to a 7B is not measured: assumed.
SMALL_MODEL_BASIS = "small-model"


@dataclass(frozen=True)
class Efficiency:
    gpu_class: str
    hfu: float
    source: str
    assumed: bool  # no published training measurement for this class (and method)
    basis: str  # training | same-stack | proxy-card | small-model | gemm-derived | fallback
    # The model size (parameters) the value stands for, when it is not the class's
    # (REFERENCE_PARAMS): a same-stack value stands at the Hopper row's size.
    reference_params: float | None = None
    # One line for the buyer: what the value was measured on (rank shows it).
    measured_at: str = ""


@cache
def efficiency_table(path: Path = CSV_PATH) -> dict[tuple[str, str], tuple[float, str, str]]:
    """{(gpu_class, method): (hfu, basis, source)}; every row must name its source."""
    out: dict[tuple[str, str], tuple[float, str, str]] = {}
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            if not r["source"].strip():
                raise ValueError(f"{path.name}: row {r['gpu_class']}/{r['method']} has no source")
            out[(r["gpu_class"], r["method"])] = (float(r["hfu"]), r["basis"], r["source"])
    return out


def gpu_class(gpu: GpuModel) -> str:
    """The class a GPU's efficiency is looked up by: architecture x memory system.

    GA100 parts (A100, A30) are HBM data-centre Ampere; every other Ampere part is a GA10x
    GDDR card (RTX 3090, A10, A40, RTX A-series). Blackwell splits the same way: B200/GB200
    (HBM, NVLink) vs GB202 cards (RTX 5090, RTX PRO 6000). Ada parts are all GDDR (AD10x).
    """
    family = gpu.family.lower()
    name = gpu.gpu_model
    if gpu.vendor.upper() == "AMD":
        return family  # cdna3 (MI300X, MI325X), cdna4 (MI355X)
    if family == "ampere":
        return "ampere-dc" if name.startswith(("A100", "A30")) else "ampere-gddr"
    if family.startswith("blackwell"):
        dc = gpu.form_factor in ("sxm", "oam", "superchip")
        return f"{family.replace(' ', '-')}-{'dc' if dc else 'gddr'}"
    return family  # hopper, ada, volta, turing


# Utilisation grows with model size (wider matmuls, a smaller share of memory-bound work): the
# PyTorch blog "Maximizing training throughput using PyTorch FSDP" (2024-03-13, Table 1, FSDP,
# batch 2) measured HFU 0.57 / 0.59 / 0.64 / 0.67 on A100 and 0.37 / 0.40 / 0.44 / 0.45 on H100
# for Llama 2 7B / 13B / 34B / 70B: x 1.175 and x 1.216 from 7B to 70B, a mean of +19.6% of the
# 7B value per decade of parameters. Applied between 1B and 70B (llm-foundry's MPT rows span
# 1B-70B; outside, the size is clamped: no extrapolation).
SIZE_TREND_PER_DECADE = ((0.67 / 0.57 - 1) + (0.45 / 0.37 - 1)) / 2
SIZE_TREND_SPAN = (1e9, 70e9)
SIZE_TREND_PIVOT = 7e9
# The model size each class's training row was measured at (its source in gpu_efficiency.csv):
# hopper / ampere-dc are medians of llm-foundry's MPT 1B-70B rows (the 4th of 7 sizes: 7B);
# blackwell-gddr is derived from the hopper value; ada GPT-2 124M (nanoGPT); cdna3 Llama 3 8B;
# blackwell-dc Llama 3 70B; ampere-gddr GPT-2 124M (the same 43.4% on the A10 in llm.c's 124M
# run, karpathy/llm.c#621; the modula run states no size).
REFERENCE_PARAMS = {"hopper": 7e9, "ampere-dc": 7e9, "blackwell-gddr": 7e9, "ada": 0.124e9,
                    "cdna3": 8.03e9, "blackwell-dc": 70.6e9, "ampere-gddr": 0.124e9}


def _size_level(params: float) -> float:
    n = min(max(params, SIZE_TREND_SPAN[0]), SIZE_TREND_SPAN[1])
    return 1 + SIZE_TREND_PER_DECADE * math.log10(n / SIZE_TREND_PIVOT)


def size_factor(params: float, cls: str,
                reference_params: float | None = None) -> tuple[float, str]:
    """(factor on the class HFU for a model of `params` parameters, why): the size trend at
    this model over the trend at the size the value was measured at (`reference_params`, else
    the class's; 1.0 for a class without a stated size)."""
    ref = reference_params or REFERENCE_PARAMS.get(cls)
    if ref is None:
        return 1.0, ""
    factor = _size_level(params) / _size_level(ref)
    if abs(factor - 1) < 1e-9:
        return 1.0, ""
    return factor, (f"x {factor:.2f} for model size ({params / 1e9:.3g}B params against the "
                    f"{ref / 1e9:.3g}B the value stands for; PyTorch FSDP blog "
                    f"Table 1: +{SIZE_TREND_PER_DECADE:.1%} per decade, 1B-70B)")


@cache
def gemm_table(path: Path = GEMM_CSV_PATH) -> dict[str, tuple[float | None, str, str]]:
    """{gpu_model: (BF16 matmul TFLOPS or None, proxy card, source)}."""
    out: dict[str, tuple[float | None, str, str]] = {}
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            if not r["source"].strip():
                raise ValueError(f"{path.name}: row {r['gpu_model']} has no source")
            tflops = float(r["bf16_gemm_tflops"]) if r["bf16_gemm_tflops"] else None
            out[r["gpu_model"]] = (tflops, r["proxy_of"], r["source"])
    return out


def matmul_share(gpu_model: str, peak_tflops: float | None) -> tuple[float, str] | None:
    """(share of the datasheet BF16 peak a plain matmul reaches, capped at 1, source) or None
    when the card has no measurement; a proxy row takes its proxy card's share."""
    row = gemm_table().get(gpu_model)
    if row is None or not peak_tflops:
        return None
    tflops, proxy, source = row
    if tflops is None and proxy:
        other = gpu_models().get(proxy)
        got = matmul_share(proxy, other.bf16_dense_tflops if other else None)
        return (got[0], f"{source}; {got[1]}") if got else None
    return (min(1.0, tflops / peak_tflops), source) if tflops else None


def card_ceiling(gpu: GpuModel, cls: str) -> tuple[float, str]:
    """(factor on the class HFU for this card, why): its matmul share over the class's
    reference card's (1.0, with the reason, when either is not measured)."""
    ref_name = REFERENCE_CARD.get(cls)
    if ref_name is None or ref_name == gpu.gpu_model:
        return 1.0, ""
    ref = gpu_models().get(ref_name)
    mine = matmul_share(gpu.gpu_model, gpu.bf16_dense_tflops)
    theirs = matmul_share(ref_name, ref.bf16_dense_tflops if ref else None)
    if mine is None or theirs is None:
        return 1.0, ""
    factor = mine[0] / theirs[0]
    return factor, (f"x {factor:.2f} for this card: its BF16 matmul reaches {mine[0]:.0%} of "
                    f"its datasheet peak, the {ref_name}'s {theirs[0]:.0%} ({mine[1]})")


@cache
def same_stack_rows(path: Path = SAME_STACK_CSV_PATH) -> dict[str, list[dict[str, str]]]:
    """{gpu_model: its rows of sizing/same_stack_ratio.csv}; every row must name its source."""
    out: dict[str, list[dict[str, str]]] = {}
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            if not r["source"].strip():
                raise ValueError(f"{path.name}: row {r['gpu_model']} has no source")
            out.setdefault(r["gpu_model"], []).append(r)
    return out


def row_hfu_ratio(r: dict[str, str]) -> float:
    """The card's HFU over the reference card's in one row: same model, same code, so the
    FLOPs per token cancel and HFU ratio = tokens/s ratio x (reference peak / card peak)."""
    gpus = gpu_models()
    card, ref = gpus[r["gpu_model"]], gpus[r["ref_gpu_model"]]
    return (float(r["card_tokens_per_s"]) / float(r["ref_tokens_per_s"])
            * ref.bf16_dense_tflops / card.bf16_dense_tflops)


def same_stack_ratio(gpu_model: str) -> tuple[float, str, str, str, str] | None:
    """(median HFU ratio to the reference card over the card's rows, the card measured, its
    sizes, source, the reference card) or None when the card has no rows; a proxy row takes its
    proxy card's. A card's rows share one reference card (the H100 for LLMQ, the A100 for
    whyNLP/tinyllama)."""
    rows = same_stack_rows().get(gpu_model)
    if not rows:
        return None
    proxy = rows[0]["proxy_of"]
    if proxy:
        got = same_stack_ratio(proxy)
        return ((got[0], proxy, got[2], f"{rows[0]['source']}; {got[3]}", got[4])
                if got else None)
    refs = {r["ref_gpu_model"] for r in rows}
    if len(refs) != 1:
        raise ValueError(
            f"{SAME_STACK_CSV_PATH.name}: {gpu_model} rows mix reference cards {refs}")
    ratios = sorted(row_hfu_ratio(r) for r in rows)
    sizes = sorted(float(r["params_b"]) for r in rows)
    src = rows[0]["source"].split(",")[0]
    ref = refs.pop()
    span = f"{sizes[0]:g}B" if sizes[0] == sizes[-1] else f"{sizes[0]:g}-{sizes[-1]:g}B"
    return (statistics.median(ratios), gpu_model, span,
            f"{src}: {len(rows)} model{'s' if len(rows) > 1 else ''}, HFU ratio to the "
            f"{ref} " + ", ".join(f"{x:.2f}" for x in ratios), ref)


def _same_stack_efficiency(gpu: GpuModel, cls: str) -> Efficiency | None:
    """The card's own training measurement against a reference card's (same_stack_ratio) on
    the reference card's class HFU (H100: the Hopper row; A100: the Ampere DC row), standing at
    the model size that class row stands for."""
    got = same_stack_ratio(gpu.gpu_model)
    if got is None:
        return None
    ratio, measured_on, sizes, source, ref_name = got
    ref_cls = gpu_class(gpu_models()[ref_name])
    ref_hfu, _, ref_source = efficiency_table()[(ref_cls, "any")]
    proxy = measured_on != gpu.gpu_model
    hfu = ref_hfu * ratio
    short = ref_name.split("-")[0]
    measured_at = (f"HFU {hfu:.1%} = {short} {ref_hfu:.1%} x {ratio:.2f}, the ratio "
                   f"{measured_on} / {short} measured in one training code at {sizes}"
                   + (f" (no measurement of the {gpu.gpu_model}: the {measured_on}'s taken)"
                      if proxy else ""))
    return Efficiency(cls, hfu, f"{source}; x the {short} HFU {ref_hfu:.1%} ({ref_source})",
                      proxy, PROXY_BASIS if proxy else SAME_STACK_BASIS,
                      REFERENCE_PARAMS[ref_cls], measured_at)


def hfu_ceiling(gpu: GpuModel) -> tuple[float, str]:
    """The most of its datasheet peak a training step can use on this card: what a plain BF16
    matmul reaches (gemm_ceiling.csv, capped at 1), else the datasheet peak itself. A same-stack
    ratio moved up the size trend can pass it (GeForce cards clock above the boost clock their
    datasheet peak assumes: the RTX 3090 trains TinyLlama at 89% of its 71 TFLOPS)."""
    got = matmul_share(gpu.gpu_model, gpu.bf16_dense_tflops)
    if got is None:
        return 1.0, "its datasheet peak"
    return got[0], f"its BF16 matmul ({got[1].split(':')[0]})"


def efficiency_for(gpu: GpuModel, method: str = "any") -> Efficiency:
    """The card's own same-stack measurement (`same_stack_ratio`) when it has one, else the
    class's HFU for this method (else its `any` row, else the Hopper row, assumed), times the
    card's matmul ceiling against the class's reference card (`card_ceiling`)."""
    table = efficiency_table()
    cls = gpu_class(gpu)
    if (cls, method) not in table or method == "any":
        own = _same_stack_efficiency(gpu, cls)
        if own is not None:
            return own
    for key in ((cls, method), (cls, "any")):
        if key in table:
            hfu, basis, source = table[key]
            factor, why = card_ceiling(gpu, cls)
            if factor != 1.0:
                hfu, source = hfu * factor, f"{source}; {why}"
            return Efficiency(cls, hfu, source, basis not in MEASURED_BASES, basis)
    hfu, _, source = table[(FALLBACK_CLASS, "any")]
    return Efficiency(cls, hfu, f"no measurement for class {cls} ({gpu.gpu_model}): "
                      f"{FALLBACK_CLASS} value assumed ({source})", True, "fallback")
