"""The team mode: Prefect flows run by workers of a work pool, and their deployments."""
