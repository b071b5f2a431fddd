"""The one job machine with every kind of job on it: lost leases, attempt caps, refunds, heartbeats."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from tests.conftest import Tenant, worker_context
from tests.domains.analytics.conftest import mastodon_channel
from tests.domains.distribution.conftest import connect_webhook, local_settings
from tests.domains.distribution.standins import MastodonStandIn, WebhookReceiver, serve
from toolhost.catalog import JOB_TYPES, POLLERS, build_registry
from toolhost.config import Settings
from toolhost.domains.autopilot import runner as autopilot_runner
from toolhost.domains.autopilot.models import AutopilotRun
from toolhost.domains.distribution.models import Post
from toolhost.platform import credits, jobs, worker
from toolhost.platform.jobs import Job, JobPolicy, JobResult, JobRun, JobType, WorkerContext
from toolhost.platform.models import Account
from toolhost.platform.runtime import Platform, build_platform
from toolhost.platform.worker import claim, load_job_types, reap_expired, release_departed, run_jobs
from toolhost.providers.connectors.mastodon import MastodonConnector


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """Local stand-ins reachable over http; a lease short enough for a test to outlast it."""
    return local_settings(database_url, tmp_path / "media", jobs={"run_in_process": False, "lease_seconds": 1})


@pytest.fixture
async def receiver() -> AsyncIterator[tuple[WebhookReceiver, str]]:
    stand_in = WebhookReceiver()
    async with serve(stand_in.app()) as base:
        yield stand_in, f"{base}/hook"


async def balance(platform: Platform, account_id: uuid.UUID) -> int:
    async with platform.session_factory() as session:
        return int(await session.scalar(select(Account.credit_balance).where(Account.id == account_id)) or 0)


async def job_row(platform: Platform, job_id: uuid.UUID) -> Job:
    async with platform.session_factory() as session:
        job = await session.get(Job, job_id)
        assert job is not None
        return job


async def expire_lease(platform: Platform, job_id: uuid.UUID) -> None:
    async with platform.session_factory() as session, session.begin():
        await session.execute(
            update(Job).where(Job.id == job_id).values(lease_expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )


async def reserved_directly(
    platform: Platform, tenant: Tenant, job_type: str, amount: int, job_input: dict[str, Any] | None = None
) -> uuid.UUID:
    """A job enqueued the way a tool does it, debit and job in one transaction (for tools this machine cannot
    call here: espeak-ng and Chromium are not installed everywhere, and render_demo_video waits a minute)."""
    async with platform.session_factory() as session, session.begin():
        if amount:
            await credits.debit(
                session, account_id=tenant.account_id, amount=amount, tool_name="test", reference=str(uuid.uuid4())
            )
        job = await jobs.enqueue(
            session=session,
            account_id=tenant.account_id,
            project_id=tenant.project_id,
            job_type=job_type,
            tool_name="test",
            reserved_credits=amount,
            job_input=job_input or {},
        )
    return job.id


async def an_image(platform: Platform, tenant: Tenant) -> uuid.UUID:
    return uuid.UUID((await tenant.data("generate_image", {"prompt": "Ship small"}))["jobId"])


async def a_video(platform: Platform, tenant: Tenant) -> uuid.UUID:
    return uuid.UUID((await tenant.data("generate_video", {"prompt": "Ship small", "duration": 3}))["jobId"])


async def a_template_render(platform: Platform, tenant: Tenant) -> uuid.UUID:
    props = '{"frames": [{"frameNumber": 1, "duration": 2, "caption": "Hi"}]}'
    data = await tenant.data(
        "render_template_video", {"composition_id": "StoryboardVideo-Square", "input_props": props}
    )
    return uuid.UUID(data["job_id"])


async def a_post(platform: Platform, tenant: Tenant) -> uuid.UUID:
    await connect_webhook(platform, tenant.project_id, "https://127.0.0.1:9/hook")
    data = await tenant.data("schedule_post", {"caption": "Due now", "platforms": ["twitter"]})
    return uuid.UUID(data["results"]["Twitter"]["jobId"])


async def a_recipe_run(platform: Platform, tenant: Tenant) -> uuid.UUID:
    data = await tenant.data("execute_recipe", {"slug": "weekly-instagram-calendar", "inputs": {"topic": "Tea"}})
    return uuid.UUID(data["run_id"])


async def an_autopilot_run(platform: Platform, tenant: Tenant) -> uuid.UUID:
    created = await tenant.data(
        "create_autopilot_config",
        {
            "name": "Daily",
            "project_id": str(tenant.project_id),
            "schedule_days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
            "schedule_time": "07:00",
            "topic": "Tea",
            "platforms": ["linkedin"],
        },
    )
    due = datetime.fromisoformat(created["next_run_at"])
    assert await autopilot_runner.run_due_autopilot(worker_context(platform, "scheduler"), now=due) == 1
    async with platform.session_factory() as session:
        job_id = await session.scalar(select(Job.id).where(Job.job_type == "autopilot_run"))
    assert job_id is not None
    return job_id


def reserved(job_type: str, amount: int) -> Callable[[Platform, Tenant], Awaitable[uuid.UUID]]:
    async def make(platform: Platform, tenant: Tenant) -> uuid.UUID:
        return await reserved_directly(platform, tenant, job_type, amount)

    return make


KINDS: dict[str, Callable[[Platform, Tenant], Awaitable[uuid.UUID]]] = {
    "image": an_image,
    "video": a_video,
    "voiceover": reserved("voiceover", 3),
    "demo_render": reserved("demo_render", 7),
    "template_render": a_template_render,
    "hyperframes_render": reserved("hyperframes_render", 9),
    "publish": a_post,
    "analytics_refresh": reserved("analytics_refresh", 0),
    "recipe_run": a_recipe_run,
    "autopilot_run": an_autopilot_run,
}


def test_every_kind_of_async_work_is_a_job_type_of_the_composition_root() -> None:
    assert set(load_job_types(JOB_TYPES)) == set(KINDS)
    assert "toolhost.platform.worker.run_jobs" in POLLERS


@pytest.mark.parametrize("kind", list(KINDS))
async def test_a_lease_expired_job_returns_to_pending_then_fails_at_its_cap_refunded_exactly_once(
    kind: str, tenant: Tenant, platform: Platform
) -> None:
    before = await balance(platform, tenant.account_id)
    job_id = await KINDS[kind](platform, tenant)
    reserved_credits = (await job_row(platform, job_id)).credits
    assert await balance(platform, tenant.account_id) == before - reserved_credits
    reaper = worker_context(platform, "reaper")
    cap = reaper.job_types[kind].policy(platform.settings).max_attempts
    for attempt in range(1, cap + 1):
        claimed = await claim(worker_context(platform, f"lost-{attempt}"), kind, limit=1)
        assert [run.job_id for run in claimed] == [job_id]
        await expire_lease(platform, job_id)
        assert await reap_expired(reaper) == 1
        row = await job_row(platform, job_id)
        assert (row.attempt, row.status) == (attempt, "pending" if attempt < cap else "failed")
    assert row.failure_reason == "worker_lost"
    assert row.billing_status == ("refunded" if reserved_credits else "not_charged")
    assert await balance(platform, tenant.account_id) == before
    async with platform.session_factory() as session, session.begin():
        assert await jobs.refund(session, row) == 0
    assert await balance(platform, tenant.account_id) == before
    assert await run_jobs(reaper) == 0

    async with platform.session_factory() as session:
        if kind == "publish":
            post = await session.scalar(select(Post).where(Post.job_id == job_id))
            assert post is not None and (post.status, post.refunded, post.attempt) == ("failed", True, cap)
        if kind == "autopilot_run":
            run = await session.scalar(select(AutopilotRun))
            assert run is not None and run.status == "failed" and (run.reason or "").startswith("worker_lost")


@pytest.fixture
async def mastodon() -> AsyncIterator[tuple[MastodonStandIn, str]]:
    stand_in = MastodonStandIn()
    async with serve(stand_in.app()) as base:
        yield stand_in, base


async def queue_a_refresh(
    tenant: Tenant, platform: Platform, client: Any, mastodon: tuple[MastodonStandIn, str]
) -> uuid.UUID:
    stand_in, _ = mastodon
    channel = await mastodon_channel(platform, client, tenant, mastodon)
    post = await channel.published(at=datetime.now(UTC) - timedelta(days=1))
    stand_in.statuses[str(post.external_post_id)] = {"id": post.external_post_id, "favourites_count": 4}
    assert (await tenant.data("refresh_platform_analytics", {}))["queued"] == 1
    async with platform.session_factory() as session:
        job_id = await session.scalar(select(Job.id).where(Job.job_type == "analytics_refresh"))
    assert job_id is not None
    return job_id


async def test_a_slow_analytics_refresh_keeps_its_lease_by_heartbeat_and_completes_once(
    tenant: Tenant,
    platform: Platform,
    client: Any,
    mastodon: tuple[MastodonStandIn, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    job_id = await queue_a_refresh(tenant, platform, client, mastodon)
    started, release = asyncio.Event(), asyncio.Event()
    fetch = MastodonConnector.fetch_metrics

    async def slow_fetch(self: MastodonConnector, *args: Any) -> Any:
        started.set()
        await asyncio.wait_for(release.wait(), timeout=30)
        return await fetch(self, *args)

    monkeypatch.setattr(MastodonConnector, "fetch_metrics", slow_fetch)
    first = asyncio.create_task(run_jobs(worker_context(platform, "first")))
    await asyncio.wait_for(started.wait(), timeout=10)
    claimed_until = (await job_row(platform, job_id)).lease_expires_at
    assert claimed_until is not None
    # Past the 1 s lease the job is still the first worker's: its heartbeat moved the lease on.
    async with asyncio.timeout(10):
        while datetime.now(UTC) < claimed_until + timedelta(seconds=1):
            await asyncio.sleep(0.1)
    extended = await job_row(platform, job_id)
    assert extended.lease_expires_at is not None and extended.lease_expires_at > claimed_until
    assert await run_jobs(worker_context(platform, "second")) == 0
    release.set()
    assert await asyncio.wait_for(first, timeout=10) == 1
    done = await job_row(platform, job_id)
    assert (done.status, done.attempt, done.output) == ("completed", 0, {"snapshots": 1, "failed_posts": 0})


async def test_a_worker_whose_heartbeat_is_late_does_not_start_its_own_running_job_a_second_time(
    tenant: Tenant,
    platform: Platform,
    client: Any,
    mastodon: tuple[MastodonStandIn, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # On a busy machine a beat can come after the lease ran out; the worker still runs the job, so its own
    # reaper must pass over it (another worker's reaper may not: to it the worker could be dead).
    job_id = await queue_a_refresh(tenant, platform, client, mastodon)
    started, release = asyncio.Event(), asyncio.Event()
    fetch = MastodonConnector.fetch_metrics
    fetches = 0

    async def slow_fetch(self: MastodonConnector, *args: Any) -> Any:
        nonlocal fetches
        fetches += 1
        started.set()
        await asyncio.wait_for(release.wait(), timeout=30)
        return await fetch(self, *args)

    async def no_heartbeat(*_args: Any) -> None:
        await asyncio.Event().wait()

    monkeypatch.setattr(MastodonConnector, "fetch_metrics", slow_fetch)
    monkeypatch.setattr(worker, "_heartbeat", no_heartbeat)
    first = asyncio.create_task(run_jobs(worker_context(platform, "first")))
    await asyncio.wait_for(started.wait(), timeout=10)
    claimed_until = (await job_row(platform, job_id)).lease_expires_at
    assert claimed_until is not None
    reap_pass = timedelta(seconds=2 * platform.settings.jobs.poll_interval + 0.5)
    async with asyncio.timeout(10):
        while datetime.now(UTC) < claimed_until + reap_pass:
            await asyncio.sleep(0.1)
    assert (await job_row(platform, job_id)).status == "processing"
    release.set()
    assert await asyncio.wait_for(first, timeout=10) == 1
    done = await job_row(platform, job_id)
    assert (done.status, done.attempt, fetches) == ("completed", 0, 1)


async def test_an_analytics_refresh_whose_workers_keep_dying_fails_after_its_attempt_cap(
    tenant: Tenant, platform: Platform, client: Any, mastodon: tuple[MastodonStandIn, str]
) -> None:
    job_id = await queue_a_refresh(tenant, platform, client, mastodon)
    reaper = worker_context(platform, "reaper")
    assert reaper.job_types["analytics_refresh"].policy(platform.settings).max_attempts == 3
    for attempt in (1, 2, 3):
        assert [
            run.job_id for run in await claim(worker_context(platform, f"lost-{attempt}"), "analytics_refresh", limit=5)
        ] == [job_id]
        await expire_lease(platform, job_id)
        await reap_expired(reaper)
    failed = await job_row(platform, job_id)
    assert (failed.status, failed.failure_reason, failed.attempt) == ("failed", "worker_lost", 3)
    assert await run_jobs(reaper) == 0


async def test_a_dead_workers_job_is_taken_over_while_the_live_worker_is_busy(
    tenant: Tenant, platform: Platform
) -> None:
    released = asyncio.Event()
    ran: list[str] = []

    async def slow(run: JobRun) -> JobResult:
        ran.append("slow")
        await released.wait()
        return JobResult()

    async def quick(run: JobRun) -> JobResult:
        ran.append("quick")
        return JobResult()

    def one_at_a_time(settings: Settings) -> JobPolicy:
        return JobPolicy(max_attempts=3, per_account_limit=False)

    kinds = {
        "slow": JobType(name="slow", run=slow, policy=one_at_a_time),
        "quick": JobType(name="quick", run=quick, policy=one_at_a_time),
    }
    orphan = await reserved_directly(platform, tenant, "quick", 0)
    assert [run.job_id for run in await claim(WorkerContext(platform, "dead", kinds), "quick", limit=1)] == [orphan]
    await reserved_directly(platform, tenant, "slow", 0)
    live = asyncio.create_task(run_jobs(WorkerContext(platform, "live", kinds)))
    try:
        # The dead worker's 1 s lease runs out while the live worker still runs its slow job.
        for _ in range(100):
            if (await job_row(platform, orphan)).status == "completed":
                break
            await asyncio.sleep(0.05)
        assert (await job_row(platform, orphan)).status == "completed"
        assert ran == ["slow", "quick"] and not live.done()
    finally:
        released.set()
    assert await asyncio.wait_for(live, timeout=10) == 3  # two claims and one reaped lease


async def test_a_type_with_a_backlog_does_not_keep_another_types_due_job_waiting(
    tenant: Tenant, platform: Platform
) -> None:
    finished: list[str] = []

    async def steady(run: JobRun) -> JobResult:
        await asyncio.sleep(0.05)
        finished.append("steady")
        return JobResult()

    async def other(run: JobRun) -> JobResult:
        finished.append("other")
        return JobResult()

    def two_at_a_time(settings: Settings) -> JobPolicy:
        return JobPolicy(max_attempts=3, batch=2, concurrency=2, per_account_limit=False)

    kinds = {
        "steady": JobType(name="steady", run=steady, policy=two_at_a_time),
        "other": JobType(name="other", run=other, policy=two_at_a_time),
    }
    for _ in range(60):  # 1.5 s of work two at a time, refilled as each pair finishes
        await reserved_directly(platform, tenant, "steady", 0)
    running = asyncio.create_task(run_jobs(WorkerContext(platform, "worker", kinds)))
    while not finished:
        await asyncio.sleep(0.01)
    await reserved_directly(platform, tenant, "other", 0)
    await asyncio.wait_for(running, timeout=30)
    # It started within a poll interval (0.5 s), while the steady type still had most of its jobs due.
    assert finished.index("other") < 40, finished.index("other")


async def test_a_result_that_cannot_be_recorded_runs_again_instead_of_failing(
    tenant: Tenant, platform: Platform
) -> None:
    runs: list[int] = []

    async def flaky_database(session: AsyncSession) -> None:
        if len(runs) == 1:
            raise ConnectionError("the database went away while the result was written")

    async def work(run: JobRun) -> JobResult:
        runs.append(1)
        return JobResult(output={"run": len(runs)}, record=flaky_database)

    kinds = {"work": JobType(name="work", run=work, policy=lambda settings: JobPolicy(max_attempts=3))}
    before = await balance(platform, tenant.account_id)
    job_id = await reserved_directly(platform, tenant, "work", 2)
    context = WorkerContext(platform, "worker", kinds)
    await run_jobs(context)
    unrecorded = await job_row(platform, job_id)
    assert unrecorded.status == "processing" and unrecorded.billing_status == "reserved"
    await expire_lease(platform, job_id)
    await run_jobs(context)
    done = await job_row(platform, job_id)
    assert runs == [1, 1] and done.status == "completed" and done.output == {"run": 2}
    assert done.billing_status == "charged" and await balance(platform, tenant.account_id) == before - 2


async def test_one_result_that_cannot_be_written_holds_back_none_of_the_jobs_finishing_beside_it(
    tenant: Tenant, platform: Platform
) -> None:
    async def refuse(session: AsyncSession) -> None:
        raise ConnectionError("the row could not be written")

    async def work(run: JobRun) -> JobResult:
        bad = run.job_input.get("bad", False)
        return JobResult(output={"bad": bad}, record=refuse if bad else None)

    def five_at_once(settings: Settings) -> JobPolicy:
        return JobPolicy(max_attempts=3, batch=5, concurrency=5, per_account_limit=False)

    kinds = {"work": JobType(name="work", run=work, policy=five_at_once)}
    job_ids = [await reserved_directly(platform, tenant, "work", 0, {"bad": index == 2}) for index in range(5)]
    await run_jobs(WorkerContext(platform, "worker", kinds))
    statuses = [(await job_row(platform, job_id)).status for job_id in job_ids]
    # The four written together; the one whose rows were refused waits for its lease to run out and runs again.
    assert statuses == ["completed", "completed", "processing", "completed", "completed"]


async def test_two_worker_processes_on_one_sqlite_file_never_claim_the_same_job(
    tenant: Tenant, platform: Platform, settings: Settings
) -> None:
    # A second Platform is what a second worker process has: its own writer lane and WAL readers.
    other = build_platform(settings, platform.registry)
    kinds = {"work": JobType(name="work", run=lambda run: asyncio.sleep(0, JobResult()))}
    try:
        for _ in range(5):
            await reserved_directly(platform, tenant, "work", 0)
            first, second = await asyncio.gather(
                claim(WorkerContext(platform, "one", kinds), "work", limit=1),
                claim(WorkerContext(other, "two", kinds), "work", limit=1),
            )
            assert len(first) + len(second) == 1
            async with platform.session_factory() as session, session.begin():
                await session.execute(update(Job).values(status="completed"))
    finally:
        await other.close()


async def test_a_replacement_worker_returns_its_dead_predecessors_jobs_at_once_and_fails_them_at_the_cap(
    tenant: Tenant, platform: Platform
) -> None:
    before = await balance(platform, tenant.account_id)
    job_id = await a_post(platform, tenant)
    cap = worker_context(platform).job_types["publish"].policy(platform.settings).max_attempts
    for attempt in range(1, cap + 1):
        dead = f"dead-{attempt}"
        assert [run.job_id for run in await claim(worker_context(platform, dead), "publish", limit=1)] == [job_id]
        # Its lease is still good for a minute; the supervisor saw the process end, so nobody need wait for it.
        assert await release_departed(worker_context(platform, "replacement"), "someone-else") == 0
        assert await release_departed(worker_context(platform, "replacement"), dead) == 1
        row = await job_row(platform, job_id)
        assert (row.attempt, row.status, row.lease_owner) == (
            attempt,
            "pending" if attempt < cap else "failed",
            None,
        )
    assert row.failure_reason == "worker_lost"
    assert await balance(platform, tenant.account_id) == before
    async with platform.session_factory() as session:
        post = await session.scalar(select(Post).where(Post.job_id == job_id))
    assert post is not None and (post.status, post.refunded) == ("failed", True)


async def test_closing_the_platform_closes_the_clients_its_job_runners_shared(settings: Settings) -> None:
    closed: list[str] = []

    class KeptClient:
        async def aclose(self) -> None:
            closed.append("client")

    platform = build_platform(settings, build_registry())
    context = WorkerContext(platform, "worker", {})
    first = context.shared(KeptClient, KeptClient)
    assert context.shared(KeptClient, KeptClient) is first and closed == []
    await platform.close()
    assert closed == ["client"]
