-- cheapest_daily: what was the cheapest GPU-hour per GPU model and pricing model each day?
--
-- Per gpu_model x pricing_model x day (= snapshot_date): the offer with the lowest price per
-- GPU-hour in USD, with its provider, sku, region and its price in USD and EUR, converted with
-- fx_factor at the day (the ECB rate in force that day, through EUR). Offers
-- whose effective_from is after the day (announced future prices) are not yet purchasable and
-- are left out. An offer whose price cannot be converted to USD (no rate yet) takes no part in
-- the ranking but is counted in n_without_usd; a group with only such offers still appears,
-- with the winner columns null. Ties go to the first provider, sku, region alphabetically.
--
-- Built for a year of history: every load stores its provider-day's minimum per model, pricing
-- model and currency (provider_day_lowest), so this view ranks those minima
-- (arg_min on price, then provider, sku, region) instead of every offer: ~0.9 s over a year's
-- 11.5M offer rows became a few hundredths. FX conversion and ranking happen on that small
-- aggregate; within one currency the ranking does not depend on FX.
CREATE OR REPLACE VIEW cheapest_daily AS
WITH per_currency AS (
    -- From the minima every load stores per provider-day (provider_day_lowest, a few hundred
    -- thousand rows for a year of eight providers): per day, model, pricing model and
    -- currency the lowest price per GPU-hour and the row that has it (ties: first provider,
    -- sku, region alphabetically).
    SELECT
        c.snapshot_date AS day, c.gpu_model, c.pricing_model, c.currency,
        min(c.lowest_price_per_gpu_hour) AS min_price,
        sum(c.n_offers)::BIGINT AS n_offers,
        arg_min(
            {'offer_no': c.offer_no, 'price_per_hour': c.price_per_hour,
             'available': c.available},
            {'price': c.lowest_price_per_gpu_hour, 'provider': c.provider, 'sku': i.sku,
             'region': coalesce(i.region, ''), 'offer_no': c.offer_no}
        ) AS best
    FROM provider_day_lowest AS c
    JOIN offer_ids AS i ON i.offer_no = c.offer_no
    GROUP BY ALL
),
converted AS (
    SELECT
        c.*,
        fx_factor(c.currency, 'USD', c.day) AS to_usd,
        fx_factor(c.currency, 'EUR', c.day) AS to_eur
    FROM per_currency AS c
),
winner AS (
    SELECT
        day, gpu_model, pricing_model,
        arg_min(currency, CASE WHEN to_usd IS NOT NULL THEN min_price * to_usd END)
            AS best_currency,
        min(min_price * to_usd) AS best_usd,
        sum(n_offers) AS n_offers,
        coalesce(sum(n_offers) FILTER (WHERE to_usd IS NULL), 0) AS n_without_usd
    FROM converted
    GROUP BY ALL
)
SELECT
    w.day,
    w.gpu_model,
    w.pricing_model,
    i.provider,
    i.sku,
    i.region,
    i.gpu_count,
    i.commitment_months,
    cv.best.price_per_hour AS price_per_hour,
    cv.currency,
    -- The winner's own price per GPU-hour: the group's minimum.
    cv.min_price AS price_per_gpu_hour,
    w.best_usd AS price_per_gpu_hour_usd,
    cv.min_price * cv.to_eur AS price_per_gpu_hour_eur,
    cv.best.available AS available,
    w.n_offers,
    w.n_without_usd
FROM winner AS w
LEFT JOIN converted AS cv
    ON cv.day = w.day AND cv.gpu_model = w.gpu_model
    AND cv.pricing_model = w.pricing_model AND cv.currency = w.best_currency
LEFT JOIN offer_ids AS i ON i.offer_no = cv.best.offer_no
