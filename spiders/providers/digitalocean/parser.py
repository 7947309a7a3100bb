"""DigitalOcean: the GPU Droplet tables of https://docs.digitalocean.com/products/droplets/details/
pricing/ (Hugo, server-rendered).

Each tier is an `<h2 id="...">` followed by one `<table>` with header GPU | Price; the three
tables look alike, so the tier comes only from the heading's id, and rows are read from the
heading to the next `<h2>`:

- `on-demand-gpu-droplet-pricing` -> `on_demand`;
- `spot-gpu-droplet-pricing` -> `spot` (public preview; "may change daily");
- `contract-gpu-droplet-pricing` -> no rows: "Per contract after contacting sales".

A price cell "$X per hour" is USD per Droplet-hour. A label without a suffix is a 1-GPU Droplet;
"(8x)" is the 8-GPU Droplet (its own printed price, not derived from the 1x row). Labels keep
DigitalOcean's wording as the SKU. Cooling ("NVIDIA B300, air-cooled" / "liquid-cooled", one
price, two SKUs) goes to `extra.cooling`. Billing is per second with a 60 s minimum (the page:
"billed per second with a minimum charge of 60 seconds or $0.01").
"""

from __future__ import annotations

import re

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import el_text, html_tree, parse_price
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "digitalocean"

TIERS = {
    "on-demand-gpu-droplet-pricing": "on_demand",
    "spot-gpu-droplet-pricing": "spot",
    "contract-gpu-droplet-pricing": None,  # no figures: per contract
}
# DigitalOcean's docs table says "NVIDIA RTX 4000" / "RTX 6000" and "NVIDIA H100"; its GPU Droplet
# sizes are the Ada cards and the 80 GB H100 (DigitalOcean API size slugs gpu-4000adax1-20gb,
# gpu-6000adax1-48gb, gpu-h100x1-80gb / gpu-h100x8-640gb; marketing page "RTX 4000 Ada", "RTX 6000
# Ada", "H100 ... HGX"). Mapped here, not in gpu_aliases.csv: a bare "RTX 6000" elsewhere can be
# the Turing Quadro card.
_WORDING = {
    "NVIDIA RTX 4000": "RTX 4000 Ada",
    "NVIDIA RTX 6000": "RTX 6000 Ada",
    "NVIDIA H100": "H100 SXM 80GB",
}
_COUNT = re.compile(r"\s*\((\d+)x\)\s*$", re.I)
_COOLING = re.compile(r",\s*((?:air|liquid)-cooled)\s*$", re.I)
_PER_HOUR = re.compile(r"\$\s*[0-9][0-9,]*(?:\.[0-9]+)?\s*per hour", re.I)
BILLING_INCREMENT_S = 1
MIN_BILLING_S = 60


def _label(text: str) -> tuple[str, int, str | None]:
    """(GPU label without count or cooling, GPUs per Droplet, cooling)."""
    count = 1
    m = _COUNT.search(text)
    if m:
        count, text = int(m.group(1)), text[: m.start()]
    cooling = None
    c = _COOLING.search(text)
    if c:
        cooling, text = c.group(1).lower(), text[: c.start()]
    return text.strip(), count, cooling


def _tier_rows(tree, heading_id: str) -> list[list[str]]:
    """Cells of the table rows between the heading and the next h2."""
    rows = tree.xpath(
        "//h2[@id=$h]/following::tr[td][preceding::h2[1][@id=$h]]", h=heading_id)
    return [[el_text(td) for td in tr.xpath("./td")] for tr in rows]


def _offer(meta: CaptureMeta, cells: list[str], pricing_model: str,
           heading_id: str) -> Offer | None:
    if len(cells) < 2 or not _PER_HOUR.search(cells[1]):
        return None
    gpu, count, cooling = _label(cells[0])
    wording = _WORDING.get(gpu, gpu)
    extra = {"source": "page", "layout": "docs_tables", "gpu_wording": gpu, "section": heading_id,
             "price_wording": cells[1], "price_basis": "per_droplet_hour"}
    if cooling:
        extra["cooling"] = cooling
    if pricing_model == "spot":
        extra["provider_term"] = "Spot GPU Droplet"
    return make_offer(
        meta, sku=cells[0], gpu_model=canonical_gpu(wording), gpu_count=count,
        price_per_hour=parse_price(cells[1]), pricing_model=pricing_model,
        billing_increment_s=BILLING_INCREMENT_S, min_billing_s=MIN_BILLING_S, extra=extra,
    )


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    tree = html_tree(body, meta)
    found = [h for h in TIERS if tree.xpath("//h2[@id=$h]", h=h)]
    if not found:
        raise ParseError(PROVIDER, meta.url, "unknown layout: no GPU Droplet pricing heading "
                         f"(h2 id in {', '.join(TIERS)})")
    offers = [o for h in found if TIERS[h] is not None for cells in _tier_rows(tree, h)
              if (o := _offer(meta, cells, TIERS[h], h)) is not None]
    if not offers:
        raise ParseError(PROVIDER, meta.url,
                         "GPU Droplet headings found but no row priced '$X per hour'")
    return offers
