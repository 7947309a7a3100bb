"""Operating a run: its journal, the data folder's lock, the run summary and alerts, status, the
service around Prefect, publishing."""
