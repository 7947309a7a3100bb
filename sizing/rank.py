"""Rank every priced configuration (gpu model x GPUs per node x nodes) for each workload by
cost per successful checkpoint (all a run costs to finish / the checkpoints it delivers), with
the reasons for each verdict, and pick the three side-by-side choices: the best firm on-demand,
spot and committed offer (sizing/reasons.py CHOICES).

Input offers are contract rows already priced in the ranking currency by the warehouse
(warehouse/sql/marts/offers_priced_as_of.sql: a pandas DataFrame or a list of dicts with at least
gpu_model, gpu_count, price_per_hour, pricing_model; optional currency, provider, sku, region,
billing_increment_s, min_billing_s, interconnect, extra, firm_price, price_caveat,
price_currency, fx, commitment_months, snapshot_date, age_days, is_stale, available). A stale,
not firm or sold-out (available false) row is listed with its reason, never chosen. A row
whose price could not be converted has
price_per_hour None. The one USD -> currency factor for the USD-denominated cost constants
comes from the warehouse's conversion too (fx_factor). No DuckDB here: the callers read the
warehouse and hand the rows over.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from gpuprices.sizing import commitment_pays, compat, fit
from gpuprices.sizing import constraints as limits
from gpuprices.sizing import measured as meas
from gpuprices.sizing import network as net
from gpuprices.sizing import offer_row as orow
from gpuprices.sizing import reasons as why
from gpuprices.sizing.cost import (
    CostEstimate,
    RunPlan,
    estimate_cost,
    plan_run,
    preemptions_per_hour,
    run_totals,
    spot_band,
    term_hours,
)
from gpuprices.sizing.memory import MemoryEstimate, estimate_memory
from gpuprices.sizing.rank_row import RankRow
from gpuprices.sizing.throughput import Throughput, efficiency_assumed_note, estimate_throughput
from gpuprices.sizing.workload import Workload
from gpuprices.warehouse.gpus import GpuModel, gpu_models

MAX_NODES = 64  # largest cluster tried when the workload does not fix its GPU count
TOP_APART = 10  # rows listed apart built in full when `top` is not given


def _shapes(given: Mapping[str, Sequence[int]] | None) -> dict[str, tuple[int, ...]]:
    """Node shapes per provider, smallest first. They are facts about providers, declared with
    their sources in each provider's package (spiders/providers/<id>); the command line passes
    them in. Without them every offer is bought as listed."""
    return {p: tuple(sorted(int(x) for x in s)) for p, s in (given or {}).items()}


def _per_node(wi: int, w: Workload, gpu: str, provider: str, count: int, cap: float,
              cache_: _Cache) -> int:
    """GPUs per node to buy from this offer. An instance with a fixed GPU count is bought as it
    is. A per-GPU price from a provider that sells multi-GPU nodes is bought as the smallest
    node that holds the workload's GPUs (or, when it fixes none, on which it fits), so that an
    8-GPU job is one NVLink node, not eight single-GPU pods over Ethernet."""
    shapes = cache_.node_shapes.get(provider) if count == 1 else None
    if not shapes:
        return count
    key = (wi, gpu, provider)
    if key in cache_.shapes:
        return cache_.shapes[key]
    if w.gpus:
        chosen = next((s for s in shapes if s >= w.gpus), shapes[-1])
    elif w.sharding == "none":
        chosen = shapes[0]  # replicas do not split memory: more GPUs never make it fit
    else:  # the smallest node on which it fits, else the smallest on which it is tight
        chosen = fit.prefer_fits((cache_.memory(wi, w, gpu, s, cap).verdict, s)
                                 for s in shapes) or shapes[-1]
    cache_.shapes[key] = chosen
    return chosen


class _Cache:
    """Memory and throughput depend on (workload, gpu, layout), not on the offer's price."""

    def __init__(self, shapes: dict[str, tuple[int, ...]],
                 measurements: Sequence[Mapping[str, Any]] | None = None) -> None:
        self.node_shapes = shapes
        self.measured = meas.index(measurements)
        self.mem: dict[tuple, MemoryEstimate] = {}
        self.tput: dict[tuple, Throughput] = {}
        self.plans: dict[tuple, RunPlan] = {}
        self.layouts: dict[tuple, tuple[int, int, str, float]] = {}
        self.quick_plans: dict[tuple, RunPlan | None] = {}
        self.shapes: dict[tuple, int] = {}
        self.runs: dict[tuple, compat.Compat] = {}

    def forget(self) -> None:
        """Drop what one workload cached (every key starts with its index): ranked one after
        another, the memory held stays that of one workload, not of all of them."""
        for cached in (self.mem, self.tput, self.plans, self.layouts, self.quick_plans,
                       self.shapes, self.runs):
            cached.clear()

    def compat(self, wi: int, w: Workload, spec: GpuModel) -> compat.Compat:
        if (wi, spec.gpu_model) not in self.runs:
            self.runs[wi, spec.gpu_model] = compat.check(w, spec)
        return self.runs[wi, spec.gpu_model]

    def plan(self, wi: int, w: Workload, tokens_per_s: float, usd_factor: float) -> RunPlan:
        key = (wi, tokens_per_s, usd_factor)
        if key not in self.plans:
            self.plans[key] = plan_run(w, tokens_per_s, usd_factor)
        return self.plans[key]

    def memory(self, wi: int, w: Workload, gpu: str, n: int, cap: float) -> MemoryEstimate:
        key = (wi, gpu, n)
        if key not in self.mem:
            self.mem[key] = estimate_memory(w, gpu=gpu, gpus=n, capacity_gb=cap)
        return self.mem[key]

    def throughput(self, wi: int, w: Workload, gpu: str, per_node: int, nodes: int,
                   interconnect: str | None, internode_gbs: float | None = None) -> Throughput:
        """`internode_gbs`: the offer's published fabric per GPU (sizing/network.py); without
        it the offer's interconnect text, else throughput's assumption."""
        multi = nodes > 1
        key = (wi, gpu, per_node, nodes, interconnect if multi else None,
               internode_gbs if multi else None)
        if key not in self.tput:
            self.tput[key] = estimate_throughput(w, gpu_models()[gpu], per_node, nodes,
                                                 internode_gbs=internode_gbs if multi else None,
                                                 offer_interconnect=interconnect)
        return self.tput[key]

    def speed(self, wi: int, w: Workload, gpu: str, provider: str, used: int, nodes: int,
              interconnect: str | None, network: net.OfferNetwork
              ) -> tuple[Throughput, float, meas.Applied | None]:
        """The estimate, the tokens/s the costs follow (a recorded measurement for this
        provider, GPU and workload over the estimate: sizing/measured.py) and the measurement."""
        tp = self.throughput(wi, w, gpu, used, nodes, interconnect,
                             net.internode_gbs(network, used))
        m = self.measured.get((provider, gpu, w.name))
        if m is None or tp.tokens_per_s <= 0:
            return tp, tp.tokens_per_s, None
        m_used, m_nodes = meas.measured_layout(int(m["gpus"]), used)
        at = self.throughput(wi, w, gpu, m_used, m_nodes, interconnect,
                             net.internode_gbs(network, m_used)).tokens_per_s
        applied = meas.apply(m, tp.tokens_per_s, at)
        return tp, applied.tokens_per_s, applied


def _layout(wi: int, w: Workload, gpu: str, per_node: int, cap: float,
            cache: _Cache) -> tuple[int, int, MemoryEstimate]:
    """(nodes bought, GPUs used per node, memory) for this offer. Nodes: the workload's GPU
    count if it fixes one, else the fewest (powers of two) at which it `fits`, else the fewest
    at which it is `tight` (sizing/fit.py); sharding 'none' only ever uses one node. The job
    uses at most `gpu_cap` GPUs (max_gpus, else gpus): a node bigger than that is bought whole
    and partly idle."""
    limit = w.gpu_cap

    def used(nodes: int) -> int:
        return per_node if limit is None else max(1, min(per_node, limit // nodes))

    if w.gpus:
        nodes = max(1, math.ceil(w.gpus / per_node))
        return nodes, used(nodes), cache.memory(wi, w, gpu, nodes * used(nodes), cap)
    counts = [1]
    while w.sharding != "none" and counts[-1] * 2 <= MAX_NODES and (
            limit is None or counts[-1] * 2 <= limit):
        counts.append(counts[-1] * 2)
    nodes = fit.prefer_fits((cache.memory(wi, w, gpu, k * used(k), cap).verdict, k)
                            for k in counts) or 1
    return nodes, used(nodes), cache.memory(wi, w, gpu, nodes * used(nodes), cap)


def rank(workloads: list[Workload], offers: Any, currency: str = "USD",
         usd_to_currency: float | None = None, top: int | None = None,
         node_shapes: Mapping[str, Sequence[int]] | None = None,
         measurements: Sequence[Mapping[str, Any]] | None = None) -> dict[str, list[RankRow]]:
    """{workload name: rows sorted best first}. Firm, fresh, fitting offers come first, by cost
    per successful checkpoint; then stale and not firm prices (listed apart, never chosen);
    then the ones that do not fit or cannot be priced, with why. The best `ok` row of each
    choice (on-demand, spot, committed) carries `choice` and is returned even below `top`.

    `offers` are priced in `currency`; `usd_to_currency` turns the USD cost constants into it
    (1 for USD; None when there is no rate: nothing can be priced). `node_shapes` maps a provider
    that quotes one GPU's price to the GPUs per node it sells (none when not given).
    `measurements`: measured_throughput rows (`gpuprices record`); where one exists for an
    offer's provider, GPU and workload its tokens/s is used over the estimate, and the row shows
    both (sizing/measured.py).

    Two passes for speed: every offer gets its cost per successful checkpoint from cached
    memory, throughput and run plan (a few multiplications); only the `top` rows and the
    choices are then built in full, with every input and the reasons."""
    return dict(rank_each(workloads, offers, currency, usd_to_currency, top, node_shapes,
                          measurements))


def rank_each(workloads: Iterable[Workload], offers: Any, currency: str = "USD",
              usd_to_currency: float | None = None, top: int | None = None,
              node_shapes: Mapping[str, Sequence[int]] | None = None,
              measurements: Sequence[Mapping[str, Any]] | None = None
              ) -> Iterator[tuple[str, list[RankRow]]]:
    """rank(), one workload at a time: (name, rows) as each is ranked, its cache dropped before
    the next, so a file of 10,000 workloads is ranked and written out in the memory of one."""
    records = orow.records(offers)
    known = gpu_models()
    usd_factor = 1.0 if currency == "USD" else usd_to_currency
    cache = _Cache(_shapes(node_shapes), measurements)
    band_cache: dict[str, float] = {}
    wi = 0  # one index per layout ranked: the caches' key
    for w in workloads:
        cache.forget()
        runs: list[list[RankRow]] = []
        # a deadline with room in max_gpus: the job on more GPUs too (sizing/constraints.py)
        for layout in limits.deadline_layouts(w):
            keyed = sorted((_quick_key(wi, layout, o, known, currency, usd_factor, cache,
                                       band_cache), idx)
                           for idx, o in enumerate(records))
            chosen = {idx: key for key, idx in (keyed[:top] if top else keyed)}
            picks = _choices(keyed, records)
            for idx in picks:
                chosen.setdefault(idx, None)
            # The cheapest rows listed apart too (stale, not firm, against the buyer's
            # constraints), so that the headline can say which cheaper offer a constraint set
            # aside and why.
            for key, idx in [k for k in keyed if k[0][0] == 1][:top or TOP_APART]:
                chosen.setdefault(idx, key)
            rows = []
            for idx in chosen:
                row = _rank_one(wi, layout, records[idx], known, currency, usd_factor, cache)
                row.choice = picks.get(idx)
                rows.append(row)
            rows.sort(key=_sort_key)
            runs.append(rows)
            wi += 1
        rows = runs[0] if len(runs) == 1 else _merge(runs)
        # A commitment in the headline only when it pays for this run (sizing/commitment_pays.py)
        commitment_pays.settle(rows, records)
        yield w.name, rows


def _merge(runs: list[list[RankRow]]) -> list[RankRow]:
    """One ranking from the same workload on several GPU counts (a deadline with room in
    max_gpus): per offer its best row (one that meets the deadline before one that misses
    it, then the cheapest), and the choices again over them, as _choices makes them."""
    best: dict[tuple, RankRow] = {}
    for row in sorted((r for rows in runs for r in rows), key=_sort_key):
        best.setdefault((row.provider, row.sku, row.region, row.pricing_model,
                         row.gpu_model), row)
    rows = list(best.values())
    kinds: dict[str, list[tuple[str, int]]] = {}
    for i, r in enumerate(rows):
        r.choice = None
        kind = why.choice_of(r.pricing_model)
        if r.verdict == "ok" and kind:
            kinds.setdefault(kind, []).append((r.fit_verdict or "fits", i))
    for kind, cands in kinds.items():
        pick = fit.prefer_fits(cands)
        if pick is not None:
            rows[pick].choice = kind
    return rows


def _choices(keyed: list[tuple[tuple, int]], records: list[dict[str, Any]]) -> dict[int, str]:
    """{record index: choice} for the cheapest `ok` row of each choice that `fits`; a `tight`
    row is chosen only when no row of its kind fits (sizing/fit.py, docs/sizing.md)."""
    kinds: dict[str, list[tuple[str, int]]] = {}
    for key, idx in keyed:
        kind = why.choice_of(str(records[idx].get("pricing_model") or ""))
        if key[0] == 0 and kind:
            kinds.setdefault(kind, []).append(("tight" if key[3] else "fits", idx))
    return {fit.prefer_fits(rows): kind for kind, rows in kinds.items()}


# 0: recommendable; 1: priced but stale, not firm, sold out at the snapshot or against the
# buyer's constraints (listed apart); 2: cannot be ranked; 3: outside the workload's regions (not
# the buyer's market).
_STANDING = {"ok": 0, "stale": 1, "not_firm": 1, "sold_out": 1, "not_cluster": 1,
             "misses_deadline": 1, "outside_region": 3}


def _sort_key(r: RankRow) -> tuple:
    cost = r.cost_per_checkpoint if math.isfinite(r.cost_per_checkpoint) else math.inf
    return (_STANDING.get(r.verdict, 2), cost,
            -(r.headroom_gb if r.headroom_gb is not None else -1e9), r.fit_verdict == "tight")


def _quick_key(wi: int, w: Workload, o: dict[str, Any], known: dict, currency: str,
               usd_factor: float | None, cache: _Cache, band_cache: dict[str, float]) -> tuple:
    """The sort key of `_sort_key` without building the row (same formulas)."""
    if _outside(w, o):
        return (3, math.inf, 1e9, False)
    gpu = o.get("gpu_model")
    count = float(o.get("gpu_count") or 0)
    if (gpu not in known or count < 1 or count != int(count)
            or not cache.compat(wi, w, known[gpu]).runs):
        return (2, math.inf, 1e9, False)
    per_node = _per_node(wi, w, gpu, str(o.get("provider") or ""), int(count),
                         known[gpu].memory_gb, cache)
    lkey = (wi, gpu, per_node)
    lay = cache.layouts.get(lkey)
    if lay is None:
        nodes, used, mem = _layout(wi, w, gpu, per_node, known[gpu].memory_gb, cache)
        lay = cache.layouts[lkey] = (nodes, used, mem.verdict, -round(mem.headroom_gb, 2))
    nodes, used, fit_verdict, headroom = lay
    tight = fit_verdict == "tight"
    price = orow.price(o.get("price_per_hour"))
    if (fit_verdict == "no" or price is None or orow.other_currency(o, currency)
            or usd_factor is None):
        return (2, math.inf, headroom, tight)
    ic = o.get("interconnect")
    ic = ic if isinstance(ic, str) and nodes > 1 else None
    network = net.of_offer(o)
    fabric = net.internode_gbs(network, used) if nodes > 1 else None
    provider = str(o.get("provider") or "")
    pkey = (wi, gpu, per_node, ic, fabric,
            provider if (provider, gpu, w.name) in cache.measured else None)
    plan = cache.quick_plans.get(pkey, False)
    if plan is False:
        tps = cache.speed(wi, w, gpu, provider, used, nodes, ic, network)[1]
        plan = cache.quick_plans[pkey] = (cache.plan(wi, w, tps, usd_factor)
                                          if tps > 0 else None)
    if plan is None:
        return (2, math.inf, headroom, tight)
    lam = 0.0
    if o.get("pricing_model") == "spot":
        band = spot_band(orow.extra(o.get("extra")))[0]
        if band not in band_cache:
            band_cache[band] = preemptions_per_hour(band)
        lam = band_cache[band] * nodes
    rate = price * per_node / count * nodes
    t = run_totals(plan, rate, lam, orow.int_or_none(o.get("billing_increment_s")),
                   orow.int_or_none(o.get("min_billing_s")), term_hours(orow.commitment_months(o)))
    if not math.isfinite(t.cost_to_finish):
        return (2, math.inf, headroom, tight)
    standing = 1 if (orow.price_caveat(o) or orow.is_stale(o) or orow.sold_out(o)
                     or limits.not_a_cluster(nodes, network, str(o.get("pricing_model") or ""))
                     or limits.misses_deadline(w, t.total_h)) else 0
    return (standing, t.cost_to_finish / plan.n_ckpt, headroom, tight)


def _outside(w: Workload, o: dict[str, Any]) -> str | None:
    """Why the offer is outside the workload's regions (sizing/constraints.py), or None."""
    if not w.regions and not w.countries:
        return None
    country, why_country = orow.country(o)
    region = o.get("region")
    return limits.outside_region(w, str(o.get("provider") or ""),
                                 region if isinstance(region, str) else None, country,
                                 why_country)


def _rejected(base: dict[str, Any], count: float, price: float, reason: str, verdict: str,
              **kw: Any) -> RankRow:
    """A row that cannot be priced or does not fit: infinite cost and the reason."""
    inf = math.inf
    fields_ = dict(gpus_per_node=int(count), nodes=0, gpus=0, per_gpu_gb=None,
                   capacity_gb=None, fits=False, headroom_gb=None, tokens_per_s=0.0,
                   hours=inf, price_per_hour=price, cost_first_checkpoint=inf,
                   cost_per_checkpoint=inf, cost_to_finish=inf, verdict=verdict,
                   reason=reason, reasons=[reason])
    fields_.update(kw)
    return RankRow(**base, **fields_)


def _row_inputs(cost: CostEstimate, tp: Throughput, mem: MemoryEstimate, quoted: str,
                o: dict[str, Any]) -> dict[str, Any]:
    """Every figure the row's cost was computed from."""
    inputs = dict(cost.inputs)
    inputs.update(hfu=tp.hfu, hfu_source=tp.hfu_source, efficiency_class=tp.efficiency_class,
                  efficiency_assumed=tp.efficiency_assumed, flops_per_token=tp.flops_per_token,
                  scaling_efficiency=tp.scaling_efficiency, link=tp.link,
                  price_currency=quoted, fx_factor=orow.price(o.get("fx")) or 1.0,
                  memory_breakdown_gb={
                      k: round(v, 3) for k, v in mem.breakdown.items()})
    return inputs


def _cost_reasons(w: Workload, o: dict[str, Any], cost: CostEstimate, per_node: int,
                  nodes: int, used: int, listed: float, currency: str,
                  shapes: tuple[int, ...] | None) -> list[str]:
    """Why the cost is what it is: node bought whole, per-GPU price, spot risk, term. `used`:
    the GPUs the job runs on, of the `per_node` x `nodes` paid for."""
    out = []
    if used < per_node * nodes:
        out.append(why.whole_node(per_node, nodes, used, w.gpu_cap))
    if shapes and per_node != int(float(o.get("gpu_count") or 0)):
        out.append(why.per_gpu_price(str(o.get("provider") or ""), shapes, per_node, listed,
                                     currency))
    model = str(o.get("pricing_model") or "")
    if model == "spot":
        out.append(why.spot(cost, nodes))
    elif model == "community":
        out.append(why.community())
    if cost.inputs.get("term_hours"):
        out.append(why.commitment(cost))
    elif why.choice_of(model) == "committed":
        out.append(why.no_term(cost))
    return out


def _rank_one(wi: int, w: Workload, o: dict[str, Any], known: dict, currency: str,
              usd_factor: float | None, cache: _Cache) -> RankRow:
    """One offer's full row: the first reason it cannot be ranked, else its costs and why.
    One straight sequence of checks, each needing the one before (a known GPU, a whole GPU, a
    card that runs the workload's software (sizing/compat.py), a layout that fits, a converted
    price, a speed, a finite cost), so it stays in one place."""
    gpu = o.get("gpu_model")
    count = float(o.get("gpu_count") or 0)
    converted = orow.price(o.get("price_per_hour"))
    listed = converted if converted is not None else math.nan
    base = dict(workload=w.name, provider=str(o.get("provider") or ""),
                sku=str(o.get("sku") or ""), region=o.get("region"),
                pricing_model=str(o.get("pricing_model") or ""), gpu_model=str(gpu or ""),
                currency=currency, **orow.facts(o))
    outside = _outside(w, o)
    if outside:
        return _rejected(base, count, listed, outside, "outside_region")
    if gpu not in known:
        return _rejected(base, count, listed, f"GPU model {gpu!r} not in warehouse/gpus.csv",
                         "unknown_gpu")
    if count < 1 or count != int(count):
        return _rejected(base, count, listed,
                         f"{count:g} GPU per instance (a slice): not used for training", "slice")
    spec = known[gpu]
    runs = cache.compat(wi, w, spec)  # the software the workload needs, on this card
    if not runs.runs:
        return _rejected(base, count, listed, runs.summary(), "incompatible", compat=runs.verdict)
    per_node = _per_node(wi, w, gpu, base["provider"], int(count), spec.memory_gb, cache)
    price = listed * per_node / count  # the node's price when a per-GPU price is scaled up
    nodes, used, mem = _layout(wi, w, gpu, per_node, spec.memory_gb, cache)
    n = nodes * used
    common = dict(gpus_per_node=per_node, nodes=nodes, gpus=n,
                  per_gpu_gb=round(mem.per_gpu_gb, 2), capacity_gb=spec.memory_gb,
                  headroom_gb=round(mem.headroom_gb, 2), fit_verdict=mem.verdict)
    if not mem.fits:
        return _rejected(base, count, price, f"does not fit: the estimate alone is "
                         f"{mem.per_gpu_gb:.1f} GB per GPU, has {spec.memory_gb:g} GB on {n} "
                         "GPU(s)", "no_fit", **common)
    quoted = str(o.get("price_currency") or o.get("currency") or currency)
    if converted is None or orow.other_currency(o, currency) or usd_factor is None:
        missing = "USD" if converted is not None and usd_factor is None else quoted
        return _rejected(base, count, price, f"no FX rate for {missing} -> {currency} on that "
                         "date", "no_fx", **common)
    ic = o.get("interconnect")
    network = net.of_offer(o)
    tp, tps, measured = cache.speed(wi, w, gpu, base["provider"], used, nodes,
                                    ic if isinstance(ic, str) else None, network)
    if tps <= 0:
        return _rejected(base, count, price, f"{gpu}: no dense BF16 peak in gpus.csv, time "
                         "unknown", "no_speed", **common)
    cost = estimate_cost(
        w, price_per_hour=price, nodes=nodes, tokens_per_s=tps,
        pricing_model=base["pricing_model"],
        billing_increment_s=orow.int_or_none(o.get("billing_increment_s")),
        min_billing_s=orow.int_or_none(o.get("min_billing_s")), extra=orow.extra(o.get("extra")),
        currency=currency, usd_to_currency=usd_factor,
        plan=cache.plan(wi, w, tps, usd_factor),
        commitment_months=base["commitment_months"])
    if not math.isfinite(cost.cost_to_finish):
        return _rejected(base, count, price, why.never_finishes(cost, nodes), "never_finishes",
                         **common)
    reasons = why.fit(w, mem, spec.memory_gb, tp, nodes, n) + _cost_reasons(
        w, o, cost, per_node, nodes, n, listed, currency,
        cache.node_shapes.get(base["provider"]))
    fabric_note = net.spans_nodes_reason(network, nodes, tp.link_gbs, tp.scaling_efficiency)
    if fabric_note:
        reasons.append(fabric_note)
    if measured:
        reasons.insert(1, measured.reason())
    elif tp.efficiency_assumed:
        reasons.append(efficiency_assumed_note(tp))
    elif tp.efficiency_measured_at:  # measured on the card, not by the class's own row
        reasons.append(f"efficiency: {tp.efficiency_measured_at}")
    reasons[:0] = [f"caveat: {r}" for r in runs.reasons]  # ranked, and flagged first
    verdict = "ok"
    caveat = orow.price_caveat(o)
    if caveat:
        reasons.insert(0, f"not firm: {caveat}; not recommended")
        verdict = "not_firm"
    if orow.sold_out(o):
        reasons.insert(0, why.sold_out(o))
        verdict = "sold_out"
    if base["stale"]:
        reasons.insert(0, why.stale(o))
        verdict = "stale"
    if base["negotiated"]:
        reasons.insert(0, base["negotiated"])
    # The buyer's constraints come first: whatever else holds, the offer cannot be used.
    for broken, name in ((limits.misses_deadline(w, cost.wall_hours), "misses_deadline"),
                         (limits.not_a_cluster(nodes, network, base["pricing_model"]),
                          "not_cluster")):
        if broken:
            reasons.insert(0, broken)
            verdict = name
    return RankRow(**base, **common, fits=True, compat=runs.verdict,
                   tokens_per_s=round(tps, 1),
                   estimated_tokens_per_s=round(tp.tokens_per_s, 1),
                   measured_tokens_per_s=round(tps, 1) if measured else None,
                   estimate_error=round(measured.estimate_error, 4) if measured else None,
                   measured=measured.as_dict() if measured else None,
                   hours=cost.wall_hours, price_per_hour=price,
                   cost_first_checkpoint=cost.cost_first_checkpoint,
                   cost_per_checkpoint=cost.cost_per_checkpoint,
                   cost_to_finish=cost.cost_to_finish,
                   marginal_checkpoint_cost=cost.marginal_checkpoint_cost,
                   expected_preemptions=cost.expected_preemptions,
                   verdict=verdict, reason="; ".join(reasons), reasons=reasons,
                   efficiency_assumed=tp.efficiency_assumed and not measured,
                   inputs=_row_inputs(cost, tp, mem, quoted, o))
