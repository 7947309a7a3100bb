-- fx_rate_periods: which ECB rate applied to each currency on each day?
--
-- One row per ECB reference rate (fx_rates: rate_per_eur units of the currency per euro), with
-- the days it applies to: from its own date until the currency's next rate (valid_to, exclusive;
-- 9999-12-31 for the newest). So a day takes the latest rate on or before it: the ECB publishes
-- on TARGET working days around 16:00 CET, and a Saturday price uses Friday's rate
-- (https://www.ecb.europa.eu/stats/policy_and_exchange_rates/euro_reference_exchange_rates/).
-- A day before a currency's first rate has none. The euro itself is the base and has no row.
CREATE OR REPLACE VIEW fx_rate_periods AS
SELECT
    currency,
    date AS valid_from,
    coalesce(lead(date) OVER (PARTITION BY currency ORDER BY date), DATE '9999-12-31')
        AS valid_to,
    rate_per_eur
FROM fx_rates
