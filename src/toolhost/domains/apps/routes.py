"""The apps as web pages: `/app/calendar` and `/app/analytics`.

A page carries no data and needs no session: its script asks for an API key, keeps it in the tab's
sessionStorage and sends it as a bearer header to `POST /v1/tools/...`, so keys never travel in a URL.
Each response gets its own script nonce; the policy allows nothing else but calls to this origin.
"""

from __future__ import annotations

import secrets

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from toolhost.domains.apps import ui


def _page(view: ui.View) -> HTMLResponse:
    nonce = secrets.token_urlsafe(16)
    return HTMLResponse(
        ui.document(view, None, nonce=nonce),
        headers={
            "Cache-Control": "no-store",
            "X-Frame-Options": "DENY",
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Content-Security-Policy": (
                f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'unsafe-inline'; "
                "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
            ),
        },
    )


async def calendar_page(request: Request) -> HTMLResponse:
    """The content calendar (open_content_calendar) as a page."""
    return _page("calendar")


async def analytics_page(request: Request) -> HTMLResponse:
    """The analytics pulse (open_analytics_pulse) as a page."""
    return _page("analytics")


routes = [
    Route("/app/calendar", calendar_page, methods=["GET"]),
    Route("/app/analytics", analytics_page, methods=["GET"]),
]
