"""Voltage Park: the two keyless dashboard endpoints (see source.py), told apart by their shape.

- Locations (`{"results": [...], "has_next": ...}`): each location rents bare-metal nodes
  (`specs_per_node`: `gpu_model` "h100-sxm5-80gb", `gpu_count` 8, CPU, RAM, storage) with two
  network options priced per **GPU**-hour as decimal strings: `gpu_price_ethernet` and
  `gpu_price_infiniband`. One row per location and network option, sold as a whole node:
  `gpu_count` = GPUs per node, `price_per_hour` = per-GPU price x GPUs (so the per-GPU figure
  stays the printed one), `interconnect` = the option. `gpu_count_*` next to the prices is
  stock (0 at capture): it sets `available`, never the price.
- Presets (a bare list): VM presets with `resources.gpus` {model: {count}} and
  `compute_rate_hourly` = USD per **instance**-hour (8x "15.120000" = 1.89 per GPU);
  `storage_rate_hourly` is billed on top and kept in `extra`. `available` is whether any
  location has the preset in stock (`location_ids_with_availability`).

A bare-metal node and a VM preset are different things to buy (SKU "bare-metal ..." vs
"vm ..."), so both load; neither is derived from the other. No currency field: USD, as the
dashboard prints "$1.99/GPU/hour". Both are `on_demand`.
"""

from __future__ import annotations

from typing import Any

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import load_json, parse_price, skip_unpriced
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "voltagepark"
NETWORKS = ("ethernet", "infiniband")


def _location_offers(loc: dict[str, Any], meta: CaptureMeta) -> list[Offer]:
    specs = loc.get("specs_per_node") or {}
    gpu, per_node = specs.get("gpu_model"), specs.get("gpu_count")
    if not gpu or not isinstance(per_node, int) or per_node < 1:
        raise ParseError(PROVIDER, meta.url,
                         f"location {loc.get('id')}: specs_per_node lacks gpu_model/gpu_count")
    out = []
    for net in NETWORKS:
        per_gpu = parse_price(loc.get(f"gpu_price_{net}"))
        if per_gpu is None:
            skip_unpriced(loc.get(f"gpu_price_{net}"))
            continue  # option not offered at this location
        stock = loc.get(f"gpu_count_{net}")
        out.append(make_offer(
            meta, sku=f"bare-metal {per_node}x {gpu} {net}", region=loc.get("id"),
            gpu_model=canonical_gpu(gpu), gpu_count=per_node,
            price_per_hour=round(per_gpu * per_node, 6), pricing_model="on_demand",
            vcpus=specs.get("cpu_count"), ram_gb=specs.get("ram_gb"), interconnect=net,
            available=None if stock is None else stock > 0,
            extra={"source": "api", "layout": "locations", "gpu_wording": gpu,
                   "price_basis": "per_gpu_hour", "price_wording": loc.get(f"gpu_price_{net}"),
                   "gpus_in_stock": stock, "cpu_model": specs.get("cpu_model"),
                   "storage_gb": specs.get("storage_gb")},
        ))
    return out


def _preset_offer(preset: dict[str, Any], meta: CaptureMeta) -> Offer | None:
    res = preset.get("resources") or {}
    gpus = res.get("gpus") or {}
    price = parse_price(preset.get("compute_rate_hourly"))
    if len(gpus) != 1 or price is None:
        return None  # a CPU-only or mixed preset, or no compute price
    (gpu, spec), = gpus.items()
    count = (spec or {}).get("count")
    if not isinstance(count, int) or count < 1:
        return None
    in_stock = preset.get("location_ids_with_availability")
    return make_offer(
        meta, sku=f"vm {count}x {gpu}", gpu_model=canonical_gpu(gpu), gpu_count=count,
        price_per_hour=price, pricing_model="on_demand", vcpus=res.get("vcpu_count"),
        ram_gb=res.get("ram_gb"), available=None if in_stock is None else bool(in_stock),
        extra={"source": "api", "layout": "presets", "gpu_wording": gpu,
               "price_basis": "per_instance_hour", "preset_id": preset.get("id"),
               "price_wording": preset.get("compute_rate_hourly"),
               "storage_rate_hourly": parse_price(preset.get("storage_rate_hourly")),
               "operating_system": preset.get("operating_system"),
               "storage_gb": res.get("storage_gb")},
    )


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    data = load_json(body, meta)
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        offers = [o for loc in data["results"] if isinstance(loc, dict)
                  for o in _location_offers(loc, meta)]
        what = "locations"
    elif isinstance(data, list):
        offers = [o for p in data if isinstance(p, dict)
                  for o in [_preset_offer(p, meta)] if o is not None]
        what = "presets"
    else:
        raise ParseError(PROVIDER, meta.url, "unknown layout: neither a locations page "
                         "({'results': [...]}) nor a list of presets")
    if not offers:
        raise ParseError(PROVIDER, meta.url, f"no priced GPU {what} in the answer")
    return offers
