"""Signed-in people: the session cookie and its row, CSRF tokens, and what a page handler asks of them.

A sign-in is a random token in an HttpOnly, SameSite=Lax cookie (Secure, and named with the `__Host-`
prefix, when `public_url` is https); the database keeps its SHA-256 and expiry, so every process of a
scaled-out install sees the same sessions, and signing out deletes the row. A page's forms and its calls to
`/v1` carry a CSRF token derived from the cookie with the secret key (HMAC), so a page of another site can
neither post a form nor call a tool as the person. The sign-in form, before any session exists, carries one
derived from a short-lived cookie of its own.

Pages other domains add use `for_people` (a signed-in person, or the sign-in page and back) and
`csrf_accepted` on every form they receive.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from toolhost.config import Settings
from toolhost.platform.accounts import CredentialChanges, hash_secret
from toolhost.platform.context import Principal
from toolhost.platform.models import User, WebSession
from toolhost.platform.results import Unauthenticated

if TYPE_CHECKING:
    from toolhost.platform.runtime import Platform

SESSION_COOKIE = "toolhost_session"
SIGN_IN_COOKIE = "toolhost_signin"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
SIGN_IN_PATH = "/signin"
SIGN_IN_FORM_SECONDS = 3600


def cookie_name(settings: Settings, base: str) -> str:
    """The cookie's name: `__Host-` prefixed over https, so no subdomain or plain-http page can set it."""
    return f"__Host-{base}" if settings.served_over_https else base


def csrf_token(settings: Settings, cookie_value: str) -> str:
    """The CSRF token of the forms of the browser holding this cookie (a session's or the sign-in form's)."""
    return hmac.new(settings.keyring.current().signing, f"csrf:{cookie_value}".encode(), hashlib.sha256).hexdigest()


def csrf_matches(settings: Settings, cookie_value: str | None, presented: str | None) -> bool:
    """Whether a submitted CSRF token belongs to this browser's cookie."""
    if not cookie_value or not presented:
        return False
    return hmac.compare_digest(csrf_token(settings, cookie_value), presented)


def set_cookie(response: Response, settings: Settings, base: str, value: str, *, max_age: int) -> None:
    """Sets one of toolhost's cookies: HttpOnly, SameSite=Lax, the whole site, Secure over https."""
    response.set_cookie(
        cookie_name(settings, base),
        value,
        max_age=max_age,
        path="/",
        httponly=True,
        samesite="lax",
        secure=settings.served_over_https,
    )


def clear_cookie(response: Response, settings: Settings, base: str) -> None:
    """Tells the browser to forget one of toolhost's cookies."""
    response.delete_cookie(
        cookie_name(settings, base), path="/", httponly=True, samesite="lax", secure=settings.served_over_https
    )


async def open_session(session: AsyncSession, *, user: User, settings: Settings) -> str:
    """A new sign-in of the user (a fresh token, never one the browser brought); its token, shown once."""
    now = datetime.now(UTC)
    await session.execute(delete(WebSession).where(WebSession.user_id == user.id, WebSession.expires_at <= now))
    token = secrets.token_urlsafe(32)
    session.add(
        WebSession(
            user_id=user.id,
            token_hash=hash_secret(token),
            expires_at=now + timedelta(hours=settings.signin.session_hours),
        )
    )
    await session.flush()
    return token


async def close_session(session: AsyncSession, *, token: str) -> None:
    """Signs the session out: its row goes, and this process forgets it at once (others within a second)."""
    await session.execute(delete(WebSession).where(WebSession.token_hash == hash_secret(token)))
    CredentialChanges.after_commit_of(session)


@dataclass(frozen=True, slots=True)
class Person:
    """A signed-in person as a page sees them: who they act as, and the CSRF token of their forms."""

    principal: Principal
    csrf_token: str

    @property
    def email(self) -> str:
        """The address they signed in with."""
        return self.principal.credential_name


def platform_of(request: Request) -> Platform:
    """The platform the app serves this request on."""
    return request.app.state.platform  # type: ignore[no-any-return]


async def signed_in(request: Request) -> Person | None:
    """The person whose live session cookie came with the request, or None."""
    platform = platform_of(request)
    token = request.cookies.get(cookie_name(platform.settings, SESSION_COOKIE))
    if not token:
        return None
    try:
        principal = await platform.authenticator.authenticate_session(token)
    except Unauthenticated:
        return None
    return Person(principal=principal, csrf_token=csrf_token(platform.settings, token))


def sign_in_redirect(request: Request) -> RedirectResponse:
    """To the sign-in page, which comes back here afterwards."""
    back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"{SIGN_IN_PATH}?{urlencode({'next': back})}", status_code=303)


def csrf_accepted(person: Person, form: Mapping[str, Any]) -> bool:
    """Whether a form a signed-in person posted carries their CSRF token (check it before acting on any form)."""
    presented = form.get(CSRF_FIELD)
    return isinstance(presented, str) and hmac.compare_digest(person.csrf_token, presented)


PageHandler = Callable[[Request, Person], Awaitable[Response]]


def for_people(handler: PageHandler) -> Callable[[Request], Awaitable[Response]]:
    """A page only a signed-in person sees: anyone else (an expired session too) is sent to sign in, then back."""

    @functools.wraps(handler)
    async def page(request: Request) -> Response:
        person = await signed_in(request)
        if person is None:
            return sign_in_redirect(request)
        return await handler(request, person)

    return page
