"""Rent, reserve or own: the monthly cost of a sustained demand under each way of paying, and the
utilisation above which each beats on-demand.

A demand is N GPUs of one model used `hours_per_week` for `months`. Every option costs

    monthly(h) = fixed + per_hour * h * WEEKS_PER_MONTH

where `fixed` is paid whether the GPUs run or not (a committed term, owned hardware's
depreciation, hosting and idle power) and `per_hour` is paid for each hour the N GPUs run (a
rented hour, owned hardware's power above idle). On-demand is all `per_hour`, so an option
breaks even with it at

    h* = (fixed - fixed_on_demand) / ((per_hour_on_demand - per_hour) * WEEKS_PER_MONTH)

hours per week: above h* the option is cheaper. Pure arithmetic; the prices come from the
warehouse (gpu_terms_as_of) through the caller, the ownership figures from
ownership_defaults.csv (each with its date and source) or the user.
"""

from __future__ import annotations

import csv
import math
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from gpuprices.sizing.cost import HOURS_PER_MONTH

HOURS_PER_WEEK = 168.0
# The cost model's 730-hour month (sizing/cost.py), so a demand of 168 h/week uses exactly the
# hours a committed month pays for.
WEEKS_PER_MONTH = HOURS_PER_MONTH / HOURS_PER_WEEK
DEFAULTS_CSV = Path(__file__).parent / "ownership_defaults.csv"
EXAMPLE_DEMANDS = Path(__file__).parent / "demands.toml"
# Prices paid per hour used; every other pricing model with a term is paid for the whole term.
# A reserved price without a term on its row (GCP's DWS calendar mode) is billed for the hours
# used, as sizing/cost.py bills it.
LABELS = {"on_demand": "on-demand", "spot": "spot", "community": "community (marketplace)",
          "reserved": "reserved", "committed": "committed"}


class DemandError(ValueError):
    """A demand file or option that cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Demand:
    name: str
    gpu_model: str
    gpus: int
    hours_per_week: float
    months: float
    own: dict[str, float] = field(default_factory=dict)  # ownership figures set by the user


@dataclass(frozen=True)
class TermPrice:
    """The cheapest firm offer of one kind (a gpu_terms_as_of row), per GPU-hour."""
    pricing_model: str
    commitment_months: float | None
    price_per_gpu_hour: float
    provider: str = ""
    sku: str = ""
    snapshot_date: Any = None


@dataclass(frozen=True)
class Ownership:
    """Owning the GPUs: purchase, power, hosting and depreciation, in USD (`fx` converts)."""
    server_price: float
    gpus_per_server: int
    server_kw: float
    electricity_per_kwh: float
    hosting_per_kw_month: float
    pue: float
    years: float
    residual_fraction: float
    idle_fraction: float
    sources: dict[str, str] = field(default_factory=dict)


OWNERSHIP_FIELDS = [f.name for f in fields(Ownership) if f.name != "sources"]


@dataclass(frozen=True)
class Option:
    label: str
    kind: str  # on_demand | spot | community | reserved | committed | own
    term_months: float | None
    fixed_monthly: float  # paid however little the GPUs run
    per_hour: float  # paid per hour the demand's N GPUs run
    source: str
    notes: tuple[str, ...] = ()

    def monthly(self, hours_per_week: float) -> float:
        return self.fixed_monthly + self.per_hour * hours_per_week * WEEKS_PER_MONTH


def break_even_hours(option: Option, on_demand: Option) -> float | None:
    """Hours per week above which `option` costs less than `on_demand`: 0 when it is always
    cheaper, None when it never is within a week's 168 hours."""
    saving_per_hour = on_demand.per_hour - option.per_hour
    extra_fixed = option.fixed_monthly - on_demand.fixed_monthly
    if extra_fixed <= 0:
        return 0.0 if saving_per_hour >= 0 else None
    if saving_per_hour <= 0:
        return None
    h = extra_fixed / (saving_per_hour * WEEKS_PER_MONTH)
    return h if h <= HOURS_PER_WEEK else None


def rented(price: TermPrice, demand: Demand) -> Option:
    """A rented option: pay per hour used, or for every hour of each term the demand needs
    (renewed whole: 14 months on 12-month terms pay two terms)."""
    source = f"{price.provider} {price.sku}".strip()
    label = LABELS.get(price.pricing_model, price.pricing_model)
    term = price.commitment_months
    if not term:
        notes = ("preemptions and their rework not counted",) if price.pricing_model == "spot" \
            else ()
        return Option(label, price.pricing_model, None, 0.0,
                      price.price_per_gpu_hour * demand.gpus, source, notes)
    paid_months = math.ceil(demand.months / term - 1e-9) * term
    fixed = price.price_per_gpu_hour * demand.gpus * HOURS_PER_MONTH * paid_months / demand.months
    notes = (f"{term:g}-month term paid for every hour; {paid_months:g} months paid for "
             f"{demand.months:g} months of demand",)
    return Option(f"{label} {term:g} months", price.pricing_model, term, fixed, 0.0, source,
                  notes)


def owned(own: Ownership, demand: Demand, fx: float = 1.0) -> Option:
    """Owning enough whole servers for the demand: straight-line depreciation to the residual,
    colocation per kW of server power and idle power every hour, full power while used.
    `fx` converts the USD figures into the report currency."""
    servers = math.ceil(demand.gpus / own.gpus_per_server)
    kw = servers * own.server_kw
    depreciation = servers * own.server_price * (1 - own.residual_fraction) / (own.years * 12)
    kwh_price = own.electricity_per_kwh * own.pue
    idle = kw * own.idle_fraction * HOURS_PER_MONTH * kwh_price
    fixed = depreciation + kw * own.hosting_per_kw_month + idle
    per_hour = kw * (1 - own.idle_fraction) * kwh_price
    notes = [f"{servers} server(s) of {own.gpus_per_server} GPUs, {kw:g} kW",
             f"{own.years:g} years straight-line to {own.residual_fraction:.0%} residual"]
    if demand.gpus % own.gpus_per_server:
        notes.append(f"{servers * own.gpus_per_server - demand.gpus} GPU(s) bought and unused")
    return Option("own", "own", own.years * 12, fixed * fx, per_hour * fx, "purchase",
                  tuple(notes))


def compare(demand: Demand, prices: list[TermPrice], own: Ownership | None,
            usd_to_currency: float | None = 1.0) -> dict[str, Any]:
    """Every option's monthly cost for the demand and its break-even utilisation against the
    cheapest on-demand price. Without an on-demand price there is no break-even (None)."""
    options = [rented(p, demand) for p in sorted(
        prices, key=lambda p: (p.pricing_model != "on_demand", p.pricing_model,
                               p.commitment_months or 0))]
    notes: list[str] = []
    if own is None:
        notes.append(f"owning not priced: no purchase price for {demand.gpu_model} in "
                     f"{DEFAULTS_CSV.name}; set server_price, gpus_per_server and server_kw")
    elif usd_to_currency is None:
        notes.append("owning not priced: no USD rate on the day")
    else:
        options.append(owned(own, demand, usd_to_currency))
    base = next((o for o in options if o.kind == "on_demand"), None)
    if base is None:
        notes.append(f"no firm on-demand price for {demand.gpu_model}: no break-even")
    rows = []
    for o in options:
        be = break_even_hours(o, base) if base and o is not base else None
        why = list(o.notes) + (["the baseline"] if o is base else [])
        if base and o is not base and be is None:
            why.append("never cheaper than on-demand, even at 168 h/week")
        rows.append({"option": o.label, "kind": o.kind, "term_months": o.term_months,
                     "source": o.source,
                     "monthly_cost": o.monthly(demand.hours_per_week),
                     "fixed_monthly": o.fixed_monthly, "per_hour": o.per_hour,
                     "break_even_hours_per_week": be,
                     "break_even_utilisation": None if be is None else be / HOURS_PER_WEEK,
                     "notes": why})
    cheapest = min(rows, key=lambda r: r["monthly_cost"], default=None)
    return {"demand": demand.name, "gpu_model": demand.gpu_model, "gpus": demand.gpus,
            "hours_per_week": demand.hours_per_week, "months": demand.months,
            "utilisation": demand.hours_per_week / HOURS_PER_WEEK,
            "cheapest": cheapest["option"] if cheapest else None,
            "options": rows, "notes": notes}


def load_defaults(path: Path = DEFAULTS_CSV) -> dict[str, dict[str, tuple[float, str]]]:
    """gpu model ('*' for every model) -> field -> (value, "source (as of date)")."""
    out: dict[str, dict[str, tuple[float, str]]] = {}
    with path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            out.setdefault(row["gpu_model"], {})[row["field"]] = (
                float(row["value"]), f"{row['source']} (as of {row['as_of']})")
    return out


def ownership_for(gpu_model: str, overrides: dict[str, float] | None = None,
                  defaults: dict[str, dict[str, tuple[float, str]]] | None = None
                  ) -> Ownership | None:
    """The ownership figures of `gpu_model`: the defaults (the model's rows over '*'), then the
    user's `overrides`; None when a figure has neither (no purchase price for the model)."""
    defaults = load_defaults() if defaults is None else defaults
    merged = {**defaults.get("*", {}), **defaults.get(gpu_model, {})}
    values = {k: v for k, (v, _) in merged.items()}
    sources = {k: s for k, (_, s) in merged.items()}
    for k, v in (overrides or {}).items():
        if k not in OWNERSHIP_FIELDS:
            raise DemandError(f"unknown ownership figure {k!r}; known: "
                              f"{', '.join(OWNERSHIP_FIELDS)}")
        values[k], sources[k] = float(v), "set by the user"
    if any(k not in values for k in OWNERSHIP_FIELDS):
        return None
    own = Ownership(**{k: values[k] for k in OWNERSHIP_FIELDS}, sources=sources)
    return replace(own, gpus_per_server=int(own.gpus_per_server))


def _positive(d: dict[str, Any], key: str, where: str) -> float:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, int | float) or v <= 0:
        raise DemandError(f"{where}: {key} must be a positive number, got {v!r}")
    return float(v)


def demand_from(d: dict[str, Any], where: str) -> Demand:
    """One [[demand]] table: name, gpu, gpus, hours_per_week (at most 168), months, and an
    optional [demand.own] table of ownership figures."""
    gpu = d.get("gpu")
    if not isinstance(gpu, str) or not gpu:
        raise DemandError(f"{where}: gpu (a canonical GPU model) is required")
    hours = _positive(d, "hours_per_week", where)
    if hours > HOURS_PER_WEEK:
        raise DemandError(f"{where}: hours_per_week {hours:g} is more than a week's 168")
    gpus = _positive(d, "gpus", where)
    if gpus != int(gpus):
        raise DemandError(f"{where}: gpus must be a whole number, got {gpus:g}")
    own = d.get("own", {})
    if not isinstance(own, dict):
        raise DemandError(f"{where}: own must be a table of ownership figures")
    for k in own:
        if k not in OWNERSHIP_FIELDS:
            raise DemandError(f"{where}: own.{k} is not an ownership figure; known: "
                              f"{', '.join(OWNERSHIP_FIELDS)}")
        v = own[k]
        low_ok = k == "residual_fraction"  # 0: nothing recovered
        if isinstance(v, bool) or not isinstance(v, int | float) or v < 0 or (v == 0
                                                                              and not low_ok):
            raise DemandError(f"{where}: own.{k} must be a positive number, got {v!r}")
    name = d.get("name") or f"{int(gpus)}x {gpu}, {hours:g} h/week"
    return Demand(str(name), gpu, int(gpus), hours, _positive(d, "months", where),
                  {k: float(v) for k, v in own.items()})


def load_demands(path: Path) -> list[Demand]:
    """The [[demand]] tables of a TOML file."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise DemandError(f"{path}: {exc}") from None
    tables = data.get("demand")
    if not isinstance(tables, list) or not tables:
        raise DemandError(f"{path}: no [[demand]] table")
    return [demand_from(t, f"{path} demand {i}") for i, t in enumerate(tables, 1)]
