-- offer_history: how long did each offer keep each price?
--
-- Runs of unchanged price per offer identity (see offer_observations), one row each with
-- valid_from / valid_to (the first and last snapshot dates seen at that price). A run ends when
-- the price changes or when the provider was read and the offer was absent. n_snapshots counts
-- the provider's snapshot dates in the run. is_current: the run reaches the provider's latest
-- snapshot.
--
-- From the observations stored at load time (offer_points): an observation starts a run when
-- it has no previous one, its price differs from the previous one (old_price_per_hour set), or
-- the provider has a snapshot between the two (prev_date before the provider's snapshot
-- preceding this one). Only run starts are windowed: a run ends at the previous observation of
-- the next start, or at the offer's latest observation (offer_ids.last_date). provider and
-- gpu_model are window partition keys so that `WHERE gpu_model = ...` filters the scan.
-- One difference from a plain gaps-and-islands over every row: if one snapshot lists an
-- identity at two prices (a parser or identity problem, see price_changes) the runs split
-- there in (date, price) order.
CREATE OR REPLACE VIEW offer_history AS
WITH starts AS (
    SELECT
        p.provider,
        p.gpu_model,
        p.offer_no,
        p.price_per_hour,
        p.snapshot_date AS valid_from,
        lead(p.prev_date) OVER (
            PARTITION BY p.provider, p.gpu_model, p.offer_no
            ORDER BY p.snapshot_date, p.price_per_hour
        ) AS next_start_prev
    FROM offer_points AS p
    JOIN provider_snapshots AS s ON s.provider = p.provider AND s.snapshot_date = p.snapshot_date
    WHERE p.prev_date IS NULL
       OR p.old_price_per_hour IS NOT NULL
       OR p.prev_date < s.prev_snapshot_date
),
runs AS (
    SELECT r.*, i.*
        EXCLUDE (offer_no, provider, gpu_model, last_price_per_hour),
        coalesce(r.next_start_prev, i.last_date) AS valid_to
    FROM starts AS r
    JOIN offer_ids AS i ON i.offer_no = r.offer_no
)
SELECT
    r.offer_id,
    r.provider,
    r.sku,
    r.region,
    r.gpu_model,
    r.gpu_count,
    r.pricing_model,
    r.commitment_months,
    r.effective_from,
    r.variant,
    r.currency,
    r.price_per_hour,
    -- Not stored: derived as the contract does (make_offer), so equal to offers' value.
    r.price_per_hour / r.gpu_count AS price_per_gpu_hour,
    r.valid_from,
    r.valid_to,
    t.snapshot_no - f.snapshot_no + 1 AS n_snapshots,
    r.valid_to = t.latest_snapshot_date AS is_current
FROM runs AS r
JOIN provider_snapshots AS f ON f.provider = r.provider AND f.snapshot_date = r.valid_from
JOIN provider_snapshots AS t ON t.provider = r.provider AND t.snapshot_date = r.valid_to
