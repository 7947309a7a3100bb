"""Send requests to the replay server instead of their real host, changing nothing else.

Scrapy: `LoopbackDownloadHandler` replaces the http and https download handlers (settings from
`crawl_settings(address)`). Every middleware (robots.txt, retry, timeout, size bound) and the
spider see the request's real URL; only the connection goes to the loopback address, with the
original host in the `Host` header and the original scheme in `X-Replay-Scheme`. The response
is handed back under the real URL. robots.txt requests travel the same way (the archive holds
none: the server answers 404, which Scrapy reads as "everything allowed").

urllib (the Wayback backfill's `urllib_fetch`): `loopback_opener(address)` is an opener whose
http and https connections go to the server the same way; `installed(address)` makes it the
process's default opener for the duration of a `with` block.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

from scrapy import Request
from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.http import Response

from tests.replay.server import SCHEME_HEADER

ADDRESS_SETTING = "GPUPRICES_REPLAY_ADDRESS"
HANDLER = f"{__name__}.LoopbackDownloadHandler"


def to_loopback(url: str, address: str) -> tuple[str, str, str]:
    """(loopback URL, original host[:port], original scheme) of a URL."""
    p = urllib.parse.urlsplit(url)
    return (urllib.parse.urlunsplit(("http", address, p.path or "/", p.query, "")),
            p.netloc, p.scheme)


class LoopbackDownloadHandler(HTTP11DownloadHandler):
    def __init__(self, crawler) -> None:
        super().__init__(crawler)
        self._address = crawler.settings.get(ADDRESS_SETTING)
        if not self._address:
            raise ValueError(f"{ADDRESS_SETTING} is not set")

    async def download_request(self, request: Request) -> Response:
        target, host, scheme = to_loopback(request.url, self._address)
        headers = request.headers.copy()
        headers["Host"] = host
        headers[SCHEME_HEADER] = scheme
        try:
            response = await super().download_request(
                request.replace(url=target, headers=headers))
        except Exception as exc:
            renamed = _named_by(exc, target, request.url)
            if renamed is exc:
                raise
            raise renamed from exc
        return response.replace(url=request.url)


def _named_by(exc: Exception, target: str, url: str) -> Exception:
    """The exception with the loopback URL in its message put back to the real one (Scrapy's
    timeout names the URL it fetched), so errors read as they would live."""
    if exc.args and isinstance(exc.args[0], str) and target in exc.args[0]:
        with contextlib.suppress(TypeError):
            return type(exc)(exc.args[0].replace(target, url), *exc.args[1:])
    return exc


def crawl_settings(address: str, **overrides: Any) -> dict[str, Any]:
    """Scrapy settings (for `python -m gpuprices.spiders.crawl --settings`) that crawl through the
    replay server. Only the pauses are shortened (no politeness needed towards a loopback server);
    the retry policy, robots.txt and the size bound stay the crawler's own."""
    settings: dict[str, Any] = {
        "DOWNLOAD_HANDLERS": {"http": HANDLER, "https": HANDLER},
        ADDRESS_SETTING: address,
        "DOWNLOAD_DELAY": 0,
        "AUTOTHROTTLE_ENABLED": False,
    }
    return settings | overrides


def settings_json(address: str, **overrides: Any) -> str:
    return json.dumps(crawl_settings(address, **overrides))


class _LoopbackHandler(urllib.request.HTTPHandler):
    handler_order = 100  # before the default http and https handlers

    def __init__(self, address: str) -> None:
        super().__init__()
        self._host, port = address.rsplit(":", 1)
        self._port = int(port)

    def _connect(self, req: urllib.request.Request):
        req.add_unredirected_header(SCHEME_HEADER, req.type)

        def connection(_host: str, **kw: Any) -> http.client.HTTPConnection:
            return http.client.HTTPConnection(self._host, self._port, **kw)

        return self.do_open(connection, req)

    def http_open(self, req):
        return self._connect(req)

    def https_open(self, req):
        return self._connect(req)

    https_request = urllib.request.HTTPHandler.http_request


def loopback_opener(address: str) -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(_LoopbackHandler(address))


@contextlib.contextmanager
def installed(address: str) -> Iterator[None]:
    """urllib.request.urlopen goes to the replay server inside the block."""
    urllib.request.install_opener(loopback_opener(address))
    try:
        yield
    finally:
        urllib.request.install_opener(None)
