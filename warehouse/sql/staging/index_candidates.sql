-- index_candidates: which price does each member of the GPU price index quote on each snapshot?
--
-- The eligibility rules of docs/index.md (sections 1 to 3), before the screens and the
-- estimator (warehouse/index_method.py). Per snapshot_date x gpu_model x index pricing model x
-- member: one price per GPU-hour in its quoted currency.
--   * index pricing: on_demand; spot; committed = reserved or committed with a stated term of
--     1 to 12 months (a 3-year term is another product; an unstated term cannot be compared);
--   * firm (price_caveat), in force (no announced future price), not an inference host's;
--   * marketplaces (providers.supply = 'marketplace'): only their market_stat = 'median' row of
--     the book with the most sellers, and only with at least 3 sellers; everyone else's
--     market_stat rows never appear (they have none);
--   * member = extra.counted_under (our id of a cloud we read), else extra.underlying squeezed to
--     lower-case letters and digits, when a row names whose capacity it is, else the provider; an aggregator's row without one is left out; a member's own rows win over rows
--     relayed by others (relayed = false first), then a USD price, then the lowest.
-- A day with several snapshots (an hourly provider) quotes its latest: the index stays daily.
-- Freshness (the age limit) and FX are applied per index day by the caller, which knows the day.
CREATE OR REPLACE VIEW index_candidates AS
WITH rows AS (
    SELECT
        p.snapshot_date,
        p.provider,
        p.gpu_model,
        CASE
            WHEN i.pricing_model IN ('on_demand', 'spot') THEN i.pricing_model
            WHEN i.pricing_model IN ('reserved', 'committed')
                 AND i.commitment_months BETWEEN 1 AND 12 THEN 'committed'
        END AS index_pricing,
        i.currency,
        p.price_per_hour / i.gpu_count AS price_per_gpu_hour,
        i.gpu_count,
        coalesce(pr.supply, 'own') AS supply,
        -- Whose capacity a relayed row is: our provider id when the aggregator's parser matched
        -- the cloud to one we read (extra.counted_under, spiders/resold.py), else its own name
        -- for the cloud squeezed to lower-case letters and digits ("Lambda Labs" = "lambdalabs").
        coalesce(nullif(json_extract_string(d.extra, '$.counted_under'), ''),
                 nullif(regexp_replace(lower(json_extract_string(d.extra, '$.underlying')),
                                       '[^a-z0-9]', '', 'g'), '')) AS underlying,
        json_extract_string(d.extra, '$.market_stat') AS market_stat,
        try_cast(json_extract_string(d.extra, '$.sellers') AS INTEGER) AS sellers
    FROM offer_points AS p
    JOIN (SELECT provider, snapshot_date, max(snapshot_at) AS snapshot_at
          FROM snapshot_dates GROUP BY ALL) AS last
      ON last.provider = p.provider AND last.snapshot_date = p.snapshot_date
     AND last.snapshot_at = p.snapshot_at
    JOIN offer_ids AS i ON i.offer_no = p.offer_no
    JOIN offer_details AS d ON d.detail_no = p.detail_no
    LEFT JOIN providers AS pr ON pr.provider = p.provider
    WHERE price_caveat(d.extra) IS NULL
      AND coalesce(i.effective_from <= p.snapshot_date, true)
      AND p.price_per_hour > 0 AND i.gpu_count > 0
      -- an inference host's GPU-hours serve your model on its platform: not a rental
      AND coalesce(pr.kind, '') <> 'inference_host'
),
eligible AS (
    SELECT *, coalesce(underlying, provider) AS member, coalesce(underlying, provider) <> provider
        AS relayed
    FROM rows
    WHERE index_pricing IS NOT NULL
      AND NOT (supply = 'aggregator' AND underlying IS NULL)
      AND CASE WHEN supply = 'marketplace' THEN market_stat = 'median' AND sellers >= 3
               ELSE market_stat IS NULL END
),
per_book AS (
    -- A marketplace's largest book (most sellers; ties: the lower median) stands for it; for
    -- everyone else every row is its own "book" and the lowest price is taken below.
    SELECT *
    FROM eligible
    QUALIFY supply <> 'marketplace' OR row_number() OVER (
        PARTITION BY snapshot_date, provider, gpu_model, index_pricing, member
        ORDER BY sellers DESC, price_per_gpu_hour, gpu_count) = 1
)
SELECT
    snapshot_date, gpu_model, index_pricing AS pricing_model, member, provider, relayed, supply,
    currency, price_per_gpu_hour
FROM per_book
QUALIFY row_number() OVER (
    PARTITION BY snapshot_date, gpu_model, index_pricing, member
    ORDER BY relayed, currency <> 'USD', price_per_gpu_hour, provider, currency) = 1
