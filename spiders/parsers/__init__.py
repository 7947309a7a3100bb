"""Parsers: pure functions from archived bytes to offers, one per provider, and their dispatch.

Each provider's `spiders/providers/<id>/parser.py` (found through `gpuprices.spiders.registry`)
exposes `parse(body: bytes, meta: CaptureMeta) -> list[Offer]`. It chooses a layout by what the
body contains (never by its date), and raises `ParseError` naming the provider, the URL and what
was missing. It never returns an empty list for a body that should hold prices. Helpers every
parser uses are in `spiders/parsers/_util.py`.
"""

from __future__ import annotations

from collections import Counter
from contextvars import ContextVar

from gpuprices.spiders.registry import parser_for, parser_module
from gpuprices.warehouse.contract import CaptureMeta, Offer, row_problems_held

# The rows the parser now running passed over, by reason (set by parse_body_counted). A parser
# stays a pure function returning offers; what it leaves out is told on this side channel.
_SKIPPED: ContextVar[Counter | None] = ContextVar("skipped_rows", default=None)


class ParseError(Exception):
    """A body that could not be turned into offers, with where it came from."""

    def __init__(self, provider: str, url: str, problem: str) -> None:
        self.provider = provider
        self.url = url
        self.problem = problem
        super().__init__(f"{provider}: {url}: {problem}")


def wants(meta: CaptureMeta) -> bool:
    """Whether a capture is a price document. A parser module may define `wants(meta)` to pass
    over archived responses that hold no prices by design (an index that lists other files)."""
    check = getattr(parser_module(meta.provider), "wants", None)
    return True if check is None else bool(check(meta))


def parse_body(body: bytes, meta: CaptureMeta) -> list[Offer]:
    """Parse one archived response with its provider's parser, refusing what cannot hold prices
    (an error status, an empty body) and a parse that found nothing."""
    if meta.status and meta.status != 200:
        raise ParseError(meta.provider, meta.url, f"HTTP status {meta.status}, no prices to read")
    if not body or not body.strip():
        raise ParseError(meta.provider, meta.url, "empty response body")
    offers = parser_for(meta.provider)(body, meta)
    if not offers:
        raise ParseError(meta.provider, meta.url, "no offers in a page that should have prices")
    return offers


def skip_row(reason: str) -> None:
    """Count one row (an instance with no readable price, a row cut short) the parser passes
    over, so the run summary can say how many and why instead of dropping them silently."""
    counter = _SKIPPED.get()
    if counter is not None:
        counter[reason] += 1


def parse_body_counted(body: bytes, meta: CaptureMeta) -> tuple[list[Offer], dict[str, int]]:
    """parse_body, and the rows the parser passed over by reason. A row that breaks the offer
    contract (warehouse/contract.py row_problems_held) comes back marked for the gates to hold."""
    token = _SKIPPED.set(Counter())
    try:
        with row_problems_held():  # one row with a bad value is held, not the page's failure
            offers = parse_body(body, meta)
        return offers, dict(_SKIPPED.get() or {})
    finally:
        _SKIPPED.reset(token)


def postprocess(provider: str, offers: list[Offer], captures: list) -> list[Offer]:
    """A provider's whole-day step after each capture was parsed alone, for facts that span
    captures (AWS: spot offers take the interruption band from the day's spot-advisor capture).
    A parser module opts in by defining `postprocess(offers, captures) -> offers`."""
    hook = getattr(parser_module(provider), "postprocess", None)
    return offers if hook is None else hook(offers, captures)
