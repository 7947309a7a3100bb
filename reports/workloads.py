"""The workload sections: the week's offers ranked by the sizing engine.

The offers are the warehouse's (offers_priced_as_of: each provider's latest snapshot on or before
the end of the week, priced in the report currency, with the firm-price verdict); the ranking is
gpuprices.sizing.rank.rank's, called in one place (`rank_for_report`). Each workload's best firm
on-demand, spot and committed offer (the rows sizing marks with `choice`) make the report's
headline, "Where to rent this week" (`choices_table`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from typing import Any

import duckdb

from gpuprices.reports.tables import Column, Table, offer_label, provider_supply
from gpuprices.sizing import discounts as negotiated
from gpuprices.sizing import parallel
from gpuprices.sizing.constraints import CONSTRAINT_VERDICTS
from gpuprices.sizing.rank import rank as sizing_rank
from gpuprices.sizing.workload import Workload
from gpuprices.warehouse import benchmarks, queries

TOP_OFFERS = 10

CHOICE_LABELS = {"on_demand": "on-demand (firm)", "spot": "spot / preemptible",
                 "committed": "committed / reserved"}
_OFFER_COLS = [
    Column("cost_to_finish", "to finish", "money"),
    Column("cost_per_checkpoint", "per successful checkpoint", "money"),
    Column("marginal_checkpoint_cost", "one more checkpoint", "money"),
    Column("price_per_hour", "price/h per node", "money"), Column("layout", "GPUs"),
    Column("region", "region"), Column("n_regions", "regions", "int"),
    Column("pricing_model", "pricing"), Column("hours", "hours", "num"),
    Column("speed", "tokens/s"),
    Column("expected_preemptions", "expected preemptions", "num"),
    Column("snapshot_date", "snapshot", "date"), Column("age_days", "age (d)", "int"),
]
# Said in the headline when the best offer is a marketplace listing (provider_classes).
MARKETPLACE_NOTE = ("a marketplace listing: one independent host's offer among many for this "
                    "GPU, not the provider's own capacity (host reliability and availability "
                    "vary; compare with the best 'own' or 'reseller' offer below)")
# Said when the best offer is an aggregator's row (provider_classes): another cloud runs the
# machine; a row whose cloud we read first-party never gets here (price_caveat sets it apart).
AGGREGATOR_NOTE = ("an aggregator's listing: another cloud runs this machine (the offer says "
                   "which where the source names it), booked at the aggregator's price")
# Marks a tokens/s figure whose GPU class has no published training measurement.
ASSUMED_MARK = "†"
ASSUMED_NOTE = (f"{ASSUMED_MARK} efficiency assumed: no published training measurement for "
                "this GPU class, tokens/s and hours rest on a derived or borrowed utilisation "
                "(sizing/gpu_efficiency.csv, docs/sizing.md).")
# `fit`: fits, or tight (the estimate is within the card, the estimator's measured error margin
# is not: sizing/fit.py); the reason names the risk.
RANK_COLS = [Column("offer", "offer"), Column("supply", "seller"), *_OFFER_COLS,
             Column("per_gpu_gb", "GB/GPU", "num"), Column("fit_verdict", "fit"),
             Column("reason", "why")]
# The headline keeps to what a buyer compares across the three choices, date first so that it
# stays in view on a laptop screen; where_to_rent.csv carries every column of the row.
CHOICE_COLS = [Column("workload", "workload"), Column("choice_label", "choice"),
               Column("offer", "offer"), Column("supply", "seller"),
               Column("snapshot_date", "snapshot", "date"),
               Column("age_days", "age (d)", "int"),
               Column("cost_to_finish", "to finish", "money"),
               Column("cost_per_checkpoint", "per successful checkpoint", "money"),
               Column("price_per_hour", "price/h per node", "money"), Column("layout", "GPUs"),
               # inside the node; between nodes, per GPU (sizing/network.py, net_label)
               Column("network", "network"),
               Column("fit_verdict", "fit"),
               Column("region", "region"), Column("hours", "hours", "num"),
               Column("speed", "tokens/s"),
               Column("expected_preemptions", "expected preemptions", "num"),
               Column("reason", "why")]
APART_COLS = [Column("verdict", "verdict"), Column("offer", "offer"), Column("supply", "seller"),
              Column("cost_to_finish", "to finish", "money"),
              Column("price_per_hour", "price/h per node", "money"), Column("layout", "GPUs"),
              Column("pricing_model", "pricing"), Column("snapshot_date", "snapshot", "date"),
              Column("age_days", "age (d)", "int"), Column("reason", "why")]
# Priced, but never recommended: listed apart with the reason (stale, not firm, sold out at the
# snapshot, against the workload's constraints). Offers outside the workload's regions are not
# its market: left out.
APART = ("stale", "not_firm", "sold_out",
         *(v for v in CONSTRAINT_VERDICTS if v != "outside_region"))
NOFIT_COLS = [
    Column("verdict", "verdict"), Column("gpu_model", "GPU"),
    Column("gpus_per_node", "GPUs/node", "int"), Column("n_offers", "offers", "int"),
    Column("providers", "providers"), Column("reason", "why (example)"),
]


def rank_for_report(workloads: Sequence[Workload], offers: list[dict[str, Any]], currency: str,
                    usd_to_currency: float | None,
                    node_shapes: Mapping[str, Sequence[int]] | None = None,
                    measurements: Sequence[Mapping[str, Any]] | None = None
                    ) -> dict[str, list[dict[str, Any]]]:
    """{workload: rows best first} with RankRow fields. The one place the report calls the
    sizing engine: adapt here if gpuprices.sizing.rank's API changes. `measurements`: the recorded
    benchmark results (measured_throughput), used over the estimate."""
    ranked = sizing_rank(list(workloads), offers, currency=currency,
                         usd_to_currency=usd_to_currency, node_shapes=node_shapes,
                         measurements=measurements)
    # Shallow: dataclasses.asdict deep-copies every row's inputs, the slowest part of a report.
    return {name: [{f.name: getattr(r, f.name) for f in fields(r)} for r in rows]
            for name, rows in ranked.items()}


def group_offers(offers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One representative (the cheapest) per purchasable configuration of a provider: regions
    that sell the same SKU on the same terms rank identically except for price, so ranking the
    cheapest of each group gives the same top offers at a fraction of the work."""
    groups: dict[tuple, dict[str, Any]] = {}
    for o in offers:
        extra = o.get("extra") or ""
        band = ""
        if isinstance(extra, str) and "interruption_band" in extra:
            band = extra  # per-region spot risk: keep regions apart
        # Firm, stale and stock are part of the key: a placeholder never stands for a firm
        # price, nor a sold-out offer for one in stock.
        key = (o["provider"], o["sku"], o["gpu_model"], o["gpu_count"], o["pricing_model"],
               o.get("negotiated"),
               o.get("commitment_months"), o.get("billing_increment_s"),
               o.get("min_billing_s"), o.get("interconnect"), band, o.get("firm_price"),
               bool(o.get("is_stale")), o.get("snapshot_date"), o.get("available"))
        g = groups.get(key)
        if g is None:
            groups[key] = g = dict(o, n_regions=0, regions=set())
        g["n_regions"] += 1
        if o.get("region"):
            g["regions"].add(o["region"])
        if o["price_per_hour"] < g["price_per_hour"]:
            keep = (g["n_regions"], g["regions"])
            g.update(o)
            g["n_regions"], g["regions"] = keep
    return list(groups.values())


def workload_sections(con: duckdb.DuckDBPyConnection, end: dt.date, currency: str,
                      workloads: Sequence[Workload], rank_fn: Callable[..., Any],
                      node_shapes: Mapping[str, Sequence[int]] | None = None,
                      max_age_days: int = 14,
                      discounts: Sequence[negotiated.Discount] = (),
                      today: dt.date | None = None
                      ) -> tuple[list[dict[str, Any]], list[str]]:
    """Per workload its top offers, best offer per provider and what does not fit; and notes.
    Offers older than `max_age_days` at `end` come marked stale (never recommended).
    `discounts`: the buyer's negotiated prices (sizing/discounts.py) in force on `today`."""
    # In a fixed order, so that equal costs always come out the same way round.
    rows = queries.rows(queries.priced_offers(con, end, currency, max_age_days))
    priced = [r for r in rows if r["price_per_hour"] is not None]
    notes = []
    if len(priced) < len(rows):
        notes.append(f"{len(rows) - len(priced)} offers have no exchange rate to {currency} on "
                     "their snapshot date and are not ranked.")
    usd = queries.usd_factor(con, currency, end)
    if discounts:
        priced, said = negotiated.apply(priced, discounts, today or dt.date.today(), currency,
                                        usd)
        notes += said
    reps = group_offers(priced)
    ranked = rank_fn(workloads, reps, currency, usd, node_shapes,
                     measurements=benchmarks.measured(con)) if reps and workloads else {}
    lookup = {(r["provider"], r["sku"], r.get("region"), r["pricing_model"],
               r["gpu_model"]): r for r in reps}
    supply = provider_supply(con)
    return [_section(w, ranked.get(w.name, []), lookup, supply) for w in workloads], notes


def _section(w: Workload, ranked: list[dict[str, Any]], lookup: dict[tuple, dict[str, Any]],
             supply: Mapping[str, str]) -> dict[str, Any]:
    ok, apart, bad = [], [], []
    for row in ranked:
        rep = lookup.get((row["provider"], row["sku"], row.get("region"),
                          row["pricing_model"], row["gpu_model"]), {})
        row = dict(row, n_regions=rep.get("n_regions", 1), layout=_layout(row),
                   offer=offer_label(row["provider"], row["sku"], rep.get("extra")),
                   speed=_speed(row),
                   supply=supply.get(row["provider"]))
        (ok if row["verdict"] == "ok" else apart if row["verdict"] in APART
         else bad).append(row)
    best_per_provider: dict[str, dict[str, Any]] = {}
    for row in ok:
        best_per_provider.setdefault(row["provider"], row)
    per_provider = sorted(best_per_provider.values(), key=lambda r: r["cost_per_checkpoint"])
    slug = _slug(w.name)
    return dict(
        name=w.name,
        summary=(f"{w.arch.name}, {w.method}, {w.precision}, {_planned_layout(w)}, "
                 f"seq {w.seq_len}, "
                 f"{w.tokens:,.0f} tokens, checkpoint every "
                 f"{w.checkpoint_every_tokens:,.0f} tokens"),
        top=Table(f"workload_{slug}_top", f"{w.name}: cheapest per successful checkpoint",
                  RANK_COLS, ok[:TOP_OFFERS], total=len(ok), note=_assumed_note(ok[:TOP_OFFERS])),
        per_provider=Table(f"workload_{slug}_per_provider",
                           f"{w.name}: best offer per provider", RANK_COLS, per_provider,
                           note=_assumed_note(per_provider)),
        apart=Table(f"workload_{slug}_not_recommended",
                    f"{w.name}: priced but not recommended (stale, not a firm price or "
                    "sold out at snapshot)",
                    APART_COLS, apart[:TOP_OFFERS], total=len(apart)),
        choices={row["choice"]: row for row in ok if row.get("choice")},
        # the committed row set aside because it does not pay for this run (its note says why)
        committed_note=next((r["choice_note"] for r in ok if r.get("choice_note")), None),
        rows=ok + apart + bad,
        nofit=Table(f"workload_{slug}_no_fit",
                    f"{w.name}: what does not fit, cannot run or cannot be priced, and why",
                    NOFIT_COLS, _why_not(bad)),
        all_ok=ok,
    )


def _planned_layout(w: Workload) -> str:
    """The workload's own layout on its `gpus` (e.g. "TP8 x FSDP8 over 8 nodes" on 8-GPU
    nodes); the offers' node sizes are in each row's GPUs column."""
    return parallel.layout_dict(w, w.gpus or 1)["description"]


def _speed(row: dict[str, Any]) -> str:
    """tokens/s of the whole job, marked when the GPU class's efficiency is assumed; a measured
    figure with the estimate and its error beside it."""
    tps = row.get("tokens_per_s") or 0
    if not tps:
        return ""
    if row.get("measured_tokens_per_s") is not None:  # `gpuprices record`: sizing/measured.py
        return (f"{tps:,.0f} measured (estimate {row['estimated_tokens_per_s']:,.0f}, "
                f"{row['estimate_error']:+.0%})")
    return f"{tps:,.0f}{' ' + ASSUMED_MARK if row.get('efficiency_assumed') else ''}"


def _assumed_note(rows: Sequence[dict[str, Any]]) -> str:
    return ASSUMED_NOTE if any(r.get("efficiency_assumed") for r in rows) else ""


def _layout(row: dict[str, Any]) -> str:
    """GPUs x nodes bought, and the GPUs the job uses when fewer."""
    bought = row["nodes"] * row["gpus_per_node"]
    used = f" (uses {row['gpus']})" if row.get("gpus") and row["gpus"] < bought else ""
    return f"{row['nodes']}×{row['gpus_per_node']} {row['gpu_model']}{used}"


def choices_table(sections: Sequence[dict[str, Any]]) -> Table:
    """The headline: per workload its best firm on-demand, spot and committed offer side by
    side, or what is missing."""
    rows = []
    for sec in sections:
        for choice, label in CHOICE_LABELS.items():
            row = sec["choices"].get(choice)
            if row is None and choice == "committed" and sec.get("committed_note"):
                row = dict(offer="none: no commitment pays for this run",
                           cost_to_finish=None, reason=sec["committed_note"])
            elif row is None:
                row = dict(offer="none: no firm, fresh offer of this kind fits",
                           cost_to_finish=None)
            elif row.get("supply") in ("marketplace", "aggregator"):
                note = MARKETPLACE_NOTE if row["supply"] == "marketplace" else AGGREGATOR_NOTE
                row = dict(row, reason=note + (f"; {row['reason']}" if row.get("reason")
                                               else ""))
            rows.append(dict(row, workload=sec["name"], choice_label=label))
    return Table("where_to_rent", "Best firm offer of each kind, per workload", CHOICE_COLS, rows,
                 note="Per workload, the best firm on-demand, spot and committed offer, by "
                      "cost per successful checkpoint (what the run costs to finish / the "
                      "checkpoints it delivers). Stale and not firm prices are never chosen. "
                      "A tight fit (the estimate is within the card, the estimator's measured "
                      "error margin is not) is chosen only when no offer of its kind fits."
                      + (" " + ASSUMED_NOTE if _assumed_note(rows) else ""))


def _why_not(bad: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rejected rows grouped by verdict, GPU model and node size, with one example reason."""
    why: dict[tuple, dict[str, Any]] = {}
    for row in bad:
        k = (row["verdict"], row["gpu_model"], row["gpus_per_node"])
        if k not in why:
            why[k] = dict(verdict=row["verdict"], gpu_model=row["gpu_model"],
                          gpus_per_node=row["gpus_per_node"], n_offers=0,
                          providers=set(), reason=row["reason"])
        why[k]["n_offers"] += int(row.get("n_regions") or 1)
        why[k]["providers"].add(row["provider"])
    nofit = sorted(why.values(), key=lambda r: (r["verdict"], r["gpu_model"] or "",
                                                r["gpus_per_node"]))
    for r in nofit:
        r["providers"] = ", ".join(sorted(r["providers"]))
    return nofit


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
