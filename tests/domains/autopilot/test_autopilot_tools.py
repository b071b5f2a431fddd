"""Autopilot (CATALOG.md §13) over HTTP: configs, and the scheduler poller run with a controlled clock."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from tests.conftest import Tenant, TenantFactory, worker_context
from tests.domains.recipes.test_recipes_tools import a_second_key, revoking_after_each_call
from toolhost.domains.autopilot import runner
from toolhost.domains.autopilot.models import AutopilotConfig, AutopilotRun
from toolhost.platform import accounts
from toolhost.platform.context import ToolContext
from toolhost.platform.fields import SocialPlatform, TextFormat, UUIDStr
from toolhost.platform.jobs import WorkerContext
from toolhost.platform.models import Account
from toolhost.platform.registry import ToolInput, ToolOutput, declared_spec, tool
from toolhost.platform.runtime import Platform as Runtime
from toolhost.platform.worker import claim, run_claimed, run_jobs

PARIS = ZoneInfo("Europe/Paris")
# A Tuesday at the configs' 09:30 in Paris; the week runs Monday 00:00 to Monday 00:00 there.
TUESDAY = datetime(2030, 1, 1, 9, 30, tzinfo=PARIS).astimezone(UTC)
PIPELINE_CONFIG: dict[str, Any] = {
    "name": "Weekday posts",
    "schedule_days": ["wed", "tue"],
    "schedule_time": "09:30",
    "timezone": "Europe/Paris",
    "topic": "Meal prep",
    "platforms": ["linkedin"],
}


def worker(platform: Runtime) -> WorkerContext:
    return worker_context(platform, "test")


async def run_due(platform: Runtime, now: datetime) -> int:
    """The scheduler at `now`, then the runs it scheduled (a recipe run's job stays pending). Returns the runs."""
    scheduled = await runner.run_due_autopilot(worker(platform), now=now)
    context = worker(platform)
    await run_claimed(context, await claim(context, runner.JOB_TYPE, limit=max(1, scheduled)))
    return scheduled


def at(value: str) -> datetime:
    return datetime.fromisoformat(value)


async def make_due(platform: Runtime, config_id: str, moment: datetime) -> None:
    """Pins a config's next due time, so a test walks a known week whatever today is."""
    async with platform.session_factory() as session, session.begin():
        config = await session.get(AutopilotConfig, uuid.UUID(config_id))
        assert config is not None
        config.next_run_at = moment


class RunContentPipelineIn(ToolInput):
    project_id: UUIDStr | None = None
    topic: str
    platforms: list[SocialPlatform]
    days: int
    posts_per_day: int
    approval_mode: str
    max_credits: float | None = None
    schedule_confirmed: bool = False
    response_format: TextFormat = "json"


class RunContentPipelineOut(ToolOutput):
    pipeline_id: str
    status: str
    credits_used: int


@pytest.fixture
def pipeline_calls(platform: Runtime, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """A stand-in run_content_pipeline (the real one is another module's): it debits 12 credits like a run
    that plans and schedules two posts, and records the arguments the autopilot sent by name."""
    calls: list[dict[str, Any]] = []

    @tool(module="pipeline", scope="mcp:autopilot", credits=12, project="strict", response_format="json")
    async def run_content_pipeline(ctx: ToolContext, args: RunContentPipelineIn) -> RunContentPipelineOut:
        """Stand-in."""
        calls.append({**args.model_dump(), "scopes": sorted(ctx.principal.scopes), "run": ctx.principal.run_id})
        return RunContentPipelineOut(pipeline_id=f"pipe-{len(calls)}", status="awaiting_approval", credits_used=12)

    spec = declared_spec(run_content_pipeline)
    assert spec is not None
    monkeypatch.setitem(platform.registry._tools, "run_content_pipeline", spec)
    return calls


async def test_configs_are_created_listed_paused_and_deleted(tenant: Tenant) -> None:
    created = await tenant.data(
        "create_autopilot_config",
        {**PIPELINE_CONFIG, "project_id": str(tenant.project_id), "max_credits_per_week": 50},
    )
    assert created["schedule_config"] == {"days": ["tue", "wed"], "time": "09:30", "timezone": "Europe/Paris"}
    due = at(created["next_run_at"])
    assert datetime.now(UTC) < due <= datetime.now(UTC) + timedelta(days=7)
    assert due.astimezone(PARIS).strftime("%a %H:%M") in {"Tue 09:30", "Wed 09:30"}
    listed = (await tenant.data("list_autopilot_configs", {}))["configs"]
    assert [item["id"] for item in listed] == [created["id"]]
    assert listed[0]["mode"] == "pipeline" and listed[0]["recipe_id"] is None
    # Timestamps are written as every other tool writes them: UTC with Z.
    assert created["next_run_at"].endswith("Z") and listed[0]["created_at"].endswith("Z")
    assert listed[0]["max_credits_per_week"] == 50 and listed[0]["max_credits_per_run"] is None
    assert listed[0]["credits_used_this_week"] == 0 and listed[0]["approval_mode"] == "review_low_confidence"
    as_json = await tenant.call("list_autopilot_configs", {"response_format": "json"})
    assert json.loads(as_json.json()["content"][0]["text"])["data"][0]["id"] == created["id"]

    nothing = await tenant.call("update_autopilot_config", {"config_id": created["id"]})
    assert nothing.json()["structuredContent"] == {"updated": None, "message": "No changes specified."}
    paused = await tenant.call(
        "update_autopilot_config", {"config_id": created["id"], "is_active": False, "schedule_time": "18:05"}
    )
    body = paused.json()
    assert body["structuredContent"]["updated"]["is_active"] is False
    assert body["content"][0]["text"].startswith("Autopilot config updated. Active: no. Schedule: tue, wed at 18:05")
    assert (await tenant.data("list_autopilot_configs", {"active_only": True}))["configs"] == []

    as_string = await tenant.call("delete_autopilot_config", {"config_id": created["id"], "confirm": "true"})
    assert as_string.status_code == 400 and as_string.json()["error"]["error_type"] == "validation_error"
    deleted = await tenant.data("delete_autopilot_config", {"config_id": created["id"], "confirm": True})
    assert deleted["success"] is True and deleted["deleted"] is True and deleted["config_id"] == created["id"]
    again = await tenant.call("delete_autopilot_config", {"config_id": created["id"], "confirm": True})
    assert again.status_code == 404 and again.json()["error"]["error_type"] == "not_found"


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"schedule_time": "25:00"}, "schedule_time"),
        ({"schedule_time": "9:30"}, "schedule_time"),
        ({"schedule_time": "09:30 * * *"}, "schedule_time"),
        ({"schedule_days": []}, "schedule_days"),
        ({"schedule_days": ["monday"]}, "schedule_days[0]"),
        ({"timezone": "Mars/Olympus_Mons"}, "timezone"),
        ({"timezone": "../../etc/passwd"}, "timezone"),
        ({"max_credits_per_week": -1}, "max_credits_per_week"),
    ],
)
async def test_bad_schedules_timezones_and_budgets_are_refused_with_their_path(
    tenant: Tenant, change: dict[str, Any], path: str
) -> None:
    response = await tenant.call(
        "create_autopilot_config", {**PIPELINE_CONFIG, "project_id": str(tenant.project_id), **change}
    )
    error = response.json()["error"]
    assert response.status_code == 400 and error["error_type"] == "validation_error"
    assert path in [item["path"] for item in error["field_errors"]]


async def test_a_budget_left_out_stays_and_a_budget_given_as_null_becomes_unlimited(tenant: Tenant) -> None:
    created = await tenant.data(
        "create_autopilot_config",
        {
            **PIPELINE_CONFIG,
            "project_id": str(tenant.project_id),
            "max_credits_per_run": 10,
            "max_credits_per_week": 50,
        },
    )
    resumed = await tenant.data("update_autopilot_config", {"config_id": created["id"], "max_credits_per_run": None})
    assert resumed["updated"]["max_credits_per_run"] is None
    assert resumed["updated"]["max_credits_per_week"] == 50
    [listed] = (await tenant.data("list_autopilot_configs", {}))["configs"]
    assert (listed["max_credits_per_run"], listed["max_credits_per_week"]) == (None, 50)


async def test_recipe_configs_need_a_known_recipe_with_valid_inputs(tenant: Tenant) -> None:
    base = {**PIPELINE_CONFIG, "project_id": str(tenant.project_id), "mode": "recipe"}
    missing = (await tenant.call("create_autopilot_config", base)).json()["error"]
    assert missing["error_type"] == "validation_error" and missing["field_errors"][0]["path"] == "recipe_slug"
    unknown = (await tenant.call("create_autopilot_config", {**base, "recipe_slug": "nope"})).json()["error"]
    assert unknown["error_type"] == "validation_error" and "nope" in unknown["message"]
    bad_inputs = await tenant.call(
        "create_autopilot_config", {**base, "recipe_slug": "weekly-instagram-calendar", "recipe_inputs": {}}
    )
    paths = [item["path"] for item in bad_inputs.json()["error"]["field_errors"]]
    assert paths == ["recipe_inputs"]


async def test_another_tenants_configs_and_runs_are_invisible(
    tenant: Tenant, make_tenant: TenantFactory, platform: Runtime, pipeline_calls: list[dict[str, Any]]
) -> None:
    created = await tenant.data("create_autopilot_config", {**PIPELINE_CONFIG, "project_id": str(tenant.project_id)})
    assert await run_due(platform, at(created["next_run_at"])) == 1
    other = await make_tenant()
    for tool_name, arguments in [
        ("update_autopilot_config", {"config_id": created["id"], "is_active": False}),
        ("delete_autopilot_config", {"config_id": created["id"], "confirm": True}),
        ("delete_autopilot_config", {"config_id": created["id"], "confirm": True, "project_id": str(other.project_id)}),
    ]:
        response = await other.call(tool_name, arguments)
        assert response.status_code == 404 and response.json()["error"]["error_type"] == "not_found"
    assert (await other.data("list_autopilot_configs", {}))["configs"] == []
    status = await other.data("get_autopilot_status", {})
    assert status == {"activeConfigs": 0, "recentRuns": [], "pendingApprovals": 0}
    foreign_project = await tenant.call(
        "create_autopilot_config", {**PIPELINE_CONFIG, "project_id": str(other.project_id)}
    )
    assert foreign_project.status_code == 404
    mine = await tenant.data("get_autopilot_status", {})
    assert mine["activeConfigs"] == 1 and len(mine["recentRuns"]) == 1


async def test_a_due_pipeline_config_runs_the_pipeline_by_name_within_its_budgets(
    tenant: Tenant, platform: Runtime, pipeline_calls: list[dict[str, Any]]
) -> None:
    created = await tenant.data(
        "create_autopilot_config",
        {
            **PIPELINE_CONFIG,
            "project_id": str(tenant.project_id),
            "approval_mode": "auto",
            "max_credits_per_run": 15,
            "max_credits_per_week": 30,
        },
    )
    await make_due(platform, created["id"], TUESDAY)
    assert await run_due(platform, TUESDAY - timedelta(seconds=1)) == 0
    assert await run_due(platform, TUESDAY) == 1
    # The same due time never starts twice.
    assert await run_due(platform, TUESDAY) == 0
    [call] = pipeline_calls
    assert call["days"] == 1 and call["posts_per_day"] == 1
    assert call["topic"] == "Meal prep" and call["platforms"] == ["linkedin"]
    assert call["approval_mode"] == "auto" and call["schedule_confirmed"] is True
    assert call["max_credits"] == 15 and call["project_id"] == str(tenant.project_id)
    assert "mcp:autopilot" in call["scopes"] and "mcp:distribute" in call["scopes"]
    status = await tenant.data("get_autopilot_status", {})
    [run] = status["recentRuns"]
    assert run["status"] == "awaiting_approval" and run["pipeline_id"] == "pipe-1" and run["credits_used"] == 12
    assert run["config_id"] == created["id"] and run["completed_at"] is not None
    assert call["run"] == f"autopilot-{run['id']}"
    listed = (await tenant.data("list_autopilot_configs", {}))["configs"][0]
    assert at(listed["next_run_at"]) == TUESDAY + timedelta(days=1) and listed["last_run_at"] is not None

    # Wednesday: 18 of the week's 30 credits are left, more than the per-run 15; the next run is 6 days away.
    assert await run_due(platform, TUESDAY + timedelta(days=1)) == 1
    assert pipeline_calls[1]["max_credits"] == 15 and pipeline_calls[1]["days"] == 6


async def test_a_spent_weekly_budget_skips_the_run_until_monday_resets_it(
    tenant: Tenant, platform: Runtime, pipeline_calls: list[dict[str, Any]]
) -> None:
    created = await tenant.data(
        "create_autopilot_config",
        {**PIPELINE_CONFIG, "project_id": str(tenant.project_id), "max_credits_per_week": 20},
    )
    await make_due(platform, created["id"], TUESDAY)
    await run_due(platform, TUESDAY)
    # Wednesday: 8 credits left this week, which is the run's max_credits; the stand-in spends 12 anyway.
    await run_due(platform, TUESDAY + timedelta(days=1))
    assert pipeline_calls[1]["max_credits"] == 8
    # The next Tuesday is a new week (Monday 00:00 Paris), so it runs; make a second one due the same week.
    await make_due(platform, created["id"], TUESDAY + timedelta(days=1, hours=2))
    assert await run_due(platform, TUESDAY + timedelta(days=1, hours=2)) == 1
    runs = (await tenant.data("get_autopilot_status", {}))["recentRuns"]
    assert runs[0]["status"] == "skipped" and "24 of 20 credits used this week" in runs[0]["reason"]
    assert len(pipeline_calls) == 2
    assert await run_due(platform, TUESDAY + timedelta(days=7)) == 1
    assert len(pipeline_calls) == 3 and pipeline_calls[2]["max_credits"] == 20


async def test_a_zero_run_budget_skips_every_run(tenant: Tenant, platform: Runtime) -> None:
    created = await tenant.data(
        "create_autopilot_config",
        {**PIPELINE_CONFIG, "project_id": str(tenant.project_id), "max_credits_per_run": 0},
    )
    assert await run_due(platform, at(created["next_run_at"])) == 1
    [run] = (await tenant.data("get_autopilot_status", {}))["recentRuns"]
    assert run["status"] == "skipped" and "max_credits_per_run is 0" in run["reason"]


async def test_a_run_is_skipped_when_run_content_pipeline_is_not_registered(
    tenant: Tenant, platform: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(platform.registry._tools, "run_content_pipeline")
    created = await tenant.data("create_autopilot_config", {**PIPELINE_CONFIG, "project_id": str(tenant.project_id)})
    assert await run_due(platform, at(created["next_run_at"])) == 1
    [run] = (await tenant.data("get_autopilot_status", {}))["recentRuns"]
    assert run["status"] == "skipped" and run["reason"] == "run_content_pipeline is not available on this server"
    assert run["pipeline_id"] is None and run["credits_used"] == 0


async def test_a_pipeline_config_without_platforms_or_accounts_is_skipped(
    tenant: Tenant, platform: Runtime, pipeline_calls: list[dict[str, Any]]
) -> None:
    arguments = {**PIPELINE_CONFIG, "project_id": str(tenant.project_id)}
    del arguments["platforms"]
    created = await tenant.data("create_autopilot_config", arguments)
    await run_due(platform, at(created["next_run_at"]))
    [run] = (await tenant.data("get_autopilot_status", {}))["recentRuns"]
    assert run["status"] == "skipped" and "no usable connected account" in run["reason"]
    assert pipeline_calls == []


async def test_runs_use_the_creator_key_at_run_time_and_a_revoked_key_starts_nothing(
    tenant: Tenant, platform: Runtime, pipeline_calls: list[dict[str, Any]]
) -> None:
    created = await tenant.data("create_autopilot_config", {**PIPELINE_CONFIG, "project_id": str(tenant.project_id)})
    async with platform.session_factory() as session, session.begin():
        await accounts.revoke_key(session, key_id=tenant.key_id)
    await run_due(platform, at(created["next_run_at"]))
    async with platform.session_factory() as session:
        run = await session.scalar(select(AutopilotRun))
    assert run is not None and run.status == "skipped" and "revoked" in (run.reason or "")
    assert pipeline_calls == []


async def test_a_recipe_config_starts_a_recipe_run_whose_job_carries_status_and_credits(
    tenant: Tenant, platform: Runtime
) -> None:
    created = await tenant.data(
        "create_autopilot_config",
        {
            **PIPELINE_CONFIG,
            "project_id": str(tenant.project_id),
            "mode": "recipe",
            "recipe_slug": "weekly-instagram-calendar",
            "recipe_inputs": {"topic": "Meal prep", "days": 2},
            "max_credits_per_run": 10,
        },
    )
    listed = (await tenant.data("list_autopilot_configs", {}))["configs"][0]
    assert listed["recipe_id"] == "weekly-instagram-calendar" and listed["mode"] == "recipe"
    assert await run_due(platform, at(created["next_run_at"])) == 1
    [run] = (await tenant.data("get_autopilot_status", {}))["recentRuns"]
    assert run["status"] == "pending" and run["recipe_run_id"] and run["completed_at"] is None
    assert await run_jobs(worker(platform)) == 1
    [run] = (await tenant.data("get_autopilot_status", {}))["recentRuns"]
    assert run["status"] == "completed" and run["credits_used"] == 10 and run["completed_at"] is not None
    recipe_run = await tenant.data("get_recipe_run_status", {"run_id": run["recipe_run_id"]})
    assert recipe_run["status"] == "completed"
    status = await tenant.data("get_autopilot_status", {})
    assert status["pendingApprovals"] == 2
    assert (await tenant.data("list_autopilot_configs", {}))["configs"][0]["credits_used_this_week"] == 10


async def test_a_recipe_estimated_over_the_budget_is_skipped(tenant: Tenant, platform: Runtime) -> None:
    created = await tenant.data(
        "create_autopilot_config",
        {
            **PIPELINE_CONFIG,
            "project_id": str(tenant.project_id),
            "mode": "recipe",
            "recipe_slug": "weekly-instagram-calendar",
            "recipe_inputs": {"topic": "Meal prep"},
            "max_credits_per_run": 5,
        },
    )
    await run_due(platform, at(created["next_run_at"]))
    [run] = (await tenant.data("get_autopilot_status", {}))["recentRuns"]
    assert run["status"] == "skipped" and "exceed the remaining budget of 5" in run["reason"]
    assert run["recipe_run_id"] is None


async def test_a_tier_downgrade_applies_to_the_next_run(
    tenant: Tenant, platform: Runtime, pipeline_calls: list[dict[str, Any]]
) -> None:
    created = await tenant.data("create_autopilot_config", {**PIPELINE_CONFIG, "project_id": str(tenant.project_id)})
    async with platform.session_factory() as session, session.begin():
        account = await session.get(Account, tenant.account_id)
        assert account is not None
        account.tier = "pro"
    await run_due(platform, at(created["next_run_at"]))
    async with platform.session_factory() as session:
        run = await session.scalar(select(AutopilotRun))
    assert run is not None and run.status == "skipped"
    assert run.reason is not None and run.reason.startswith("permission_denied: run_content_pipeline needs scope")
    assert pipeline_calls == []


async def test_a_key_revoked_while_its_recipe_runs_stops_the_run_and_the_status_says_unauthenticated(
    tenant: Tenant, platform: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = await a_second_key(platform, tenant)
    created = await tenant.data(
        "create_autopilot_config",
        {
            **PIPELINE_CONFIG,
            "project_id": str(tenant.project_id),
            "mode": "recipe",
            "recipe_slug": "topic-to-carousel",
            "recipe_inputs": {"topic": "Sleep", "slide_count": 3},
        },
    )
    assert await run_due(platform, at(created["next_run_at"])) == 1
    [run] = (await reader.data("get_autopilot_status", {}))["recentRuns"]
    assert run["status"] == "pending" and run["recipe_run_id"]
    calls: list[str] = []
    monkeypatch.setattr(platform.executor, "execute", revoking_after_each_call(platform, tenant.key_id, calls))
    assert await run_jobs(worker(platform)) == 1
    monkeypatch.undo()

    assert calls == ["generate_carousel"]
    [run] = (await reader.data("get_autopilot_status", {}))["recentRuns"]
    assert run["status"] == "failed" and run["credits_used"] == 5
    assert run["reason"].startswith("unauthenticated: step 'check' was not run") and "revoked" in run["reason"]
