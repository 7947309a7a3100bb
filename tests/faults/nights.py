"""Things outside the pipeline that stall or break a night, for tests/test_nights.py: no name
resolution.
"""

from __future__ import annotations

# A name that never resolves: RFC 6761 reserves .invalid, and resolvers answer NXDOMAIN for it
# (offline they fail too). As the proxy of every request, it makes the crawl's first step, the
# name lookup, fail the way a machine without DNS does.
NO_DNS_PROXY = "http://proxy.invalid:3128"
NO_DNS_ENV = {"http_proxy": NO_DNS_PROXY, "https_proxy": NO_DNS_PROXY, "no_proxy": ""}
