-- latest_snapshot: what is the newest snapshot date in the warehouse, and which day is "today"?
--
-- One row: snapshot_date is NULL when nothing is loaded; as_of is that day, never later than
-- current_date: the day latest_offers, cheapest_now and `gpuprices rank` without --date read
-- the warehouse as of (after a nightly crawl, today; in a replayed archive, its last day). The
-- weekly report defaults to this day's ISO week.
CREATE OR REPLACE VIEW latest_snapshot AS
SELECT max(snapshot_date) AS snapshot_date, least(max(snapshot_date), current_date) AS as_of
FROM provider_snapshots
