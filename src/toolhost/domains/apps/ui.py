"""The apps' one HTML document per view: inline CSS and JS, no external domain, data rendered as text only.

The same document serves two hosts. Inside an MCP host (an iframe) it carries the tool's payload and
calls tools back through the host with JSON-RPC over postMessage (`tools/call`). As a toolhost web page
(`/app/calendar`, `/app/analytics`) it carries no data, only the signed-in person's CSRF token: it calls
`POST /v1/tools/...` on their session cookie with that token in `X-CSRF-Token`, and offers to sign out.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any, Literal

from toolhost.platform.fields import SOCIAL_PLATFORMS
from toolhost.platform.pages import STYLESHEET
from toolhost.platform.redaction import redact
from toolhost.platform.websession import CSRF_FIELD, Person

View = Literal["calendar", "analytics", "approvals"]
MIME_TYPE = "text/html;profile=mcp-app"
RESOURCE_URIS: dict[View, str] = {
    "calendar": "ui://content-calendar/v1/mcp-app.html",
    "analytics": "ui://analytics-pulse/v1/mcp-app.html",
}
TOOLS: dict[View, str] = {
    "calendar": "open_content_calendar",
    "analytics": "open_analytics_pulse",
    "approvals": "list_plan_approvals",
}
TITLES: dict[View, str] = {"calendar": "Content calendar", "analytics": "Analytics pulse", "approvals": "Approvals"}

ASSETS = Path(__file__).parent / "assets"
# The web pages' one stylesheet, inlined into every document: an MCP host's sandbox may allow no other origin,
# not even toolhost's.
STYLE = STYLESHEET
SCRIPT = (ASSETS / "app.js").read_text(encoding="utf-8")

DOCUMENT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>{title}</title><style>{style}</style></head>
<body>{account}<h1>{title}</h1><p id="status" class="muted" role="status"></p><main id="app"></main>
<script type="application/json" id="toolhost-boot">{boot}</script>
<script{nonce}>{script}</script>
</body></html>"""


def _script_json(value: Any) -> str:
    """JSON safe inside a <script> element: no character can close the element or open a comment."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


ACCOUNT_BAR = """<header class="bar account"><nav class="bar"><a href="/app/approvals">Approvals</a>
<a href="/app/calendar">Calendar</a><a href="/app/analytics">Analytics</a></nav>
<form class="bar" method="post" action="/signout"><span class="muted">{email}</span>
<input type="hidden" name="{field}" value="{csrf_token}"><button type="submit">Sign out</button></form></header>"""


def document(
    view: View, payload: dict[str, Any] | None, *, nonce: str | None = None, person: Person | None = None
) -> str:
    """The view's HTML; `payload` (redacted here, like every result) is rendered at once, None = load it.

    With a `person` it is their web page: its calls go to /v1 on their session with their CSRF token.
    """
    boot = {
        "view": view,
        "tool": TOOLS[view],
        "platforms": list(SOCIAL_PLATFORMS),
        "payload": redact(payload) if payload is not None else None,
        "csrf_token": person.csrf_token if person is not None else None,
    }
    account = (
        ACCOUNT_BAR.format(email=html.escape(person.email), field=CSRF_FIELD, csrf_token=person.csrf_token)
        if person is not None
        else ""
    )
    return DOCUMENT.format(
        account=account,
        title=TITLES[view],
        style=STYLE,
        boot=_script_json(boot),
        nonce=f' nonce="{nonce}"' if nonce else "",
        script=SCRIPT,
    )


def resource_block(view: View, payload: dict[str, Any]) -> dict[str, Any]:
    """The `resource` content block an apps tool adds after its text block (CATALOG.md §1.2, §19)."""
    return {
        "type": "resource",
        "resource": {"uri": RESOURCE_URIS[view], "mimeType": MIME_TYPE, "text": document(view, payload)},
    }
