-- fx_rate_per_eur(cur, on_day): how many units of `cur` did one euro buy on `on_day`?
--
-- The ECB rate in force that day (fx_rate_periods: the latest rate on or before it); 1 for the
-- euro, the ECB's base; NULL when the currency has no rate yet on that day. Used only through
-- fx_factor.
CREATE OR REPLACE MACRO fx_rate_per_eur(cur, on_day) AS (
    CASE
        WHEN cur = 'EUR' THEN 1.0
        ELSE (
            SELECT r.rate_per_eur
            FROM fx_rate_periods AS r
            WHERE r.currency = cur AND r.valid_from <= on_day AND on_day < r.valid_to
        )
    END
)
