"""One provider-day through crawl → parse → check → store, and the steps of the load."""
