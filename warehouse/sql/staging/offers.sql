-- offers: which offers did each loaded snapshot list, as the parsers wrote them?
--
-- One row per price per snapshot: snapshot_at names the snapshot (a daily provider has one a
-- day, an hourly one several: warehouse/contract.py), captured_at the fetch its page came from.
-- The rows are stored normalised (see warehouse/db.py): offer_points holds one narrow row per
-- offer per snapshot; identity, detail and capture columns are numbers into offer_ids,
-- offer_details and offer_captures. price_per_gpu_hour is derived as the contract derives it
-- (make_offer: price_per_hour / gpu_count), so it equals the value in the lake bit for bit.
-- For questions over the whole history, the views below read offer_points directly; this
-- view is for reading rows back as the parsers wrote them.
CREATE OR REPLACE VIEW offers AS
SELECT
    p.snapshot_date,
    c.captured_at,
    p.provider,
    c.source_url,
    c.raw_sha256,
    i.sku,
    i.region,
    p.gpu_model,
    d.gpu_memory_gb,
    i.gpu_count,
    d.vcpus,
    d.ram_gb,
    d.interconnect,
    i.pricing_model,
    i.commitment_months,
    p.price_per_hour,
    i.currency,
    p.price_per_hour / i.gpu_count AS price_per_gpu_hour,
    i.effective_from,
    d.billing_increment_s,
    d.min_billing_s,
    p.available,
    d.extra,
    p.snapshot_at
FROM offer_points AS p
JOIN offer_ids AS i ON i.offer_no = p.offer_no
JOIN offer_details AS d ON d.detail_no = p.detail_no
JOIN offer_captures AS c ON c.capture_no = p.capture_no
