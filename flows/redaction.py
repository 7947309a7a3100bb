"""Credentials kept out of everything a run prints, records or posts: the webhook URL, the values
of secret-looking environment variables, and secret URL parameters."""

from __future__ import annotations

import os
import re

WEBHOOK_ENV = "GPUPRICES_WEBHOOK_URL"
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|WEBHOOK)", re.IGNORECASE)
_SECRET_PARAM = re.compile(
    r"(?i)\b((?:api_?key|key|token|access_token|signature|sig|password)=)[^&\s\"']+")


def _secrets() -> list[str]:
    vals = [v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= 6]
    url = os.environ.get(WEBHOOK_ENV, "")
    if url:
        # Also the path alone (an error may quote it without the host).
        path = url.split("://", 1)[-1].partition("/")[2]
        vals += [url, "/" + path] if len(path) >= 6 else [url]
    return sorted(set(vals), key=len, reverse=True)


def redact(text: str | None) -> str:
    """`text` without the webhook URL, secret environment values or secret URL parameters."""
    if not text:
        return text or ""
    for s in _secrets():
        text = text.replace(s, "***")
    return _SECRET_PARAM.sub(r"\1***", text)
