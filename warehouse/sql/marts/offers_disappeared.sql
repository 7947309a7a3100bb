-- offers_disappeared(week_start, week_end): which offers disappeared during the week?
--
-- Per provider, the offer identities (offer_observations) of its last snapshot before the week
-- that its last snapshot of the week no longer listed (week_snapshot_pairs), with their last
-- price in the offer currency. Ordered by provider, sku, region.
CREATE OR REPLACE MACRO offers_disappeared(week_start, week_end) AS TABLE
SELECT * EXCLUDE (offer_id)
FROM (
    -- One row per identity, as the identity is the thing that appeared or disappeared.
    SELECT DISTINCT ON (p.provider, o.offer_id)
        p.provider, p.old_date AS last_seen, o.offer_id, o.sku, o.region, o.gpu_model,
        o.pricing_model, o.price_per_hour, o.currency
    FROM week_snapshot_pairs(week_start, week_end) AS p
    JOIN offer_observations AS o
      ON o.provider = p.provider AND o.snapshot_date = p.old_date
    WHERE NOT EXISTS (
        SELECT 1 FROM offer_observations AS n
        WHERE n.provider = p.provider AND n.snapshot_date = p.new_date
          AND n.offer_id = o.offer_id
    )
)
ORDER BY provider, sku, coalesce(region, '')
