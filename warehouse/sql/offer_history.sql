-- offer_history: how long did each offer keep each price?
--
-- Runs of unchanged price per offer identity (see offer_observations) collapsed into one row
-- with valid_from / valid_to (the first and last snapshot dates seen at that price). A run
-- ends when the price changes or when the provider was read and the offer was absent
-- (gaps-and-islands: within one identity and price, consecutive provider snapshots share
-- snapshot_no - dense_rank). n_snapshots counts the snapshot dates in the run.
-- is_current: the run reaches the provider's latest snapshot.
-- provider and gpu_model (part of the identity) are window partition and group keys so that a
-- filter on them (`WHERE gpu_model = 'H100-SXM-80GB'`) is applied before the window, not after
-- it over the whole history.
CREATE OR REPLACE VIEW offer_history AS
WITH islands AS (
    SELECT
        *,
        snapshot_no - dense_rank() OVER (
            PARTITION BY provider, gpu_model, offer_id, price_per_hour
            ORDER BY snapshot_no
        ) AS island
    FROM offer_observations
)
SELECT
    offer_id,
    provider,
    any_value(sku) AS sku,
    any_value(region) AS region,
    gpu_model,
    any_value(gpu_count) AS gpu_count,
    any_value(pricing_model) AS pricing_model,
    any_value(commitment_months) AS commitment_months,
    any_value(effective_from) AS effective_from,
    any_value(variant) AS variant,
    any_value(currency) AS currency,
    price_per_hour,
    min(price_per_gpu_hour) AS price_per_gpu_hour,
    min(snapshot_date) AS valid_from,
    max(snapshot_date) AS valid_to,
    -- An island covers consecutive provider snapshots, so this counts dates even when a day
    -- lists the identity twice.
    max(snapshot_no) - min(snapshot_no) + 1 AS n_snapshots,
    max(snapshot_no) = any_value(provider_snapshots) AS is_current
FROM islands
GROUP BY provider, gpu_model, offer_id, price_per_hour, island
