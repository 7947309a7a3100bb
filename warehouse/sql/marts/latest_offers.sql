-- latest_offers: what does each provider offer now, as far as we know?
--
-- offers_as_of("today", default age limit): each provider's offers from its own latest loaded
-- snapshot, so a provider whose crawl failed tonight keeps its last good day; age_days tells how
-- old that day is, is_stale whether it is older than the limit (14 days). "Today" is
-- latest_snapshot.as_of, the newest snapshot day in the warehouse, never later than current_date:
-- after a nightly crawl that is today; in a warehouse replayed from an archive it is the
-- archive's last day (the bundled history, which ends on 2026-10-05, is read as of that day, not
-- as of the machine's clock). `gpuprices rank` without --date takes the same day. is_announced marks
-- prices that take effect after the snapshot; firm_price / price_caveat say whether a price is
-- a firm quote. supply is the provider's class (provider_classes: own, marketplace, reseller;
-- NULL for a provider the registry no longer declares), so like is compared with like.
CREATE OR REPLACE VIEW latest_offers AS
SELECT o.*, c.supply
FROM offers_as_of((SELECT as_of FROM latest_snapshot)) AS o
LEFT JOIN provider_classes AS c USING (provider)
