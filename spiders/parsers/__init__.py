"""Parsers: pure functions from archived bytes to offers, one module per provider.

Each module `spiders/parsers/<provider>.py` exposes `parse(body: bytes, meta: CaptureMeta) ->
list[Offer]`. It chooses a layout by what the body contains (never by its date), and raises
`ParseError` naming the provider, the URL and what was missing. It never returns an empty list
for a body that should hold prices.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from warehouse.contract import PROVIDERS, CaptureMeta, Offer

Parser = Callable[[bytes, CaptureMeta], list[Offer]]


class ParseError(Exception):
    """A body that could not be turned into offers, with where it came from."""

    def __init__(self, provider: str, url: str, problem: str) -> None:
        self.provider = provider
        self.url = url
        self.problem = problem
        super().__init__(f"{provider}: {url}: {problem}")


def parser_for(provider: str) -> Parser:
    if provider not in PROVIDERS:
        raise KeyError(f"unknown provider {provider!r}; known: {', '.join(PROVIDERS)}")
    module = importlib.import_module(f"spiders.parsers.{provider}")
    return module.parse


def wants(meta: CaptureMeta) -> bool:
    """Whether a capture is a price document. A parser module may define `wants(meta)` to pass
    over archived responses that hold no prices by design (an index that lists other files)."""
    module = importlib.import_module(f"spiders.parsers.{meta.provider}")
    check = getattr(module, "wants", None)
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


def postprocess(provider: str, offers: list[Offer], captures: list) -> list[Offer]:
    """A provider's whole-day step after each capture was parsed alone, for facts that span
    captures (AWS: spot offers take the interruption band from the day's spot-advisor capture).
    A parser module opts in by defining `postprocess(offers, captures) -> offers`."""
    module = importlib.import_module(f"spiders.parsers.{provider}")
    hook = getattr(module, "postprocess", None)
    return offers if hook is None else hook(offers, captures)
