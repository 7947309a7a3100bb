"""The rules file of `gpuprices watch` (README, "Alerts"; docs/watch.example.toml): `[[rule]]`
tables of three kinds, `offer`, `change` and `index`, each checked whole before anything is
evaluated; WatchError names the file, the rule (number and name) and what was expected."""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuprices.sizing.constraint_fields import AREAS
from gpuprices.warehouse.contract import PRICING_MODELS, PROVIDERS
from gpuprices.warehouse.gpus import gpu_models

_COMMON = {"name", "kind"}
_KEYS = {
    "offer": _COMMON | {"gpu", "pricing", "providers", "below", "currency", "regions",
                        "countries", "fabric"},
    "change": _COMMON | {"gpu", "pricing", "providers", "min_pct"},
    "index": _COMMON | {"gpu", "pricing", "segment", "falls_pct", "rises_pct", "days"},
}
_CURRENCIES = ("USD", "EUR")  # the currencies the warehouse converts to (fx_factor, ECB rates)
_SEGMENTS = ("all", "neocloud", "hyperscaler")  # docs/index.md


class WatchError(ValueError):
    """A rules file that cannot be used, with the file, the rule and what is wrong."""


@dataclass(frozen=True)
class Rule:
    name: str
    kind: str
    gpus: tuple[str, ...] = ()
    pricing: str | None = None
    providers: tuple[str, ...] = ()
    below: float | None = None
    currency: str = "USD"
    countries: frozenset[str] | None = None
    fabric: bool = False
    min_pct: float = 0.0
    segment: str = "all"
    falls_pct: float | None = None
    rises_pct: float | None = None
    days: int = 7
    source: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def fingerprint(self) -> str:
        """Changes with the rule's definition: an edited rule starts afresh."""
        text = json.dumps(self.source, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _strings(where: str, key: str, value: Any, allowed: tuple[str, ...] | set[str]
             ) -> tuple[str, ...]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise WatchError(f"{where}: {key} = {value!r}; expected a name or a list of names")
    unknown = [v for v in values if v not in allowed]
    if unknown:
        shown = ", ".join(sorted(allowed)) if len(allowed) <= 40 else "see warehouse/gpus.csv"
        raise WatchError(f"{where}: {key}: unknown {', '.join(map(repr, unknown))} "
                         f"(known: {shown})")
    return tuple(values)


def _number(where: str, key: str, value: Any, *, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WatchError(f"{where}: {key} = {value!r}; expected a number")
    if positive and value <= 0:
        raise WatchError(f"{where}: {key} = {value!r}; expected a number above 0")
    return float(value)


def _one(where: str, key: str, value: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise WatchError(f"{where}: {key} = {value!r}; expected one of {', '.join(allowed)}")
    return value


def _countries(where: str, raw: dict) -> frozenset[str] | None:
    found: set[str] = set()
    if "regions" in raw:
        for area in _strings(where, "regions", raw["regions"], set(AREAS)):
            found |= AREAS[area]
    if "countries" in raw:
        codes = raw["countries"]
        codes = [codes] if isinstance(codes, str) else codes
        if not isinstance(codes, list) or not codes or not all(
                isinstance(c, str) and len(c) == 2 and c.isalpha() for c in codes):
            raise WatchError(f"{where}: countries = {raw['countries']!r}; expected ISO 3166-1 "
                             "alpha-2 codes such as [\"DE\", \"FI\"]")
        found |= {c.upper() for c in codes}
    return frozenset(found) if found else None


def parse_rule(raw: Any, where: str) -> Rule:
    if not isinstance(raw, dict):
        raise WatchError(f"{where}: expected a table of keys")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise WatchError(f"{where}: no name (name = \"what the alert is called\")")
    where = f"{where} ({name!r})"
    kind = raw.get("kind", "offer")
    if kind not in _KEYS:
        raise WatchError(f"{where}: kind = {kind!r}; expected one of {', '.join(_KEYS)}")
    extra = sorted(set(raw) - _KEYS[kind])
    if extra:
        raise WatchError(f"{where}: unknown key(s) {', '.join(extra)} for kind {kind!r} "
                         f"(allowed: {', '.join(sorted(_KEYS[kind]))})")
    args: dict[str, Any] = {"name": name.strip(), "kind": kind, "source": raw}
    if "gpu" in raw:
        args["gpus"] = _strings(where, "gpu", raw["gpu"], set(gpu_models()))
    if "pricing" in raw:
        args["pricing"] = _one(where, "pricing", raw["pricing"], PRICING_MODELS)
    if "providers" in raw:
        args["providers"] = _strings(where, "providers", raw["providers"], set(PROVIDERS))
    if kind == "offer":
        if "below" in raw:
            args["below"] = _number(where, "below", raw["below"])
        if "currency" in raw:
            args["currency"] = _one(where, "currency", raw["currency"], _CURRENCIES)
        args["countries"] = _countries(where, raw)
        if "fabric" in raw:
            if raw["fabric"] != "published":
                raise WatchError(f"{where}: fabric = {raw['fabric']!r}; the one value is "
                                 "\"published\" (the provider names its network between nodes)")
            args["fabric"] = True
    elif kind == "change":
        if "min_pct" in raw:
            args["min_pct"] = _number(where, "min_pct", raw["min_pct"])
    else:
        if len(args.get("gpus", ())) != 1:
            raise WatchError(f"{where}: an index rule needs one gpu (gpu = \"H100-SXM-80GB\")")
        if ("falls_pct" in raw) == ("rises_pct" in raw):
            raise WatchError(f"{where}: an index rule needs falls_pct or rises_pct (one of them)")
        for key in ("falls_pct", "rises_pct"):
            if key in raw:
                args[key] = _number(where, key, raw[key])
        if "segment" in raw:
            args["segment"] = _one(where, "segment", raw["segment"], _SEGMENTS)
        if "days" in raw:
            days = raw["days"]
            if isinstance(days, bool) or not isinstance(days, int) or days < 1:
                raise WatchError(f"{where}: days = {days!r}; expected a whole number of days >= 1")
            args["days"] = days
        args.setdefault("pricing", "on_demand")
    return Rule(**args)


def load_rules(path: Path) -> list[Rule]:
    """The rules of a TOML file (`[[rule]]` tables), every one checked; WatchError names the
    file, the rule and the problem."""
    try:
        doc = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise WatchError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise WatchError(f"{path}: cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise WatchError(f"{path}: not TOML: {exc}") from None
    extra = sorted(set(doc) - {"rule"})
    if extra:
        raise WatchError(f"{path}: unknown table(s) {', '.join(extra)}; rules are [[rule]] tables")
    raw = doc.get("rule")
    if not isinstance(raw, list) or not raw:
        raise WatchError(f"{path}: no [[rule]] table")
    rules = [parse_rule(r, f"{path} rule {i}") for i, r in enumerate(raw, 1)]
    names = [r.name for r in rules]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise WatchError(f"{path}: rule name(s) used twice: {', '.join(twice)}")
    return rules
