-- offers_as_of(as_of, max_age_days := default_max_age_days()): what did each provider offer on
-- `as_of`, as far as we know then, and is it recent enough to act on?
--
-- The one definition of "now" and "as of": each provider's offers from its own latest loaded
-- snapshot on or before `as_of` (a DATE), so a provider whose crawl failed keeps its last good
-- day; age_days says how old that day is (as_of - snapshot_date, never negative). is_stale: that
-- day is more than max_age_days old (default 14, staging/default_max_age_days.sql): the offer is
-- listed, with its date, but never recommended nor counted as "cheapest" or "lowest".
-- latest_offers is this as of the warehouse's "today"; `gpuprices rank` and the weekly report
-- (as of the end of its week) read it too.
--
-- is_announced marks prices that take effect after their snapshot (effective_from later than
-- snapshot_date): not purchasable yet. firm_price / price_caveat: the parser's word on whether
-- the price is a firm quote (staging/price_caveat.sql, the one definition; price_caveat says
-- why not in words, NULL for a firm price). Figures take only rows that are firm, not stale and
-- not announced.
CREATE OR REPLACE MACRO offers_as_of(as_of, max_age_days := default_max_age_days()) AS TABLE
WITH latest AS (
    -- The small table of loaded (provider, snapshot_date) pairs, not a scan of every offer.
    SELECT provider, max(snapshot_date) AS snapshot_date
    FROM provider_snapshots
    WHERE snapshot_date <= as_of
    GROUP BY provider
)
SELECT
    o.*,
    as_of::DATE - o.snapshot_date AS age_days,
    as_of::DATE - o.snapshot_date > max_age_days::INTEGER AS is_stale,
    coalesce(o.effective_from > o.snapshot_date, false) AS is_announced,
    price_caveat(o.extra) IS NULL AS firm_price,
    price_caveat(o.extra) AS price_caveat
FROM offers AS o
JOIN latest AS l USING (provider, snapshot_date)
