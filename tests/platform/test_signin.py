"""People sign in with an email address and a password, get a session cookie, and sign out."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select, update

from tests.conftest import PersonFactory, csrf_of, settings_for_test, sign_in
from toolhost.app import create_app
from toolhost.catalog import build_registry
from toolhost.config import Settings
from toolhost.platform import accounts, users
from toolhost.platform.models import WebSession
from toolhost.platform.runtime import Platform, build_platform
from toolhost.platform.signin import WRONG_CREDENTIALS, safe_next


@asynccontextmanager
async def served(settings: Settings) -> AsyncIterator[tuple[httpx.AsyncClient, Platform]]:
    """The app on its own settings (https, or rate limits on), over HTTP in-process."""
    platform = build_platform(settings, build_registry())
    transport = httpx.ASGITransport(app=create_app(settings, platform))
    try:
        async with httpx.AsyncClient(transport=transport, base_url=settings.api_root) as client:
            yield client, platform
    finally:
        await platform.close()


async def sessions_in_database(platform: Platform) -> int:
    async with platform.session_factory() as session:
        return int(await session.scalar(select(func.count()).select_from(WebSession)) or 0)


async def test_a_person_signs_in_and_is_sent_where_they_were_going_with_an_httponly_session_cookie(
    client: httpx.AsyncClient, make_person: PersonFactory, platform: Platform
) -> None:
    person = await make_person()
    response = await sign_in(client, person.email.upper(), person.password, next_path="/app/analytics?days=7")
    assert response.status_code == 303 and response.headers["location"] == "/app/analytics?days=7"
    cookie = next(value for value in response.headers.get_list("set-cookie") if value.startswith("toolhost_session="))
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/" in cookie and "Secure" not in cookie
    assert await sessions_in_database(platform) == 1
    # Signed in, the sign-in page sends the person straight on.
    again = await client.get("/signin", params={"next": "/app/calendar"})
    assert again.status_code == 303 and again.headers["location"] == "/app/calendar"


async def test_the_sign_in_page_and_the_signed_in_pages_share_one_stylesheet(
    client: httpx.AsyncClient, make_person: PersonFactory
) -> None:
    style = re.compile(r"<style[^>]*>(.*?)</style>", re.DOTALL)
    sign_in_page = (await client.get("/signin")).text
    person = await make_person()
    await sign_in(client, person.email, person.password)
    styles = {style.findall(sign_in_page)[0]}
    for path in ("/app/calendar", "/app/approvals", "/app/analytics"):
        page = await client.get(path)
        assert page.status_code == 200, path
        styles.update(style.findall(page.text))
    assert len(styles) == 1


async def test_over_https_the_session_cookie_is_secure_and_host_only(
    database_url: str, tmp_path: Path, make_person: PersonFactory
) -> None:
    person = await make_person()
    https = settings_for_test(database_url=database_url, public_url="https://toolhost.example")
    async with served(https) as (client, _platform):
        response = await sign_in(client, person.email, person.password)
    assert response.status_code == 303
    cookie = next(value for value in response.headers.get_list("set-cookie") if "toolhost_session=" in value)
    assert cookie.startswith("__Host-toolhost_session=") and "Secure" in cookie and "HttpOnly" in cookie


async def test_a_wrong_password_and_an_unknown_address_get_the_same_answer_and_no_session(
    client: httpx.AsyncClient, make_person: PersonFactory, platform: Platform
) -> None:
    person = await make_person()
    wrong = await sign_in(client, person.email, "not the password at all")
    unknown = await sign_in(client, "nobody@example.com", person.password)
    for response in (wrong, unknown):
        assert response.status_code == 401
        assert WRONG_CREDENTIALS in response.text
        assert not any("toolhost_session=" in value for value in response.headers.get_list("set-cookie"))
    assert await sessions_in_database(platform) == 0


async def test_sign_in_attempts_are_limited_per_address_then_per_client_ip(
    database_url: str, make_person: PersonFactory
) -> None:
    person = await make_person()
    limited = settings_for_test(
        database_url=database_url, ratelimit={"enabled": True, "sign_in_per_email": 3, "sign_in_per_ip": 5}
    )
    async with served(limited) as (client, platform):
        for _ in range(3):
            assert (await sign_in(client, person.email, "a wrong guess, again")).status_code == 401
        # The right password no longer helps once the address is out of attempts.
        blocked = await sign_in(client, person.email, person.password)
        assert blocked.status_code == 429 and "Too many sign-in attempts" in blocked.text
        assert int(blocked.headers["Retry-After"]) > 0
        # Other addresses from the same IP have what is left of the IP's five attempts.
        for attempt in range(2):
            assert (await sign_in(client, f"other-{attempt}@example.com", "wrong password here")).status_code == 401
        assert (await sign_in(client, "another@example.com", "wrong password here")).status_code == 429
        assert await sessions_in_database(platform) == 0


async def test_a_sign_in_form_without_its_csrf_token_signs_no_one_in(
    client: httpx.AsyncClient, make_person: PersonFactory, platform: Platform
) -> None:
    person = await make_person()
    await client.get("/signin")
    for token in ("", "0" * 64):
        response = await client.post(
            "/signin", data={"csrf_token": token, "email": person.email, "password": person.password}
        )
        assert response.status_code == 403 and "expired or came from another site" in response.text
    assert await sessions_in_database(platform) == 0


async def test_signing_out_needs_the_forms_token_and_ends_the_session_everywhere(
    client: httpx.AsyncClient, make_person: PersonFactory, platform: Platform
) -> None:
    person = await make_person()
    page = await client.get((await sign_in(client, person.email, person.password)).headers["location"])
    forged = await client.post("/signout", data={"csrf_token": "forged"})
    assert forged.status_code == 403 and await sessions_in_database(platform) == 1
    signed_out = await client.post("/signout", data={"csrf_token": csrf_of(page.text)})
    assert signed_out.status_code == 200 and "You are signed out." in signed_out.text
    assert await sessions_in_database(platform) == 0
    assert (await client.get("/signin")).status_code == 200


async def test_an_expired_session_is_no_sign_in(
    client: httpx.AsyncClient, make_person: PersonFactory, platform: Platform
) -> None:
    person = await make_person()
    await sign_in(client, person.email, person.password)
    async with platform.session_factory() as session, session.begin():
        await session.execute(update(WebSession).values(expires_at=datetime.now(UTC) - timedelta(seconds=1)))
    # The principal cache keeps a session's expiry with it, but not a change made behind its back for a second.
    await platform.authenticator.close()
    response = await client.get("/signin", params={"next": "/app/calendar"})
    assert response.status_code == 200 and 'name="password"' in response.text


def test_after_signing_in_a_person_goes_only_to_a_page_of_this_site() -> None:
    assert safe_next("/app/calendar?days=7") == "/app/calendar?days=7"
    for elsewhere in ("https://evil.example/", "//evil.example/x", "/\\evil.example", "app/calendar", None, ""):
        assert safe_next(elsewhere) == "/app/calendar"


@pytest.mark.postgres
async def test_a_session_made_by_one_process_is_honoured_and_ended_by_another_on_postgresql(
    postgres_url: str, tmp_path: Path
) -> None:
    settings = settings_for_test(database_url=postgres_url, media={"root": str(tmp_path / "media")})
    async with served(settings) as (first, first_platform), served(settings) as (second, _second_platform):
        async with first_platform.session_factory() as session, session.begin():
            account = await accounts.create_account(session, name="scaled", tier="pro", settings=settings)
            await users.create_user(
                session, account_id=account.id, email="ada@example.com", password="correct horse battery"
            )
        signed_in = await sign_in(first, "ada@example.com", "correct horse battery")
        assert signed_in.status_code == 303
        second.cookies.update(first.cookies)
        page = await second.get("/app/calendar")
        assert page.status_code == 200 and "ada@example.com" in page.text
        assert (await second.post("/signout", data={"csrf_token": csrf_of(page.text)})).status_code == 200
        assert (await first.get("/app/calendar")).status_code == 303


async def test_work_a_person_starts_from_a_page_runs_as_them_with_their_tiers_scopes(
    make_person: PersonFactory, platform: Platform
) -> None:
    person = await make_person(tier="pro")
    principal = await platform.authenticator.principal_for_credential(person.user_id, within=frozenset({"mcp:read"}))
    assert principal.credential_name == person.email and principal.account_id == person.account_id
    assert principal.scopes == frozenset({"mcp:read"})
    assert (await platform.authenticator.principal_for_credential(person.user_id)).scopes == frozenset(
        {"mcp:read", "mcp:write", "mcp:distribute", "mcp:analytics"}
    )
