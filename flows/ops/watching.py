"""`gpuprices watch`: price rules from a TOML file, checked against the warehouse after every load
and on demand, each new match sent once through the alert channels (flows/ops/notify.py).

Three kinds of rule (flows/ops/watch_rules.py; README, "Alerts"; docs/watch.example.toml):
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
import json
import os
from dataclasses import dataclass
from pathlib import Path

import duckdb

from gpuprices.flows.config import Settings
from gpuprices.flows.ops import notify
from gpuprices.flows.ops.watch_rules import Rule, WatchError, load_rules
from gpuprices.flows.redaction import redact
from gpuprices.warehouse import db
from gpuprices.warehouse.queries import watch as queries

__all__ = ["Rule", "WatchError", "load_rules", "evaluate", "after_load", "describe"]

WATCH_ENV = "GPUPRICES_WATCH"  # the rules file evaluated after every load
REPORT_URL_ENV = "GPUPRICES_REPORT_URL"  # where the weekly reports are published, if anywhere
STATE_FILE = "watch_state.json"
DEFAULT_RULES = "watch.toml"  # <data_dir>/watch.toml when $GPUPRICES_WATCH is not set
_MAX_LINES = 40  # per message; the rest is counted


@dataclass
class Match:
    key: str
    line: str
    day: dt.date | None


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
