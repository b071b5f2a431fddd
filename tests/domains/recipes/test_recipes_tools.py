"""Recipes (CATALOG.md §15) over HTTP: listing, details, pre-flight checks, runs executed step by step."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from tests.conftest import Tenant, TenantFactory, worker_context
from toolhost.platform import accounts
from toolhost.platform.context import Principal
from toolhost.platform.execution import Execution
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.models import Account, UsageRecord
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import run_jobs


def worker(platform: Platform) -> WorkerContext:
    return worker_context(platform, "test")


async def test_list_and_details_show_the_five_recipes_with_their_scopes(tenant: Tenant) -> None:
    listed = await tenant.data("list_recipes", {})
    assert [item["slug"] for item in listed["recipes"]] == [
        "weekly-instagram-calendar",
        "url-to-social-posts",
        "topic-to-carousel",
        "publish-approved-plan",
        "weekly-digest-webhook",
    ]
    analytics = await tenant.data("list_recipes", {"category": "analytics"})
    assert [item["slug"] for item in analytics["recipes"]] == ["weekly-digest-webhook"]
    details = await tenant.data("get_recipe_details", {"slug": "publish-approved-plan"})
    assert details["steps"][0]["tool"] == "schedule_content_plan"
    assert details["required_scopes"] == ["mcp:distribute", "mcp:write"]
    missing = await tenant.call("get_recipe_details", {"slug": "nope"})
    assert missing.status_code == 200 and missing.json()["error"]["error_type"] == "not_found"


async def test_a_run_executes_each_step_as_the_caller_and_debits_per_step(tenant: Tenant, platform: Platform) -> None:
    started = await tenant.data(
        "execute_recipe", {"slug": "weekly-instagram-calendar", "inputs": {"topic": "Meal prep", "days": 2}}
    )
    assert started["status"] == "pending" and started["estimated_credits"] == 10
    pending = await tenant.data("get_recipe_run_status", {"run_id": started["run_id"]})
    assert pending["status"] == "pending" and pending["progress"] == 0
    assert await run_jobs(worker(platform)) == 1
    done = await tenant.data("get_recipe_run_status", {"run_id": started["run_id"]})
    assert done["status"] == "completed", done
    assert set(done["outputs"]) == {"plan", "quality", "submit"}
    assert done["outputs"]["submit"]["status"] == "in_review"
    assert done["credits_used"] == 10 and done["progress"] == 100
    status = await tenant.data("check_status", {"job_id": started["run_id"]})
    assert status["status"] == "completed" and status["job_type"] == "recipe_run"


async def test_a_failed_step_fails_the_run_and_keeps_earlier_results(tenant: Tenant, platform: Platform) -> None:
    started = await tenant.data(
        "execute_recipe", {"slug": "weekly-digest-webhook", "inputs": {"webhook_url": "https://127.0.0.1/hook"}}
    )
    await run_jobs(worker(platform))
    failed = await tenant.data("get_recipe_run_status", {"run_id": started["run_id"]})
    assert failed["status"] == "failed"
    assert set(failed["outputs"]) == {"digest", "anomalies"}
    assert failed["error"]["step"] == "deliver" and failed["error"]["error_type"] == "validation_error"


async def test_pre_flight_refuses_bad_inputs_missing_scopes_and_low_balance(
    make_tenant: TenantFactory, platform: Platform
) -> None:
    writer = await make_tenant(tier="pro", scopes=["mcp:read", "mcp:write"])
    bad = await writer.call("execute_recipe", {"slug": "url-to-social-posts", "inputs": {"platforms": ["myspace"]}})
    paths = [error["path"] for error in bad.json()["error"]["field_errors"]]
    assert bad.json()["error"]["error_type"] == "validation_error" and paths == ["inputs", "inputs.platforms[0]"]
    denied = await writer.call(
        "execute_recipe",
        {"slug": "publish-approved-plan", "inputs": {"plan_id": "0" * 8 + "-0000-0000-0000-" + "0" * 12}},
    )
    error = denied.json()["error"]
    assert error["error_type"] == "permission_denied" and "schedule" in error["message"]
    async with platform.session_factory() as session, session.begin():
        account = await session.get(Account, writer.account_id)
        assert account is not None
        account.credit_balance = 9
    poor = await writer.call("execute_recipe", {"slug": "weekly-instagram-calendar", "inputs": {"topic": "Tea"}})
    assert poor.status_code == 402
    assert poor.json()["error"]["balance"] == 9 and poor.json()["error"]["required_credits"] == 10


async def test_another_tenants_run_is_not_found_and_cancel_accepts_the_run_id(
    tenant: Tenant, make_tenant: TenantFactory
) -> None:
    started = await tenant.data("execute_recipe", {"slug": "topic-to-carousel", "inputs": {"topic": "Sleep"}})
    other = await make_tenant()
    response = await other.call("get_recipe_run_status", {"run_id": started["run_id"]})
    assert response.status_code == 404
    cancelled = await tenant.data("cancel_async_job", {"job_id": started["run_id"], "confirm": True})
    assert cancelled["status"] == "cancelled"
    after = await tenant.data("get_recipe_run_status", {"run_id": started["run_id"]})
    assert after["status"] == "cancelled"


async def a_second_key(platform: Platform, tenant: Tenant) -> Tenant:
    """Another live key of the same account, to read what the first key's work did."""
    async with platform.session_factory() as session, session.begin():
        issued = await accounts.create_key(
            session,
            account_id=tenant.account_id,
            name="reader",
            granted_scopes=["mcp:full"],
            settings=platform.settings,
        )
    return replace(tenant, key=issued.plaintext, key_id=issued.key.id)


def revoking_after_each_call(platform: Platform, key_id: uuid.UUID, calls: list[str]) -> Any:
    """The platform's execute(), revoking `key_id` once each call has finished (as an operator would mid-run)."""
    execute = platform.executor.execute

    async def execute_then_revoke(name: str, arguments: Any, principal: Principal, **options: Any) -> Execution:
        execution = await execute(name, arguments, principal, **options)
        calls.append(name)
        async with platform.session_factory() as session, session.begin():
            await accounts.revoke_key(session, key_id=key_id)
        return execution

    return execute_then_revoke


async def balance(platform: Platform, account_id: uuid.UUID) -> int:
    async with platform.session_factory() as session:
        return int(await session.scalar(select(Account.credit_balance).where(Account.id == account_id)) or 0)


async def test_a_revoked_key_stops_its_running_recipe_at_the_next_step_and_the_rest_is_never_charged(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = await a_second_key(platform, tenant)
    started = await tenant.data(
        "execute_recipe", {"slug": "topic-to-carousel", "inputs": {"topic": "Sleep", "slide_count": 3}}
    )
    before = await balance(platform, tenant.account_id)
    calls: list[str] = []
    monkeypatch.setattr(platform.executor, "execute", revoking_after_each_call(platform, tenant.key_id, calls))
    assert await run_jobs(worker(platform)) == 1
    monkeypatch.undo()

    assert calls == ["generate_carousel"]
    status = await reader.data("get_recipe_run_status", {"run_id": started["run_id"]})
    assert status["status"] == "failed" and set(status["outputs"]) == {"draft"}
    error = status["error"]
    assert (error["step"], error["error_type"]) == ("check", "unauthenticated") and "revoked" in error["message"]
    charged = before - await balance(platform, tenant.account_id)
    assert charged == status["credits_used"] == 5  # the draft; the render (17 credits) never ran
    job = await reader.data("check_status", {"job_id": started["run_id"]})
    assert (job["status"], job["failure_reason"]) == ("failed", "authentication_failed")
    async with platform.session_factory() as session:
        ran = list(await session.scalars(select(UsageRecord.tool_name).where(UsageRecord.transport == "recipe")))
    assert ran == ["generate_carousel"]


class WorkerDied(BaseException):
    """Stands for the worker's process being killed: no handler of the job machine sees it."""


def dying_worker(platform: Platform, calls: list[str], *, before: str | None = None, after: str | None = None) -> Any:
    """The platform's execute(), killing the worker just before the call of `before` or just after `after`."""
    execute = platform.executor.execute

    async def execute_or_die(name: str, arguments: Any, principal: Principal, **options: Any) -> Execution:
        if name == before:
            raise WorkerDied
        execution = await execute(name, arguments, principal, **options)
        calls.append(name)
        if name == after:
            raise WorkerDied
        return execution

    return execute_or_die


async def expire_the_run(platform: Platform, run_id: str) -> None:
    async with platform.session_factory() as session, session.begin():
        await session.execute(
            update(Job)
            .where(Job.id == uuid.UUID(run_id))
            .values(lease_expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )


async def test_a_run_taken_over_after_a_lost_worker_resumes_after_its_saved_steps_and_charges_each_once(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = await tenant.data(
        "execute_recipe", {"slug": "weekly-instagram-calendar", "inputs": {"topic": "Tea", "days": 2}}
    )
    before = await balance(platform, tenant.account_id)
    calls: list[str] = []
    monkeypatch.setattr(platform.executor, "execute", dying_worker(platform, calls, before="quality_check_plan"))
    await run_jobs(worker(platform))
    monkeypatch.undo()
    monkeypatch.setattr(platform.executor, "execute", dying_worker(platform, calls))
    await expire_the_run(platform, started["run_id"])
    await run_jobs(worker(platform))

    assert calls == ["plan_content_week", "quality_check_plan", "submit_content_plan_for_approval"]
    done = await tenant.data("get_recipe_run_status", {"run_id": started["run_id"]})
    assert done["status"] == "completed" and set(done["outputs"]) == {"plan", "quality", "submit"}
    assert done["credits_used"] == 10 == before - await balance(platform, tenant.account_id)


async def test_a_step_that_ran_under_a_lost_worker_is_never_run_again(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = await tenant.data(
        "execute_recipe", {"slug": "weekly-instagram-calendar", "inputs": {"topic": "Tea", "days": 2}}
    )
    before = await balance(platform, tenant.account_id)
    calls: list[str] = []
    # The plan is made and charged, then the worker dies before it saves the plan as the step's output.
    monkeypatch.setattr(platform.executor, "execute", dying_worker(platform, calls, after="plan_content_week"))
    await run_jobs(worker(platform))
    monkeypatch.undo()
    monkeypatch.setattr(platform.executor, "execute", dying_worker(platform, calls))
    await expire_the_run(platform, started["run_id"])
    await run_jobs(worker(platform))

    assert calls == ["plan_content_week"]
    failed = await tenant.data("get_recipe_run_status", {"run_id": started["run_id"]})
    assert failed["status"] == "failed" and failed["error"]["error_type"] == "worker_lost"
    assert before - await balance(platform, tenant.account_id) == 10


async def test_a_run_started_with_an_oauth_token_keeps_the_tokens_scopes_and_stops_when_the_client_is_revoked(
    tenant: Tenant, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with platform.session_factory() as session, session.begin():
        issued = await accounts.create_client(
            session, account_id=tenant.account_id, name="agent", granted_scopes=["mcp:full"]
        )
    form = {
        "grant_type": "client_credentials",
        "client_id": issued.client.client_id,
        "client_secret": issued.client_secret,
        "scope": "mcp:read mcp:write",
    }
    token = (await tenant.client.post("/oauth/token", data=form)).json()["access_token"]
    agent = replace(tenant, key=token)
    started = await agent.data("execute_recipe", {"slug": "weekly-instagram-calendar", "inputs": {"topic": "Tea"}})
    execute = platform.executor.execute
    held: list[frozenset[str]] = []

    async def execute_then_revoke(name: str, arguments: Any, principal: Principal, **options: Any) -> Execution:
        held.append(principal.scopes)
        execution = await execute(name, arguments, principal, **options)
        async with platform.session_factory() as session, session.begin():
            await accounts.revoke_client(session, client_id=issued.client.client_id)
        return execution

    monkeypatch.setattr(platform.executor, "execute", execute_then_revoke)
    assert await run_jobs(worker(platform)) == 1
    monkeypatch.undo()

    assert held == [frozenset({"mcp:read", "mcp:write"})]  # the token's scopes, not the client's mcp:full
    failed = await tenant.data("get_recipe_run_status", {"run_id": started["run_id"]})
    assert failed["status"] == "failed" and set(failed["outputs"]) == {"plan"}
    assert (
        failed["error"]["error_type"] == "unauthenticated" and "OAuth client was revoked" in failed["error"]["message"]
    )
