"""What the OAuth connector tests do alike against their stand-ins: sign in through the connect page, read and
rewrite the stored account, and reach the configured connector with an account's session."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from sqlalchemy import update

from tests.conftest import Tenant
from tests.domains.distribution.test_schedule_post import post_row
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import run_jobs
from toolhost.providers.connectors.base import AccountSession, Connector
from toolhost.providers.connectors.registry import Connectors
from toolhost.providers.connectors.vault import TokenVault


class ApprovingStandIn(Protocol):
    """A platform stand-in whose consent page approves an authorization request and answers with a code."""

    def approve(self, authorize_query: dict[str, str]) -> str: ...


class HangingStandIn(Protocol):
    """A platform stand-in that can accept a publication and then hold its answer until released."""

    accepted: asyncio.Event
    hang_after_accepting: bool
    release: asyncio.Event


async def sign_in_through_connect_page(
    tenant: Tenant,
    client: httpx.AsyncClient,
    stand_in: ApprovingStandIn,
    *,
    platform: str,
    connector: str,
    label: str,
    authorize: str,
) -> list[dict[str, Any]]:
    """start_platform_connection, the connect page, the platform's consent page (the stand-in approves), the
    callback; returns every account list_connected_accounts shows afterwards, for the test to pick from."""
    started = await tenant.data("start_platform_connection", {"platform": platform})
    path = str(started["deep_link"]).removeprefix("http://testserver")
    assert f"Sign in with {label}" in (await client.get(path)).text
    redirect = await client.get(f"{path}/oauth/{connector}")
    assert redirect.status_code == 303, redirect.text
    target = urlsplit(redirect.headers["location"])
    assert f"{target.scheme}://{target.netloc}{target.path}" == authorize
    query = {name: values[0] for name, values in parse_qs(target.query).items()}
    code = stand_in.approve(query)
    done = await client.get("/app/connect/oauth/callback", params={"code": code, "state": query["state"]})
    assert done.status_code == 200, done.text
    accounts: list[dict[str, Any]] = (await tenant.data("list_connected_accounts", {"include_all": True}))["accounts"]
    return accounts


def listed_account(listed: dict[str, Any]) -> ConnectedAccount:
    """An account as list_connected_accounts shows it (not read back from the database)."""
    return ConnectedAccount(
        id=uuid.UUID(listed["id"]), status=listed["status"], username=listed["username"], connector=listed["connector"]
    )


async def stored_account(platform: Platform, account_id: uuid.UUID) -> ConnectedAccount:
    """The account's row as stored, sealed secret included."""
    async with platform.session_factory() as session:
        account = await session.get(ConnectedAccount, account_id)
        assert account is not None
        return account


async def store_token_material(
    platform: Platform, account_id: uuid.UUID, material: dict[str, Any], **columns: Any
) -> None:
    """Seals changed token material into the account's row (and sets other columns), as if time had passed."""
    vault = TokenVault(platform.settings.keyring)
    async with platform.session_factory() as session, session.begin():
        await session.execute(
            update(ConnectedAccount)
            .where(ConnectedAccount.id == account_id)
            .values(secret=vault.seal(material), **columns)
        )


def configured_connector(platform: Platform, name: str, account: ConnectedAccount) -> tuple[Connector, AccountSession]:
    """The configured connector of that name and the account's session with it, as the job machine builds them."""
    connector = Connectors(platform.settings).get(name)
    assert connector is not None, f"{name} is not configured"
    return connector, accounts_service.session_of(account, TokenVault(platform.settings.keyring))


async def expire_lease(platform: Platform, post_id: str) -> None:
    """The dead worker's lease runs out, so the next claim retries the post."""
    job_id = (await post_row(platform, post_id)).job_id
    async with platform.session_factory() as session, session.begin():
        await session.execute(
            update(Job).where(Job.id == job_id).values(lease_expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )


async def kill_after_accepting(
    platform: Platform, worker: WorkerContext, stand_in: HangingStandIn, post_id: str
) -> None:
    """Runs the worker until the platform accepted the publication, then kills it before it hears back, and lets
    the post's lease run out as a dead worker's does."""
    stand_in.hang_after_accepting = True
    running = asyncio.create_task(run_jobs(worker))
    async with asyncio.timeout(30):
        await stand_in.accepted.wait()
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    stand_in.release.set()
    stand_in.hang_after_accepting = False
    post = await post_row(platform, post_id)
    assert post.status == "publishing" and post.external_post_id is None, "toolhost never heard back"
    await expire_lease(platform, post_id)
