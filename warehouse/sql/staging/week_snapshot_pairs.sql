-- week_snapshot_pairs(week_start, week_end, max_age_days := default_max_age_days()): which two
-- snapshots of each provider does a week compare?
--
-- Per provider read both during the week and before it: its last snapshot of the week
-- (new_date, on or before week_end) and its last snapshot before the week (old_date), gap_days
-- between them, and `comparable`: whether they are at most max_age_days apart (the age limit
-- of "now"). Only comparable pairs make offers appear or disappear (offer_turnover): a
-- snapshot older than the age limit is not "last week". Runpod's 2023-09-29 pricing page
-- against its 2026-09-29 API is three years, not a week-over-week change; the pair is listed
-- (comparable false) so the report can say which providers were not compared and why.
-- old_partial / new_partial: why that day's latest snapshot (is_day_last, the one offer_turnover
-- compares; new_at / old_at its time) was read from a partial capture (partial_snapshots), else
-- NULL: offers absent from it were not read, so they neither appear nor disappear against it. An
-- hourly provider's earlier partial snapshot of the day does not mark the day.
CREATE OR REPLACE MACRO week_snapshot_pairs(week_start, week_end,
                                           max_age_days := default_max_age_days()) AS TABLE
SELECT w.provider, w.new_date, w.old_date, w.gap_days, w.gap_days <= max_age_days AS comparable,
       po.partial AS old_partial, pn.partial AS new_partial, sn.snapshot_at AS new_at,
       so.snapshot_at AS old_at
FROM (
    SELECT
        provider,
        max(snapshot_date) FILTER (WHERE snapshot_date >= week_start) AS new_date,
        max(snapshot_date) FILTER (WHERE snapshot_date < week_start) AS old_date,
        new_date - old_date AS gap_days
    FROM provider_snapshots
    WHERE snapshot_date <= week_end
    GROUP BY provider
    HAVING new_date IS NOT NULL AND old_date IS NOT NULL
) AS w
JOIN provider_snapshots AS so
  ON so.provider = w.provider AND so.snapshot_date = w.old_date AND so.is_day_last
JOIN provider_snapshots AS sn
  ON sn.provider = w.provider AND sn.snapshot_date = w.new_date AND sn.is_day_last
LEFT JOIN partial_snapshots AS po
  ON po.provider = w.provider AND po.snapshot_date = w.old_date AND po.snapshot_at = so.snapshot_at
LEFT JOIN partial_snapshots AS pn
  ON pn.provider = w.provider AND pn.snapshot_date = w.new_date AND pn.snapshot_at = sn.snapshot_at
