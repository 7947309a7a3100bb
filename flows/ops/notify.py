"""Sending a message to every channel the operator named, through Apprise
(https://github.com/caronc/apprise: Slack, Teams, e-mail, ntfy, Discord, JSON and ~100 more).

$GPUPRICES_NOTIFY holds one or more Apprise URLs separated by spaces or commas
(`slack://T/B/C`, `msteams://…`, `mailto://user:pass@host`, `ntfys://topic`, `json://host:port/path`).
The older $GPUPRICES_WEBHOOK_URL keeps working: a Slack incoming-webhook URL
(https://hooks.slack.com/services/…) or any other URL Apprise recognises as its own is used as
it is; any other http(s) URL receives a Slack-compatible `{"text": …}` POST (Apprise's json://
plugin with its fields renamed), as the hand-written poster used to send.

Every send is bounded by one total deadline ($GPUPRICES_WEBHOOK_TIMEOUT_S, default 10 s:
flows/ops/deadline.py). What goes wrong is reported from Apprise's own log lines, redacted
(every URL above is a credential: flows/redaction.py).
"""

from __future__ import annotations

import logging
import os
import urllib.parse
from dataclasses import dataclass

import apprise

from gpuprices.flows.ops import deadline
from gpuprices.flows.redaction import NOTIFY_ENV, WEBHOOK_ENV, redact

WEBHOOK_TIMEOUT_S = 10.0  # the whole send, not each read
WEBHOOK_TIMEOUT_ENV = "GPUPRICES_WEBHOOK_TIMEOUT_S"
# Apprise's json:// plugin renames or drops its payload fields by `:field=new` URL arguments
# (https://github.com/caronc/apprise/wiki/Notify_Custom_JSON, "Payload Mapping"): the message
# becomes Slack's `text` (also read by Mattermost and Rocket.Chat), the other fields go.
_SLACK_COMPAT = ":message=text&:title=&:version=&:attachments=&:type="
KINDS = {"info": apprise.NotifyType.INFO, "warning": apprise.NotifyType.WARNING,
         "failure": apprise.NotifyType.FAILURE, "success": apprise.NotifyType.SUCCESS}
_ASSET = apprise.AppriseAsset(app_id="gpuprices", app_desc="GPU cloud price alerts",
                              app_url="https://github.com/gpuprices")


@dataclass(frozen=True)
class Target:
    url: str
    merge_title: bool = False  # the receiver shows one text: the title goes first in it


def deadline_s() -> float:
    """The whole time a send may take ($GPUPRICES_WEBHOOK_TIMEOUT_S, default 10 s)."""
    try:
        value = float(os.environ.get(WEBHOOK_TIMEOUT_ENV, WEBHOOK_TIMEOUT_S))
    except ValueError:
        return WEBHOOK_TIMEOUT_S
    return value if value > 0 else WEBHOOK_TIMEOUT_S


def legacy_target(url: str) -> Target:
    """$GPUPRICES_WEBHOOK_URL as an Apprise target."""
    if apprise.Apprise.instantiate(url, asset=_ASSET) is not None:  # native: hooks.slack.com…
        return Target(url)
    parts = urllib.parse.urlsplit(url)
    scheme = {"http": "json", "https": "jsons"}.get(parts.scheme.lower())
    if scheme is None:
        return Target(url)  # refused by Apprise below, with its reason
    query = f"{parts.query}&{_SLACK_COMPAT}" if parts.query else _SLACK_COMPAT
    return Target(urllib.parse.urlunsplit((scheme, parts.netloc, parts.path, query, "")),
                  merge_title=True)


def targets() -> list[Target]:
    """Every configured target: $GPUPRICES_NOTIFY's URLs, then the legacy webhook's."""
    out = [Target(u) for u in apprise.utils.parse.parse_urls(os.environ.get(NOTIFY_ENV, ""))]
    legacy = os.environ.get(WEBHOOK_ENV, "").strip()
    if legacy:
        out.append(legacy_target(legacy))
    return out


def configured() -> bool:
    return bool(os.environ.get(NOTIFY_ENV, "").strip() or os.environ.get(WEBHOOK_ENV, "").strip())


def _send_all(found: list[Target], title: str, body: str, kind: str) -> list[str]:
    problems = []
    for i, t in enumerate(found, 1):
        with apprise.LogCapture(level=logging.WARNING) as log:
            plugin = apprise.Apprise.instantiate(t.url, asset=_ASSET)
            if plugin is None:
                problems.append(f"target {i}: not an Apprise URL Apprise can use")
                continue
            text, head = (f"{title}\n\n{body}", "") if t.merge_title else (body, title)
            ok = plugin.notify(body=text, title=head, notify_type=KINDS[kind],
                               body_format=apprise.NotifyFormat.TEXT)
        if not ok:
            said = " ".join(log.getvalue().split()) or "no reason given"
            problems.append(f"target {i} ({plugin.service_name}): {said}")
    return problems


def send(title: str, body: str, kind: str = "info", timeout: float | None = None,
         found: list[Target] | None = None) -> str | None:
    """Send `title` and `body` (plain text: each channel's plugin escapes what its format
    needs, e.g. Slack's `<!channel>`) to every target. None when every target took it, else
    one redacted line saying which did not and why."""
    found = targets() if found is None else found
    if not found:
        return None
    limit = deadline_s() if timeout is None else timeout
    try:
        problems = deadline.run(lambda: _send_all(found, title, body, kind), limit)
    except deadline.DeadlineExceeded as exc:
        return f"alert send abandoned: {exc}"
    except Exception as exc:  # a plugin's own failure: say what, never where
        return redact(f"alert send failed: {type(exc).__name__}: {exc}")
    if not problems:
        return None
    return redact("alert not delivered to " + "; ".join(problems))
