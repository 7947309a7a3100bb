-- offer_observations: what did each offer cost on each snapshot of its provider?
--
-- One row per offer identity, snapshot and price (snapshot_at: several a day for an hourly
-- provider; is_day_last: the day's latest snapshot), with the provider's snapshot numbering
-- (the staging view under the history questions). An offer's identity is what a buyer would
-- call "the same thing": provider, sku, region, gpu_model, gpu_count, pricing_model,
-- commitment_months, effective_from, currency and `variant`, built from the extra keys that
-- tell two such rows apart (provider_term such as Azure's "Low Priority", GCP's gcp_model, …:
-- warehouse/identity.py). Where a price was read (api, page, history export) is not part of
-- it: an offer read from a history export one week and the page the next is one offer, and the
-- gates let one price per offer and provider-day through. offer_id is a 64-bit hash of the
-- identity.
-- snapshot_no numbers the provider's own snapshot dates (1 = its first), so a gap in an
-- offer's snapshot_no means the provider was read that day and the offer was absent.
--
-- Reads the tables every load maintains (warehouse/db.py: offer_ids, offer_points) rather than
-- deriving identities from the offer rows at query time; snapshot_no comes from
-- provider_snapshots.
CREATE OR REPLACE VIEW offer_observations AS
SELECT
    i.offer_id,
    p.provider, i.sku, i.region, p.gpu_model, i.gpu_count, i.pricing_model,
    i.commitment_months, i.effective_from, i.currency, i.variant,
    p.snapshot_date,
    p.snapshot_at,
    s.is_day_last,
    s.snapshot_no,
    s.n_snapshots AS provider_snapshots,
    p.price_per_hour,
    -- Not stored: derived as the contract does (make_offer), so equal to offers' value.
    p.price_per_hour / i.gpu_count AS price_per_gpu_hour
FROM offer_points AS p
JOIN offer_ids AS i ON i.offer_no = p.offer_no
JOIN provider_snapshots AS s ON s.provider = p.provider AND s.snapshot_date = p.snapshot_date
    AND s.snapshot_at = p.snapshot_at
-- A repeat of the same (offer, snapshot, price) in one partition is one observation.
WHERE p.dup_no = 0
