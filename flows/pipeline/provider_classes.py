"""The provider registry's declarations (id, name, kind, supply) as the warehouse's `providers`
table: the warehouse cannot import spiders/, so every load passes them in, as the report passes
node shapes to sizing. Read back through the view `provider_classes`."""

from __future__ import annotations

from gpuprices.spiders import registry
from gpuprices.warehouse import db


def declared() -> list[dict[str, str]]:
    """One row per declared provider, in the registry's order."""
    return [dict(provider=p.id, name=p.name, kind=p.kind, supply=p.supply)
            for p in registry.declarations().values()]


def store(con) -> int:
    """Replace the warehouse's `providers` table with today's declarations."""
    return db.load_providers(con, declared())
