-- cheapest_now: where is each GPU model cheapest right now, per pricing model?
--
-- Over latest_offers (each provider's own latest snapshot, so a provider that failed tonight
-- still competes with its last good prices while they are within the age limit), firm prices
-- only: announced prices not in force yet, prices that are not firm (offers_as_of: a likely
-- placeholder such as Runpod's 0.50, or a "from $X" floor) and stale offers (latest snapshot
-- older than the limit: stale_offers lists them) never win. Prices convert to USD and EUR with
-- fx_factor at the offer's own snapshot date; an offer that cannot be converted ranks last.
-- Every row carries the winner's snapshot_date and age_days, and its provider's class (supply:
-- own, marketplace, reseller or aggregator; provider_classes): a marketplace's cheapest is one
-- host's listing; an aggregator's listing of a cloud read first-party is not firm, so never
-- wins here (price_caveat). Ties go to provider, sku, region alphabetically.
CREATE OR REPLACE VIEW cheapest_now AS
WITH priced AS (
    SELECT
        *,
        price_per_gpu_hour * fx_factor(currency, 'USD', snapshot_date)
            AS price_per_gpu_hour_usd,
        price_per_gpu_hour * fx_factor(currency, 'EUR', snapshot_date)
            AS price_per_gpu_hour_eur
    FROM latest_offers
    WHERE NOT is_announced AND firm_price AND NOT is_stale
),
ranked AS (
    SELECT
        *,
        row_number() OVER (
            PARTITION BY gpu_model, pricing_model
            ORDER BY price_per_gpu_hour_usd NULLS LAST, provider, sku, coalesce(region, '')
        ) AS rank_in_model,
        count(*) OVER (PARTITION BY gpu_model, pricing_model) AS n_offers
    FROM priced
)
SELECT
    gpu_model, pricing_model, provider, supply, sku, region, gpu_count, commitment_months,
    price_per_hour, currency, price_per_gpu_hour, price_per_gpu_hour_usd,
    price_per_gpu_hour_eur, firm_price, snapshot_date, age_days, n_offers
FROM ranked
WHERE rank_in_model = 1
