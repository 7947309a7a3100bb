-- gpu_prices_as_of(as_of, to_currency): what does a GPU-hour of each model cost on `as_of`, per
-- pricing model?
--
-- Over offers_priced_as_of (each provider's latest snapshot on or before as_of, in force,
-- converted at its snapshot date; offers that cannot be converted left out): per gpu_model and
-- pricing_model the lowest and median price per GPU-hour in to_currency, the provider of the
-- lowest (ties: alphabetically first), the number of offers and the providers.
CREATE OR REPLACE MACRO gpu_prices_as_of(as_of, to_currency) AS TABLE
SELECT
    gpu_model,
    pricing_model,
    min(price_per_gpu_hour) AS lowest,
    median(price_per_gpu_hour) AS median,
    arg_min(provider, {'price': price_per_gpu_hour, 'provider': provider}) AS lowest_at,
    count(*) AS n_offers,
    list(DISTINCT provider ORDER BY provider) AS providers
FROM offers_priced_as_of(as_of, to_currency)
WHERE price_per_gpu_hour IS NOT NULL AND gpu_model IS NOT NULL
GROUP BY gpu_model, pricing_model
ORDER BY gpu_model, pricing_model
