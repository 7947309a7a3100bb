"""Parsed offers by a key, for the parser tests: a key given twice fails the test (a parser that
emits one row twice would otherwise pass with the last one)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from gpuprices.warehouse.contract import Offer


def by_term(o: Offer) -> tuple:
    return o.sku, o.pricing_model, o.commitment_months


def index(offers: Iterable[Offer], key: Callable[[Offer], Hashable] = by_term
          ) -> dict[Hashable, Offer]:
    """key(offer) -> offer; (sku, pricing_model, commitment_months) by default."""
    out = {}
    for o in offers:
        k = key(o)
        assert k not in out, f"duplicate row {k}"
        out[k] = o
    return out
