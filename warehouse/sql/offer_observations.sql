-- offer_observations: what did each offer cost on each snapshot of its provider?
--
-- The offers rows with an offer identity and the provider's snapshot numbering (the staging
-- step under offer_history and price_changes). An offer's identity is what a buyer would call
-- "the same thing": provider, sku, region, gpu_model, gpu_count, pricing_model,
-- commitment_months, effective_from, currency and `variant`, built from the extra keys that tell
-- two such rows apart (offer_key, source = api|page, provider_term such as Azure's
-- "Low Priority"). offer_id is a 64-bit hash of the identity, so windows sort on one key.
-- snapshot_no numbers the provider's own snapshot dates (1 = its first), so a gap in an
-- offer's snapshot_no means the provider was read that day and the offer was absent.
CREATE OR REPLACE VIEW offer_observations AS
WITH variants AS (
    -- Parsed once per distinct extra (a few hundred values a year), not once per row: JSON
    -- extraction over every row was the cost of every history query.
    SELECT
        extra,
        coalesce(concat_ws('|', v[1], v[2], v[3]), '') AS variant
    FROM (
        SELECT extra,
               json_extract_string(extra, ['$.offer_key', '$.source', '$.provider_term']) AS v
        FROM (SELECT DISTINCT extra FROM offers)
    )
),
keyed AS (
    SELECT o.*, coalesce(v.variant, '') AS variant
    FROM offers AS o
    LEFT JOIN variants AS v ON v.extra = o.extra
),
snapshots AS (
    SELECT
        provider,
        snapshot_date,
        row_number() OVER (PARTITION BY provider ORDER BY snapshot_date) AS snapshot_no,
        count(*) OVER (PARTITION BY provider) AS provider_snapshots
    FROM (SELECT DISTINCT provider, snapshot_date FROM offers)
)
SELECT
    hash(k.provider, k.sku, k.region, k.gpu_model, k.gpu_count, k.pricing_model,
         k.commitment_months, k.effective_from, k.currency, k.variant) AS offer_id,
    k.provider, k.sku, k.region, k.gpu_model, k.gpu_count, k.pricing_model,
    k.commitment_months, k.effective_from, k.currency, k.variant,
    k.snapshot_date,
    s.snapshot_no,
    s.provider_snapshots,
    k.price_per_hour,
    k.price_per_gpu_hour
FROM keyed AS k
JOIN snapshots AS s USING (provider, snapshot_date)
