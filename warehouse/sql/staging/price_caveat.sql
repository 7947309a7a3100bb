-- price_caveat(extra): why is a price not a firm quote? NULL when it is firm.
--
-- The one definition of a firm price, read by offers_as_of (firm_price, price_caveat) and by the
-- store (warehouse/store.py keeps only firm prices in provider_day_cheapest, so no "lowest",
-- "trend" or "cheapest" figure takes a price that is not one). A price is not firm when its
-- parser flagged it as a likely placeholder (extra.suspect_placeholder, e.g. Runpod's 0.50 where
-- a rate is missing: spiders/providers/runpod/parser.py) or marked it as the floor of a dynamic
-- price (extra.price_kind = 'from', Nebius' preemptible "from $X":
-- spiders/providers/nebius/parser.py), or when it is Google's DWS Flex-start price
-- (extra.gcp_model = 'dws_flex_start', spiders/providers/gcp/parser.py): capacity granted from a
-- queue, for a run of at most seven days, with no guarantee when (or whether) it starts
-- (cloud.google.com/compute/docs/instances/flex-start-vms: "Flex-start VMs ... can run for up
-- to seven days"; "obtained ... when capacity is available"), so never an on-demand figure even
-- though the parser stores it beside the list price. An aggregator's listing of a cloud we also
-- read first-party (extra.counted_under, spiders/resold.py) is the same machine as that cloud's
-- own offer: it is listed, with "via <aggregator> from <cloud>", but never counted as a second
-- market price (docs/providers.md, "Kinds of seller"). Created before any load or migration
-- uses it (warehouse/schema.py: init_schema).
CREATE OR REPLACE MACRO price_caveat(extra) AS
CASE
    WHEN json_extract_string(extra, '$.suspect_placeholder') = 'true'
        THEN 'price flagged by the parser as a likely placeholder '
             || '(extra.suspect_placeholder): not a firm price'
    WHEN json_extract_string(extra, '$.price_kind') = 'from'
        THEN 'a ''from'' price: the floor of a dynamic price, not a quote '
             || '(extra.price_kind=from): not a firm price'
    WHEN json_extract_string(extra, '$.counted_under') IS NOT NULL
        THEN coalesce(json_extract_string(extra, '$.via') || ': ', '')
             || 'a resold listing of ' || json_extract_string(extra, '$.counted_under')
             || '''s own offer (extra.counted_under): counted under that provider''s '
             || 'first-party price, not as a second market price'
    WHEN json_extract_string(extra, '$.gcp_model') = 'dws_flex_start'
        THEN 'Google DWS Flex-start: queued capacity, runs up to 7 days, start not guaranteed '
             || '(extra.gcp_model=dws_flex_start): not an on-demand price'
END
