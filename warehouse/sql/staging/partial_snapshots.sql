-- partial_snapshots: which provider snapshots were read (in part) from a partial capture?
--
-- A capture marked partial in the archive (its X-Gpuprices-Partial header, set from the
-- manifest's `partial` column or `import-capture --partial`: a hand-trimmed excerpt, one page of
-- several, a diff) holds only part of what its source listed; the parse step writes why into
-- each of its offers' extra (capture_partial). One row per snapshot (provider, snapshot_date,
-- snapshot_at: an hourly provider has several a day, and only those read from such a capture
-- are partial) with the reason(s). An offer absent from such a snapshot was not read, not
-- withdrawn (offer_turnover).
CREATE OR REPLACE VIEW partial_snapshots AS
SELECT p.provider, p.snapshot_date, p.snapshot_at, string_agg(DISTINCT d.partial, '; ') AS partial
FROM offer_points AS p
JOIN (
    SELECT detail_no, json_extract_string(extra, '$.capture_partial') AS partial
    FROM offer_details
    WHERE json_extract_string(extra, '$.capture_partial') IS NOT NULL
) AS d USING (detail_no)
GROUP BY p.provider, p.snapshot_date, p.snapshot_at
