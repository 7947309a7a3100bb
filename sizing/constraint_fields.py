"""The buyer's own constraints on a workload (docs/sizing.md "Constraints"): the TOML fields, the
areas `regions` may name, and their parsing and validation. Checking an offer against them is
sizing/constraints.py (sizing/rank.py lists an offer that breaks one apart with its sentence).

    deadline_hours = 48        # or deadline_days = 2: offers that cannot finish in time are
                               # listed apart, "misses the deadline (needs N h)"
    regions = ["eu"]           # areas (AREAS) or provider regions ("us-central1")
    countries = ["DE", "FR"]   # ISO 3166-1 alpha-2
    residency = "eu"           # the same as regions = ["eu"], for a data-residency rule

An offer whose country is unknown (warehouse/regions.csv says why) is outside any region
constraint: a residency rule cannot be met by an offer that does not say where it runs.
"""

from __future__ import annotations

import math
import re
from typing import Any

from gpuprices.sizing.workload_fields import WorkloadError
from gpuprices.warehouse import regions as region_table

# The EU's 27 member states (https://european-union.europa.eu/principles-countries-history/
# eu-countries_en) and the three other EEA states, Iceland, Liechtenstein and Norway (EEA
# Agreement, https://www.efta.int/eea), as ISO 3166-1 alpha-2 codes (Greece is GR).
EU = frozenset("AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE"
               .split())
EEA = EU | {"IS", "LI", "NO"}
# Area names `regions` and `--region` accept. "eu" means EU/EEA: GDPR applies across the EEA
# (EEA Joint Committee Decision 154/2018), which is what an "EU only" rule is usually about.
AREAS: dict[str, frozenset[str]] = {
    "eu": EEA, "eea": EEA, "us": frozenset({"US"}), "uk": frozenset({"GB"}),
    "ca": frozenset({"CA"}), "ch": frozenset({"CH"}), "jp": frozenset({"JP"}),
}
_ISO = re.compile(r"^[A-Za-z]{2}$")
CONSTRAINT_FIELDS = ("deadline_hours", "deadline_days", "regions", "countries", "residency")


def _names(name: str, key: str, value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(
            isinstance(v, str) and v.strip() for v in value):
        raise WorkloadError(f"{name}: {key} = {value!r}; expected a list such as [\"eu\"]")
    return [v.strip() for v in value]


def known_regions() -> set[str]:
    """Every provider region string warehouse/regions.csv names."""
    return {r for _, r in region_table.region_table() if r}


def region_names(name: str, key: str, value: Any) -> tuple[str, ...]:
    """`regions` (or --region): area names (AREAS, any case) or provider regions as the
    warehouse spells them (warehouse/regions.csv)."""
    out = []
    regions = known_regions()
    for v in _names(name, key, value):
        if v.lower() in AREAS:
            out.append(v.lower())
        elif v in regions:
            out.append(v)
        else:
            raise WorkloadError(
                f"{name}: {key} {v!r} is neither an area ({', '.join(AREAS)}) nor a provider "
                "region in warehouse/regions.csv (e.g. \"us-central1\", \"westeurope\"); "
                "use countries = [\"DE\"] for a country")
    return tuple(dict.fromkeys(out))


def parse(name: str, d: dict[str, Any]) -> dict[str, Any]:
    """The constraint fields of one [[workload]] table as Workload keyword arguments."""
    out: dict[str, Any] = {}
    if "deadline_hours" in d and "deadline_days" in d:
        raise WorkloadError(f"{name}: give deadline_hours or deadline_days, not both")
    for key, factor in (("deadline_hours", 1.0), ("deadline_days", 24.0)):
        if key in d:
            v = d[key]
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) \
                    or v <= 0:
                raise WorkloadError(f"{name}: {key} = {v!r}; expected a positive number")
            out["deadline_hours"] = float(v) * factor
    regions: list[str] = []
    if "regions" in d:
        regions += region_names(name, "regions", d["regions"])
    if "residency" in d:
        for v in _names(name, "residency", d["residency"]):
            if v.lower() not in AREAS:
                raise WorkloadError(f"{name}: residency {v!r} is not an area "
                                    f"({', '.join(AREAS)})")
            regions.append(v.lower())
    if regions:
        out["regions"] = tuple(dict.fromkeys(regions))
    if "countries" in d:
        codes = _names(name, "countries", d["countries"])
        bad = [c for c in codes if not _ISO.match(c)]
        if bad:
            raise WorkloadError(f"{name}: countries {bad} are not ISO 3166-1 alpha-2 codes "
                                "(e.g. \"DE\")")
        out["countries"] = tuple(dict.fromkeys(c.upper() for c in codes))
    return out


def parse_deadline(text: str) -> float:
    """--deadline: hours as "48", "48h" or days as "3d"; ValueError otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([hd]?)\s*", text.lower())
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"--deadline {text!r}: expected hours (48, 48h) or days (3d)")
    return float(m.group(1)) * (24.0 if m.group(2) == "d" else 1.0)


