-- measured_throughput: what did a real run measure for a workload on a provider's GPU model?
--
-- The latest recorded benchmark (`gpuprices record`, table benchmarks) per provider x
-- gpu_model x workload: the measured figure that `rank`, `size` and the report put beside the
-- sizing estimate. A later date wins; on one date the latest recorded, then the sku and the
-- most GPUs, for a fixed order.
CREATE OR REPLACE VIEW measured_throughput AS
SELECT provider, gpu_model, workload, sku, date AS measured_on, gpus, tokens_per_s,
       tokens_per_s / gpus AS tokens_per_s_per_gpu, mfu, step_time_cv, allreduce_busbw_gbs,
       checkpoint_write_s, checkpoint_restore_s, recovery_min, cost, currency, source,
       recorded_at
FROM benchmarks
QUALIFY row_number() OVER (PARTITION BY provider, gpu_model, workload
                           ORDER BY date DESC, recorded_at DESC, sku, gpus DESC) = 1;
