-- provider_classes: what kind of seller is each provider, so that a buyer compares like with
-- like?
--
-- One row per provider declared in spiders/registry.py (the `providers` table, replaced at
-- every load from the declarations). kind: hyperscaler (GPUs among every other cloud product),
-- gpu_cloud or inference_host (GPU hours only to serve the buyer's own model or app). supply: own (runs its own data centres: one price per SKU, one operator to hold
-- to an SLA), marketplace (lists many independent hosts' offers for the same GPU at different
-- prices: the cheapest listing is one host's, whose reliability varies), reseller (sells
-- capacity rented from data-centre partners under its own price list) or aggregator (lists
-- other clouds' machines, each row naming its cloud where the source does: extra.underlying,
-- extra.via; a row of a cloud we read first-party is set apart by price_caveat, so one machine
-- never counts as two providers' offers: docs/providers.md, "Kinds of seller"). latest_offers and
-- cheapest_now carry `supply` beside `provider`; the report shows it next to each offer.
CREATE OR REPLACE VIEW provider_classes AS
SELECT provider, name, kind, supply
FROM providers
