-- fx_factor(from_cur, to_cur, on_day): what does one unit of `from_cur` make in `to_cur` on
-- `on_day`?
--
-- The one currency conversion of the warehouse: every view and the report multiply a price by
-- fx_factor(its currency, the target currency, its snapshot date). ECB rates are euro based, so
-- a conversion goes from_cur -> EUR -> to_cur: rate(to_cur) / rate(from_cur), each the rate in
-- force that day (fx_rate_per_eur). 1 when the two currencies are the same; NULL when either
-- has no rate yet on that day (a price that cannot be converted).
CREATE OR REPLACE MACRO fx_factor(from_cur, to_cur, on_day) AS (
    CASE
        WHEN from_cur = to_cur THEN 1.0
        ELSE fx_rate_per_eur(to_cur, on_day) / fx_rate_per_eur(from_cur, on_day)
    END
)
