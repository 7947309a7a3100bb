"""Small helpers shared by the provider parsers."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from lxml import html as lxml_html

from gpuprices.spiders.parsers import ParseError, skip_row
from gpuprices.warehouse.contract import CaptureMeta

_PRICE = re.compile(r"\$?\s*([0-9][0-9,]*(?:\s?\.\s?[0-9]+)?)")


def parse_price(text: str | float | int | None) -> float | None:
    """A price from a cell or field, or None for the placeholders that mean 'not offered'
    ('Contact sales', 'N/A', '––', '', 0). Tolerates '$2 .0000/ 1 hour' and '1,234.5'."""
    if text is None:
        return None
    if isinstance(text, int | float):
        return float(text) if text > 0 else None
    m = _PRICE.search(text)
    if not m:
        return None
    value = float(re.sub(r"[\s,]", "", m.group(1)))
    return value if value > 0 else None


def skip_unpriced(value: object, what: str = "price") -> None:
    """Count a row passed over because no price could be read where one should stand, by what
    stood there ('N/A', 'Contact sales', nothing): the run summary lists them."""
    text = "" if value is None else " ".join(str(value).split())[:40]
    skip_row(f"no {what} ({text!r})" if text else f"no {what} given")


def load_json(body: bytes, meta: CaptureMeta) -> Any:
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ParseError(meta.provider, meta.url, f"body is not valid JSON ({exc})") from exc


def looks_like_html(body: bytes) -> bool:
    head = body[:4096].lstrip().lower()
    return head.startswith((b"<!doctype", b"<html", b"<head", b"<body", b"<div", b"<script",
                            b"<table", b"<tr", b"<a ", b"<section", b"<main", b"<meta", b"<th"))


def decode_html(body: bytes, meta: CaptureMeta) -> str:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(meta.provider, meta.url, "body is not UTF-8 text") from exc
    if "<" not in text:
        raise ParseError(meta.provider, meta.url, "body is not HTML")
    return text


def el_text(el: Any) -> str:
    """An lxml element's text with whitespace runs collapsed ('' for a missing element)."""
    return " ".join(el.text_content().split()) if el is not None else ""


def html_tree(body: bytes, meta: CaptureMeta) -> Any:
    """The body as an lxml HTML tree, or a ParseError naming the provider and URL."""
    text = decode_html(body, meta)
    try:
        return lxml_html.fromstring(text)
    except (ValueError, lxml_html.etree.ParserError) as exc:
        raise ParseError(meta.provider, meta.url, f"HTML has no elements ({exc})") from exc


def tables_headed(tree: Any, header: list[str], meta: CaptureMeta) -> list[Any]:
    """The tables whose head cells (thead th) read `header`, in page order; a ParseError (unknown
    layout) when none does."""
    tables = [t for t in tree.xpath("//table")
              if [el_text(th) for th in t.xpath("./thead//th")] == header]
    if not tables:
        raise ParseError(meta.provider, meta.url, "unknown layout: no table with the header "
                                                  f"{' | '.join(header)!r}")
    return tables


def row_cells(tables: list[Any], width: int, meta: CaptureMeta, what: str = "GPU table row"
              ) -> Iterator[list[str]]:
    """The cells' texts of each body row (tbody tr) of `tables`; a ParseError naming the row
    when it has not `width` cells (the columns moved: no cell is read as another)."""
    for table in tables:
        for tr in table.xpath("./tbody/tr"):
            cells = [el_text(td) for td in tr.xpath("./td")]
            if len(cells) != width:
                raise ParseError(meta.provider, meta.url,
                                 f"{what} with {len(cells)} cells: {cells!r}")
            yield cells


def spaced_gpu_name(name: str) -> str:
    """A run-together GPU id as some APIs write it, in the words the GPU table knows:
    "RTX6000Ada" -> "RTX 6000 Ada", "RTXPro6000" -> "RTX Pro 6000", "A100_80G" -> "A100 80GB",
    "H100_nvl" -> "H100 nvl", "rtx_pro_6000" -> "rtx pro 6000" (Shadeform's and Sesterce's
    `gpu_type`/`gpuName`, Compute Pulse's `gpu_model`, GPU.ai's `gpu_type`)."""
    text = name.replace("_", " ")
    text = re.sub(r"\b(\d+)G\b", r"\1GB", text)
    text = re.sub(r"(?i)^rtx(?=\d|pro)", "RTX ", text)
    text = re.sub(r"(?i)pro(?=\d)", "Pro ", text)
    text = re.sub(r"(?i)(\d)(ada|ti)\b", r"\1 \2", text)
    return re.sub(r"\s+", " ", text).strip()


# Interconnect words (Shadeform's `interconnect`, Sesterce's `configuration.interconnect`) that
# name a GPU's form factor, as the GPU table spells it.
_FORM = {"sxm4": "SXM", "sxm5": "SXM", "sxm6": "SXM", "pcie": "PCIe"}


def gpu_with_form(name: str, interconnect: object) -> str:
    """A run-together GPU id in the GPU table's words (spaced_gpu_name), with the form factor
    its interconnect field names where that tells parts apart."""
    words = spaced_gpu_name(name)
    form = _FORM.get(str(interconnect or "").lower())
    # The form factor only tells parts apart where the family has both (A100, H100); an
    # "RTX 6000 Ada" with an sxm5 interconnect field is still the PCIe card.
    if form and re.match(r"(?i)^(A100|H100)\b", words) and "nvl" not in words.lower():
        words = f"{words} {form}"
    return words
