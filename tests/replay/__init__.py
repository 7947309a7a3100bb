"""The live path, offline: a loopback server that replays the WARC archive, and the glue that
points the real crawler (and the Wayback backfill) at it.

- `server.py`: `ReplayServer`, bound to 127.0.0.1, answers each request with the archived
  response for its ORIGINAL URL (read from the Host header), and injects faults on demand.
- `loopback.py`: a Scrapy download handler and a urllib handler that send every request to the
  server instead of the real host, leaving the URL everything else sees unchanged.
- `drive.py`: run `python -m spiders.crawl` for a provider's real plan against the server, and
  parse what it archived next to what the archive held (the direct replay).
"""
