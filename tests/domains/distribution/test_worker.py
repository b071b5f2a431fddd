"""The generic worker loop runs the composition root's pollers until told to stop."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.conftest import Tenant
from tests.domains.distribution.conftest import connect_webhook, local_settings
from tests.domains.distribution.standins import WebhookReceiver
from toolhost.catalog import JOB_TYPES, POLLERS
from toolhost.config import Settings
from toolhost.platform.jobs import WorkerContext
from toolhost.platform.runtime import Platform
from toolhost.platform.worker import run_worker


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """Pollers other than the job poller come back after 50 ms here instead of seconds."""
    return local_settings(
        database_url, tmp_path / "media", jobs={"run_in_process": False, "maintenance_interval": 0.05}
    )


async def test_run_worker_publishes_due_posts_and_stops_when_asked(
    tenant: Tenant, platform: Platform, receiver: tuple[WebhookReceiver, str]
) -> None:
    stand_in, url = receiver
    await connect_webhook(platform, tenant.project_id, url, stand_in)
    await tenant.data("schedule_post", {"caption": "From the loop", "platforms": ["twitter"]})
    stop = asyncio.Event()
    task = asyncio.create_task(run_worker(platform, pollers=POLLERS, job_types=JOB_TYPES, stop_event=stop))
    await asyncio.wait_for(stand_in.delivered.wait(), timeout=10)
    stop.set()
    await asyncio.wait_for(task, timeout=10)
    assert len(stand_in.published) == 1


async def test_a_failing_poller_does_not_stop_the_others(platform: Platform) -> None:
    calls: list[str] = []
    stop = asyncio.Event()

    async def broken(context: WorkerContext) -> int:
        calls.append("broken")
        if calls.count("broken") == 3:
            stop.set()
        raise RuntimeError("boom")

    async def healthy(context: WorkerContext) -> int:
        calls.append("healthy")
        return 1 if calls.count("healthy") <= 3 else 0

    await asyncio.wait_for(
        run_worker(platform, pollers=[broken, healthy], job_types={}, stop_event=stop),
        timeout=10,
    )
    assert calls.count("broken") == 3
    assert calls.count("healthy") >= 4


async def test_a_busy_poller_does_not_hold_back_the_others(platform: Platform) -> None:
    calls: list[str] = []
    stop = asyncio.Event()
    released = asyncio.Event()

    async def busy(context: WorkerContext) -> int:
        calls.append("busy")
        await released.wait()
        return 1

    async def other(context: WorkerContext) -> int:
        calls.append("other")
        if calls.count("other") == 3:
            released.set()
            stop.set()
        return 0

    await asyncio.wait_for(
        run_worker(platform, pollers=[busy, other], job_types={}, stop_event=stop),
        timeout=10,
    )
    assert calls.count("busy") == 1
    assert calls.count("other") == 3
