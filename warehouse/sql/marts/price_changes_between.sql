-- price_changes_between(first_day, last_day, to_currency, max_age_days :=
-- default_max_age_days()): which prices changed between `first_day` and `last_day`, biggest
-- change first?
--
-- The price_changes whose new price was first seen in those days against an old price at most
-- max_age_days older (gap_days: a snapshot older than the age limit is not "last week"; those
-- differences stay in price_changes), with the old and new price
-- per GPU-hour in to_currency (fx_factor at the day of the new price), biggest relative change
-- first (ties: provider, sku, region, pricing model, term, variant). One row per offer and
-- change, whatever source each price was read from.
CREATE OR REPLACE MACRO price_changes_between(first_day, last_day, to_currency,
                                              max_age_days := default_max_age_days()) AS TABLE
SELECT
    provider, sku, region, gpu_model, pricing_model, currency AS offer_currency,
    old_date, new_date, old_price_per_hour, new_price_per_hour, pct_change,
    old_price_per_gpu_hour * fx AS old_gpu_hour,
    new_price_per_gpu_hour * fx AS new_gpu_hour,
    -- The rest of the identity (warehouse/identity.py), so two rows that read alike (GCP's 1- and
    -- 3-year CUD, on-demand and DWS Flex-start) can be told apart.
    commitment_months, variant, offer_id, gap_days
FROM (
    SELECT *, fx_factor(currency, to_currency, new_date) AS fx
    FROM price_changes
    WHERE new_date BETWEEN first_day AND last_day AND gap_days <= max_age_days
)
ORDER BY abs(pct_change) DESC, provider, sku, region, pricing_model, commitment_months, variant
