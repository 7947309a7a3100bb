-- announced_prices(as_of, to_currency): which prices have been announced to take effect after
-- `as_of`?
--
-- From offers_as_of(as_of), the offers whose effective_from is after as_of: when they were
-- announced (their snapshot date) and how long before as_of (age_days), from when they apply,
-- the price in the offer currency and per GPU-hour in to_currency (fx_factor at the
-- announcement). Soonest first. Announced prices are never part of a "lowest" or "cheapest"
-- figure.
CREATE OR REPLACE MACRO announced_prices(as_of, to_currency) AS TABLE
SELECT
    provider, sku, region, gpu_model, pricing_model, snapshot_date AS announced_on, age_days,
    effective_from, price_per_hour, currency,
    price_per_gpu_hour * fx_factor(currency, to_currency, snapshot_date) AS gpu_hour
FROM offers_as_of(as_of)
WHERE effective_from > as_of
ORDER BY effective_from, provider, sku
