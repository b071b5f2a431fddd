"""Storage and concurrency on the scaled-out stack: real PostgreSQL and Redis, and the SQLite default."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from sqlalchemy import func, select, text, update

from tests.conftest import POSTGRES_ADMIN_URL, Tenant, TenantFactory, settings_for_test
from tests.domains.distribution.conftest import connect_webhook
from toolhost.app import create_app
from toolhost.catalog import build_registry
from toolhost.config import CreditCost, RateLimitSettings
from toolhost.db.migrate import schema_differences, upgrade
from toolhost.db.session import create_engine
from toolhost.platform import accounts
from toolhost.platform.context import Principal
from toolhost.platform.models import Account, CreditEntry, UsageRecord
from toolhost.platform.ratelimit import RateLimiter
from toolhost.platform.results import RateLimited
from toolhost.platform.runtime import Platform, build_platform

ONE_CREDIT_BALANCE = {"credits": {"costs": {"get_credit_balance": {"base": 1}}}}


async def test_migrations_reach_head_on_postgresql_and_match_the_models(postgres_url: str) -> None:
    engine = create_engine(postgres_url)
    try:
        await upgrade(engine)
        assert await schema_differences(engine) == []
    finally:
        await engine.dispose()


async def test_migrations_reach_head_on_sqlite_and_match_the_models(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        await upgrade(engine)
        assert await schema_differences(engine) == []
    finally:
        await engine.dispose()


async def reader_with_balance(platform: Platform, balance: int) -> Principal:
    """An agency account holding `balance` credits, as an mcp:read caller."""
    async with platform.session_factory() as session, session.begin():
        account = await accounts.create_account(session, name="race", tier="agency", settings=platform.settings)
        await accounts.create_project(session, account_id=account.id, name="p")
        await session.execute(update(Account).where(Account.id == account.id).values(credit_balance=balance))
    return Principal(
        account_id=account.id,
        tier="agency",
        credential_id=None,
        credential_name="race",
        scopes=frozenset({"mcp:read"}),
        project_id=None,
    )


async def concurrent_debits(platform: Platform, calls: int, balance: int) -> tuple[list[str], int]:
    principal = await reader_with_balance(platform, balance)
    executions = await asyncio.gather(
        *(platform.execute("get_credit_balance", {}, principal, transport="cli") for _ in range(calls))
    )
    outcomes = [execution.error.error_type if execution.error else "ok" for execution in executions]
    async with platform.session_factory() as session:
        final = await session.scalar(select(Account.credit_balance).where(Account.id == principal.account_id))
        holds = await session.scalar(
            select(func.count())
            .select_from(CreditEntry)
            .where(CreditEntry.account_id == principal.account_id, CreditEntry.kind == "hold")
        )
        settlements = await session.scalar(
            select(func.count())
            .select_from(CreditEntry)
            .where(
                CreditEntry.account_id == principal.account_id, CreditEntry.kind == "settle", CreditEntry.amount == 0
            )
        )
    assert final == 0
    assert holds == settlements == balance
    return outcomes, int(final)


@pytest.mark.usefixtures("postgres_connections_to_itself")
async def test_a_thousand_concurrent_debits_against_100_credits_let_exactly_100_through_on_postgresql(
    postgres_url: str,
) -> None:
    platform = build_platform(settings_for_test(database_url=postgres_url, **ONE_CREDIT_BALANCE), build_registry())
    try:
        outcomes, _ = await concurrent_debits(platform, calls=1000, balance=100)
    finally:
        await platform.close()
    assert outcomes.count("ok") == 100
    assert outcomes.count("billing_error") == 900


@pytest.mark.usefixtures("postgres_connections_to_itself")
async def test_calls_recover_once_postgresql_has_dropped_every_connection(postgres_url: str) -> None:
    # Pooled connections are not pinged on checkout: one the server closed is replaced when it is checked
    # out, and at worst the first unit of work after the drop fails; never call after call.
    platform = build_platform(settings_for_test(database_url=postgres_url, **ONE_CREDIT_BALANCE), build_registry())
    try:
        principal = await reader_with_balance(platform, 100)

        async def call() -> str:
            execution = await platform.execute("get_credit_balance", {}, principal, transport="cli")
            return execution.error.error_type if execution.error else "ok"

        assert set(await asyncio.gather(*(call() for _ in range(8)))) == {"ok"}  # several pooled connections
        admin = create_engine(POSTGRES_ADMIN_URL)
        async with admin.begin() as connection:
            dropped = await connection.scalar(
                text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = :name AND pid <> pg_backend_pid()"
                ),
                {"name": postgres_url.rsplit("/", 1)[1]},
            )
        await admin.dispose()
        assert dropped and dropped >= 2
        outcomes = [await call() for _ in range(6)]
    finally:
        await platform.close()
    assert outcomes.count("ok") >= 5 and outcomes[-4:] == ["ok"] * 4


async def test_concurrent_debits_never_overdraw_on_sqlite(database_url: str) -> None:
    platform = build_platform(settings_for_test(database_url=database_url, **ONE_CREDIT_BALANCE), build_registry())
    try:
        outcomes, _ = await concurrent_debits(platform, calls=120, balance=40)
    finally:
        await platform.close()
    assert outcomes.count("ok") == 40 and outcomes.count("billing_error") == 80


async def test_a_billing_error_says_the_balance_and_what_was_required(
    make_tenant: TenantFactory, platform: Platform
) -> None:
    payer = await make_tenant()
    platform.settings.credits.costs["get_credit_balance"] = CreditCost(base=5)
    try:
        async with platform.session_factory() as session, session.begin():
            await session.execute(update(Account).where(Account.id == payer.account_id).values(credit_balance=3))
        response = await payer.call("get_credit_balance")
    finally:
        platform.settings.credits.costs.pop("get_credit_balance")
    assert response.status_code == 402
    error = response.json()["error"]
    assert error["error_type"] == "billing_error"
    assert error["balance"] == 3 and error["required_credits"] == 5


async def test_rate_limits_answer_429_with_retry_after(make_tenant: TenantFactory, platform: Platform) -> None:
    caller = await make_tenant(tier="trial", scopes=["mcp:read"])
    platform.settings.ratelimit.enabled = True
    statuses = [(await caller.call("get_credit_balance")).status_code for _ in range(16)]
    assert statuses[:15] == [200] * 15
    limited = await caller.call("get_credit_balance")
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) >= 1
    error = limited.json()["error"]
    assert error["error_type"] == "rate_limited" and error["retry_after"] >= 1


async def test_requests_without_a_credential_are_limited_per_ip(platform: Platform, client: httpx.AsyncClient) -> None:
    platform.settings.ratelimit.enabled = True
    statuses = [(await client.get("/v1/tools")).status_code for _ in range(61)]
    assert statuses[:60] == [401] * 60
    assert statuses[60] == 429
    assert (await client.get("/v1/openapi.json")).status_code == 200


async def test_the_rate_limit_holds_across_two_limiters_sharing_redis(redis_url: str) -> None:
    # Two limiters with connections of their own, as two server processes have: only Redis is shared between them.
    account = str(uuid.uuid4())
    spec = build_registry().get("get_credit_balance")
    assert spec is not None

    async def allowed_of(limiter: RateLimiter) -> int:
        allowed = 0
        for _ in range(50):
            try:
                await limiter.check_call(spec, account_id=account, tier="agency")
                allowed += 1
            except RateLimited:
                pass
        return allowed

    limiters = [RateLimiter(RateLimitSettings(), redis_url) for _ in range(2)]
    try:
        allowed = await asyncio.gather(*(allowed_of(limiter) for limiter in limiters))
    finally:
        for limiter in limiters:
            await limiter.close()
    assert sum(allowed) == 60, allowed


async def test_rate_limits_use_redis_when_configured(tenant: Tenant, redis_url: str, database_url: str) -> None:
    platform = build_platform(
        settings_for_test(database_url=database_url, redis_url=redis_url, ratelimit={"enabled": True}),
        build_registry(),
    )
    try:
        principal = Principal(
            account_id=tenant.account_id,
            tier="trial",
            credential_id=None,
            credential_name="x",
            scopes=frozenset({"mcp:read"}),
            project_id=None,
        )
        results = [await platform.execute("get_mcp_usage", {}, principal, transport="cli") for _ in range(16)]
    finally:
        await platform.close()
    assert [result.status for result in results[:15]] == [200] * 15
    assert results[15].status == 429


async def test_at_most_three_wait_for_connection_calls_run_at_once_per_account(
    tenant: Tenant, platform: Platform
) -> None:
    platform.settings.ratelimit.enabled = True
    waiting = [
        asyncio.create_task(
            tenant.call("wait_for_connection", {"platform": "mastodon", "timeout_s": 30, "poll_interval_s": 2})
        )
        for _ in range(3)
    ]
    for _ in range(500):  # bounded wait until the three are inside the handler
        if sum(platform.rate_limiter._in_flight.values()) == 3:
            break
        await asyncio.sleep(0.01)
    fourth = await tenant.call("wait_for_connection", {"platform": "mastodon", "timeout_s": 5})
    assert fourth.status_code == 429
    assert fourth.json()["error"]["error_type"] == "rate_limited"
    # The account the three wait for arrives: they answer at their next poll, and free their places. (Nothing is
    # posted to its documentation address, RFC 5737.)
    await connect_webhook(platform, tenant.project_id, "https://203.0.113.10/toolhost", platform_name="mastodon")
    finished = await asyncio.gather(*waiting)
    assert [response.json()["structuredContent"]["connected"] for response in finished] == [True] * 3
    after = await tenant.call("wait_for_connection", {"platform": "mastodon", "timeout_s": 5})
    assert after.status_code == 200


async def test_a_long_run_header_is_cut_to_the_stored_length_on_postgresql(postgres_url: str) -> None:
    settings = settings_for_test(database_url=postgres_url)
    platform = build_platform(settings, build_registry())
    app = create_app(settings, platform)
    try:
        async with platform.session_factory() as session, session.begin():
            account = await accounts.create_account(session, name="runs", tier="agency", settings=settings)
            issued = await accounts.create_key(
                session, account_id=account.id, name="k", granted_scopes=["mcp:read"], settings=settings
            )
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as http:
            response = await http.post(
                "/v1/tools/get_budget_status",
                headers={"Authorization": f"Bearer {issued.plaintext}", "X-Toolhost-Run": "r" * 500},
            )
        assert response.status_code == 200, response.text
        await platform.usage.flush()
        async with platform.session_factory() as session:
            stored = await session.scalar(select(UsageRecord.run_id).where(UsageRecord.account_id == account.id))
        assert stored == "r" * 128
    finally:
        await platform.close()
