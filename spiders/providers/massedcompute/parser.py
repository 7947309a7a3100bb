"""Massed Compute: the RSC flight rows of https://vm.massedcompute.com/pricing.

Each VM shape is keyed `\\"<label>-x <qty>-<i>\\"` (desktop table row) and
`\\"<label>-mobile-x <qty>-<i>\\"` (mobile card), followed by its cells: the quantity
`[\\"×\\",\\"8\\"]`, vCPU, RAM, storage and the price `\\"$$52.80\\"` (RSC escapes a literal
dollar as `$$`) or `Request` (contact sales: no row). One price: USD per **VM**-hour for the
row's quantity of GPUs (price_per_gpu_hour = price / qty); on-demand VMs only.

A row's window ends at the next row key **and** at the end of its flight line (a literal `\\n`):
without the second bound, the desktop "H100 (80GB) x8" row (`Request`) would run into the
deferred chunks that follow it and steal H100 NVL's `$$23.36`. A row that defers its cells
(`\\"$L7d\\"`) is completed from the chunk `7d:[...]` defined elsewhere in the stream; a
deferred chunk not in the page leaves that copy unpriced. Every shape appears twice (mobile and
desktop): one row per shape, from the copies that carry a price; when both do they must agree,
or the page is refused (an error naming the shape), since either could be the stale one.

Labels: "(80GB)" is the per-GPU memory; "NVLink", "[ALT Config]", "[Premium]" and "DGX" are
variants of one chip kept in the SKU. Two labels are left unmapped with their reason
(UNMAPPED): Massed sells "H100 SXM5 (80GB)" and "A100 SXM4 (80GB)" beside the plain
"H100 (80GB)" and "A100 (80GB)", so the plain ones are another form factor the page does not
name (the alias table would read "H100 80GB" and "A100 80GB" as the SXM parts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpuprices.spiders.parsers import ParseError, skip_row
from gpuprices.spiders.parsers._util import decode_html
from gpuprices.warehouse.contract import CaptureMeta, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

PROVIDER = "massedcompute"
_KEY = re.compile(r'\\"([^"\\]{2,80}?)-(mobile-)?x (\d+)-(\d+)\\"')
_LINE_END = re.compile(r"\\n")
_CHUNK = re.compile(r'(?:\\n|\[1,")([0-9a-f]{1,4}):(.*?)(?=\\n)')
_REF = re.compile(r'\\"\$L([0-9a-f]{1,4})\\"')
_QTY = re.compile(r'\\"×\\",\\"(\d+)\\"')
_PRICE = re.compile(r'\\"\$\$([0-9][0-9,]*\.?[0-9]*)\\"')
_REQUEST = re.compile(r'\\"Request\\"')
_DD = re.compile(r'\\"dt\\",null,\{\\"children\\":\\"(vCPU|RAM|Storage)\\"\}\],'
                 r'\[\\"\$\\",\\"dd\\",null,\{\\"children\\":\\?"?([^\\"}]+)')
_TD = re.compile(r'\\"td\\",null,\{\\"children\\":\\?"?([0-9][^\\"}]*)')
_MEM = re.compile(r"\((\d+)GB\)")
_NOTES = re.compile(r"\[([^\]]+)\]")
UNMAPPED = {
    "H100 (80GB)": (
        "Massed Compute lists 'H100 SXM5 (80GB)' as its own row beside 'H100 (80GB)', so the "
        "plain label is another H100 80GB form factor (PCIe?) the page does not name "
        "(searched 2026-12-03)"),
    "A100 (80GB)": (
        "Massed Compute lists 'A100 SXM4 (80GB)' and 'DGX A100 (80GB)' beside 'A100 (80GB)', "
        "so the plain label is another A100 80GB form factor the page does not name "
        "(searched 2026-12-03)"),
}


@dataclass
class Copy:
    label: str
    qty: int
    index: int
    mobile: bool
    price: float | None
    request: bool
    specs: dict[str, Any]


def chunks(text: str) -> dict[str, str]:
    """The flight stream's deferred chunks `<hex id>:<json>` up to their line end."""
    return {m.group(1): m.group(2) for m in _CHUNK.finditer(text)}


def copies(text: str) -> list[Copy]:
    defined = chunks(text)
    keys = list(_KEY.finditer(text))
    out = []
    for i, m in enumerate(keys):
        end = keys[i + 1].start() if i + 1 < len(keys) else len(text)
        line_end = _LINE_END.search(text, m.end())
        if line_end:
            end = min(end, line_end.start())
        window = text[m.end():end]
        window += "".join(defined.get(ref, "") for ref in _REF.findall(window))
        qty = _QTY.search(window)
        price = _PRICE.search(window)
        specs: dict[str, Any] = {k.lower(): v for k, v in _DD.findall(window)}
        if not specs:
            cells = _TD.findall(window)  # desktop: Qty | vCPU | RAM | Storage | Price
            specs = dict(zip(("vcpu", "ram", "storage"), cells, strict=False))
        out.append(Copy(label=m.group(1).strip(), qty=int(qty.group(1) if qty else m.group(3)),
                        index=int(m.group(4)), mobile=bool(m.group(2)),
                        price=float(price.group(1).replace(",", "")) if price else None,
                        request=bool(_REQUEST.search(window)), specs=specs))
    return out


def parse(body: bytes, meta: CaptureMeta) -> list[Offer]:
    text = decode_html(body, meta) if body.lstrip()[:1] == b"<" else body.decode("utf-8",
                                                                               "replace")
    found = copies(text)
    if not found:
        raise ParseError(PROVIDER, meta.url, "unknown layout: no '<label>-x <qty>-<i>' row key")
    shapes: dict[tuple[str, int, int], list[Copy]] = {}
    for c in found:
        shapes.setdefault((c.label, c.qty, c.index), []).append(c)
    offers = []
    for (label, qty, index), group in shapes.items():
        priced = {c.price for c in group if c.price is not None}
        if len(priced) > 1:
            raise ParseError(PROVIDER, meta.url, f"{label} x{qty}: the mobile and desktop "
                             f"copies disagree ({sorted(priced)})")
        if not priced:
            skip_row("'Request' (contact sales)" if any(c.request for c in group)
                     else "row cells deferred to a chunk not in the page")
            continue
        offers.append(_offer(label, qty, index, priced.pop(), group, meta))
    if not offers:
        raise ParseError(PROVIDER, meta.url, f"{len(shapes)} VM shapes, none with a $ price")
    return offers


def _number(text: Any) -> float | None:
    m = re.match(r"\s*([0-9][0-9,]*\.?[0-9]*)", str(text or ""))
    return float(m.group(1).replace(",", "")) if m else None


def _offer(label: str, qty: int, index: int, price: float, group: list[Copy],
           meta: CaptureMeta) -> Offer:
    mem = _MEM.search(label)
    memory = float(mem.group(1)) if mem else None
    chip = _NOTES.sub("", _MEM.sub("", label))
    # "DGX A100 (80GB)" reads as "A100 80GB", the alias table's A100 SXM: right here, as a DGX
    # A100 carries eight A100 SXM4 modules (NVIDIA DGX A100 datasheet).
    chip = re.sub(r"\b(NVLink|DGX)\b", "", chip, flags=re.I)
    chip = " ".join(chip.split())
    model = None if label in UNMAPPED else canonical_gpu(chip, memory)
    specs: dict[str, Any] = {}
    for c in sorted(group, key=lambda c: c.mobile):  # desktop first, mobile fills the gaps
        for k, v in c.specs.items():
            specs.setdefault(k, v)
    extra: dict[str, Any] = {"source": "page", "gpu_wording": label, "price_basis": "per_vm",
                             "row_index": index, "storage_gb": _number(specs.get("storage")),
                             "copies_priced": sorted("mobile" if c.mobile else "desktop"
                                                     for c in group if c.price is not None)}
    if label in UNMAPPED:
        extra["unmapped_reason"] = UNMAPPED[label]
    return make_offer(
        meta, sku=f"{label} x{qty}", gpu_model=model, gpu_memory_gb=memory, gpu_count=qty,
        price_per_hour=price, pricing_model="on_demand", currency="USD",
        vcpus=_number(specs.get("vcpu")), ram_gb=_number(specs.get("ram")),
        interconnect="nvlink" if re.search(r"\bNVLink\b", label, re.I) else None, extra=extra)
