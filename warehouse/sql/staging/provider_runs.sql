-- provider_runs: which runs were recorded for each provider, on which day, and did they fail?
--
-- The `runs` table (one row per provider per nightly run) with the day the run belongs to
-- (run_day: its start, or for a run recorded without one the timestamp its run_id starts with,
-- YYYYMMDDTHHMMSS) and `failed`: the statuses that mean the provider's prices were not
-- refreshed (failed, degraded, stale; see warehouse/db.py RUN_STATUSES); `interrupted`: the
-- row belongs to a run that never finished (interrupted_runs), so it is not a complete run's.
CREATE OR REPLACE VIEW provider_runs AS
SELECT
    *,
    coalesce(started_at::DATE, try_strptime(left(run_id, 15), '%Y%m%dT%H%M%S')::DATE)
        AS run_day,
    status IN ('failed', 'degraded', 'stale') AS failed,
    run_id IN (SELECT run_id FROM interrupted_runs) AS interrupted
FROM runs
