-- price_changes: which offers changed price, when, and by how much?
--
-- Consecutive observations of the same offer identity (see offer_observations) whose price
-- differs. old_date is the last snapshot at the old price, new_date the first at the new one.
-- missed_snapshots counts provider snapshots between them in which the offer was absent
-- (0 = seen on consecutive snapshots), so a withdrawal and return at another price shows
-- rather than hides. If one snapshot lists an identity twice at two prices, that shows as a
-- change with old_date = new_date (a parser or identity problem to fix, not to hide).
-- abs_change and pct_change are per instance-hour, in the offer currency.
CREATE OR REPLACE VIEW price_changes AS
WITH seq AS (
    SELECT
        *,
        lag(price_per_hour) OVER w AS old_price_per_hour,
        lag(price_per_gpu_hour) OVER w AS old_price_per_gpu_hour,
        lag(snapshot_date) OVER w AS old_date,
        lag(snapshot_no) OVER w AS old_snapshot_no
    FROM offer_observations
    WINDOW w AS (
        PARTITION BY offer_id
        ORDER BY snapshot_no, price_per_hour
    )
)
SELECT
    offer_id,
    provider, sku, region, gpu_model, gpu_count, pricing_model, commitment_months,
    effective_from, variant, currency,
    old_date,
    snapshot_date AS new_date,
    old_price_per_hour,
    price_per_hour AS new_price_per_hour,
    old_price_per_gpu_hour,
    price_per_gpu_hour AS new_price_per_gpu_hour,
    price_per_hour - old_price_per_hour AS abs_change,
    100.0 * (price_per_hour - old_price_per_hour) / old_price_per_hour AS pct_change,
    snapshot_no - old_snapshot_no - 1 AS missed_snapshots
FROM seq
WHERE old_price_per_hour IS NOT NULL
  AND price_per_hour <> old_price_per_hour
