-- provider_coverage(as_of, max_age_days := default_max_age_days()): how many providers do the
-- figures of a day cover, and which are left out?
--
-- One row per provider the registry declares (the table `providers`) or the warehouse holds
-- snapshots of: its latest snapshot on or before as_of, that snapshot's age in days, and
-- `coverage`: 'fresh' (at most max_age_days old: its firm prices are in every figure), 'stale'
-- (older: listed apart, in no figure; the same rule as offers_as_of's is_stale) or 'no data'
-- (never read). The report and `gpuprices nightly` open with the sentence these rows make
-- ("figures cover 7 of 31 providers; 24 stale, listed below": reports/coverage.py), so the
-- cheapest H100 is never read as the market's when most providers sit in the stale list.
CREATE OR REPLACE MACRO provider_coverage(as_of, max_age_days := default_max_age_days()) AS TABLE
WITH latest AS (
    SELECT provider, max(snapshot_date) AS last_snapshot
    FROM provider_snapshots
    WHERE snapshot_date <= as_of
    GROUP BY provider
),
known AS (
    SELECT provider FROM providers
    UNION
    SELECT provider FROM latest
)
SELECT
    k.provider,
    l.last_snapshot,
    as_of::DATE - l.last_snapshot AS age_days,
    CASE
        WHEN l.last_snapshot IS NULL THEN 'no data'
        WHEN as_of::DATE - l.last_snapshot > max_age_days THEN 'stale'
        ELSE 'fresh'
    END AS coverage
FROM known AS k
LEFT JOIN latest AS l USING (provider)
ORDER BY coverage, provider
