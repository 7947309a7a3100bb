"""The fit verdicts — `fits`, `tight`, `no` — and the margin behind them, which is the memory
estimator's own measured error, not a round number (docs/sizing.md, "Fit verdicts").

* `fits`: estimate x (1 + margin) <= the card's memory;
* `tight`: the estimate alone is within the card, the margin is not: it runs if the estimate
  is right, and the estimator's measured error says it may not;
* `no`: the estimate alone is over the card.

The margin is one statistic of the calibration set (tests/fixtures/sizing/measured_calibration.csv
through bench/sizing_accuracy.py): the 90th percentile, over every memory row, of the relative
under-estimate `measured / estimated - 1` (an over-estimate counts as negative). With it, 9 of
10 published peaks are at or below estimate x (1 + margin): `fits` is a statement a buyer can
bet on, and only the worst decile of the estimator's misses needs the word `tight`. It is stored
in ONE place, `sizing/fit_margin.csv`, with its provenance; `bench/sizing_accuracy.py` prints it,
compares it with the stored figure and rewrites the file with `--write-margin`; a test checks
the two agree, so the figure cannot drift from the data silently. A workload's own `margin`
field wins over it.
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

MARGIN_CSV = Path(__file__).with_name("fit_margin.csv")
VERDICTS = ("fits", "tight", "no")
PERCENTILE = 90  # the share of measured peaks the margin must cover (module docstring)
STATISTIC = (f"{PERCENTILE}th percentile of measured / estimated - 1 over the calibration "
             "set's memory rows (linear interpolation, statistics.quantiles inclusive)")
_FIELDS = ("margin", "statistic", "rows", "calibration", "computed_by")


@dataclass(frozen=True)
class MeasuredMargin:
    margin: float  # fraction of the estimate, e.g. 0.114
    statistic: str
    rows: int  # memory rows it was computed over
    calibration: str  # the data it was computed from
    computed_by: str  # the command that recomputes it


@cache
def measured_margin() -> MeasuredMargin:
    """The stored margin and its provenance (sizing/fit_margin.csv, one row)."""
    with MARGIN_CSV.open(newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    return MeasuredMargin(float(row["margin"]), row["statistic"], int(row["rows"]),
                          row["calibration"], row["computed_by"])


def under_estimate(measured_gb: float, estimated_gb: float) -> float:
    """How far a measured peak is above the estimate, as a share of the estimate (negative when
    the estimate was higher): the margin that would have covered this one row."""
    return measured_gb / estimated_gb - 1


def margin_statistic(under_estimates: Iterable[float]) -> float:
    """The margin the rows call for: the PERCENTILE-th percentile of their under-estimates,
    never below 0, rounded to 0.1 percentage point (the precision it is quoted with)."""
    values = sorted(under_estimates)
    q = statistics.quantiles(values, n=100, method="inclusive")[PERCENTILE - 1]
    return round(max(0.0, q), 3)


def write_margin(margin: float, rows: int, calibration: str, computed_by: str) -> None:
    """Rewrite sizing/fit_margin.csv (bench/sizing_accuracy.py --write-margin)."""
    with MARGIN_CSV.open("w", newline="") as fh:
        out = csv.DictWriter(fh, fieldnames=_FIELDS, lineterminator="\n")
        out.writeheader()
        out.writerow(dict(margin=f"{margin:.3f}", statistic=STATISTIC, rows=rows,
                          calibration=calibration, computed_by=computed_by))
    measured_margin.cache_clear()


def verdict(estimate_gb: float, capacity_gb: float, margin: float) -> str:
    """`fits`, `tight` or `no` (module docstring)."""
    if estimate_gb * (1 + margin) <= capacity_gb:
        return "fits"
    return "tight" if estimate_gb <= capacity_gb else "no"


def fit_sentence(verdict_: str, estimate_gb: float, capacity_gb: float, margin: float,
                 measured: bool) -> str:
    """The reason a ranked row gives for its fit; a tight one names the risk."""
    whose = "the estimator's error margin" if measured else "the workload's margin"
    if verdict_ == "tight":
        return (f"tight: estimate {estimate_gb:.1f} GB of {capacity_gb:g} GB, within "
                f"{whose} {margin:.1%} (needs {estimate_gb * (1 + margin):.1f} GB to be sure)")
    if verdict_ == "no":
        return (f"does not fit: estimate {estimate_gb:.1f} GB per GPU, has {capacity_gb:g} GB")
    headroom = capacity_gb - estimate_gb * (1 + margin)
    return (f"fits with {headroom:.1f} GB headroom ({estimate_gb:.1f} GB/GPU + {margin:.1%} "
            f"{'measured ' if measured else ''}margin of {capacity_gb:g} GB)")


def prefer_fits(verdicts: Iterable[tuple[str, int]]) -> int | None:
    """Of (verdict, index) candidates in order of preference (fewest GPUs first), the first that
    `fits`, else the first that is `tight`, else None: a layout or a headline choice is safe
    when a safe one exists, and tight only when nothing safe does."""
    tight = None
    for v, idx in verdicts:
        if v == "fits":
            return idx
        if v == "tight" and tight is None:
            tight = idx
    return tight
