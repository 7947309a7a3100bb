-- gpu_monthly_lowest(up_to, to_currency): what was the lowest firm on-demand price per GPU-hour
-- of each model in each month, over all history up to `up_to`?
--
-- Per month and gpu_model: the lowest price per GPU-hour in to_currency (each provider-day's
-- firm lowest, provider_day_lowest, converted with fx_factor at its date; days that cannot be
-- converted left out), the provider that had it, on how many snapshot dates, and `providers`,
-- the sorted list of providers read that month: a chart breaks its line where that list
-- changes, so a provider entering or leaving the record is never drawn as a price move.
CREATE OR REPLACE MACRO gpu_monthly_lowest(up_to, to_currency) AS TABLE
WITH days AS (
    SELECT
        provider, snapshot_date, gpu_model,
        lowest_price_per_gpu_hour * fx_factor(currency, to_currency, snapshot_date) AS p
    FROM provider_day_lowest
    WHERE pricing_model = 'on_demand' AND snapshot_date <= up_to
)
SELECT
    date_trunc('month', snapshot_date)::DATE AS month,
    gpu_model,
    min(p) AS lowest,
    arg_min(provider, {'p': p, 'provider': provider}) AS provider,
    count(DISTINCT snapshot_date) AS snapshots,
    list(DISTINCT provider ORDER BY provider) AS providers
FROM days
WHERE p IS NOT NULL
GROUP BY ALL
ORDER BY 1, 2
