"""The job machine on PostgreSQL: workers racing over every kind of job claim each once and finish each once."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from tests.conftest import Tenant, worker_context
from tests.domains.distribution.conftest import connect_webhook, drain, local_settings
from tests.domains.distribution.standins import WebhookReceiver, serve
from toolhost.config import Settings
from toolhost.domains.media.models import MediaObject
from toolhost.platform import jobs
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.models import Account
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import claim

pytestmark = pytest.mark.postgres

KINDS = ("image", "publish", "recipe_run", "analytics_refresh")


@pytest.fixture
def database_url(postgres_url: str) -> str:
    """A fresh migrated PostgreSQL database (the tests skip, with the reason, when it is unreachable)."""
    return postgres_url


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """The receiver reachable over http; an account may run all its jobs at once (the race is the point)."""
    return local_settings(
        database_url, tmp_path / "media", jobs={"run_in_process": False, "per_account_concurrency": 100}
    )


@pytest.fixture
async def receiver() -> AsyncIterator[tuple[WebhookReceiver, str]]:
    stand_in = WebhookReceiver()
    async with serve(stand_in.app()) as base:
        yield stand_in, f"{base}/hook"


async def balance(platform: Platform, account_id: uuid.UUID) -> int:
    async with platform.session_factory() as session:
        return int(await session.scalar(select(Account.credit_balance).where(Account.id == account_id)) or 0)


async def claim_everything(context: WorkerContext) -> list[uuid.UUID]:
    """Claims batches of every kind until none is left; returns what this worker got."""
    mine: list[uuid.UUID] = []
    while True:
        batch = [run.job_id for kind in KINDS for run in await claim(context, kind, limit=3)]
        if not batch:
            return mine
        mine += batch


@pytest.mark.usefixtures("postgres_connections_to_itself")
async def test_racing_workers_claim_every_kind_of_job_once_and_finish_each_once(
    tenant: Tenant, platform: Platform, receiver: tuple[WebhookReceiver, str]
) -> None:
    assert platform.engine.dialect.name == "postgresql"
    stand_in, url = receiver
    account_id = await connect_webhook(platform, tenant.project_id, url, stand_in)
    before = await balance(platform, tenant.account_id)
    queued = [
        *[uuid.UUID((await tenant.data("generate_image", {"prompt": f"Tip {n}"}))["jobId"]) for n in range(4)],
        *[
            uuid.UUID(
                (await tenant.data("schedule_post", {"caption": f"Race {n}", "platforms": ["twitter"]}))["results"][
                    "Twitter"
                ]["jobId"]
            )
            for n in range(12)
        ],
        *[
            uuid.UUID(
                (
                    await tenant.data(
                        "execute_recipe", {"slug": "weekly-instagram-calendar", "inputs": {"topic": "Tea"}}
                    )
                )["run_id"]
            )
            for _ in range(2)
        ],
    ]
    async with platform.session_factory() as session, session.begin():
        for _ in range(3):
            refresh = await jobs.enqueue(
                session=session,
                account_id=tenant.account_id,
                project_id=tenant.project_id,
                job_type="analytics_refresh",
                tool_name="refresh_platform_analytics",
                reserved_credits=0,
                job_input={"connected_account_id": str(account_id), "post_ids": []},
            )
            queued.append(refresh.id)

    workers = [worker_context(platform, f"w{index}") for index in range(4)]
    claimed = await asyncio.gather(*(claim_everything(context) for context in workers))
    every_claim = [job_id for mine in claimed for job_id in mine]
    assert sorted(every_claim) == sorted(queued)
    assert sum(1 for mine in claimed if mine) >= 2

    # The claimers die; once their leases expire, three workers race to finish the work.
    async with platform.session_factory() as session, session.begin():
        await session.execute(update(Job).values(lease_expires_at=datetime.now(UTC) - timedelta(seconds=1)))
    await asyncio.gather(*(drain(context) for context in workers[:3]))

    async with platform.session_factory() as session:
        finished = dict((await session.execute(select(Job.id, Job.status).where(Job.id.in_(queued)))).all())
        attempts = set(await session.scalars(select(Job.attempt)))
        outputs = await session.scalar(select(func.count()).select_from(MediaObject))
    assert set(finished.values()) == {"completed"} and len(finished) == len(queued)
    assert attempts == {1}
    assert outputs == 4
    assert len(stand_in.deliveries) == len(stand_in.published) == 12
    # Charged once each: 4 credits an image, 1 a post, 10 a recipe run's plan.
    assert before - await balance(platform, tenant.account_id) == 4 * 4 + 12 + 2 * 10
