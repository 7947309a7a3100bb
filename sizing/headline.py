"""One line per workload, in plain words, for a manager: the pick, its cost to finish and its
duration, and the fallback; and, when a constraint of the buyer set a cheaper offer aside, which
and why. The reasons stay in the detail tables.

Rows are RankRow objects (`gpuprices rank`) or their field dicts (the report); both read alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from gpuprices.sizing.constraints import CONSTRAINT_VERDICTS

KIND = {"on_demand": "on-demand", "spot": "spot", "committed": "committed"}


def _get(r: Any, key: str) -> Any:
    return r.get(key) if isinstance(r, dict) else getattr(r, key, None)


def _money(x: Any, currency: str) -> str:
    return f"{x:,.2f} {currency}" if isinstance(x, int | float) and math.isfinite(x) else "—"


def _hours(h: Any) -> str:
    if not isinstance(h, int | float) or not math.isfinite(h):
        return "—"
    return f"{h:,.1f} h" + (f" ({h / 24:,.1f} days)" if h >= 48 else "")


def _where(r: Any) -> str:
    region, country = _get(r, "region"), _get(r, "country")
    parts = [p for p in (region, country) if isinstance(p, str) and p]
    return f" ({', '.join(parts)})" if parts else ""


def offer_words(r: Any) -> str:
    """'8×8 H100-SXM-80GB on-demand at lambda 1-Click Cluster ... (US)'."""
    kind = KIND.get(_get(r, "choice") or "", _get(r, "pricing_model") or "")
    nodes, per_node, used = _get(r, "nodes"), _get(r, "gpus_per_node"), _get(r, "gpus")
    uses = f" (uses {used})" if used and nodes and per_node and used < nodes * per_node else ""
    return (f"{nodes}×{per_node} {_get(r, 'gpu_model')}{uses} {kind} at "
            f"{_get(r, 'provider')} {_get(r, 'sku')}{_where(r)}")


def _set_aside(rows: Sequence[Any], pick: Any | None) -> str:
    """The cheapest row a buyer's constraint (deadline, cluster) set aside, when cheaper than
    the pick: what it was and why not."""
    limit = _get(pick, "cost_per_checkpoint") if pick is not None else math.inf
    for r in rows:
        if _get(r, "verdict") in CONSTRAINT_VERDICTS and _get(r, "verdict") != "outside_region" \
                and (_get(r, "cost_per_checkpoint") or math.inf) < limit:
            first = (_get(r, "reasons") or [""])[0]
            return f" Cheaper {offer_words(r)} set aside: {first}."
    return ""


def one_line(name: str, rows: Sequence[Any], currency: str) -> str:
    """'name: rent … for 1.40 USD, done in 1.9 h; fallback … .' or why nothing is chosen."""
    picks = sorted((r for r in rows if _get(r, "choice")),
                   key=lambda r: _get(r, "cost_to_finish"))
    if not picks:
        return f"{name}: {nothing_fits(rows, currency)}"
    pick = picks[0]
    cost = _money(_get(pick, "cost_to_finish"), currency)
    line = (f"{name}: rent {offer_words(pick)} for {cost}, done in {_hours(_get(pick, 'hours'))}")
    fallback = next((r for r in picks[1:] if _get(r, "choice") != _get(pick, "choice")), None)
    if fallback is not None:
        line += (f"; fallback {offer_words(fallback)} for "
                 f"{_money(_get(fallback, 'cost_to_finish'), currency)}, "
                 f"{_hours(_get(fallback, 'hours'))}")
    else:
        line += "; no fallback of another kind fits"
    return line + "." + _set_aside(rows, pick)


def nothing_fits(rows: Sequence[Any], currency: str) -> str:
    """No firm, fresh offer meets every constraint: name the cheapest that meets the ones that
    cannot be bargained with (runs, fits, a cluster where the job spans nodes), and why it is
    not chosen."""
    near = next((r for r in rows if _get(r, "verdict") in ("stale", "not_firm", "misses_deadline")
                 ), None)
    if near is None:
        return "no offer fits and meets the constraints; see the detail tables."
    why = (_get(near, "reasons") or [""])[0]
    return (f"no offer meets every constraint; the cheapest that could run it is "
            f"{offer_words(near)} for {_money(_get(near, 'cost_to_finish'), currency)}, "
            f"{_hours(_get(near, 'hours'))}, not chosen: {why}.")
