"""When the served deployments run (UTC): the defaults of `gpuprices serve`."""

NIGHTLY_CRON = "0 2 * * *"  # the nightly crawl, 02:00 UTC
WEEKLY_CRON = "0 6 * * 1"  # the weekly report, Monday 06:00 UTC
TIMEZONE = "UTC"
# Team mode (flows/team/deploy.py): the crawls of hourly providers (spiders/registry.py
# CADENCES) at HOURLY_CRON, the others at NIGHTLY_CRON, the load every hour at :30,
# picking up whatever the crawls wrote (a load with nothing pending records nothing).
LOAD_CRON = "30 * * * *"
HOURLY_CRON = "0 * * * *"
