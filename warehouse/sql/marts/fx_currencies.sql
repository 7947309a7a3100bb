-- fx_currencies: which currencies can prices be converted to, and over which days?
--
-- One row per currency with an ECB rate (the euro, the base, always), with its first and last
-- rate date and how many rates there are.
CREATE OR REPLACE VIEW fx_currencies AS
SELECT currency, min(date) AS first_date, max(date) AS last_date, count(*) AS n_rates
FROM fx_rates
GROUP BY currency
UNION ALL
SELECT 'EUR', min(date), max(date), count(DISTINCT date) FROM fx_rates
