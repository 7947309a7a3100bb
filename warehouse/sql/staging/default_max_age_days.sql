-- default_max_age_days(): how old may a provider's latest snapshot be and still count as "now"?
--
-- 14 days: the one default of the age limit (offers_as_of, gpu_weekly_lowest,
-- provider_health take it as their max_age_days default). The command line's --max-age-days and
-- GPUPRICES_MAX_AGE_DAYS override it per run (flows/config.py).
CREATE OR REPLACE MACRO default_max_age_days() AS 14
