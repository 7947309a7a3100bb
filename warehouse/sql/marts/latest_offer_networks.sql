-- latest_offer_networks: what network does each offer on sale now have?
--
-- latest_offers joined to staging/offer_network by (provider, sku): inside the node
-- (net_intra_node: NVSwitch, NVLink bridge, Infinity Fabric, PCIe, none; net_intra_node_gbs per
-- GPU, bidirectional) and between nodes (net_fabric: InfiniBand, RoCE, EFA, GPUDirect-TCPX(O),
-- Ethernet, none, unknown; net_fabric_gbps_per_gpu), with the provider documentation each
-- figure is read from (net_source) and the report's short text (net_label).
CREATE OR REPLACE VIEW latest_offer_networks AS
SELECT
    o.provider, o.sku, o.region, o.gpu_model, o.gpu_count, o.pricing_model,
    o.price_per_gpu_hour, o.currency, o.snapshot_date,
    n.net_intra_node, n.net_intra_node_gbs, n.net_fabric, n.net_fabric_gbps_per_gpu,
    n.net_label, n.net_source
FROM latest_offers AS o
LEFT JOIN offer_network AS n USING (provider, sku)
