-- provider_snapshots: when was each provider read, and in what order?
--
-- One row per loaded snapshot (provider, snapshot_date, snapshot_at): a daily provider has one a
-- day, an hourly one several (warehouse/contract.py). snapshot_no numbers the provider's own
-- snapshots in time order (1 = its first), so a gap in an offer's snapshot_no means the provider
-- was read then and the offer was absent; prev_snapshot_date / prev_snapshot_at is the
-- provider's snapshot before this one; latest_snapshot_date its newest day; n_snapshots how many
-- it has; is_day_last marks the day's latest snapshot, the one daily questions (cheapest_daily,
-- the index, "as of" a day) read. Numbered here over the small table every load keeps
-- (warehouse/db.py: snapshot_dates, one row per snapshot), so loading a snapshot in the middle
-- of history renumbers nothing stored.
CREATE OR REPLACE VIEW provider_snapshots AS
SELECT
    provider,
    snapshot_date,
    snapshot_at,
    row_number() OVER w AS snapshot_no,
    lag(snapshot_date) OVER w AS prev_snapshot_date,
    lag(snapshot_at) OVER w AS prev_snapshot_at,
    max(snapshot_date) OVER (PARTITION BY provider) AS latest_snapshot_date,
    count(*) OVER (PARTITION BY provider) AS n_snapshots,
    snapshot_at = max(snapshot_at) OVER (PARTITION BY provider, snapshot_date) AS is_day_last
FROM snapshot_dates
WINDOW w AS (PARTITION BY provider ORDER BY snapshot_date, snapshot_at)
