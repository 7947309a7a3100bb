"""Canonical GPU models (gpus.csv) and the one function that maps provider wording to them.

Mapping is by an explicit alias table (gpu_aliases.csv, a public source per row), compared as a
set of normalised tokens so that word order, punctuation and vendor prefixes do not matter. A
wording that is not in the table maps to None: the caller quarantines the row. Nothing is
guessed from partial matches.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

HERE = Path(__file__).parent
GPUS_CSV = HERE / "gpus.csv"
ALIASES_CSV = HERE / "gpu_aliases.csv"

# Words that never distinguish one GPU from another in provider wording.
_NOISE = {
    "NVIDIA", "AMD", "TESLA", "GEFORCE", "INSTINCT", "GPU", "GPUS", "HBM3", "HBM3E", "HBM2",
    "HBM2E", "OAM", "GENERATION", "EDITION", "BLACKWELL", "GDDR6", "GDDR7", "THE", "ON", "RUNPOD",
}
# Form-factor words that name the same thing: HGX boards carry SXM parts (NVIDIA HGX spec).
_SYNONYMS = {"SXM2": "SXM", "SXM4": "SXM", "SXM5": "SXM", "SXM6": "SXM", "HGX": "SXM",
             "PCI": "PCIE", "MAXQ": "MAX"}
_MEM_TOKEN = re.compile(r"^(\d+(?:\.\d+)?)GB$")


@dataclass(frozen=True)
class GpuModel:
    gpu_model: str
    vendor: str
    family: str
    memory_gb: float
    memory_bandwidth_gbs: float | None
    bf16_dense_tflops: float | None
    fp8_dense_tflops: float | None
    form_factor: str
    interconnect: str
    source: str


def _num(text: str) -> float | None:
    return float(text) if text.strip() else None


@cache
def gpu_models() -> dict[str, GpuModel]:
    with GPUS_CSV.open(newline="") as fh:
        return {
            r["gpu_model"]: GpuModel(
                gpu_model=r["gpu_model"],
                vendor=r["vendor"],
                family=r["family"],
                memory_gb=float(r["memory_gb"]),
                memory_bandwidth_gbs=_num(r["memory_bandwidth_gbs"]),
                bf16_dense_tflops=_num(r["bf16_dense_tflops"]),
                fp8_dense_tflops=_num(r["fp8_dense_tflops"]),
                form_factor=r["form_factor"],
                interconnect=r["interconnect"],
                source=r["source"],
            )
            for r in csv.DictReader(fh)
        }


def normalise(wording: str) -> frozenset[str]:
    """Token set of a GPU wording: 'NVIDIA A100-SXM4-80GB' -> {A100, SXM, 80GB}."""
    text = wording.upper()
    text = re.sub(r"(\d)\s+GB\b", r"\1GB", text)  # "80 GB" -> "80GB"
    text = text.replace("MAX-Q", "MAXQ")
    tokens = set()
    for tok in re.split(r"[^A-Z0-9.]+", text):
        tok = tok.strip(".")
        if not tok or tok in _NOISE:
            continue
        tokens.add(_SYNONYMS.get(tok, tok))
    return frozenset(tokens)


@cache
def _alias_index() -> dict[frozenset[str], str]:
    known = gpu_models()
    index: dict[frozenset[str], str] = {}
    with ALIASES_CSV.open(newline="") as fh:
        for r in csv.DictReader(fh):
            if r["gpu_model"] not in known:
                raise ValueError(f"gpu_aliases.csv: {r['gpu_model']!r} is not in gpus.csv")
            key = normalise(r["wording"])
            if index.get(key, r["gpu_model"]) != r["gpu_model"]:
                raise ValueError(f"gpu_aliases.csv: {r['wording']!r} maps to two models")
            index[key] = r["gpu_model"]
    return index


def _memory_in(tokens: frozenset[str]) -> float | None:
    for tok in tokens:
        m = _MEM_TOKEN.match(tok)
        if m:
            return float(m.group(1))
    return None


def canonical_gpu(wording: str, memory_gb: float | None = None) -> str | None:
    """Canonical model for a provider's wording, or None when the table does not know it.

    `memory_gb` is the per-GPU memory the provider states beside the name; it is tried as part
    of the wording first (so "A100 SXM" with 40 GB is told from the 80 GB part) and then used
    as a check: a model whose memory differs by more than 10% from it is refused.
    """
    tokens = normalise(wording)
    if not tokens:
        return None
    index = _alias_index()
    candidates = []
    if memory_gb:
        mem_tok = f"{memory_gb:g}GB"
        if _memory_in(tokens) is None:
            candidates.append(tokens | {mem_tok})
    candidates.append(tokens)
    for key in candidates:
        model = index.get(key)
        if model is None:
            continue
        stated = memory_gb or _memory_in(key)
        if stated and abs(gpu_models()[model].memory_gb - stated) > 0.1 * stated:
            return None
        return model
    return None
