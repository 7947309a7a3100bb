-- week_snapshot_pairs(week_start, week_end): which two snapshots of each provider does a week
-- compare?
--
-- Per provider read both during the week and before it: its last snapshot of the week
-- (new_date, on or before week_end) and its last snapshot before the week (old_date). Offers
-- appeared or disappeared between the two (offer_turnover).
CREATE OR REPLACE MACRO week_snapshot_pairs(week_start, week_end) AS TABLE
SELECT
    provider,
    max(snapshot_date) FILTER (WHERE snapshot_date >= week_start) AS new_date,
    max(snapshot_date) FILTER (WHERE snapshot_date < week_start) AS old_date
FROM provider_snapshots
WHERE snapshot_date <= week_end
GROUP BY provider
HAVING new_date IS NOT NULL AND old_date IS NOT NULL
