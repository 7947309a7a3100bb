-- offer_turnover(week_start, week_end, max_age_days := default_max_age_days()): which offers
-- appeared and which disappeared during the week?
--
-- Per provider read both during the week and before it, in snapshots at most max_age_days
-- apart (week_snapshot_pairs, comparable): the offer
-- identities (offer_observations) its last snapshot of the week lists and its last snapshot
-- before the week did not (change = 'appeared', listed_on = the week's snapshot), and the other
-- way round (change = 'disappeared', listed_on = the snapshot before the week), with their
-- price in the offer currency on listed_on. One row per identity: the identity is what appeared
-- or disappeared, whatever source each snapshot read it from (warehouse/identity.py: a history
-- export one week and the pricing page the next list the same offers).
--
-- A known machine with a new price column is not a new offer: when the other snapshot lists the
-- same SKU (sku, region, GPU model and count) under another identity, the row is 'new_pricing'
-- (a pricing model, term, variant, currency or announced price added to a machine already
-- listed: Nebius' 2026-09-30 page adds "from" spot floors and announced on-demand prices to
-- SKUs its 2026-08-22 page listed) or 'pricing_withdrawn' (a price column dropped from a
-- machine still listed), not 'appeared' / 'disappeared'. Counted apart, because a buyer
-- gains or loses a way to pay for a machine, while the market gained or lost no machine.
--
-- Never against a partial capture (week_snapshot_pairs' old_partial / new_partial): an offer
-- absent from a hand-trimmed excerpt, one page of a book or a diff was not read, not withdrawn
-- (GPU.ai's 2026-08-25 capture is page 2 of its pricing book: page 1's offers are not gone),
-- and one absent from an older partial capture is not new.
--
-- A day with several snapshots (an hourly provider) counts its latest (is_day_last).
--
-- Only where the other snapshot was read: an offer counts as disappeared only if the newer
-- snapshot lists some offer of the provider in its region, and as appeared only if the older
-- one does. A source that covers fewer regions is not a withdrawal: GCP's pricing page
-- (2026-10-05) prices us-central1 only, its history export (2026-07-30) 40 regions, and the
-- 3,500 offers of the other 39 regions were not read, not withdrawn. Providers without
-- regions (region NULL) are one region. Ordered by change, provider, sku, region, pricing
-- model, price.
CREATE OR REPLACE MACRO offer_turnover(week_start, week_end,
                                      max_age_days := default_max_age_days()) AS TABLE
WITH sides AS (
    SELECT provider, 'appeared' AS change, new_date AS listed_on, old_date AS absent_on
    FROM week_snapshot_pairs(week_start, week_end, max_age_days := max_age_days)
    WHERE comparable AND old_partial IS NULL
    UNION ALL
    SELECT provider, 'disappeared', old_date, new_date
    FROM week_snapshot_pairs(week_start, week_end, max_age_days := max_age_days)
    WHERE comparable AND new_partial IS NULL
)
SELECT *
FROM (
    SELECT DISTINCT ON (s.change, s.provider, o.offer_id)
        CASE WHEN EXISTS (
            SELECT 1 FROM offer_observations AS k
            WHERE k.provider = s.provider AND k.snapshot_date = s.absent_on AND k.is_day_last
              AND k.sku = o.sku
              AND k.region IS NOT DISTINCT FROM o.region
              AND k.gpu_model IS NOT DISTINCT FROM o.gpu_model AND k.gpu_count = o.gpu_count
        ) THEN CASE s.change WHEN 'appeared' THEN 'new_pricing' ELSE 'pricing_withdrawn' END
        ELSE s.change END AS change,
        s.provider, s.listed_on, o.offer_id, o.sku, o.region, o.gpu_model,
        o.pricing_model, o.price_per_hour, o.currency,
        -- the rest of the identity, so rows that read alike can be told apart
        o.commitment_months, o.variant
    FROM sides AS s
    JOIN offer_observations AS o
      ON o.provider = s.provider AND o.snapshot_date = s.listed_on AND o.is_day_last
    WHERE NOT EXISTS (
        SELECT 1 FROM offer_observations AS a
        WHERE a.provider = s.provider AND a.snapshot_date = s.absent_on AND a.is_day_last
          AND a.offer_id = o.offer_id
    )
      AND EXISTS (
        SELECT 1 FROM offer_observations AS r
        WHERE r.provider = s.provider AND r.snapshot_date = s.absent_on AND r.is_day_last
          AND r.region IS NOT DISTINCT FROM o.region
    )
)
ORDER BY change, provider, sku, coalesce(region, ''), pricing_model, price_per_hour
