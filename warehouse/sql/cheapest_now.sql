-- cheapest_now: where is each GPU model cheapest right now, per pricing model?
--
-- Over latest_offers (each provider's own latest snapshot, so a provider that failed tonight
-- still competes with its last good prices; age_days says how old they are), leaving out
-- announced prices that are not in force yet. Prices convert to USD and EUR at the ECB rate of
-- the offer's own snapshot date (latest rate on or before it). An offer that cannot be
-- converted ranks last. Prices a parser marked as not firm (a likely placeholder such as
-- Runpod's 0.50, or a "from $X" floor) rank after firm ones: firm_price says which won. Ties go
-- to provider, sku, region alphabetically.
CREATE OR REPLACE VIEW cheapest_now AS
WITH current_offers AS (
    SELECT * FROM latest_offers WHERE NOT is_announced
),
usd_rates AS (
    SELECT date, rate_per_eur FROM fx_rates WHERE currency = 'USD'
),
priced AS (
    SELECT
        c.*,
        CASE WHEN c.currency = 'EUR' THEN 1.0 ELSE cur.rate_per_eur END AS currency_per_eur,
        CASE
            WHEN c.currency = 'USD' THEN 1.0
            ELSE usd.rate_per_eur / currency_per_eur
        END AS to_usd,
        coalesce(json_extract_string(c.extra, '$.suspect_placeholder') = 'true'
                 OR json_extract_string(c.extra, '$.price_kind') = 'from', false) AS not_firm
    FROM current_offers AS c
    ASOF LEFT JOIN fx_rates AS cur ON cur.currency = c.currency AND cur.date <= c.snapshot_date
    ASOF LEFT JOIN usd_rates AS usd ON usd.date <= c.snapshot_date
),
ranked AS (
    SELECT
        *,
        price_per_gpu_hour * to_usd AS price_per_gpu_hour_usd,
        price_per_gpu_hour / currency_per_eur AS price_per_gpu_hour_eur,
        row_number() OVER (
            PARTITION BY gpu_model, pricing_model
            ORDER BY not_firm, price_per_gpu_hour * to_usd NULLS LAST,
                provider, sku, coalesce(region, '')
        ) AS rank_in_model,
        count(*) OVER (PARTITION BY gpu_model, pricing_model) AS n_offers
    FROM priced
)
SELECT
    gpu_model, pricing_model, provider, sku, region, gpu_count, commitment_months,
    price_per_hour, currency, price_per_gpu_hour, price_per_gpu_hour_usd,
    price_per_gpu_hour_eur, NOT not_firm AS firm_price, snapshot_date, age_days, n_offers
FROM ranked
WHERE rank_in_model = 1
