"""Pulling metrics through connectors: refresh_platform_analytics queues `analytics_refresh` jobs, a poller runs them.

One job per connected account with posts published in the last 7 days. Webhook accounts are not queued:
their receivers push snapshots (POST /v1/connectors/webhook/events), there is nothing to pull.
"""

from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.analytics import insights, metrics
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount, Post
from toolhost.platform.jobs import Job, WorkerContext
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


async def enqueue(
    *, session: AsyncSession, connectors: Connectors, account_id: uuid.UUID, project_id: uuid.UUID
) -> dict[str, Any]:
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
        session.add(
            Job(
                account_id=account_id,
                project_id=project_id,
                job_type=JOB_TYPE,
                input={
                    "connected_account_id": str(account.id),
                    "post_ids": [str(post.id) for post in account_posts if post.external_post_id],
                },
            )
        )
        queued += 1
    await session.flush()
    return {
        "success": True,
        "postsProcessed": len(posts),
        "queued": queued,
        "errored": errored,
        "pushed": pushed,
        "projectId": str(project_id),
    }


async def _claim(context: WorkerContext) -> list[Job]:
    lease = timedelta(seconds=context.settings.jobs.lease_seconds)
    async with context.session_factory() as session, session.begin():
        now = utcnow()
        query = (
            select(Job.id)
            .where(
                Job.job_type == JOB_TYPE,
                # A processing job whose lease expired belongs to a worker that died: run it again.
                or_(Job.status == "pending", and_(Job.status == "processing", Job.lease_expires_at < now)),
            )
            .order_by(Job.created_at)
            .limit(CLAIM_BATCH)
        )
        if session.get_bind().dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        ids = list(await session.scalars(query))
        if not ids:
            return []
        await session.execute(
            update(Job)
            .where(Job.id.in_(ids))
            .values(
                status="processing",
                attempt=Job.attempt + 1,
                lease_owner=context.worker_id,
                lease_expires_at=now + lease,
                updated_at=now,
            )
            .execution_options(synchronize_session=False)
        )
        return list(await session.scalars(select(Job).where(Job.id.in_(ids))))


async def refresh_due_analytics(context: WorkerContext) -> int:
    """The poller: runs queued analytics_refresh jobs, storing one snapshot per post the connector reports."""
    jobs = await _claim(context)
    if not jobs:
        return 0
    connectors = Connectors(context.settings)
    vault = TokenVault(context.settings.secret_key)
    for job in jobs:
        await _run(context, connectors, vault, job.id)
    return len(jobs)


async def _run(context: WorkerContext, connectors: Connectors, vault: TokenVault, job_id: uuid.UUID) -> None:
    async with context.session_factory() as session, session.begin():
        job = await session.get(Job, job_id)
        if job is None or job.status != "processing":
            return
        account = await session.get(ConnectedAccount, uuid.UUID(job.input["connected_account_id"]))
        connector = connectors.get(account.connector) if account is not None else None
        if account is None or connector is None or not accounts_service.is_usable(account):
            _finish(job, failed="the connected account is no longer usable", reason="authentication_failed")
            return
        post_ids = [uuid.UUID(value) for value in job.input.get("post_ids", [])]
        posts = list(
            await session.scalars(select(Post).where(Post.id.in_(post_ids), Post.project_id == job.project_id))
        )
        account_session = accounts_service.session_of(account, vault)
        stored = failures = 0
        for post in posts:
            if not post.external_post_id:
                continue
            try:
                counts = await connector.fetch_metrics(account_session, post.external_post_id)
            except (PublishFailed, ToolError) as error:
                failures += 1
                logger.info("metrics of post %s not fetched: %s", post.id, getattr(error, "message", error))
                continue
            metrics.record(session=session, post=post, values=_clean(counts), source="connector")
            stored += 1
        accounts_service.store_refreshed(account, account_session, vault)
        if stored and job.project_id is not None:
            await session.flush()
            await insights.recompute(session=session, project_id=job.project_id)
        if posts and not stored and failures:
            _finish(job, failed=f"the {account.connector} connector returned no metrics", reason="generation_failed")
            return
        job.output = {"snapshots": stored, "failed_posts": failures}
        _finish(job)


def _clean(counts: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in metrics.COUNTERS:
        value = counts.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            values[name] = float(value) if name == "watch_time_minutes" else int(value)
    return values


def _finish(job: Job, *, failed: str | None = None, reason: str | None = None) -> None:
    now = utcnow()
    job.status = "failed" if failed else "completed"
    job.error = failed
    job.failure_reason = reason
    job.progress = 100
    job.lease_owner = None
    job.lease_expires_at = None
    job.completed_at = now
    job.updated_at = now
