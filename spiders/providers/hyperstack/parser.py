"""Hyperstack: https://www.hyperstack.cloud/gpu-pricing (HubSpot, server-rendered).

No `<table>`: each price card is `div.page-price_card` with an `<h3>` naming the tier, a head
row of `page-price_card_head_item` labels and rows `div.page-price_card_row_item` whose
`page-price_card_row_item_colN` divs hold one `<span>` (or `<p>`/`<a>`) each. The tier comes
only from the card's `<h3>`:

- "On-Demand GPU Pricing" (GPU Model | VRAM (GB) | Max pCPUs per GPU | Max RAM (GB) per GPU |
  Pricing Per Hour) -> `on_demand`;
- "Reservation Pricing" (GPU Model | Starting from | Reserve) -> `reserved`, a floor for a
  reserved contract whose term the page does not give: `extra.price_kind = "from"` (not a firm
  price: warehouse/sql/staging/price_caveat.sql), `commitment_months` empty;
- "Spot VM Pricing" (GPU Model | Spot VM) -> `spot`.
Other cards (On-Demand CPU, Storage, Other Services, token and fine-tuning prices) and the nav
and footer GPU lists are not GPU-hour prices and give no rows.

Every price is USD per GPU-hour (the VRAM, pCPU and RAM columns are one GPU's share), so rows
have `gpu_count` 1. Cells are dirty ("&nbsp;$1.40", " $0.80"): whitespace is stripped before
reading. Hyperstack's labels are mapped through `_WORDING` (one card has different labels in
different tables); VRAM, where the card gives it, checks the model's memory. Billing is per
minute (the page: "billed per minute").
"""

from __future__ import annotations

from parsel import Selector

from gpuprices.spiders.parsers import ParseError
from gpuprices.spiders.parsers._util import decode_html, parse_price
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "hyperstack"

TIERS = (  # (words in the card's h3, pricing_model)
    ("on-demand gpu", "on_demand"),
    ("reservation", "reserved"),
    ("spot vm", "spot"),
)
# Hyperstack label -> (SKU shared by the card's tables, wording our alias table knows).
# - "NVIDIA H100" is the PCIe card (its reserve link is nvidia-h100-pcie-reserve-now, 28 pCPUs
#   like the spot table's "NVIDIA H100 PCIe"); "NVIDIA A100" likewise the A100 80GB PCIe (link
#   nvidia-a100-reserve-now; product page hyperstack.cloud/a100 vs /a100-sxm).
# - "H100 NVLink" / "A100 NVLink" are those PCIe cards joined by NVLink bridges (Hyperstack docs,
#   Flavors: n3-H100x8-NVLink, n3-A100x8-NVLink; the A100 NVLink row shares the PCIe A100's
#   reserve link), separate rows from the SXM boards ("H100 SXM", "A100 SXM").
# - "RTX Pro 6000 SE" is the RTX PRO 6000 Blackwell Server Edition (reserve link
#   rtx-pro-6000-reserve-now); "A6000" / "A4000" are the RTX A-series cards (nav: "NVIDIA RTX
#   A6000"; links nvidia-rtx-a6000-reserve-now, nvidia-rtx-a4000-reserve-now).
_WORDING = {
    "NVIDIA H100": ("NVIDIA H100 PCIe", "H100 PCIe"),
    "NVIDIA H100 PCIe": ("NVIDIA H100 PCIe", "H100 PCIe"),
    "NVIDIA H100 NVLink": ("NVIDIA H100 PCIe NVLink", "H100 PCIe"),
    "NVIDIA A100": ("NVIDIA A100 PCIe", "A100 PCIe 80GB"),
    "NVIDIA A100 NVLink": ("NVIDIA A100 PCIe NVLink", "A100 PCIe 80GB"),
    "NVIDIA RTX Pro 6000 SE": ("NVIDIA RTX Pro 6000 SE", "RTX PRO 6000 Server"),
    "NVIDIA A6000": ("NVIDIA A6000", "RTX A6000"),
    "NVIDIA A4000": ("NVIDIA A4000", "RTX A4000"),
}
_MINUTE_S = 60


def _text(sel: Selector) -> str:
    return " ".join(" ".join(sel.css("::text").getall()).replace("\xa0", " ").split())


def _tier(card: Selector) -> str | None:
    heading = _text(card.css("h3")[:1]).lower() if card.css("h3") else ""
    return next((model for words, model in TIERS if words in heading), None)


def _row_offer(meta: CaptureMeta, pricing_model: str, heads: list[str],
               cells: list[str]) -> Offer | None:
    if len(cells) < 2 or not cells[0]:
        return None
    by_head = dict(zip(heads, cells, strict=False))
    price_text = cells[1] if pricing_model == "reserved" else cells[-1]
    if "$" not in price_text:
        return None
    label = cells[0]
    sku, wording = _WORDING.get(label, (label, label))
    vram = parse_price(by_head.get("VRAM (GB)"))
    extra = {"source": "page", "layout": "cards", "gpu_wording": label,
             "price_wording": price_text, "price_basis": "per_gpu_hour"}
    if pricing_model == "reserved":
        extra["price_kind"] = "from"  # "Starting from": the floor of a contract price
        extra["provider_term"] = "Reservation"
    if pricing_model == "spot":
        extra["provider_term"] = "Spot VM"
    return make_offer(
        meta, sku=sku, gpu_model=canonical_gpu(wording, vram), gpu_memory_gb=vram,
        gpu_count=1, price_per_hour=parse_price(price_text), pricing_model=pricing_model,
        vcpus=parse_price(by_head.get("Max pCPUs per GPU")),
        ram_gb=parse_price(by_head.get("Max RAM (GB) per GPU")),
        billing_increment_s=_MINUTE_S, extra=extra,
    )


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    sel = Selector(text=decode_html(body, meta))
    cards = [(c, _tier(c)) for c in sel.css("div.page-price_card")]
    gpu_cards = [(c, t) for c, t in cards if t is not None]
    if not gpu_cards:
        raise ParseError(PROVIDER, meta.url, "unknown layout: no div.page-price_card with an "
                         "'On-Demand GPU', 'Reservation' or 'Spot VM' heading")
    offers = []
    for card, pricing_model in gpu_cards:
        heads = [_text(h) for h in card.css(".page-price_card_head_item")]
        rows = [[_text(c) for c in row.xpath("./div")]
                for row in card.css("div.page-price_card_row_item")]
        offers += [o for cells in rows
                   if (o := _row_offer(meta, pricing_model, heads, cells)) is not None]
    if not offers:
        raise ParseError(PROVIDER, meta.url,
                         "GPU price cards found but no row has a $ price per hour")
    return offers
