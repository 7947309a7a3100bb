-- latest_offers: what does each provider offer now, as far as we know?
--
-- Each provider's offers from its own latest loaded snapshot_date, so a provider whose crawl
-- failed tonight keeps its last good day; age_days tells how old that day is
-- (current_date - snapshot_date). is_announced marks prices that take effect after the
-- snapshot (effective_from later than snapshot_date).
CREATE OR REPLACE VIEW latest_offers AS
WITH latest AS (
    -- The small table of loaded (provider, snapshot_date) pairs, not a scan of every offer.
    SELECT provider, max(snapshot_date) AS snapshot_date
    FROM snapshot_dates
    GROUP BY provider
)
SELECT
    o.*,
    current_date - o.snapshot_date AS age_days,
    coalesce(o.effective_from > o.snapshot_date, false) AS is_announced
FROM offers AS o
JOIN latest AS l USING (provider, snapshot_date)
