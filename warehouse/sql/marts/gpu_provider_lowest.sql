-- gpu_provider_lowest(as_of, to_currency, max_age_days := default_max_age_days()): what is each
-- provider's lowest on-demand price per GPU-hour for each model on `as_of`?
--
-- Over offers_priced_as_of, on-demand, firm prices of offers within the age limit only (as
-- gpu_prices_as_of): the spread of one GPU model's price across providers, with the snapshot
-- date each provider's price comes from.
CREATE OR REPLACE MACRO gpu_provider_lowest(as_of, to_currency,
                                           max_age_days := default_max_age_days()) AS TABLE
SELECT gpu_model, provider, min(price_per_gpu_hour) AS lowest,
       max(snapshot_date) AS snapshot_date, max(age_days) AS age_days
FROM offers_priced_as_of(as_of, to_currency, max_age_days)
WHERE pricing_model = 'on_demand' AND price_per_gpu_hour IS NOT NULL
  AND gpu_model IS NOT NULL AND firm_price AND NOT is_stale
GROUP BY gpu_model, provider
ORDER BY gpu_model, provider
