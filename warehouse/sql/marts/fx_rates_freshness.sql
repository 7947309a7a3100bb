-- fx_rates_freshness(as_of): how fresh were the ECB rates on `as_of`?
--
-- One row: the date of the newest rate on or before `as_of` (NULL when none) and how many
-- currencies had a rate on or before it.
CREATE OR REPLACE MACRO fx_rates_freshness(as_of) AS TABLE
SELECT max(date) AS last_date, count(DISTINCT currency) AS n_currencies
FROM fx_rates
WHERE date <= as_of
