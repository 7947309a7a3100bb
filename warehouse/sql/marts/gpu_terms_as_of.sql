-- gpu_terms_as_of(as_of, to_currency, max_age_days := default_max_age_days()): what does a
-- GPU-hour of each model cost on `as_of`, per pricing model AND commitment term?
--
-- gpu_prices_as_of answers per pricing model; a buyer comparing renting with reserving needs
-- each term apart (a 12-month and a 36-month commitment are different purchases). Same rows as
-- gpu_prices_as_of: offers_priced_as_of, firm prices within the age limit only. Per gpu_model,
-- pricing_model and commitment_months (NULL: no term on the row) the lowest price per GPU-hour
-- in to_currency and the offer it comes from (ties: provider, sku, region alphabetically first).
CREATE OR REPLACE MACRO gpu_terms_as_of(as_of, to_currency,
                                       max_age_days := default_max_age_days()) AS TABLE
SELECT
    gpu_model,
    pricing_model,
    commitment_months,
    min(price_per_gpu_hour) AS lowest,
    arg_min(provider, {'p': price_per_gpu_hour, 'a': provider, 'b': sku, 'c': region})
        AS lowest_at,
    arg_min(sku, {'p': price_per_gpu_hour, 'a': provider, 'b': sku, 'c': region}) AS sku,
    arg_min(region, {'p': price_per_gpu_hour, 'a': provider, 'b': sku, 'c': region}) AS region,
    arg_min(snapshot_date, {'p': price_per_gpu_hour, 'a': provider, 'b': sku, 'c': region})
        AS lowest_snapshot_date,
    count(*) AS n_offers
FROM offers_priced_as_of(as_of, to_currency, max_age_days)
WHERE price_per_gpu_hour IS NOT NULL AND gpu_model IS NOT NULL
  AND firm_price AND NOT is_stale
GROUP BY gpu_model, pricing_model, commitment_months
ORDER BY gpu_model, pricing_model, commitment_months NULLS FIRST
