"""Which crawl failures cannot heal within a night's retries.

A provider whose crawl fetched nothing is tried again after minutes (flows/pipeline/steps.py,
`live_day_with_backoff`): a site that is down for a minute or rate-limits a burst gets another
chance. Some failures say that this machine cannot reach the internet at all, and minutes do not
change that: the name of the host cannot be resolved (no DNS: "DNS lookup failed"), or there is
no route to it (no network: ENETUNREACH / EHOSTUNREACH). Retrying those only makes an offline
night take minutes instead of seconds; they fail fast. A refused connection, a timeout or an
HTTP error can heal and keeps its retries.
"""

from __future__ import annotations

import re

# The wording of Twisted's and Scrapy's errors as the crawl summary carries them
# (`{type}: {message}`): twisted.internet.error.DNSLookupError ("DNS lookup failed"), which
# Scrapy 2.13+ re-raises as CannotResolveHostError; NoRouteError ("No route to host", what
# Twisted makes of ENETUNREACH); an EHOSTUNREACH / ENETUNREACH passed through as OS text.
_UNHEALABLE = {
    "no name resolution": re.compile(
        r"DNS lookup failed|CannotResolveHostError|DNSLookupError|Name or service not known|"
        r"Temporary failure in name resolution|nodename nor servname", re.IGNORECASE),
    "no route to the host": re.compile(
        r"NoRouteError|No route to host|Network is unreachable", re.IGNORECASE),
}


def unhealable(errors: list[str]) -> str | None:
    """What cannot heal in minutes ("no name resolution", "no route to the host") when every
    one of `errors` says so; None when any error could heal (or there is none)."""
    kinds = set()
    for e in errors:
        kind = next((k for k, pattern in _UNHEALABLE.items() if pattern.search(e)), None)
        if kind is None:
            return None
        kinds.add(kind)
    return " and ".join(sorted(kinds)) or None
