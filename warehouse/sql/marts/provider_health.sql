-- provider_health(week_start, week_end, max_age_days := default_max_age_days()): how healthy was
-- each provider's data in the week?
--
-- Per provider that has a snapshot on or before week_end or a run recorded in the week: its last
-- good snapshot on or before week_end, the rows it holds and its age at week_end (offers_as_of,
-- never negative), is_stale when that age is over max_age_days (its offers are then left out of
-- the report's figures), and the runs recorded for the week (provider_runs, by snapshot date or
-- else run day), how many failed and the last failure's error, and the distinct run statuses
-- (statuses: what warehouse/states.py provider_state reads to name the provider's state);
-- `interrupted`: how many runs that set out to read the provider in the week (by start day)
-- never finished (interrupted_runs), and the last of them.
CREATE OR REPLACE MACRO provider_health(week_start, week_end,
                                       max_age_days := default_max_age_days()) AS TABLE
WITH snapshots AS (
    SELECT provider, snapshot_date AS last_snapshot, age_days, is_stale, count(*) AS rows
    FROM offers_as_of(week_end, max_age_days)
    GROUP BY ALL
),
week_runs AS (
    SELECT
        provider,
        count(*) AS runs,
        count(*) FILTER (WHERE failed) AS failures,
        arg_max(coalesce(error, message), run_day) FILTER (WHERE failed) AS last_error,
        list(DISTINCT status ORDER BY status) AS statuses
    FROM provider_runs
    WHERE coalesce(snapshot_date, run_day) BETWEEN week_start AND week_end
    GROUP BY provider
),
week_interrupted AS (
    SELECT provider, count(*) AS interrupted, arg_max(run_id, started_at) AS last_interrupted
    FROM (SELECT unnest(providers) AS provider, run_id, started_at FROM interrupted_runs)
    WHERE started_at::DATE BETWEEN week_start AND week_end
    GROUP BY provider
)
SELECT
    provider, s.last_snapshot, s.rows, s.age_days, s.is_stale,
    coalesce(r.runs, 0) AS runs, coalesce(r.failures, 0) AS failures, r.last_error,
    coalesce(r.statuses, []) AS statuses,
    coalesce(i.interrupted, 0) AS interrupted, i.last_interrupted
FROM snapshots AS s
FULL OUTER JOIN week_runs AS r USING (provider)
FULL OUTER JOIN week_interrupted AS i USING (provider)
ORDER BY provider
