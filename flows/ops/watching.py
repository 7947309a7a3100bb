"""`gpuprices watch`: price rules from a TOML file, checked against the warehouse after every load
and on demand, each new match sent once through the alert channels (flows/ops/notify.py).

Three kinds of rule (README, "Alerts"; docs/watch.example.toml):
- `offer` (the default): an offer on sale now matches the filters (GPU model, pricing, provider,
  a price per GPU-hour below a bound in USD or EUR, an area or countries, a published fabric);
- `change`: an offer's price changed in its provider's latest snapshot;
- `index`: the daily price index of a GPU model fell (or rose) by a percentage over some days.

Sent once per change: <data_dir>/watch_state.json keeps, per rule, the keys of its current
matches (an offer with its price, a change with its date and price, an index rule while its
condition holds). A key already there is not sent again; one that stops matching is forgotten,
so a later match is news again. A rule whose definition changes starts afresh. Keys are recorded
only once their message was delivered, so a failed send is retried by the next evaluation.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from gpuprices.flows.config import Settings
from gpuprices.flows.ops import notify
from gpuprices.flows.redaction import redact
from gpuprices.sizing.constraint_fields import AREAS
from gpuprices.warehouse import db
from gpuprices.warehouse.contract import PRICING_MODELS, PROVIDERS
from gpuprices.warehouse.gpus import gpu_models
from gpuprices.warehouse.queries import watch as queries

WATCH_ENV = "GPUPRICES_WATCH"  # the rules file evaluated after every load
REPORT_URL_ENV = "GPUPRICES_REPORT_URL"  # where the weekly reports are published, if anywhere
STATE_FILE = "watch_state.json"
DEFAULT_RULES = "watch.toml"  # <data_dir>/watch.toml when $GPUPRICES_WATCH is not set
_MAX_LINES = 40  # per message; the rest is counted

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


@dataclass
class Match:
    key: str
    line: str
    day: dt.date | None


# ------------------------------------------------------------------------------------------
# The rules file

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


# ------------------------------------------------------------------------------------------
# Evaluation

def _place(r: dict) -> str:
    return f" ({r['region']})" if r.get("region") else ""


def _fabric(fabric: str | None) -> str:
    return f", fabric {fabric}" if fabric and fabric not in queries.UNPUBLISHED_FABRICS else ""


def _matches(con: duckdb.DuckDBPyConnection, rule: Rule) -> list[Match]:
    gpus, providers = list(rule.gpus) or None, list(rule.providers) or None
    if rule.kind == "offer":
        rows = queries.offers_now(con, gpu_models=gpus, pricing=rule.pricing,
                                  providers=providers, below=rule.below, currency=rule.currency,
                                  countries=rule.countries, published_fabric=rule.fabric)
        out = []
        for r in rows:
            ident = (f"{r['provider']}|{r['sku']}|{r['region']}|{r['gpu_count']:g}|"
                     f"{r['pricing_model']}|{r['commitment_months']}|{r['effective_from']}")
            price = f"{r['price_per_gpu_hour']:.4f}"
            line = (f"{r['provider']} {r['sku']}{_place(r)}: {r['gpu_model']} x"
                    f"{r['gpu_count']:g} {r['pricing_model']} {price} {r['currency']}/GPU-h"
                    f"{_fabric(r['net_fabric'])}"
                    f" (snapshot {r['snapshot_date']})")
            out.append(Match(f"{ident}|{price}", line, r["snapshot_date"]))
        return out
    if rule.kind == "change":
        rows = queries.latest_changes(con, providers=providers, gpu_models=gpus,
                                      pricing=rule.pricing, min_abs_pct=rule.min_pct)
        return [Match(f"{r['offer_id']}|{r['new_date']}|{r['new_price_per_gpu_hour']:.4f}",
                      f"{r['provider']} {r['sku']}{_place(r)}: {r['gpu_model']} "
                      f"{r['pricing_model']} {r['old_price_per_gpu_hour']:g} -> "
                      f"{r['new_price_per_gpu_hour']:g} {r['currency']}/GPU-h "
                      f"({r['pct_change']:+.1f} %, {r['old_date']} -> {r['new_date']})",
                      r["new_date"])
                for r in rows]
    move = queries.index_move(con, gpu_model=rule.gpus[0], pricing=rule.pricing or "on_demand",
                              segment=rule.segment, days=rule.days)
    if move is None:
        return []
    fell = rule.falls_pct is not None and move["pct"] <= -rule.falls_pct
    rose = rule.rises_pct is not None and move["pct"] >= rule.rises_pct
    if not (fell or rose):
        return []
    # One key while the condition holds: sent when it starts, not every night it lasts.
    return [Match(f"index|{rule.gpus[0]}|{rule.pricing}|{rule.segment}",
                  f"{rule.gpus[0]} {rule.pricing} index ({rule.segment}): "
                  f"{move['then_value']:.4f} on {move['then_day']} -> {move['value']:.4f} "
                  f"USD/GPU-h on {move['day']} ({move['pct']:+.1f} %)", move["day"])]


def report_link(settings: Settings, day: dt.date | None) -> str:
    """The weekly report of `day`'s week: under $GPUPRICES_REPORT_URL when reports are
    published, else its path in the data folder (written by `gpuprices report`)."""
    day = day or dt.date.today()
    year, week, _ = day.isocalendar()
    rel = f"{year}-W{week:02d}/report.html"
    base = os.environ.get(REPORT_URL_ENV, "").strip()
    return f"{base.rstrip('/')}/{rel}" if base else str(settings.reports_dir / rel)


def _read_state(path: Path) -> dict[str, dict]:
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, json.JSONDecodeError):
        return {}  # a damaged state file: everything current is news once more, said below
    return doc.get("rules", {}) if isinstance(doc, dict) else {}


def _write_state(path: Path, rules: dict[str, dict]) -> None:
    tmp = path.with_name(f".{path.name}.part")
    tmp.write_text(json.dumps({"rules": rules}, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


@dataclass
class Outcome:
    rule: str
    new: list[Match]
    matching: int
    problem: str | None = None


def evaluate(settings: Settings, rules: list[Rule], *, send: bool = True) -> list[Outcome]:
    """Evaluate every rule against the warehouse (opened read-only), send one message per rule
    with news (its new matches: offer, price, snapshot date, the report's link) and record what
    was sent in <data_dir>/watch_state.json. `send=False`: say what would be sent, record
    nothing."""
    con = db.connect(settings.db_path, read_only=True)
    try:
        found = [(rule, _matches(con, rule)) for rule in rules]
    finally:
        con.close()
    state_path = settings.data_dir / STATE_FILE
    state = _read_state(state_path)
    new_state: dict[str, dict] = {}
    outcomes = []
    for rule, matches in found:
        before = state.get(rule.name, {})
        seen = set(before.get("keys", [])) if before.get("fingerprint") == rule.fingerprint \
            else set()
        new = [m for m in matches if m.key not in seen]
        outcome = Outcome(rule.name, new, len(matches))
        if new and send:
            lines = [m.line for m in new[:_MAX_LINES]]
            if len(new) > _MAX_LINES:
                lines.append(f"... and {len(new) - _MAX_LINES} more")
            day = max((m.day for m in new if m.day), default=None)
            lines += ["", f"Report: {report_link(settings, day)}"]
            outcome.problem = notify.send(f"gpuprices watch: {rule.name} ({len(new)} new)",
                                          "\n".join(lines), "info")
        sent = outcome.problem is None and send
        keys = {m.key for m in matches} if sent else seen & {m.key for m in matches}
        new_state[rule.name] = {"fingerprint": rule.fingerprint, "keys": sorted(keys)}
        outcomes.append(outcome)
    if send:
        _write_state(state_path, new_state)
    return outcomes


def rules_file(settings: Settings) -> Path | None:
    """The rules evaluated after a load: $GPUPRICES_WATCH, else <data_dir>/watch.toml if any."""
    named = os.environ.get(WATCH_ENV, "").strip()
    if named:
        return Path(named)
    default = settings.data_dir / DEFAULT_RULES
    return default if default.exists() else None


def after_load(settings: Settings) -> list[tuple[str, bool]]:
    """The end of every load: evaluate the configured rules and send their news. Returns the
    lines to print, each with True when it tells a problem (a bad rules file, a send that
    failed); never raises: a load is not failed by its alerts."""
    path = rules_file(settings)
    if path is None:
        return []
    try:
        outcomes = evaluate(settings, load_rules(path))
    except WatchError as exc:
        return [(f"watch: not evaluated: {exc}", True)]
    except Exception as exc:  # a busy or damaged warehouse, a full disk: said, the load stands
        return [(f"watch: not evaluated: {redact(f'{type(exc).__name__}: {exc}')}", True)]
    return [(describe(o), o.problem is not None) for o in outcomes if o.new or o.problem]


def describe(o: Outcome) -> str:
    if o.problem:
        return f"watch: {o.rule}: {len(o.new)} new, NOT sent ({o.problem})"
    return f"watch: {o.rule}: {len(o.new)} new of {o.matching} matching"
