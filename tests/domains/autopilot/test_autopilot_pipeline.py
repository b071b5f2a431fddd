"""Autopilot with the real run_content_pipeline (CATALOG.md §13, §14): a due config plans, gates and schedules."""

from __future__ import annotations

from datetime import datetime

from tests.conftest import Tenant, worker_context
from tests.domains.distribution.conftest import connect_webhook
from tests.domains.distribution.standins import WebhookReceiver
from toolhost.domains.autopilot import runner
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import run_jobs


async def test_a_due_config_runs_the_real_pipeline_on_the_projects_connected_platforms(
    tenant: Tenant, platform: Platform, receiver: tuple[WebhookReceiver, str]
) -> None:
    await connect_webhook(platform, tenant.project_id, receiver[1], platform_name="twitter")
    created = await tenant.data(
        "create_autopilot_config",
        {
            "name": "Daily standups",
            "project_id": str(tenant.project_id),
            "schedule_days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
            "schedule_time": "07:00",
            "topic": "async standups for remote teams",
            "approval_mode": "review_all",
            "max_credits_per_run": 40,
        },
    )
    context = worker_context(platform, "test")
    assert await runner.run_due_autopilot(context, now=datetime.fromisoformat(created["next_run_at"])) == 1
    assert await run_jobs(context) == 1
    [run] = (await tenant.data("get_autopilot_status", {}))["recentRuns"]
    # review_all flags every post for a person: the plan is saved, nothing is scheduled yet.
    assert run["status"] == "awaiting_approval", run
    assert run["credits_used"] == 10 and run["pipeline_id"]
    pipeline = await tenant.data("get_pipeline_status", {"pipeline_id": run["pipeline_id"]})
    assert pipeline["config"]["platforms"] == ["twitter"] and pipeline["config"]["days"] == 1
    assert pipeline["config"]["schedule_confirmed"] is True and pipeline["config"]["max_credits"] == 40
    assert pipeline["posts_generated"] == 1 and pipeline["posts_scheduled"] == 0
    status = await tenant.data("get_autopilot_status", {})
    assert status["pendingApprovals"] == 1
