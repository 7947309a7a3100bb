-- offers_as_of(as_of): what did each provider offer on `as_of`, as far as we know then?
--
-- The one definition of "now" and "as of": each provider's offers from its own latest loaded
-- snapshot on or before `as_of` (a DATE), so a provider whose crawl failed keeps its last good
-- day; age_days says how old that day is (as_of - snapshot_date). latest_offers is this as of
-- current_date; `gpuprices rank` and the weekly report (as of the end of its week) read it too.
--
-- is_announced marks prices that take effect after their snapshot (effective_from later than
-- snapshot_date): not purchasable yet. firm_price is the one definition of a firm quote: a price
-- is not firm when its parser flagged it as a likely placeholder (extra.suspect_placeholder,
-- e.g. Runpod's 0.50 where a rate is missing: spiders/parsers/runpod.py) or marked it as the
-- floor of a dynamic price (extra.price_kind = 'from', Nebius' preemptible "from $X":
-- spiders/parsers/nebius.py). price_caveat says why, in words (NULL for a firm price);
-- rankings put prices that are not firm after the firm ones.
CREATE OR REPLACE MACRO offers_as_of(as_of) AS TABLE
WITH latest AS (
    -- The small table of loaded (provider, snapshot_date) pairs, not a scan of every offer.
    SELECT provider, max(snapshot_date) AS snapshot_date
    FROM provider_snapshots
    WHERE snapshot_date <= as_of
    GROUP BY provider
),
flagged AS (
    SELECT
        o.*,
        CASE
            WHEN json_extract_string(o.extra, '$.suspect_placeholder') = 'true'
                THEN 'price flagged by the parser as a likely placeholder '
                     || '(extra.suspect_placeholder): ranked after the firm prices'
            WHEN json_extract_string(o.extra, '$.price_kind') = 'from'
                THEN 'a ''from'' price: the floor of a dynamic price, not a quote '
                     || '(extra.price_kind=from): ranked after the firm prices'
        END AS price_caveat
    FROM offers AS o
    JOIN latest AS l USING (provider, snapshot_date)
)
SELECT
    * EXCLUDE (price_caveat),
    as_of::DATE - snapshot_date AS age_days,
    coalesce(effective_from > snapshot_date, false) AS is_announced,
    price_caveat IS NULL AS firm_price,
    price_caveat
FROM flagged
