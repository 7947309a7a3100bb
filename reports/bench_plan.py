"""The appendix "Benchmark plan before committing": for each workload's recommended offers (the
best firm on-demand, spot and committed offer of the headline), the tests to run first, with
their GPUs, hours, what to record and their cost under the offer's billing rules. The plan is
sizing/bench_plan.py's; this module only lays it out as one table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from gpuprices.reports.tables import Column, Table
from gpuprices.reports.workloads import CHOICE_LABELS
from gpuprices.sizing.bench_plan import plan_offer
from gpuprices.sizing.rank_row import RankRow
from gpuprices.sizing.workload import Workload

PLAN_COLS = [Column("workload", "workload"), Column("choice_label", "choice"),
             Column("offer", "offer"), Column("step", "step"), Column("gpus", "GPUs", "int"),
             Column("nodes", "nodes", "int"), Column("hours", "hours", "num"),
             Column("billed_hours", "billed hours", "num"), Column("cost", "cost", "money"),
             Column("duration", "duration"), Column("reason", "record; notes")]
_ROW_FIELDS = [f.name for f in fields(RankRow)]
PLAN_NOTE = ("Before committing to a recommended offer: the tests to run on it, each with the "
             "GPUs it needs, its hours (from the workload's estimate on that offer) and its cost "
             "at the offer's price and billing rules (a provider with a minimum billing period "
             "bills a short test whole: the step says so). The plan's total runs the steps back "
             "to back, one billing session per node count. Durations are assumptions named in "
             "sizing/bench_plan.py (docs/sizing.md, Benchmark plan before committing).")


def plan_appendix(workloads: Sequence[Workload], sections: Sequence[dict[str, Any]],
                  currency: str) -> Table:
    """One table: per workload and choice, the plan's steps and its back-to-back total."""
    by_name = {w.name: w for w in workloads}
    rows: list[dict[str, Any]] = []
    for sec in sections:
        w = by_name.get(sec["name"])
        for choice, label in CHOICE_LABELS.items():
            row = sec["choices"].get(choice)
            if w is None or row is None or not set(_ROW_FIELDS) <= set(row):
                continue
            p = plan_offer(w, RankRow(**{k: row[k] for k in _ROW_FIELDS}))
            head = dict(workload=w.name, choice_label=label,
                        offer=f"{p.row.provider} {p.row.sku} {p.row.region or ''}".strip(),
                        currency=currency)
            for s in p.steps:
                rows.append(dict(head, step=s.step, gpus=s.gpus, nodes=s.nodes, hours=s.hours,
                                 billed_hours=s.billed_hours, cost=s.cost, duration=s.duration,
                                 reason="; ".join(s.record + s.notes)))
            rows.append(dict(head, step="plan, back to back", hours=p.hours, cost=p.cost,
                             duration=f"steps billed alone: {p.cost_steps_alone:,.2f} {currency}",
                             reason="; ".join(p.notes)))
    return Table("benchmark_plan", "Benchmark plan before committing", PLAN_COLS, rows,
                 note=PLAN_NOTE)
