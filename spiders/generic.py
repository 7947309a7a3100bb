"""Candidate rows from a page no parser knows: a GPU name and a price per hour in one table row or
one card.

When a provider's parser says "unknown layout" (a redesign, or an old Wayback page), the prices on
that page are not thrown away: this extractor reads every table row (`<tr>`) and every innermost
element outside tables whose text holds both a GPU wording that
`gpuprices.warehouse.gpus.canonical_gpu` knows and an hourly price ("$1.99 / hr",
"$1.89/H100/hour", or a bare "$4.85" under a column header that says "hour"). The pipeline puts
each candidate in quarantine with the reason "unknown layout"; it never loads on its own, only
after a person checks it against the page and runs `gpuprices quarantine release`
(flows/pipeline/steps.py, flows/cli/quarantine.py).

What it guesses, so the reviewer knows what to check: the GPU count comes from an "8x" before
the name (else 1); a price whose unit names a GPU ("/GPU/hr", "/H100/hour") is per GPU-hour and
multiplied by that count, any other is per instance-hour; the pricing model is "spot" when the
row or its column header says spot / preemptible / interruptible, "reserved" when it says
reserved or a term ("3-years", "6-month"), else "on_demand". The row's text and the price as
written are kept in `extra` for the review. JSON and CSV bodies are not read: they fail as
before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import html as lxml_html

from gpuprices.spiders.parsers import ParseError
from gpuprices.warehouse import identity
from gpuprices.warehouse.contract import CaptureMeta, ContractError, Offer, make_offer
from gpuprices.warehouse.gpus import canonical_gpu

REASON = "unknown layout"
_CURRENCIES = {"$": "USD", "€": "EUR", "£": "GBP"}
_MONEY = r"([$€£])\s*([0-9][0-9,]*(?:\.[0-9]+)?)"
# "$1.99 / hr", "$2.99 / GPU / hr", "$1.89/H100/hour", "$3.90/GPU-hr", "$0.50 per hour"
_HOURLY = re.compile(_MONEY + r"\s*(?:/|per)\s*(?:([A-Za-z0-9]+)\s*[-/]?\s*)?(?:hr|hour|h)\b",
                     re.IGNORECASE)
_BARE = re.compile(r"^\s*(?:from\s+)?" + _MONEY + r"\s*$", re.IGNORECASE)
_COUNT = re.compile(r"(?<![\w.])(\d{1,3})\s*[x×]\s", re.IGNORECASE)
_MEMORY_CELL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*GB\s*$", re.IGNORECASE)
_TERM = re.compile(r"(\d+)[\s-]*(year|yr|month|mo)s?\b", re.IGNORECASE)
_SPOT = re.compile(r"\b(spot|preemptible|interruptible)\b", re.IGNORECASE)
_RESERVED = re.compile(r"\b(reserved?|commit\w*|term)\b", re.IGNORECASE)
_SKIP = {"script", "style", "noscript", "template", "svg"}
_CARD_TAGS = {"div", "li", "article", "section", "a", "p", "span", "dd", "dl"}
_MAX_NAME_WORDS = 6


@dataclass(frozen=True)
class _Price:
    value: float
    currency: str
    per_gpu: bool
    text: str
    column: str  # the column header of a table cell ('' outside tables)


def find_gpu(text: str, memory_gb: float | None = None) -> tuple[str, str] | None:
    """The longest run of words in `text` that names a GPU model the alias table knows, as
    (canonical model, wording); None when no run does."""
    words = text.split()
    for size in range(min(_MAX_NAME_WORDS, len(words)), 0, -1):
        for start in range(len(words) - size + 1):
            wording = " ".join(words[start:start + size])
            if not re.search(r"\d", wording):  # every GPU name has a number: skip "NVIDIA New"
                continue
            model = canonical_gpu(wording, memory_gb)
            if model:
                return model, wording
    return None


def _text(el) -> str:
    """An element's text, its pieces joined by a space: a card's "H200" heading and "141GB"
    tag stay two words (lxml's text_content would make them "H200141GB")."""
    return " ".join(" ".join(el.itertext()).split())


def _cells(unit) -> list[tuple[str, str]]:
    """(text, column header) per cell of a table row; per text piece of a card."""
    if unit.tag == "tr":
        headers = _headers(unit)
        return [(_text(c), headers[i] if i < len(headers) else "")
                for i, c in enumerate(unit) if c.tag in ("td", "th")]
    return [(" ".join(t.split()), "") for t in unit.itertext() if t.strip()]


def _headers(row) -> list[str]:
    """The header texts of the table a row belongs to (its first row of <th>), or []."""
    table = next(row.iterancestors("table"), None)
    if table is None:
        return []
    for tr in table.iter("tr"):
        ths = [c for c in tr if c.tag == "th"]
        if ths:
            return [_text(c) for c in tr if c.tag in ("td", "th")]
    return []


def _prices(cells: list[tuple[str, str]]) -> list[_Price]:
    out = []
    for text, column in cells:
        hourly = list(_HOURLY.finditer(text))
        for m in hourly:
            unit = (m.group(3) or "").upper()
            out.append(_Price(float(m.group(2).replace(",", "")), _CURRENCIES[m.group(1)],
                              per_gpu=bool(unit),
                              text=m.group(0), column=column))
        bare = _BARE.match(text)
        if not hourly and bare and re.search(r"\b(hour|hr|hourly)\b", column, re.IGNORECASE):
            per_gpu = bool(re.search(r"\bGPU\b", column, re.IGNORECASE))
            out.append(_Price(float(bare.group(2).replace(",", "")), _CURRENCIES[bare.group(1)],
                              per_gpu=per_gpu, text=text, column=column))
    return [p for p in out if p.value > 0]


def _gpu_of(cells: list[tuple[str, str]]) -> tuple[str, str, float] | None:
    """(model, wording, GPU count) from the first cell that names a GPU; the count from an
    "8x" in that cell, else in any cell."""
    memory = next((float(m.group(1)) for t, _ in cells if (m := _MEMORY_CELL.match(t))), None)
    for text, _ in cells:
        found = find_gpu(_COUNT.sub(" ", text), memory)
        if found:
            counts = [_COUNT.search(text)] + [_COUNT.search(t) for t, _ in cells]
            count = next((float(m.group(1)) for m in counts if m), 1.0)
            return found[0], found[1], count
    return None


def _pricing(row_text: str, column: str) -> tuple[str, int | None]:
    context = f"{column} {row_text}"
    term = _TERM.search(context)
    months = None
    if term:
        n = int(term.group(1))
        months = n * 12 if term.group(2).lower().startswith("y") else n
    if _SPOT.search(context):
        return "spot", None
    if months or _RESERVED.search(context):
        return "reserved", months
    return "on_demand", None


def _qualifies(el) -> bool:
    text = _text(el)
    return bool(text) and len(text) < 2000 and bool(_HOURLY.search(text) or (
        el.tag == "tr" and any(_BARE.match(t) for t, _ in _cells(el)))) and \
        find_gpu(_COUNT.sub(" ", text)) is not None


def units(tree) -> list:
    """Table rows, then innermost cards outside tables, that hold a GPU name and a price."""
    rows = [tr for tr in tree.iter("tr") if not _skipped(tr) and _qualifies(tr)]
    cards = []
    for el in tree.iter(*_CARD_TAGS):
        if _skipped(el) or next(el.iterancestors("table"), None) is not None \
                or next(el.iter("table"), None) is not None or not _qualifies(el):
            continue
        ancestors = list(el.iterancestors())  # document order: a card's parent came first
        cards = [c for c in cards if c not in ancestors] + [el]  # keep the innermost
    return rows + cards


def _skipped(el) -> bool:
    return any(a.tag in _SKIP for a in el.iterancestors())


def candidates(body: bytes, meta: CaptureMeta) -> list[Offer]:
    """Every candidate row of an HTML body (an empty list for JSON, CSV or a page with none)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return []
    if "<" not in text or text.lstrip()[:1] in ("{", "["):
        return []
    try:
        tree = lxml_html.fromstring(text)
    except (ValueError, lxml_html.etree.ParserError):
        return []
    out: list[Offer] = []
    for unit in units(tree):
        out += _offers(unit, meta)
    return _told_apart(out)


def _told_apart(offers: list[Offer]) -> list[Offer]:
    """Rows that would be one offer (same identity) at different prices, e.g. one GPU priced per
    duration in cells the SKU does not name, get their row text in the SKU so that each stays
    its own candidate through review and release."""
    seen: dict[tuple, int] = {}
    for o in offers:
        key = identity.of_offer(o)
        seen[key] = seen.get(key, 0) + 1
    for o in offers:
        if seen[identity.of_offer(o)] > 1:
            o.sku = f"{o.sku} | {o.extra['row_text']}"[:300]
    return offers


def _offers(unit, meta: CaptureMeta) -> list[Offer]:
    cells = _cells(unit)
    gpu = _gpu_of(cells)
    prices = _prices(cells)
    if gpu is None or not prices:
        return []
    model, wording, count = gpu
    row_text = " | ".join(t for t, _ in cells)
    label = next((t for t, _ in cells if t), wording)
    name_cell = next((t for t, _ in cells if wording in _COUNT.sub(" ", t)), label)
    sku = label if label == name_cell else f"{label} {name_cell}"
    out = []
    for p in prices:
        pricing, months = _pricing(row_text, p.column)
        try:
            out.append(make_offer(
                meta, sku=sku + (f" | {p.column}" if len(prices) > 1 and p.column else ""),
                gpu_model=model, gpu_count=count, pricing_model=pricing,
                commitment_months=months, currency=p.currency,
                price_per_hour=p.value * count if p.per_gpu else p.value,
                extra={"source": "generic", "layout": "unknown", "gpu_wording": wording,
                       "price_text": p.text, "column": p.column or None,
                       "unit": "GPU-hour" if p.per_gpu else "instance-hour",
                       "row_text": row_text[:500]}))
        except ContractError:
            continue  # a value that cannot be an offer is no candidate either
    return out


def held(exc: ParseError, body: bytes, meta: CaptureMeta) -> list[tuple[Offer, str]]:
    """The candidate rows of a page whose parser said "unknown layout: ..." (the wording every
    parser uses for a page it does not recognise), each with its quarantine reason; [] for any
    other parse error and for a page without candidates (the error then stands)."""
    if not exc.problem.startswith(REASON):
        return []
    return [(o, f"{REASON}: candidate row read by the generic extractor "
                f"({o.extra['price_text']!r} beside {o.extra['gpu_wording']!r}); check it "
                "against the archived page before release")
            for o in candidates(body, meta)]
