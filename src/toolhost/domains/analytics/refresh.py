"""Pulling metrics through connectors: refresh_platform_analytics queues `analytics_refresh` jobs on the
platform's job machine, and their runner pulls the counters.

One job per connected account with posts published in the last 7 days; webhook accounts are not queued:
their receivers push snapshots (POST /v1/connectors/webhook/events), there is nothing to pull. A refresh
holds a lease the heartbeat extends; after `jobs.max_attempts` lost leases it fails (`worker_lost`).
"""

from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.config import Settings
from toolhost.db.base import utcnow
from toolhost.domains.analytics import insights, metrics
from toolhost.domains.distribution import service as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount, Post
from toolhost.platform import jobs as platform_jobs
from toolhost.platform.jobs import JobFailed, JobPolicy, JobResult, JobRun, JobType
from toolhost.platform.results import ToolError
from toolhost.providers.connectors.base import METRICS, PublishFailed
from toolhost.providers.connectors.registry import Connectors
from toolhost.providers.connectors.vault import TokenVault

logger = logging.getLogger(__name__)

JOB_TYPE = "analytics_refresh"
RECENT = timedelta(days=7)
PUSHED_ONLY = frozenset({"webhook"})
CLAIM_BATCH = 5


def pullable(connectors: Connectors, account: ConnectedAccount) -> bool:
    """Whether toolhost can pull this account's metrics: a configured connector with the metrics capability."""
    connector = connectors.get(account.connector)
    return connector is not None and account.connector not in PUSHED_ONLY and METRICS in connector.capabilities


@dataclass(frozen=True, slots=True)
class Refresh:
    """What a refresh queued: the recent posts, the jobs queued, the posts it cannot pull and those pushed."""

    posts_processed: int
    queued: int
    errored: int
    pushed: int


async def enqueue(
    *, session: AsyncSession, connectors: Connectors, account_id: uuid.UUID, project_id: uuid.UUID
) -> Refresh:
    """Queues one job per pullable account with recent published posts; counts what it cannot pull."""
    posts = await metrics.published_posts(session=session, project_ids=[project_id], since=utcnow() - RECENT)
    by_account: dict[uuid.UUID, list[Post]] = defaultdict(list)
    for post in posts:
        by_account[post.connected_account_id].append(post)
    accounts = {
        account.id: account
        for account in await session.scalars(select(ConnectedAccount).where(ConnectedAccount.id.in_(list(by_account))))
    }
    queued = errored = pushed = 0
    for connected_account_id, account_posts in by_account.items():
        account = accounts.get(connected_account_id)
        if account is not None and account.connector in PUSHED_ONLY and accounts_service.is_usable(account):
            pushed += len(account_posts)
            continue
        if account is None or not accounts_service.is_usable(account) or not pullable(connectors, account):
            errored += len(account_posts)
            continue
        await platform_jobs.enqueue(
            session=session,
            account_id=account_id,
            project_id=project_id,
            job_type=JOB_TYPE,
            tool_name="refresh_platform_analytics",
            reserved_credits=0,
            job_input={
                "connected_account_id": str(account.id),
                "post_ids": [str(post.id) for post in account_posts if post.external_post_id],
            },
        )
        queued += 1
    return Refresh(posts_processed=len(posts), queued=queued, errored=errored, pushed=pushed)


def refresh_policy(settings: Settings) -> JobPolicy:
    """A few refreshes per claim, `jobs.max_attempts` lost leases at most, outside the account's media limit."""
    return JobPolicy(max_attempts=settings.jobs.max_attempts, batch=CLAIM_BATCH, per_account_limit=False)


async def run_refresh(run: JobRun) -> JobResult:
    """Pulls one account's metrics post by post (no transaction open), then stores them with the completion."""
    async with run.session_factory() as session:
        account = await session.get(ConnectedAccount, uuid.UUID(str(run.job_input["connected_account_id"])))
        post_ids = [uuid.UUID(value) for value in run.job_input.get("post_ids", [])]
        posts = list(
            await session.scalars(select(Post).where(Post.id.in_(post_ids), Post.project_id == run.project_id))
        )
    connectors = run.context.shared(Connectors, lambda: Connectors.for_worker(run.settings))
    connector = connectors.get(account.connector) if account is not None else None
    if account is None or connector is None or not accounts_service.is_usable(account):
        raise JobFailed("the connected account is no longer usable", reason="authentication_failed")
    vault = TokenVault(run.settings.keyring)
    account_session = accounts_service.session_of(account, vault)
    counted: dict[uuid.UUID, dict[str, Any]] = {}
    failures = 0
    measurable = [post for post in posts if post.external_post_id]
    for index, post in enumerate(measurable):
        await run.report(round(index * 100 / len(measurable)))
        assert post.external_post_id is not None
        try:
            counts = await connector.fetch_metrics(account_session, post.external_post_id)
        except (PublishFailed, ToolError) as error:
            failures += 1
            logger.info("metrics of post %s not fetched: %s", post.id, getattr(error, "message", error))
            continue
        counted[post.id] = _clean(counts)

    async def store_tokens(session: AsyncSession) -> None:
        fresh = await session.get(ConnectedAccount, account.id)
        if fresh is not None:
            accounts_service.store_refreshed(fresh, account_session, vault)

    if posts and not counted and failures:
        async with run.session_factory() as session, session.begin():
            await store_tokens(session)
        raise JobFailed(f"the {account.connector} connector returned no metrics", reason="generation_failed")

    async def record(session: AsyncSession) -> None:
        for post in await session.scalars(select(Post).where(Post.id.in_(list(counted)))):
            metrics.record(session=session, post=post, values=counted[post.id], source="connector")
        await store_tokens(session)
        if counted:
            await session.flush()
            await insights.recompute(session=session, project_id=run.project_id)

    return JobResult(output={"snapshots": len(counted), "failed_posts": failures}, record=record)


def _clean(counts: dict[str, Any]) -> dict[str, Any]:
    """The counters a connector reported, by their COUNTERS names; one it did not report stays absent (unknown)."""
    values: dict[str, Any] = {}
    for name in metrics.COUNTERS:
        value = counts.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            values[name] = float(value) if name == "watch_time_minutes" else int(value)
    return values


JOB_TYPES = (JobType(name=JOB_TYPE, run=run_refresh, policy=refresh_policy),)
