-- offers_priced_as_of(as_of, to_currency): what could one rent on `as_of`, and at what price in
-- `to_currency`?
--
-- offers_as_of(as_of) without the announced prices not in force yet, every price converted
-- with fx_factor at the offer's own snapshot date: price_per_hour and price_per_gpu_hour are in
-- to_currency (NULL when the offer's currency has no rate then), `currency` is to_currency,
-- price_currency the currency the provider quoted and fx the factor applied.
-- `gpuprices rank` and the weekly report rank these rows.
CREATE OR REPLACE MACRO offers_priced_as_of(as_of, to_currency) AS TABLE
SELECT
    * REPLACE (
        price_per_hour * fx AS price_per_hour,
        price_per_gpu_hour * fx AS price_per_gpu_hour,
        to_currency AS currency
    )
FROM (
    SELECT *, currency AS price_currency, fx_factor(currency, to_currency, snapshot_date) AS fx
    FROM offers_as_of(as_of)
    WHERE NOT is_announced
)
