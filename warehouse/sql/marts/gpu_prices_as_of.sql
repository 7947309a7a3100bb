-- gpu_prices_as_of(as_of, to_currency, max_age_days := default_max_age_days()): what does a
-- GPU-hour of each model cost on `as_of`, per pricing model?
--
-- Over offers_priced_as_of (each provider's latest snapshot on or before as_of, in force,
-- converted at its snapshot date; offers that cannot be converted left out), firm prices of
-- offers within the age limit only (not a placeholder, not a "from" floor, not stale: those are
-- listed apart by offers_set_apart): per gpu_model and pricing_model the lowest and median price
-- per GPU-hour in to_currency, the provider of the lowest (ties: alphabetically first) with its
-- snapshot date and age, the number of offers and the providers.
CREATE OR REPLACE MACRO gpu_prices_as_of(as_of, to_currency,
                                        max_age_days := default_max_age_days()) AS TABLE
SELECT
    gpu_model,
    pricing_model,
    min(price_per_gpu_hour) AS lowest,
    median(price_per_gpu_hour) AS median,
    arg_min(provider, {'price': price_per_gpu_hour, 'provider': provider}) AS lowest_at,
    arg_min(snapshot_date, {'price': price_per_gpu_hour, 'provider': provider})
        AS lowest_snapshot_date,
    arg_min(age_days, {'price': price_per_gpu_hour, 'provider': provider}) AS lowest_age_days,
    count(*) AS n_offers,
    list(DISTINCT provider ORDER BY provider) AS providers
FROM offers_priced_as_of(as_of, to_currency, max_age_days)
WHERE price_per_gpu_hour IS NOT NULL AND gpu_model IS NOT NULL
  AND firm_price AND NOT is_stale
GROUP BY gpu_model, pricing_model
ORDER BY gpu_model, pricing_model
