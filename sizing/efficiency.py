"""Hardware-FLOPs utilisation (HFU) per GPU class, read from sizing/gpu_efficiency.csv.

Each row is keyed by GPU class and method (`any`, or `lora` / `qlora` / `full` where the
measurement distinguishes them) and carries its public source. `basis` says what kind of
measurement it is:

* `training`: a published training run's utilisation on that class (the value is used as is);
* `gemm-derived`: no published training run was found; the value scales the Hopper training
  HFU by how close the class's own measured BF16 matmul gets to its datasheet peak, against how
  close the H100's does (same benchmark). Consumer cards reach their (FP32-accumulate) peak in
  a plain matmul, the H100 about 80% of its, so the same software loses less on them. It is a
  measurement of the card, not of training: the estimate says "efficiency assumed".

A class with no row gets the Hopper value (the reference the previous model used for every
GPU) and is flagged assumed as well.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from gpuprices.warehouse.gpus import GpuModel

CSV_PATH = Path(__file__).with_name("gpu_efficiency.csv")
FALLBACK_CLASS = "hopper"
MEASURED_BASIS = "training"


@dataclass(frozen=True)
class Efficiency:
    gpu_class: str
    hfu: float
    source: str
    assumed: bool  # no published training measurement for this class (and method)
    basis: str  # training | gemm-derived | fallback


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


def efficiency_for(gpu: GpuModel, method: str = "any") -> Efficiency:
    """The class's HFU for this method (else its `any` row, else the Hopper row, assumed)."""
    table = efficiency_table()
    cls = gpu_class(gpu)
    for key in ((cls, method), (cls, "any")):
        if key in table:
            hfu, basis, source = table[key]
            return Efficiency(cls, hfu, source, basis != MEASURED_BASIS, basis)
    hfu, _, source = table[(FALLBACK_CLASS, "any")]
    return Efficiency(cls, hfu, f"no measurement for class {cls} ({gpu.gpu_model}): "
                      f"{FALLBACK_CLASS} value assumed ({source})", True, "fallback")
