"""Operator probes for bench/faults.py: one module per group of the reliability issue's items.

Each module in this package defines `PROBES`, a list of `Probe`. A probe reproduces one thing a
careful operator did to the pipeline (a ×10 page, a capture dated in the future, a webhook that
trickles bytes, a `COPY … TO` through `gpuprices sql`, ...) on the real bundled captures in a
fresh temporary folder, and reports what happened as a `ProbeResult`. bench/faults.py runs every
probe of every module and prints cases tried / survived / rows lost / wrong prices loaded.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProbeResult:
    survived: bool  # the pipeline did what the issue asks (refused, held, failed fast, escaped...)
    rows_lost: int = 0  # good rows of a clean run missing afterwards
    wrong_loaded: int = 0  # rows with a wrong price (or from a refused capture) in the warehouse
    detail: str = ""  # one line: what the run said or did


@dataclass(frozen=True)
class Probe:
    item: str  # the item number, e.g. "1" or "live"
    name: str
    run: Callable[[Path], ProbeResult]  # gets an empty temporary folder of its own


def probes() -> list[Probe]:
    """Every probe of every module in this package, in module order."""
    found: list[Probe] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        found.extend(importlib.import_module(f"{__name__}.{info.name}").PROBES)
    return found
