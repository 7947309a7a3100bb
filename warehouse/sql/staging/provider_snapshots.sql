-- provider_snapshots: on which days was each provider read, and in what order?
--
-- One row per loaded (provider, snapshot_date) pair. snapshot_no numbers the provider's own
-- snapshot dates (1 = its first), so a gap in an offer's snapshot_no means the provider was read
-- that day and the offer was absent; prev_snapshot_date is the provider's snapshot before this
-- one; latest_snapshot_date its newest; n_snapshots how many it has. Numbered here over the
-- small table every load keeps (warehouse/db.py: snapshot_dates, a few thousand rows), so
-- loading a snapshot in the middle of history renumbers nothing stored.
CREATE OR REPLACE VIEW provider_snapshots AS
SELECT
    provider,
    snapshot_date,
    row_number() OVER w AS snapshot_no,
    lag(snapshot_date) OVER w AS prev_snapshot_date,
    max(snapshot_date) OVER (PARTITION BY provider) AS latest_snapshot_date,
    count(*) OVER (PARTITION BY provider) AS n_snapshots
FROM snapshot_dates
WINDOW w AS (PARTITION BY provider ORDER BY snapshot_date)
