"""The apps as web pages for signed-in people: `/app/calendar`, `/app/analytics` and `/app/approvals`.

A page carries no data: its script calls `POST /v1/tools/...` on the person's session cookie with the
page's CSRF token in `X-CSRF-Token` (no key is ever typed into a page), and goes back to the sign-in page
when the session has ended. Anyone not signed in is sent to sign in first. The approvals queue decides items
with respond_plan_approval like any agent; the one thing no tool answers, which plans have pending items,
comes from `GET /app/approvals/plans` on the same session. Each response gets its own
script nonce; the policy allows nothing else but calls and forms to this origin.
"""

from __future__ import annotations

import secrets

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from toolhost.domains.approvals import service as approvals_service
from toolhost.domains.apps import ui
from toolhost.platform.websession import Person, for_people, platform_of, signed_in


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


@for_people
async def approvals_page(request: Request, person: Person) -> HTMLResponse:
    """The approvals queue: pending items grouped by plan, decided with respond_plan_approval."""
    return _page("approvals", person)


async def plans_with_pending(request: Request) -> JSONResponse:
    """The signed-in person's plans with pending approval items, oldest first (401 once the session has ended)."""
    person = await signed_in(request)
    if person is None:
        return JSONResponse({"error": "sign in first"}, status_code=401, headers={"Cache-Control": "no-store"})
    async with platform_of(request).session_factory() as session:
        found = await approvals_service.plans_with_pending(
            session, account_id=person.principal.account_id, project_id=person.principal.project_id
        )
    plans = [
        {"plan_id": str(plan.id), "project_id": str(plan.project_id), "topic": plan.topic[:300], "pending": pending}
        for plan, pending in found
    ]
    return JSONResponse({"plans": plans}, headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"})


async def favicon(request: Request) -> Response:
    """No icon: every browser asks for one, and a 404 would be an error in each page's console."""
    return Response(status_code=204, headers={"Cache-Control": "public, max-age=86400"})


routes = [
    Route("/app/calendar", calendar_page, methods=["GET"]),
    Route("/app/analytics", analytics_page, methods=["GET"]),
    Route("/app/approvals", approvals_page, methods=["GET"]),
    Route("/app/approvals/plans", plans_with_pending, methods=["GET"]),
    Route("/favicon.ico", favicon, methods=["GET"]),
]
