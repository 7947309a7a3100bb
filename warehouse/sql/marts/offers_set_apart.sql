-- offers_set_apart(as_of, to_currency, max_age_days := default_max_age_days()): which offers on
-- `as_of` are listed but kept out of every figure, and why?
--
-- Two kinds, from offers_priced_as_of: kind = 'not firm' (a price the parser flagged as a
-- placeholder or a "from" floor: one row per offer, price_caveat says why), and kind = 'stale'
-- (a provider whose latest snapshot on or before as_of is older than max_age_days: one row per
-- provider, with that snapshot's date, its age and how many offers it lists). Stale providers'
-- placeholder prices are counted in their stale row, not listed again.
CREATE OR REPLACE MACRO offers_set_apart(as_of, to_currency,
                                        max_age_days := default_max_age_days()) AS TABLE
WITH o AS (SELECT * FROM offers_priced_as_of(as_of, to_currency, max_age_days))
SELECT 'not firm' AS kind, provider, sku, region, gpu_model, pricing_model,
       price_per_gpu_hour AS gpu_hour, snapshot_date, age_days, 1 AS offers,
       price_caveat AS why
FROM o
WHERE NOT firm_price AND NOT is_stale
UNION ALL
SELECT 'stale', provider, NULL, NULL, NULL, NULL, NULL, snapshot_date, age_days, count(*),
       'latest snapshot ' || age_days || ' days old on ' || as_of::DATE
       || ', over the ' || max_age_days || '-day limit'
FROM o
WHERE is_stale
GROUP BY provider, snapshot_date, age_days
ORDER BY kind, provider, gpu_model, sku, region
