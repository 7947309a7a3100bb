-- stale_providers: which providers' latest offers are too old to count as "now"?
--
-- Per provider whose latest snapshot in latest_offers is older than the age limit: that
-- snapshot's date, its age in days and how many offers it lists. cheapest_now leaves these
-- offers out; `make run` prints this list after its cheapest table.
CREATE OR REPLACE VIEW stale_providers AS
SELECT provider, snapshot_date AS last_snapshot, age_days, count(*) AS offers
FROM latest_offers
WHERE is_stale
GROUP BY ALL
ORDER BY provider
