"""Rows that are another cloud's offer: what an aggregator or reseller keeps on each of them.

Shadeform, Compute Pulse and Sesterce list machines that other clouds run (docs/providers.md,
"Kinds of seller"). Each such row keeps, in `extra`:

- `underlying`: the upstream cloud as the source names it ("lambdalabs", "Cyfuture AI"); absent
  when the source hides it (Sesterce's console writes anonymised labels like "AZ_22", kept as
  `upstream_label`).
- `via`: what a buyer reads beside the offer, "via Shadeform from Hyperstack".
- `counted_under`: our provider id when we read that cloud first-party. Such a row is the same
  machine as that provider's own offer, so it is not counted as a second market price: the one
  definition of a firm price (warehouse/sql/staging/price_caveat.sql) sets it apart, and every
  "cheapest" or "lowest" figure, the stored daily minima and the ranking's firm offers leave it
  out. A row whose cloud we do not read keeps counting, as the aggregator's offer, labelled.

Whether a cloud is read first-party is asked of `gpuprices.warehouse.contract.PROVIDERS` at parse
time, so a provider added later (a first-party reader of Massed Compute, say) takes over its
resold rows without a change here.
"""

from __future__ import annotations

import re
from typing import Any

from gpuprices.warehouse.contract import PROVIDERS

# Upstream names as the aggregators write them -> our provider ids that would read the same
# cloud, in order of preference (the first one in PROVIDERS wins). A name that, squeezed to
# lower-case letters and digits, already is one of our ids needs no entry. Sources: Shadeform's
# `cloud` ids in its homepage book (tests/fixtures/raw/shadeform/: "lambdalabs", "massedcompute",
# "latitude", "digitalocean"...) and Compute Pulse's `provider` names (tests/fixtures/raw/
# computepulse/: "Vast.ai", "GPU.ai"; its Verda rows cite https://datacrunch.io/products, the
# name Verda traded under before: verda.com).
ALIASES: dict[str, tuple[str, ...]] = {
    "lambdalabs": ("lambda",),
    "vastai": ("vast",),
    "datacrunch": ("verda",),
    "gpuai": ("gpuai",),
    "massedcompute": ("massedcompute",),
    "latitude": ("latitude", "latitudesh"),
    "latitudesh": ("latitude", "latitudesh"),
    "amazonwebservices": ("aws",),
    "googlecloud": ("gcp",),
    "microsoftazure": ("azure",),
    "oraclecloud": ("oracle",),
    "oci": ("oracle",),
    "togetherai": ("together",),
    "hotaisle": ("hotaisle",),
    "e2enetworks": ("e2e",),
    "gmicloud": ("gmicloud", "gmi"),
    "falai": ("fal",),
}
# Display names for the "via" label where the source's id is not what a buyer reads (Shadeform
# writes lower-case ids; the names are the clouds' own spellings on their sites).
DISPLAY = {
    "lambdalabs": "Lambda", "hyperstack": "Hyperstack", "verda": "Verda", "crusoe": "Crusoe",
    "scaleway": "Scaleway", "massedcompute": "Massed Compute", "latitude": "Latitude.sh",
    "digitalocean": "DigitalOcean", "paperspace": "Paperspace", "vultr": "Vultr",
    "denvr": "Denvr Dataworks", "excesssupply": "Excess Supply", "boostrun": "Boostrun",
    "imwt": "IMWT",
}


def _squeeze(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def first_party(name: str | None) -> str | None:
    """Our provider id that reads `name`'s own prices, or None when we read none of them."""
    if not name:
        return None
    key = _squeeze(name)
    for candidate in ALIASES.get(key, (key,)):
        if candidate in PROVIDERS:
            return candidate
    return None


def display(name: str) -> str:
    return DISPLAY.get(_squeeze(name), name)


def tag(extra: dict[str, Any], seller: str, underlying: str | None, *,
        reader: str) -> dict[str, Any]:
    """`extra` with the resold-row fields for a row `seller` lists from `underlying`; `reader` is
    the aggregator's own id (a cloud never counts under itself)."""
    out = dict(extra)
    if not underlying:
        return out
    out["underlying"] = underlying
    out["via"] = f"via {seller} from {display(underlying)}"
    own = first_party(underlying)
    if own and own != reader:
        out["counted_under"] = own
    return out
