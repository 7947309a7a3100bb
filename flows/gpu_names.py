"""Canonical GPU names as the command line checks them: an unknown name is answered with the
close canonical ones (from warehouse/gpus.csv and the wordings in warehouse/gpu_aliases.csv)."""

from __future__ import annotations

import csv
import difflib
from functools import cache
from pathlib import Path

from gpuprices.sizing.workload import Workload, WorkloadError, load_workloads
from gpuprices.warehouse.gpus import ALIASES_CSV, canonical_gpu, gpu_models


@cache
def _spellings() -> dict[str, str]:
    """Upper-cased canonical names and alias wordings -> canonical name."""
    out = {name.upper(): name for name in gpu_models()}
    with ALIASES_CSV.open(newline="") as fh:
        for row in csv.DictReader(fh):
            out.setdefault(row["wording"].upper(), row["gpu_model"])
    return out


def close_gpu_names(name: str, n: int = 3) -> list[str]:
    """Up to `n` canonical names close to `name`: the one its wording maps to, then the names it
    begins (`H100` -> `H100-SXM-80GB`), then the nearest spellings by difflib's ratio."""
    key = name.strip().upper()
    spellings = _spellings()
    found = [canonical_gpu(name)] if key else []
    found += sorted(m for m in gpu_models() if key and m.upper().startswith(key))
    found += [spellings[hit] for hit in
              difflib.get_close_matches(key, list(spellings), n=4 * n, cutoff=0.5)]
    return list(dict.fromkeys(m for m in found if m))[:n]


def unknown_gpu(name: str) -> str:
    """The error text for a name that is not a canonical GPU model."""
    close = close_gpu_names(name)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    return f"{name!r} is not a canonical GPU model{hint} (names: warehouse/gpus.csv)"


def load_known_workloads(path: Path) -> list[Workload]:
    """The workloads of a TOML file, each `gpu` a canonical model; an unknown one raises
    WorkloadError naming the close canonical names."""
    workloads = load_workloads(path)
    known = gpu_models()
    for w in workloads:
        if w.gpu and w.gpu not in known:
            raise WorkloadError(f"{w.name}: gpu {unknown_gpu(w.gpu)}")
    return workloads
