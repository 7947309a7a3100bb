-- offer_network: what network does each offer (provider, sku) have, inside the node and between
-- nodes?
--
-- Each stored (provider, sku) against offer_networks (warehouse/offer_networks.csv, loaded by
-- init_schema; warehouse/networks.py checks it): the first row in file order whose sku_pattern
-- matches (regexp_matches, RE2). No matching row: intra node and fabric 'unknown', bandwidths
-- NULL; the provider publishes nothing for that family and nothing is guessed here.
-- net_label is the short text the report shows, e.g. "NVSwitch 900 GB/s; InfiniBand 400 Gb/s/GPU".
CREATE OR REPLACE VIEW offer_network AS
WITH skus AS (
    SELECT DISTINCT provider, sku FROM offer_ids
), matched AS (
    SELECT s.provider, s.sku, n.*
    FROM skus AS s
    LEFT JOIN offer_networks AS n
        ON n.provider = s.provider AND regexp_matches(s.sku, n.sku_pattern)
    QUALIFY row_number() OVER (PARTITION BY s.provider, s.sku ORDER BY n.row_order NULLS LAST) = 1
)
SELECT
    provider,
    sku,
    coalesce(intra_node, 'unknown') AS net_intra_node,
    intra_node_gbs AS net_intra_node_gbs,
    coalesce(fabric, 'unknown') AS net_fabric,
    fabric_gbps_per_gpu AS net_fabric_gbps_per_gpu,
    source AS net_source,
    CASE WHEN fabric IS NULL THEN 'network unknown'
    ELSE concat(
        intra_node,
        ' ' || regexp_replace(intra_node_gbs::VARCHAR, '\.0$', '') || ' GB/s',
        '; ', CASE WHEN fabric = 'unknown' THEN 'fabric unknown' ELSE fabric END,
        ' ' || regexp_replace(fabric_gbps_per_gpu::VARCHAR, '\.0$', '') || ' Gb/s/GPU')
    END AS net_label
FROM matched
