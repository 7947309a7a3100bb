-- latest_snapshot: what is the newest snapshot date in the warehouse?
--
-- One row: snapshot_date is NULL when nothing is loaded. The weekly report defaults to this
-- day's ISO week, `gpuprices rank` to this day.
CREATE OR REPLACE VIEW latest_snapshot AS
SELECT max(snapshot_date) AS snapshot_date FROM provider_snapshots
