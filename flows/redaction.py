"""Credentials kept out of everything a run prints, records or posts: the alert URLs (the
webhook and every Apprise URL: they carry tokens and passwords), the values of secret-looking
environment variables, and secret URL parameters."""

from __future__ import annotations

import os
import re

WEBHOOK_ENV = "GPUPRICES_WEBHOOK_URL"
NOTIFY_ENV = "GPUPRICES_NOTIFY"
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|WEBHOOK)", re.IGNORECASE)
_SECRET_PARAM = re.compile(
    r"(?i)\b((?:api_?key|key|token|access_token|signature|sig|password|pass|user)=)[^&\s\"']+")


def _url_secrets(url: str) -> list[str]:
    """A URL, the part after its scheme, its path, its user:password and each path segment or
    query value of 6 characters or more (an error may quote any of them alone). The host is
    left in unless it is the token itself (slack://TokenA/… has no host)."""
    rest = url.split("://", 1)[-1]
    netloc, _, path = rest.partition("/")
    vals = [url, rest]
    user, at, _host = netloc.rpartition("@")
    if at:
        vals += [user, *user.split(":")]
    if len(path) >= 6:
        vals.append("/" + path.split("?")[0])
    # A segment alone only when token-like (a digit, or long): "services" stays readable.
    vals += [p for p in re.split(r"[/?&=,]", path) + ([netloc] if "." not in netloc else [])
             if re.search(r"\d", p) or len(p) >= 16]
    return [v for v in vals if len(v) >= 6]


def _secrets() -> list[str]:
    vals = [v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= 6]
    for name in (WEBHOOK_ENV, NOTIFY_ENV):
        for url in re.split(r"[\s,]+", os.environ.get(name, "")):
            if url:
                vals += _url_secrets(url)
    return sorted(set(vals), key=len, reverse=True)


def redact(text: str | None) -> str:
    """`text` without the alert URLs, secret environment values or secret URL parameters."""
    if not text:
        return text or ""
    for s in _secrets():
        text = text.replace(s, "***")
    return _SECRET_PARAM.sub(r"\1***", text)
