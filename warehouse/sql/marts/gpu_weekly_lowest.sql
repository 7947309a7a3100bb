-- gpu_weekly_lowest(last_week_end, n_weeks, to_currency, stale_days): what was the lowest
-- on-demand price per GPU-hour of each model at the end of each of the last n_weeks weeks?
--
-- At each week end (last_week_end and the n_weeks - 1 Sundays before it), each provider's latest
-- snapshot on or before it counts if it is less than stale_days days old (older data stops the
-- line rather than pretending to be current). Per week end and gpu_model: the lowest price per
-- GPU-hour in to_currency (each provider-day's lowest converted with fx_factor at its date) and
-- the provider that has it.
CREATE OR REPLACE MACRO gpu_weekly_lowest(last_week_end, n_weeks, to_currency, stale_days)
AS TABLE
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
      AND snapshot_date > last_week_end::DATE - 7 * (n_weeks - 1) - stale_days::INTEGER
),
pick AS (
    SELECT w.week_end, s.provider, max(s.snapshot_date) AS snapshot_date
    FROM week_ends AS w
    JOIN (SELECT DISTINCT provider, snapshot_date FROM days) AS s
      ON s.snapshot_date <= w.week_end
     AND s.snapshot_date > w.week_end - stale_days::INTEGER
    GROUP BY ALL
)
SELECT pick.week_end, d.gpu_model, min(d.p) AS lowest, arg_min(d.provider, d.p) AS provider
FROM pick
JOIN days AS d USING (provider, snapshot_date)
WHERE d.p IS NOT NULL
GROUP BY ALL
ORDER BY 1, 2
