"""/metrics as an operator watching publishing reads it: the publish lag, overdue posts and the job queue."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import update

from tests.conftest import Tenant
from tests.domains.distribution.conftest import connect_webhook, drain, local_settings
from tests.domains.distribution.standins import WebhookReceiver
from toolhost.config import Settings
from toolhost.domains.distribution.models import Post
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.runtime import Platform

METRICS_TOKEN = "metrics-token-for-tests-0123456789"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, database_url: str) -> str:
    """Both databases: the gauges' timestamp arithmetic reads differently on each."""
    return database_url if request.param == "sqlite" else str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return local_settings(database_url, tmp_path / "media", metrics={"token": METRICS_TOKEN})


async def gauges(client: httpx.AsyncClient) -> dict[tuple[str, str], float]:
    """The gauge samples of /metrics by name and job_type ('' for none)."""
    response = await client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert response.status_code == 200, response.text
    return {
        (sample.name, sample.labels.get("job_type", "")): sample.value
        for family in text_string_to_metric_families(response.text)
        if family.type == "gauge"
        for sample in family.samples
    }


async def test_the_publish_lag_is_how_late_the_oldest_unpublished_post_is_until_a_worker_publishes_it(
    tenant: Tenant,
    platform: Platform,
    client: httpx.AsyncClient,
    worker: WorkerContext,
    receiver: tuple[WebhookReceiver, str],
) -> None:
    stand_in, url = receiver
    await connect_webhook(platform, tenant.project_id, url, stand_in)
    before = await gauges(client)
    assert before[("toolhost_publish_lag_seconds", "")] == 0
    assert before[("toolhost_posts_overdue", "")] == 0
    assert before[("toolhost_jobs_due", "publish")] == 0

    now_post = await tenant.data("schedule_post", {"caption": "Due now, and waiting.", "platforms": ["twitter"]})
    later = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    await tenant.data("schedule_post", {"caption": "Due in two days.", "platforms": ["twitter"], "schedule_at": later})
    # No worker ran for ten minutes: the post created for "publish now" waited all that time.
    post_id = uuid.UUID(now_post["results"]["Twitter"]["postId"])
    ten_minutes_ago = datetime.now(UTC) - timedelta(minutes=10)
    async with platform.session_factory() as session, session.begin():
        post = await session.get(Post, post_id)
        assert post is not None
        post.created_at = ten_minutes_ago
        await session.execute(update(Job).where(Job.id == post.job_id).values(run_after=ten_minutes_ago))

    waiting = await gauges(client)
    assert 600 <= waiting[("toolhost_publish_lag_seconds", "")] < 900
    assert waiting[("toolhost_posts_overdue", "")] == 1
    assert waiting[("toolhost_jobs_due", "publish")] == 1
    assert 600 <= waiting[("toolhost_job_oldest_due_seconds", "publish")] < 900
    assert waiting[("toolhost_jobs_running", "publish")] == 0

    assert await drain(worker) == 1
    published = await gauges(client)
    assert published[("toolhost_publish_lag_seconds", "")] == 0
    assert published[("toolhost_posts_overdue", "")] == 0
    assert published[("toolhost_jobs_due", "publish")] == 0
