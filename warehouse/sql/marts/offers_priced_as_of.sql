-- offers_priced_as_of(as_of, to_currency, max_age_days := default_max_age_days()): what could
-- one rent on `as_of`, and at what price in `to_currency`?
--
-- offers_as_of(as_of, max_age_days) without the announced prices not in force yet, every price
-- converted with fx_factor at the offer's own snapshot date: price_per_hour and
-- price_per_gpu_hour are in to_currency (NULL when the offer's currency has no rate then),
-- `currency` is to_currency, price_currency the currency the provider quoted and fx the factor
-- applied. Keeps snapshot_date, age_days, is_stale, firm_price and price_caveat: a row that is
-- stale or not firm is listed apart, never recommended nor counted in a figure.
-- The offer's network (staging/offer_network: net_intra_node, net_intra_node_gbs, net_fabric,
-- net_fabric_gbps_per_gpu, net_label, net_source) comes along, so sizing times multi-GPU and
-- multi-node jobs over it. `gpuprices rank` and the weekly report read these rows.
CREATE OR REPLACE MACRO offers_priced_as_of(as_of, to_currency,
                                           max_age_days := default_max_age_days()) AS TABLE
SELECT
    * REPLACE (
        price_per_hour * fx AS price_per_hour,
        price_per_gpu_hour * fx AS price_per_gpu_hour,
        to_currency AS currency
    )
FROM (
    SELECT o.*, n.* EXCLUDE (provider, sku), o.currency AS price_currency,
        fx_factor(o.currency, to_currency, o.snapshot_date) AS fx
    FROM offers_as_of(as_of, max_age_days) AS o
    LEFT JOIN offer_network AS n USING (provider, sku)
    WHERE NOT o.is_announced
)
