"""The apps as web pages for signed-in people: `/app/calendar` and `/app/analytics`.

A page carries no data: its script calls `POST /v1/tools/...` on the person's session cookie with the
page's CSRF token in `X-CSRF-Token` (no key is ever typed into a page), and goes back to the sign-in page
when the session has ended. Anyone not signed in is sent to sign in first. Each response gets its own
script nonce; the policy allows nothing else but calls and forms to this origin.
"""

from __future__ import annotations

import secrets

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from toolhost.domains.apps import ui
from toolhost.platform.websession import Person, for_people


def _page(view: ui.View, person: Person) -> HTMLResponse:
    nonce = secrets.token_urlsafe(16)
    return HTMLResponse(
        ui.document(view, None, nonce=nonce, person=person),
        headers={
            "Cache-Control": "no-store",
            "X-Frame-Options": "DENY",
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Content-Security-Policy": (
                f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'unsafe-inline'; "
                "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
            ),
        },
    )


@for_people
async def calendar_page(request: Request, person: Person) -> HTMLResponse:
    """The content calendar (open_content_calendar) as a page."""
    return _page("calendar", person)


@for_people
async def analytics_page(request: Request, person: Person) -> HTMLResponse:
    """The analytics pulse (open_analytics_pulse) as a page."""
    return _page("analytics", person)


routes = [
    Route("/app/calendar", calendar_page, methods=["GET"]),
    Route("/app/analytics", analytics_page, methods=["GET"]),
]
