"""The Prefect server settings of the tests' real servers (tests/conftest.py `prefect_server`,
the one `gpuprices serve` starts in tests/test_service_stop.py)."""

# The server loops the tests never wait on, switched off on the tests' servers. Above all the
# scheduler: it would create runs of the registered deployments' crons (hourly crawls at :00, the
# load at :30), which the test workers then take, so a test running across such a minute saw a
# live crawl block a worker, or a scheduled load load the lake first. The others (late runs,
# worker heartbeats, pauses, cancellations, automations, expired leases) only cost CPU here.
PREFECT_TEST_SERVER_ENV = {f"PREFECT_SERVER_SERVICES_{name}_ENABLED": "false" for name in (
    "SCHEDULER", "LATE_RUNS", "FOREMAN", "PAUSE_EXPIRATIONS", "CANCELLATION_CLEANUP",
    "TRIGGERS", "REPOSSESSOR")}
