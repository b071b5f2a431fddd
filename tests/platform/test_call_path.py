"""The call path: a slow call makes no other call wait, credits are held and settled, usage is batched."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import event, func, select, update
from starlette.applications import Starlette

from tests.conftest import Tenant, TenantFactory, settings_for_test, worker_context
from tests.local_http import serving
from toolhost.app import create_app
from toolhost.catalog import build_registry
from toolhost.config import RateLimitSettings, Settings
from toolhost.db.session import TransactionHeldDuringOutsideWork, call_scope
from toolhost.platform import accounts, credits, usage
from toolhost.platform.models import Account, ApiKey, CreditEntry, CreditHold, UsageRecord
from toolhost.platform.runtime import Platform, build_platform
from toolhost.providers.fetch import Fetcher

SLOW_SECONDS = 1.0
PARALLEL_CALLS = 4
BRAND_PAGE = b"""<!doctype html><html><head><title>Slow Roast Coffee</title>
<meta name="theme-color" content="#1f6f4a"></head>
<body><h1>Coffee worth slowing down for</h1>
<p>We roast small batches every Tuesday for home brewers who care about the cup.</p></body></html>"""


class SlowSite:
    """A site on 127.0.0.1 that answers every page after SLOW_SECONDS, counting requests in flight."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.most_in_flight = 0
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with site._lock:
                    site.in_flight += 1
                    site.most_in_flight = max(site.most_in_flight, site.in_flight)
                time.sleep(SLOW_SECONDS)
                with site._lock:
                    site.in_flight -= 1
                body = BRAND_PAGE if self.path == "/" else b"not here"
                # A caller cancelled meanwhile has closed the connection: nobody reads this answer.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.send_response(200 if self.path == "/" else 404)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"


@pytest.fixture
def slow_site() -> Iterator[SlowSite]:
    site = SlowSite()
    with serving(site.server):
        yield site


def slow_site_settings(database_url: str, tmp_path: Path) -> Settings:
    return settings_for_test(
        database_url=database_url,
        media={"root": str(tmp_path / "media")},
        fetch={"allow": ["127.0.0.1/32"], "allow_http": True, "total_timeout": 10},
    )


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return slow_site_settings(database_url, tmp_path)


async def balance_of(platform: Platform, account_id: uuid.UUID) -> int:
    async with platform.session_factory() as session:
        return int(await session.scalar(select(Account.credit_balance).where(Account.id == account_id)) or 0)


async def fire_slow_calls_and_a_free_one(tenant: Tenant, site: SlowSite) -> tuple[list[httpx.Response], bool]:
    """PARALLEL_CALLS extract_brand calls at once, then get_credit_balance while they wait on the site.

    Returns the slow calls' answers and whether the free call answered while all of them were still waiting.
    """
    slow_calls = [asyncio.create_task(tenant.call("extract_brand", {"url": site.url})) for _ in range(PARALLEL_CALLS)]
    while site.most_in_flight < PARALLEL_CALLS and not any(call.done() for call in slow_calls):
        await asyncio.sleep(0.01)
    free = await tenant.call("get_credit_balance")
    answered_meanwhile = free.status_code == 200 and not any(call.done() for call in slow_calls)
    return list(await asyncio.gather(*slow_calls)), answered_meanwhile


async def assert_calls_ran_side_by_side(platform: Platform, tenant: Tenant, site: SlowSite) -> None:
    before = await balance_of(platform, tenant.account_id)
    answers, answered_meanwhile = await fire_slow_calls_and_a_free_one(tenant, site)
    for answer in answers:
        assert answer.status_code == 200 and not answer.json()["isError"], answer.text
    # Every call reached the site before any answered: none waited on another's transaction or row lock.
    assert site.most_in_flight == PARALLEL_CALLS
    assert answered_meanwhile
    assert await balance_of(platform, tenant.account_id) == before - 2 * PARALLEL_CALLS


async def test_slow_calls_of_one_account_run_side_by_side_and_a_free_call_answers_meanwhile_on_sqlite(
    platform: Platform, tenant: Tenant, slow_site: SlowSite
) -> None:
    await assert_calls_ran_side_by_side(platform, tenant, slow_site)


@pytest.mark.postgres
async def test_slow_calls_of_one_account_run_side_by_side_and_a_free_call_answers_meanwhile_on_postgresql(
    postgres_url: str, tmp_path: Path, slow_site: SlowSite
) -> None:
    settings = slow_site_settings(postgres_url, tmp_path)
    platform = build_platform(settings, build_registry())
    app = create_app(settings, platform)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client:
            tenant = await new_tenant(platform, client, settings)
            await assert_calls_ran_side_by_side(platform, tenant, slow_site)
    finally:
        await platform.close()


async def test_an_account_past_its_calls_in_flight_of_a_tool_is_refused_until_one_returns(
    database_url: str, tmp_path: Path, slow_site: SlowSite
) -> None:
    settings = slow_site_settings(database_url, tmp_path).model_copy(
        update={"ratelimit": RateLimitSettings(in_flight_per_account={"extract_brand": 1})}
    )
    platform = build_platform(settings, build_registry())
    app = create_app(settings, platform)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client:
            tenant = await new_tenant(platform, client, settings)
            first = asyncio.create_task(tenant.call("extract_brand", {"url": slow_site.url}))
            while slow_site.most_in_flight < 1 and not first.done():
                await asyncio.sleep(0.01)
            refused = await tenant.call("extract_brand", {"url": slow_site.url})
            assert (await first).status_code == 200
            again = await tenant.call("extract_brand", {"url": slow_site.url})
    finally:
        await platform.close()
    assert refused.status_code == 429 and refused.json()["error"]["error_type"] == "rate_limited"
    assert again.status_code == 200


async def new_tenant(platform: Platform, client: httpx.AsyncClient, settings: Settings) -> Tenant:
    async with platform.session_factory() as session, session.begin():
        account = await accounts.create_account(session, name="side-by-side", tier="agency", settings=settings)
        project = await accounts.create_project(session, account_id=account.id, name="p")
        issued = await accounts.create_key(
            session, account_id=account.id, name="agent", granted_scopes=["mcp:full"], settings=settings
        )
    return Tenant(
        client=client, key=issued.plaintext, key_id=issued.key.id, account_id=account.id, project_ids=[project.id]
    )


async def test_each_paid_call_leaves_a_hold_and_its_settlement_in_the_ledger(
    platform: Platform, tenant: Tenant, slow_site: SlowSite
) -> None:
    answer = await tenant.call("extract_brand", {"url": slow_site.url})
    assert answer.json()["isError"] is False
    async with platform.session_factory() as session:
        request_id = await session.scalar(
            select(CreditHold.reference).where(CreditHold.account_id == tenant.account_id)
        )
        entries = list(
            await session.scalars(
                select(CreditEntry).where(CreditEntry.reference == request_id).order_by(CreditEntry.created_at)
            )
        )
        hold = await session.scalar(select(CreditHold).where(CreditHold.reference == request_id))
        usage = await session.scalar(select(UsageRecord).where(UsageRecord.request_id == request_id))
    assert [(entry.kind, entry.amount) for entry in entries] == [("hold", -2), ("settle", 0)]
    assert hold is not None and hold.settled_at is not None and hold.charged == 2 and hold.outcome == "ok"
    assert usage is not None and usage.credits == 2 and usage.outcome == "ok"


async def test_a_call_that_fails_in_its_handler_gets_its_hold_back_and_its_failure_recorded(
    platform: Platform, tenant: Tenant, slow_site: SlowSite
) -> None:
    before = await balance_of(platform, tenant.account_id)
    answer = await tenant.call("extract_brand", {"url": slow_site.url + "missing"})
    body = answer.json()
    assert body["isError"] is True and body["error"]["error_type"] == "upstream_error"
    assert await balance_of(platform, tenant.account_id) == before
    async with platform.session_factory() as session:
        hold = await session.scalar(select(CreditHold).where(CreditHold.reference == body["error"]["request_id"]))
        usage = await session.scalar(select(UsageRecord).where(UsageRecord.request_id == body["error"]["request_id"]))
    assert hold is not None and hold.charged == 0 and hold.outcome == "upstream_error"
    assert usage is not None and usage.outcome == "upstream_error" and usage.credits == 0


async def test_a_call_cancelled_by_its_client_mid_handler_settles_its_hold(
    platform: Platform, tenant: Tenant, slow_site: SlowSite
) -> None:
    before = await balance_of(platform, tenant.account_id)
    call = asyncio.create_task(tenant.call("extract_brand", {"url": slow_site.url}))
    while slow_site.in_flight == 0:
        await asyncio.sleep(0.01)
    assert await balance_of(platform, tenant.account_id) == before - 2  # held while it runs
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    async with platform.session_factory() as session:
        holds = list(await session.scalars(select(CreditHold).where(CreditHold.account_id == tenant.account_id)))
    assert [(hold.outcome, hold.charged) for hold in holds] == [("cancelled", 0)]
    assert await balance_of(platform, tenant.account_id) == before


async def test_a_hold_left_by_a_process_killed_mid_call_is_returned_by_the_worker_once_it_expires(
    platform: Platform, tenant: Tenant
) -> None:
    before = await balance_of(platform, tenant.account_id)
    # What a process killed between hold and settlement leaves behind: a committed hold nobody renews.
    async with platform.session_factory() as session, session.begin():
        hold_id = await credits.place_hold(
            session,
            account_id=tenant.account_id,
            period=credits.period_of(datetime.now(UTC)),
            amount=5,
            tool_name="extract_brand",
            reference="req_killed",
            run_id=None,
            lifetime=timedelta(seconds=60),
        )
    context = worker_context(platform)
    assert await credits.release_expired_holds(context) == 0  # not expired yet: its call may still be running
    assert await balance_of(platform, tenant.account_id) == before - 5
    async with platform.session_factory() as session, session.begin():
        await session.execute(
            update(CreditHold)
            .where(CreditHold.id == hold_id)
            .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    assert await credits.release_expired_holds(context) == 1
    assert await credits.release_expired_holds(context) == 0  # settled exactly once
    assert await balance_of(platform, tenant.account_id) == before
    async with platform.session_factory() as session:
        hold = await session.get(CreditHold, hold_id)
        kinds = list(await session.scalars(select(CreditEntry.kind).where(CreditEntry.reference == "req_killed")))
    assert hold is not None and hold.outcome == "expired" and hold.charged == 0
    assert sorted(kinds) == ["hold", "settle"]


async def test_a_running_calls_hold_is_renewed_so_the_worker_never_takes_it_back(
    settings: Settings, tenant: Tenant, platform: Platform, slow_site: SlowSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hold a third of the call's length (pages of 3 s), renewed every 0.5 s: a renewal a busy machine delays
    # by up to a second still comes in time, and without renewals the hold would run out mid-call.
    monkeypatch.setattr(sys.modules[__name__], "SLOW_SECONDS", 3.0)
    platform.executor.hold_lifetime = timedelta(seconds=1.5)
    platform.executor.hold_keeper.lifetime = timedelta(seconds=1.5)
    context = worker_context(platform)
    call = asyncio.create_task(tenant.call("extract_brand", {"url": slow_site.url}))
    while not call.done():
        assert await credits.release_expired_holds(context) == 0
        await asyncio.sleep(0.05)
    assert call.result().json()["isError"] is False
    async with platform.session_factory() as session:
        outcomes = list(
            await session.scalars(select(CreditHold.outcome).where(CreditHold.account_id == tenant.account_id))
        )
    assert outcomes == ["ok"]


async def test_the_fetcher_refuses_to_run_while_the_call_holds_an_open_transaction(
    platform: Platform, settings: Settings, slow_site: SlowSite
) -> None:
    fetcher = Fetcher(settings.fetch)
    with call_scope():
        async with platform.session_factory() as session:
            await session.scalar(select(func.count()).select_from(Account))
            with pytest.raises(TransactionHeldDuringOutsideWork):
                await fetcher.get(slow_site.url)
            await session.commit()
            fetched = await fetcher.get(slow_site.url)
    assert fetched.status == 200
    assert slow_site.most_in_flight == 1  # the refused fetch never reached the site


async def test_free_calls_usage_is_written_within_a_second_and_at_shutdown(
    settings: Settings, platform: Platform, make_tenant: TenantFactory
) -> None:
    tenant = await make_tenant()
    assert (await tenant.call("get_credit_balance")).status_code == 200
    deadline = time.monotonic() + 3
    while await usage_count(platform, tenant.account_id) == 0 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert await usage_count(platform, tenant.account_id) == 1

    # A call answered just before shutdown is written by the shutdown itself.
    other = build_platform(settings, platform.registry)
    app = create_app(settings, other)
    async with (
        lifespan(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client,
    ):
        answer = await client.post("/v1/tools/get_credit_balance", json={}, headers=tenant.headers)
        assert answer.status_code == 200
    assert await usage_count(platform, tenant.account_id) == 2


def lifespan(app: Starlette) -> Any:
    return app.router.lifespan_context(app)


async def many_free_calls_are_written_each_under_an_id_of_its_own(settings: Settings) -> None:
    platform = build_platform(settings, build_registry())
    try:
        async with platform.session_factory() as session, session.begin():
            account = await accounts.create_account(session, name="usage", tier="agency", settings=settings)
            issued = await accounts.create_key(
                session, account_id=account.id, name="k", granted_scopes=["mcp:read"], settings=settings
            )
        principal = await platform.authenticator.authenticate(issued.plaintext, resource=settings.api_root)
        # More than one INSERT's worth on SQLite, where a flush writes ROWS_PER_INSERT rows per statement.
        calls = 2 * usage.ROWS_PER_INSERT + 1
        answers = await asyncio.gather(
            *(platform.execute("get_credit_balance", {}, principal, transport="cli") for _ in range(calls))
        )
        assert not any(answer.result["isError"] for answer in answers)
        await platform.usage.flush()
        async with platform.session_factory() as session:
            rows = (await session.execute(select(UsageRecord.id, UsageRecord.request_id, UsageRecord.account_id))).all()
    finally:
        await platform.close()
    assert len(rows) == calls
    assert len({row.id for row in rows}) == calls and len({row.request_id for row in rows}) == calls
    # Time-ordered keys: the batch appends to the table's indexes instead of rewriting pages across them.
    assert all(row.id.version == 7 for row in rows)
    assert {row.account_id for row in rows} == {account.id}


async def test_queued_usage_rows_are_written_each_under_an_id_of_its_own(settings: Settings) -> None:
    await many_free_calls_are_written_each_under_an_id_of_its_own(settings)


@pytest.mark.postgres
async def test_queued_usage_rows_are_written_each_under_an_id_of_its_own_on_postgresql(postgres_url: str) -> None:
    await many_free_calls_are_written_each_under_an_id_of_its_own(settings_for_test(database_url=postgres_url))


async def usage_count(platform: Platform, account_id: uuid.UUID) -> int:
    async with platform.session_factory() as session:
        return int(
            await session.scalar(
                select(func.count()).select_from(UsageRecord).where(UsageRecord.account_id == account_id)
            )
            or 0
        )


async def test_a_revoked_key_is_refused_at_once_though_its_principal_was_cached(
    platform: Platform, tenant: Tenant
) -> None:
    assert (await tenant.call("get_credit_balance")).status_code == 200
    async with platform.session_factory() as session, session.begin():
        await accounts.revoke_key(session, key_id=tenant.key_id)
    assert (await tenant.call("get_credit_balance")).status_code == 401


async def test_a_key_revoked_by_another_process_is_refused_within_a_second(
    platform: Platform, tenant: Tenant, database_url: str
) -> None:
    assert (await tenant.call("get_credit_balance")).status_code == 200
    # Another process (the CLI) revokes the key: this process's counter does not move.
    other = build_platform(platform.settings, platform.registry)
    try:
        async with other.session_factory() as session, session.begin():
            await session.execute(update(ApiKey).where(ApiKey.id == tenant.key_id).values(revoked_at=datetime.now(UTC)))
    finally:
        await other.close()
    deadline = time.monotonic() + 1.5
    status = 200
    while status == 200 and time.monotonic() < deadline:
        status = (await tenant.call("get_credit_balance")).status_code
        await asyncio.sleep(0.05)
    assert status == 401


async def test_concurrent_calls_with_an_uncached_key_read_it_from_the_database_once(
    platform: Platform, tenant: Tenant
) -> None:
    key_reads: list[str] = []

    def count_key_reads(_connection: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if "FROM api_keys" in statement:
            key_reads.append(statement)

    engines = {platform.engine.sync_engine, platform.read_engine.sync_engine}
    for engine in engines:
        event.listen(engine, "before_cursor_execute", count_key_reads)
    try:
        answers = await asyncio.gather(*(tenant.call("get_credit_balance") for _ in range(20)))
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", count_key_reads)
    assert [answer.status_code for answer in answers] == [200] * 20
    assert len(key_reads) == 1
