-- price_changes: which offers changed price, when, and by how much?
--
-- Consecutive observations of the same offer identity (see offer_observations) whose price
-- differs. old_date is the last snapshot at the old price, new_date the first at the new one;
-- old_at / new_at are those snapshots' times (snapshot_at): an hourly provider's change within
-- the day is a change, with old_date = new_date and the two times telling the hours apart.
-- missed_snapshots counts provider snapshots between them in which the offer was absent
-- (0 = seen on consecutive snapshots), so a withdrawal and return at another price shows
-- rather than hides. A change of source is no change of offer (warehouse/identity.py): GCP's
-- a2-highgpu-1g spot read from the history export on 2026-07-30 at 1.92802 and from the page on
-- 2026-10-05 at 2.20401 is one change. The gates let one price per offer and snapshot through
-- (the others are quarantined as superseded), so a change with old_at = new_at means a row
-- reached the warehouse around them: a problem to fix, shown rather than hidden.
-- abs_change and pct_change are per instance-hour, in the offer currency. gap_days: days between
-- old_date and new_date. Every change is here, whatever the gap (the offer's history); the
-- questions about a recent period (price_changes_between, the run's price moves) count only
-- changes between snapshots at most the age limit apart: Runpod's 2023-09-29 page against its
-- 2026-09-29 API is a difference over three years, not a change of the last week.
--
-- Each load stores every observation's previous one (offer_points.prev_date, and
-- old_price_per_hour when the price differs), so this view is a filter over offer_points: a
-- question about the last days reads only those days. The snapshot numbering (for
-- missed_snapshots) comes from provider_snapshots.
CREATE OR REPLACE VIEW price_changes AS
SELECT
    i.offer_id,
    p.provider, i.sku, i.region, p.gpu_model, i.gpu_count, i.pricing_model,
    i.commitment_months, i.effective_from, i.variant, i.currency,
    p.prev_date AS old_date,
    p.snapshot_date AS new_date,
    p.prev_at AS old_at,
    p.snapshot_at AS new_at,
    p.old_price_per_hour,
    p.price_per_hour AS new_price_per_hour,
    -- Per GPU-hour prices are not stored: derived as the contract does (make_offer).
    p.old_price_per_hour / i.gpu_count AS old_price_per_gpu_hour,
    p.price_per_hour / i.gpu_count AS new_price_per_gpu_hour,
    p.price_per_hour - p.old_price_per_hour AS abs_change,
    100.0 * (p.price_per_hour - p.old_price_per_hour) / p.old_price_per_hour AS pct_change,
    p.snapshot_date - p.prev_date AS gap_days,
    s.snapshot_no - o.snapshot_no - 1 AS missed_snapshots
FROM offer_points AS p
JOIN offer_ids AS i ON i.offer_no = p.offer_no
JOIN provider_snapshots AS s ON s.provider = p.provider AND s.snapshot_date = p.snapshot_date
    AND s.snapshot_at = p.snapshot_at
JOIN provider_snapshots AS o ON o.provider = p.provider AND o.snapshot_date = p.prev_date
    AND o.snapshot_at = p.prev_at
WHERE p.old_price_per_hour IS NOT NULL
