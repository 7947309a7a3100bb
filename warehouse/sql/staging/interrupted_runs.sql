-- interrupted_runs: which runs started and never finished (killed, crashed, out of disk)?
--
-- run_log rows without finished_at. A loading run holds the warehouse alone (DuckDB's writer
-- lock), so whoever can read this view sees no run in progress: an open row is a run that
-- stopped before recording its end. Its `runs` rows, if any, are the provider-days it recorded
-- before it stopped, not a complete run. providers: the providers it set out to read.
CREATE OR REPLACE VIEW interrupted_runs AS
SELECT run_id, started_at, string_split(providers, ',') AS providers
FROM run_log
WHERE finished_at IS NULL
