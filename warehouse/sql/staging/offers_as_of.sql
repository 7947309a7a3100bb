-- offers_as_of(as_of, max_age_days := default_max_age_days()): what did each provider offer on
-- `as_of`, as far as we know then, and is it recent enough to act on?
--
-- The one definition of "now" and "as of": each provider's offers from its own latest loaded
-- snapshot on or before `as_of` (a DATE; of a day with several snapshots, its latest), so a provider whose crawl failed keeps its last good
-- day; age_days says how old that day is (as_of - snapshot_date, never negative). is_stale: that
-- day is more than max_age_days old (default 14, staging/default_max_age_days.sql): the offer is
-- listed, with its date, but never recommended nor counted as "cheapest" or "lowest".
-- latest_offers is this as of the warehouse's "today"; `gpuprices rank` and the weekly report
-- (as of the end of its week) read it too.
--
-- Announced prices (a row with an effective_from, e.g. Nebius' "Effective October 1, 2026"
-- column) count against `as_of`, not against their snapshot: per offer (its identity without
-- effective_from: sku, region, model, count, pricing model, term, currency and the variant keys
-- of warehouse/identity.py VARIANT_KEYS) the row in force on as_of is the one with the latest
-- start (effective_from, or the snapshot date when it has none) on or before as_of; the rows it
-- replaced are not listed (that price has ended). is_announced marks the rows that start after
-- as_of: not purchasable yet. firm_price / price_caveat: the parser's word on whether the price
-- is a firm quote (staging/price_caveat.sql, the one definition; price_caveat says why not in
-- words, NULL for a firm price). Figures take only rows that are firm, not stale and not
-- announced.
CREATE OR REPLACE MACRO offers_as_of(as_of, max_age_days := default_max_age_days()) AS TABLE
WITH latest AS (
    -- The small table of loaded snapshots, not a scan of every offer.
    SELECT provider, m.d AS snapshot_date, m.t AS snapshot_at
    FROM (SELECT provider, max({'d': snapshot_date, 't': snapshot_at}) AS m
          FROM provider_snapshots
          WHERE snapshot_date <= as_of
          GROUP BY provider)
),
listed AS (
    SELECT
        o.*,
        coalesce(o.effective_from, o.snapshot_date) AS _starts,
        -- The offer without its effective_from, as one text (NULL-safe to compare).
        concat_ws('|', o.sku, coalesce(o.region, ''), coalesce(o.gpu_model, ''),
                  coalesce(o.gpu_count::VARCHAR, ''), o.pricing_model,
                  coalesce(o.commitment_months::VARCHAR, ''), o.currency,
                  json_extract_string(o.extra, ['$.provider_term', '$.tier', '$.price_kind',
                                                '$.gcp_model', '$.offer_key', '$.market_stat',
                                                '$.cluster_duration', '$.cluster_gpus'])::VARCHAR
        ) AS _offer
    FROM offers AS o
    JOIN latest AS l USING (provider, snapshot_date, snapshot_at)
),
took_effect AS (
    -- Announced prices in force by as_of (a handful of rows): each ends its offer's earlier rows.
    SELECT provider, _offer, max(effective_from) AS _since
    FROM listed
    WHERE effective_from > snapshot_date AND effective_from <= as_of
    GROUP BY ALL
)
SELECT
    l.* EXCLUDE (_starts, _offer),
    as_of::DATE - l.snapshot_date AS age_days,
    as_of::DATE - l.snapshot_date > max_age_days::INTEGER AS is_stale,
    coalesce(l.effective_from > as_of::DATE, false) AS is_announced,
    price_caveat(l.extra) IS NULL AS firm_price,
    price_caveat(l.extra) AS price_caveat
FROM listed AS l
LEFT JOIN took_effect AS t USING (provider, _offer)
WHERE t._since IS NULL OR l._starts >= t._since
