"""Recipes (CATALOG.md §15) over HTTP: listing, details, pre-flight checks, runs executed step by step."""

from __future__ import annotations

from tests.conftest import Tenant, TenantFactory, worker_context
from toolhost.platform.jobs import WorkerContext, run_jobs
from toolhost.platform.models import Account
from toolhost.platform.runtime import Platform


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
