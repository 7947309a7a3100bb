-- latest_offers: what does each provider offer now, as far as we know?
--
-- offers_as_of(current_date): each provider's offers from its own latest loaded snapshot, so a
-- provider whose crawl failed tonight keeps its last good day; age_days tells how old that day
-- is (current_date - snapshot_date). is_announced marks prices that take effect after the
-- snapshot; firm_price / price_caveat say whether a price is a firm quote.
CREATE OR REPLACE VIEW latest_offers AS
SELECT * FROM offers_as_of(current_date)
