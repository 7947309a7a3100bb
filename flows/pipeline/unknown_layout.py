"""Pages in a layout no parser knows, in a run: their candidate rows (spiders/generic.py)
are held in quarantine with the reason "unknown layout" and make the provider-day degraded; a
row a reviewer released (`gpuprices quarantine release`) passes the gates on later reparses like
any released row. Nothing the generic extractor reads is loaded without that release."""

from __future__ import annotations

from gpuprices.flows.pipeline import gates
from gpuprices.spiders import generic
from gpuprices.warehouse import identity
from gpuprices.warehouse.contract import Offer


def split_released(ref: gates.Reference, held: list[tuple[Offer, str]]
                   ) -> tuple[list[Offer], list[tuple[Offer, str]]]:
    """The held rows a reviewer released at their price (to be gated and loaded), and the rest
    with their reasons (to stay in quarantine)."""
    released, kept = [], []
    for o, reason in held:
        if gates.is_released(ref, identity.of_offer(o), o.price_per_hour):
            released.append(o)
        else:
            kept.append((o, reason))
    return released, kept


def note(kept: list[tuple[Offer, str]], pages: list[str]) -> str | None:
    """What the degraded status (run summary, alert) says of the day's unknown layouts."""
    if not kept:
        return None
    return (f"{len(kept)} candidate rows of an unknown layout held in quarantine for review "
            "(gpuprices quarantine list, then release): " + "; ".join(pages))


def reason_kind(reason: str) -> str:
    """The kind of a quarantine reason, for the counts: its first word ("band", "move", ...),
    or "unknown layout" for the generic extractor's candidates."""
    if reason.startswith(generic.REASON):
        return generic.REASON
    return reason.split(":", 1)[0].split(" ", 1)[0]
