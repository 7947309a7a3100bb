-- gpu_weekly_lowest(last_week_end, n_weeks, to_currency, max_age_days := default_max_age_days()):
-- what was the lowest firm on-demand price per GPU-hour of each model at the end of each of the
-- last n_weeks weeks, and which providers is that figure drawn from?
--
-- The "as of" rule of offers_as_of at each week end (last_week_end and the n_weeks - 1 Sundays
-- before it): each provider's latest snapshot on or before it counts only if it is at most
-- max_age_days old; an older one gives no point rather than pretending to be current. Prices are
-- the firm minima every load stores (provider_day_lowest: no placeholder, no "from" floor, no
-- announced price), converted to to_currency with fx_factor at their date. Per week end and
-- gpu_model: the lowest, the provider that has it, and `providers`, the sorted list of providers
-- behind the point: a chart breaks its line where that list changes, so a provider's snapshot
-- ageing out is never drawn as a price move.
CREATE OR REPLACE MACRO gpu_weekly_lowest(last_week_end, n_weeks, to_currency,
                                         max_age_days := default_max_age_days()) AS TABLE
WITH week_ends AS (
    SELECT (last_week_end::DATE - 7 * i::INTEGER) AS week_end
    FROM range(n_weeks) AS t(i)
),
days AS (
    SELECT
        provider, snapshot_date, gpu_model,
        lowest_price_per_gpu_hour * fx_factor(currency, to_currency, snapshot_date) AS p
    FROM provider_day_lowest
    WHERE pricing_model = 'on_demand'
      AND snapshot_date <= last_week_end
      AND snapshot_date >= last_week_end::DATE - 7 * (n_weeks - 1) - max_age_days::INTEGER
),
pick AS (
    -- Each provider's latest snapshot on or before the week end, if within the age limit.
    SELECT w.week_end, s.provider, max(s.snapshot_date) AS snapshot_date
    FROM week_ends AS w
    JOIN (SELECT DISTINCT provider, snapshot_date FROM days) AS s
      ON s.snapshot_date <= w.week_end
    GROUP BY ALL
    HAVING w.week_end - max(s.snapshot_date) <= max_age_days::INTEGER
)
SELECT
    pick.week_end, d.gpu_model, min(d.p) AS lowest,
    arg_min(d.provider, {'p': d.p, 'provider': d.provider}) AS provider,
    list(DISTINCT d.provider ORDER BY d.provider) AS providers
FROM pick
JOIN days AS d USING (provider, snapshot_date)
WHERE d.p IS NOT NULL
GROUP BY ALL
ORDER BY 1, 2
