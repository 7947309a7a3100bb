-- provider_day_lowest: what was each provider's lowest price per GPU-hour each day it was read?
--
-- Per (snapshot_date, provider, gpu_model, pricing_model, currency): the lowest firm price
-- per GPU-hour among the offers in force that day (announced future prices, placeholders and
-- "from" floors left out: staging/price_caveat.sql), in the offer currency, how many such
-- offers, and the row holding it (offer_no, its price per hour and availability; ties: sku,
-- region, offer number). Every load stores these minima
-- (warehouse/store.py: provider_day_cheapest), so questions over the whole history read a few
-- hundred thousand rows a year instead of every offer.
CREATE OR REPLACE VIEW provider_day_lowest AS
SELECT
    snapshot_date,
    provider,
    gpu_model,
    pricing_model,
    currency,
    min_price_per_gpu_hour AS lowest_price_per_gpu_hour,
    n_offers,
    offer_no,
    price_per_hour,
    available
FROM provider_day_cheapest
