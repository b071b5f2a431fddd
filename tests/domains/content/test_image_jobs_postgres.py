"""The media-job machine on PostgreSQL: workers racing with SKIP LOCKED claims, cancellation and refunds."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from tests.conftest import Tenant, worker_context
from toolhost.domains.media.models import MediaObject
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.models import Account
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import run_jobs

pytestmark = pytest.mark.postgres


@pytest.fixture
def database_url(postgres_url: str) -> str:
    """A fresh migrated PostgreSQL database (the tests skip, with the reason, when it is unreachable)."""
    return postgres_url


async def drain(context: WorkerContext) -> int:
    handled = 0
    while (count := await run_jobs(context)) > 0:
        handled += count
    return handled


async def test_racing_workers_render_each_image_job_once_and_a_cancelled_one_never(
    tenant: Tenant, platform: Platform
) -> None:
    assert platform.engine.dialect.name == "postgresql"
    async with platform.session_factory() as session:
        before = await session.scalar(select(Account.credit_balance).where(Account.id == tenant.account_id))
    job_ids = [
        (await tenant.data("generate_image", {"prompt": f"Tip {index}: ship small", "aspect_ratio": "1:1"}))["jobId"]
        for index in range(6)
    ]
    cancelled = await tenant.data("cancel_async_job", {"job_id": job_ids[0], "confirm": True})
    assert cancelled["refunded_credits"] == 4
    contexts = [worker_context(platform, f"w{index}") for index in range(3)]
    handled = await asyncio.gather(*(drain(context) for context in contexts))
    assert sum(handled) == 5
    async with platform.session_factory() as session:
        statuses = dict((await session.execute(select(Job.status, func.count()).group_by(Job.status))).all())
        outputs = await session.scalar(select(func.count()).select_from(MediaObject))
        after = await session.scalar(select(Account.credit_balance).where(Account.id == tenant.account_id))
    assert statuses == {"completed": 5, "cancelled": 1}
    assert outputs == 5
    assert before is not None and after is not None
    assert before - after == 5 * 4
