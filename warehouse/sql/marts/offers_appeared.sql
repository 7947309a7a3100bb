-- offers_appeared(week_start, week_end): which offers appeared during the week?
--
-- Per provider, the offer identities (offer_observations) of its last snapshot of the week that
-- its last snapshot before the week did not list (week_snapshot_pairs), with their price in the
-- offer currency. Ordered by provider, sku, region.
CREATE OR REPLACE MACRO offers_appeared(week_start, week_end) AS TABLE
SELECT * EXCLUDE (offer_id)
FROM (
    -- One row per identity, as the identity is the thing that appeared or disappeared.
    SELECT DISTINCT ON (p.provider, n.offer_id)
        p.provider, p.new_date AS since, n.offer_id, n.sku, n.region, n.gpu_model,
        n.pricing_model, n.price_per_hour, n.currency
    FROM week_snapshot_pairs(week_start, week_end) AS p
    JOIN offer_observations AS n
      ON n.provider = p.provider AND n.snapshot_date = p.new_date
    WHERE NOT EXISTS (
        SELECT 1 FROM offer_observations AS o
        WHERE o.provider = p.provider AND o.snapshot_date = p.old_date
          AND o.offer_id = n.offer_id
    )
)
ORDER BY provider, sku, coalesce(region, '')
