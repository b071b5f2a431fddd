"""The sign-in page and sign-out: a person's email and password become a session cookie, and back.

A wrong password and an unknown address get the same answer in the same time; attempts are limited per
address and per client IP (`RateLimiter.check_sign_in`), counted before the password is checked.
"""

from __future__ import annotations

import secrets

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from toolhost.platform import users, websession
from toolhost.platform.pages import field, read_form, render
from toolhost.platform.rest import client_ip
from toolhost.platform.results import RateLimited, ValidationFailed
from toolhost.platform.runtime import Platform
from toolhost.platform.websession import SESSION_COOKIE, SIGN_IN_COOKIE, SIGN_IN_FORM_SECONDS

DEFAULT_LANDING = "/app/calendar"
WRONG_CREDENTIALS = "Wrong email address or password."


def safe_next(target: str | None) -> str:
    """Where to go after signing in: a path on this site only, never another origin."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")) or any(c in target for c in "\r\n"):
        return DEFAULT_LANDING
    return target


def signin_routes(platform: Platform) -> list[BaseRoute]:
    """GET and POST /signin, POST /signout."""
    settings = platform.settings

    def form_page(
        request: Request, *, next_path: str, email: str = "", message: str | None = None, status: int = 200
    ) -> Response:
        cookie = request.cookies.get(websession.cookie_name(settings, SIGN_IN_COOKIE)) or secrets.token_urlsafe(32)
        response = render(
            "signin.html",
            title="Sign in",
            status=status,
            message=message,
            message_is_error=status >= 400,
            csrf_token=websession.csrf_token(settings, cookie),
            next=next_path,
            email=email,
        )
        websession.set_cookie(response, settings, SIGN_IN_COOKIE, cookie, max_age=SIGN_IN_FORM_SECONDS)
        return response

    async def sign_in_page(request: Request) -> Response:
        next_path = safe_next(request.query_params.get("next"))
        if await websession.signed_in(request) is not None:
            return RedirectResponse(next_path, status_code=303)
        return form_page(request, next_path=next_path)

    async def sign_in(request: Request) -> Response:
        try:
            form = await read_form(request)
        except ValidationFailed:
            refused = render("message.html", title="Sign in", status=413, message="That form is too large.")
            refused.headers["Connection"] = "close"  # the rest of the body is never read
            return refused
        next_path = safe_next(field(form, "next"))
        email = users.normalized_email(field(form, "email"))
        password = field(form, "password")
        cookie = request.cookies.get(websession.cookie_name(settings, SIGN_IN_COOKIE))
        if not websession.csrf_matches(settings, cookie, field(form, websession.CSRF_FIELD)):
            return form_page(
                request,
                next_path=next_path,
                email=email,
                status=403,
                message="This sign-in form has expired or came from another site. Please sign in again.",
            )
        try:
            await platform.rate_limiter.check_sign_in(email=email, client_ip=client_ip(request))
        except RateLimited as error:
            minutes = max(1, round(int(error.details["retry_after"]) / 60))
            response = form_page(
                request,
                next_path=next_path,
                email=email,
                status=429,
                message=f"Too many sign-in attempts. Try again in {minutes} minute{'s' if minutes != 1 else ''}.",
            )
            response.headers["Retry-After"] = str(error.details["retry_after"])
            return response
        async with platform.session_factory() as session, session.begin():
            user = await users.user_with_password(session, email=email, password=password)
            token = await websession.open_session(session, user=user, settings=settings) if user else None
        if token is None:
            return form_page(request, next_path=next_path, email=email, status=401, message=WRONG_CREDENTIALS)
        response = RedirectResponse(next_path, status_code=303)
        websession.set_cookie(
            response, settings, SESSION_COOKIE, token, max_age=int(settings.signin.session_hours * 3600)
        )
        websession.clear_cookie(response, settings, SIGN_IN_COOKIE)
        return response

    async def sign_out(request: Request) -> Response:
        person = await websession.signed_in(request)
        if person is None:
            return RedirectResponse(websession.SIGN_IN_PATH, status_code=303)
        try:
            form = await read_form(request)
        except ValidationFailed:
            form = None
        if form is None or not websession.csrf_accepted(person, form):
            return render(
                "message.html",
                title="Sign out",
                person=person,
                status=403,
                message="This sign-out form came from another site or has expired; you are still signed in.",
                message_is_error=True,
            )
        token = request.cookies[websession.cookie_name(settings, SESSION_COOKIE)]
        async with platform.session_factory() as session, session.begin():
            await websession.close_session(session, token=token)
        response = render(
            "message.html",
            title="Signed out",
            message="You are signed out.",
            link=websession.SIGN_IN_PATH,
            link_text="Sign in again",
        )
        websession.clear_cookie(response, settings, SESSION_COOKIE)
        return response

    return [
        Route(websession.SIGN_IN_PATH, sign_in_page, methods=["GET"]),
        Route(websession.SIGN_IN_PATH, sign_in, methods=["POST"]),
        Route("/signout", sign_out, methods=["POST"]),
    ]
