"""Rank the offers for one workload: the query layer's priced offers (what `gpuprices rank`
reads) through the sizing engine (gpuprices.sizing.rank). The warehouse layer cannot hold this
(sizing is above it) and sizing holds no SQL, so the API and the MCP server call it here."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable
from typing import Any

from gpuprices.flows.config import max_age_days as config_max_age_days
from gpuprices.flows.gpu_names import unknown_gpu
from gpuprices.sizing.constraints import CONSTRAINT_VERDICTS
from gpuprices.sizing.rank import rank_each
from gpuprices.sizing.rank_row import RankRow
from gpuprices.sizing.workload import WorkloadError, workload_from_dict
from gpuprices.spiders import registry
from gpuprices.warehouse import benchmarks, db, queries
from gpuprices.warehouse.gpus import gpu_models


def jsonable(d: dict[str, Any]) -> dict[str, Any]:
    """`d` with every infinite or NaN float (nested dicts too) as None: JSON has no inf/NaN."""
    out = {}
    for k, v in d.items():
        if isinstance(v, float) and not math.isfinite(v):
            out[k] = None
        elif isinstance(v, dict):
            out[k] = jsonable(v)
        else:
            out[k] = v
    return out


def rows_as_json(day: dt.date, rows: Iterable[RankRow], set_apart: bool = False
              ) -> list[dict[str, Any]]:
    """Ranked rows as `gpuprices rank --json` and the API list them: the as-of day on each row,
    no reason text; stale, not-firm and against-constraint rows only with `set_apart`."""
    out = []
    for r in rows:
        if (r.stale or not r.firm or r.verdict in CONSTRAINT_VERDICTS) and not set_apart:
            continue
        d = jsonable(r.as_dict())
        d.pop("reason", None)
        out.append({"as_of": str(day), **d})
    return out


def rank_workload(source: queries.Source, workload: dict[str, Any], *,
                  date: dt.date | None = None, currency: str = "USD", top: int = 10,
                  max_age_days: int | None = None, set_apart: bool = False,
                  timeout_s: float | None = None) -> list[dict[str, Any]]:
    """The ranked rows of one workload (a [[workload]] table of a workloads TOML file, as a
    dict), as `gpuprices rank --json` lists them: cheapest cost per checkpoint first, the
    as-of day on each row; stale, not-firm and against-constraint rows only with `set_apart`.
    WorkloadError for a workload the sizing engine refuses (an unknown GPU names the close
    canonical ones); ValueError for an empty warehouse or a currency without a rate."""
    currency = currency.upper()
    if currency not in ("USD", "EUR"):
        raise ValueError(f"currency must be USD or EUR, got {currency}")
    w = workload_from_dict(workload)
    if w.gpu and w.gpu not in gpu_models():
        raise WorkloadError(f"{w.name}: gpu {unknown_gpu(w.gpu)}")
    with queries.reading(source, timeout_s) as con:
        day = date or queries.warehouse_today(con)
        max_age = db.age_limit(con, config_max_age_days(max_age_days))
        offers = queries.rows(queries.priced_offers(con, day, currency, max_age))
        usd = queries.usd_factor(con, currency, day)
        measured = benchmarks.measured(con)
    if not offers:
        raise ValueError(f"no offers on {day}")
    if usd is None:
        raise ValueError(f"no USD -> {currency} rate on {day}")
    out = []
    for _, rows in rank_each([w], offers, currency=currency, usd_to_currency=usd, top=top,
                             node_shapes=registry.node_shapes(), measurements=measured):
        out += rows_as_json(day, rows, set_apart)
    return out
