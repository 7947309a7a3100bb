-- cheapest_now: where is each GPU model cheapest right now, per pricing model?
--
-- Over latest_offers (each provider's own latest snapshot, so a provider that failed tonight
-- still competes with its last good prices; age_days says how old they are), leaving out
-- announced prices that are not in force yet. Prices convert to USD and EUR with fx_factor at
-- the offer's own snapshot date. An offer that cannot be converted ranks last. Prices that are
-- not firm (offers_as_of: a likely placeholder such as Runpod's 0.50, or a "from $X" floor)
-- rank after firm ones: firm_price says which won. Ties go to provider, sku, region
-- alphabetically.
CREATE OR REPLACE VIEW cheapest_now AS
WITH priced AS (
    SELECT
        *,
        price_per_gpu_hour * fx_factor(currency, 'USD', snapshot_date)
            AS price_per_gpu_hour_usd,
        price_per_gpu_hour * fx_factor(currency, 'EUR', snapshot_date)
            AS price_per_gpu_hour_eur
    FROM latest_offers
    WHERE NOT is_announced
),
ranked AS (
    SELECT
        *,
        row_number() OVER (
            PARTITION BY gpu_model, pricing_model
            ORDER BY NOT firm_price, price_per_gpu_hour_usd NULLS LAST,
                provider, sku, coalesce(region, '')
        ) AS rank_in_model,
        count(*) OVER (PARTITION BY gpu_model, pricing_model) AS n_offers
    FROM priced
)
SELECT
    gpu_model, pricing_model, provider, sku, region, gpu_count, commitment_months,
    price_per_hour, currency, price_per_gpu_hour, price_per_gpu_hour_usd,
    price_per_gpu_hour_eur, firm_price, snapshot_date, age_days, n_offers
FROM ranked
WHERE rank_in_model = 1
