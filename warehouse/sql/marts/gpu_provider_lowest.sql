-- gpu_provider_lowest(as_of, to_currency): what is each provider's lowest on-demand price per
-- GPU-hour for each model on `as_of`?
--
-- Over offers_priced_as_of, on-demand only: the spread of one GPU model's price across
-- providers.
CREATE OR REPLACE MACRO gpu_provider_lowest(as_of, to_currency) AS TABLE
SELECT gpu_model, provider, min(price_per_gpu_hour) AS lowest
FROM offers_priced_as_of(as_of, to_currency)
WHERE pricing_model = 'on_demand' AND price_per_gpu_hour IS NOT NULL
  AND gpu_model IS NOT NULL
GROUP BY gpu_model, provider
ORDER BY gpu_model, provider
