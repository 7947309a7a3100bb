-- offer_history: how long did each offer keep each price?
--
-- Runs of unchanged price per offer identity (see offer_observations), one row each with
-- valid_from / valid_to (the first and last snapshot dates seen at that price; valid_from_at /
-- valid_to_at the snapshots' times, which tell runs within one day apart). A run ends when
-- the price changes or when the provider was read and the offer was absent. n_snapshots counts
-- the provider's snapshots in the run. is_current: the run reaches the provider's latest
-- snapshot.
--
-- From the observations stored at load time (offer_points): an observation starts a run when
-- it has no previous one, its price differs from the previous one (old_price_per_hour set), or
-- the provider has a snapshot between the two (prev_at before the provider's snapshot
-- preceding this one). Only run starts are windowed: a run ends at the previous observation of
-- the next start, or at the offer's latest observation (offer_ids.last_date). provider and
-- gpu_model are window partition keys so that `WHERE gpu_model = ...` filters the scan.
-- One difference from a plain gaps-and-islands over every row: if one snapshot lists an
-- identity at two prices (a parser or identity problem, see price_changes) the runs split
-- there in (snapshot, price) order.
CREATE OR REPLACE VIEW offer_history AS
WITH starts AS (
    SELECT
        p.provider,
        p.gpu_model,
        p.offer_no,
        p.price_per_hour,
        p.snapshot_date AS valid_from,
        p.snapshot_at AS valid_from_at,
        lead({'d': p.prev_date, 't': p.prev_at}) OVER (
            PARTITION BY p.provider, p.gpu_model, p.offer_no
            ORDER BY p.snapshot_date, p.snapshot_at, p.price_per_hour
        ) AS next_start_prev
    FROM offer_points AS p
    JOIN provider_snapshots AS s ON s.provider = p.provider AND s.snapshot_date = p.snapshot_date
        AND s.snapshot_at = p.snapshot_at
    WHERE p.prev_date IS NULL
       OR p.old_price_per_hour IS NOT NULL
       OR {'d': p.prev_date, 't': p.prev_at}
          < {'d': s.prev_snapshot_date, 't': s.prev_snapshot_at}
),
runs AS (
    SELECT r.* EXCLUDE (next_start_prev), i.*
        EXCLUDE (offer_no, provider, gpu_model, last_price_per_hour, last_date, last_at),
        coalesce(r.next_start_prev.d, i.last_date) AS valid_to,
        CASE WHEN r.next_start_prev IS NULL THEN i.last_at ELSE r.next_start_prev.t END
            AS valid_to_at
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
    r.valid_from_at,
    r.valid_to_at,
    t.snapshot_no - f.snapshot_no + 1 AS n_snapshots,
    t.snapshot_no = t.n_snapshots AS is_current
FROM runs AS r
JOIN provider_snapshots AS f ON f.provider = r.provider AND f.snapshot_date = r.valid_from
    AND f.snapshot_at = r.valid_from_at
JOIN provider_snapshots AS t ON t.provider = r.provider AND t.snapshot_date = r.valid_to
    AND t.snapshot_at = r.valid_to_at
