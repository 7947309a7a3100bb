"""The live path, offline: a loopback server that replays the WARC archive, and the glue that
points the real crawler (and the Wayback backfill) at it (docs/operations.md, "The live path,
offline").

- `server.py`: `ReplayServer`, bound to 127.0.0.1, answers each request with the archived
  response for its ORIGINAL URL (read from the Host header), and injects faults on demand.
- `loopback.py`: a Scrapy download handler and a urllib handler that send every request to the
  server instead of the real host, leaving the URL everything else sees unchanged.
- `crawl_all.py`: several providers' crawls (the real spider, settings and plans) in one process.
- `drive.py`: build the archive from snapshots/manifest.csv, crawl against the server, and parse
  what the crawl archived next to what the server replayed (the direct replay).
- `pagers.py`: serve one archived listing as pages in the API's own convention (Azure).
- `scenarios.py`: the fault night shared by the tests and bench/fault_probes/live_path.py.
"""
