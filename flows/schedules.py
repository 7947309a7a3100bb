"""When the served deployments run (UTC): the defaults of `gpuprices serve`."""

NIGHTLY_CRON = "0 2 * * *"  # the nightly crawl, 02:00 UTC
WEEKLY_CRON = "0 6 * * 1"  # the weekly report, Monday 06:00 UTC
TIMEZONE = "UTC"
