"""The `publish` job type: a post due for publishing is its publish job, claimed on the platform's job machine.

The machine claims due publish jobs in batches with a lease; the claiming transaction marks their posts
`publishing` (attempt + 1), so a claimed post can no longer be cancelled or rescheduled. Publishing happens
outside any transaction, with the post's stable idempotency key; the outcome is written with the job's
completion, or by `settle` when the job fails or is retried. A worker that dies mid-publication leaves an
expired lease: the job returns to pending and the next claim publishes again with the same key, so the
platform (or the webhook receiver) recognises the repeat and nothing is published twice. After
`distribution.max_lease_losses` lost leases the post fails (`worker_lost`); a retryable connector failure
is retried after each of `distribution.retry_delays`, then the post fails. A failed post is refunded once
(its job's reservation).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, exists, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.config import Settings
from toolhost.db.base import utcnow
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount, Post
from toolhost.domains.media import service as media_service
from toolhost.domains.planning.models import ContentPlan
from toolhost.platform.jobs import Job, JobFailed, JobPolicy, JobResult, JobRun, JobStopped, JobType, RetryLater
from toolhost.platform.observability import GaugeReading
from toolhost.platform.results import ValidationFailed
from toolhost.providers.connectors.base import (
    AccountSession,
    Connector,
    MediaItem,
    OutgoingPost,
    PublishContext,
    PublishFailed,
)
from toolhost.providers.connectors.registry import Connectors
from toolhost.providers.connectors.vault import TokenVault
from toolhost.providers.media_store import MediaStore, MediaStoreUnavailable

MEDIA_URL_TTL = 24 * 3600  # receivers may fetch attachments well after the delivery
OPEN_STATUSES = ("pending", "scheduled", "publishing")
POSTS = cast(Table, Post.__table__)
# Built once, in Core, as the worker's job completion is: it runs in the same transaction, once per post.
MARK_PUBLISHED = (
    update(POSTS)
    .where(POSTS.c.id == bindparam("post_id"), POSTS.c.status == "publishing")
    .values(
        status="published",
        external_post_id=bindparam("external_id", type_=POSTS.c.external_post_id.type),
        external_url=bindparam("external_link", type_=POSTS.c.external_url.type),
        published_at=bindparam("published", type_=POSTS.c.published_at.type),
        error=None,
        updated_at=bindparam("published", type_=POSTS.c.updated_at.type),
    )
)


def publish_policy(settings: Settings) -> JobPolicy:
    """Batches of due posts published concurrently, the connector retry schedule, and the lease-loss cap."""
    options = settings.distribution
    return JobPolicy(
        max_attempts=options.max_lease_losses + 1,
        retry_delays=tuple(float(delay) for delay in options.retry_delays),
        batch=options.claim_batch,
        concurrency=options.publish_concurrency,
        per_account_limit=False,
    )


@dataclass(frozen=True, slots=True)
class ClaimedPost:
    """A claimed post, now `publishing`, and the account it goes out through (None when that is gone)."""

    post: Post
    account: ConnectedAccount | None


async def mark_publishing(session: AsyncSession, runs: Sequence[JobRun]) -> dict[uuid.UUID, ClaimedPost]:
    """In the claiming transaction: the claimed jobs' posts are being published (attempt + 1); each job's post
    and account as the claim left them. A post no longer open (cancelled, deleted or finished) is not among them."""
    job_of_post = {uuid.UUID(str(run.job_input["post_id"])): run.job_id for run in runs}
    posts = list(
        await session.scalars(
            update(Post)
            .where(Post.id.in_(list(job_of_post)), Post.status.in_(OPEN_STATUSES))
            .values(status="publishing", attempt=Post.attempt + 1, updated_at=utcnow())
            .returning(Post),
            execution_options={"synchronize_session": False},
        )
    )
    account_ids = {post.connected_account_id for post in posts if post.connected_account_id is not None}
    accounts = {
        account.id: account
        for account in await session.scalars(select(ConnectedAccount).where(ConnectedAccount.id.in_(account_ids)))
    }
    # Detached for the runs, which outlive this transaction and touch no session with them.
    session.expunge_all()
    return {
        job_of_post[post.id]: ClaimedPost(
            post=post, account=accounts.get(post.connected_account_id) if post.connected_account_id else None
        )
        for post in posts
    }


async def settle(session: AsyncSession, job: Job) -> None:
    """The post follows its job: failed (refunded with the job) or, for a retry, scheduled at the retry's time."""
    post = await session.get(Post, uuid.UUID(str(job.input["post_id"])), populate_existing=True)
    if post is None or post.status not in OPEN_STATUSES:
        return
    post.error = job.error
    post.failures = job.retries
    post.updated_at = utcnow()
    if job.status == "pending":
        post.status = "scheduled"
        post.due_at = job.run_after
        return
    post.status = "failed"
    post.refunded = True
    await session.flush()
    if post.plan_id is not None:
        await complete_plan_if_done(session, post.plan_id)


async def publish(run: JobRun) -> JobResult:
    """Publishes one claimed post (read by the claim, `mark_publishing`) through its account's connector."""
    claimed = run.claimed_with
    if not isinstance(claimed, ClaimedPost):
        raise JobFailed(
            "the post is no longer waiting to be published (cancelled, deleted or finished)", reason="publish_failed"
        )
    post, account = claimed.post, claimed.account
    if account is None or not accounts_service.is_usable(account):
        status = accounts_service.effective_status(account) if account else "missing"
        raise JobFailed(f"the connected account is {status}", reason="authentication_failed")
    try:
        connector = run.context.shared(Connectors, lambda: Connectors.for_worker(run.settings)).require(
            account.connector, account.platform
        )
    except ValidationFailed as error:
        raise JobFailed(error.message, reason="publish_failed") from error
    vault = TokenVault(run.settings.keyring)
    view = accounts_service.session_of(account, vault, session_factory=run.session_factory)

    async def save_state(state: dict[str, Any]) -> None:
        async with run.session_factory() as session, session.begin():
            saved = await session.execute(
                update(Post)
                .where(Post.id == post.id, exists(select(Job.id).where(run.holds_lease())))
                .values(connector_state=state)
                .returning(Post.id)
                .execution_options(synchronize_session=False)
            )
            held = saved.first() is not None
        if not held:
            # Another worker took the post over (this one's lease ran out while it was slow): what this one has
            # not saved, the other cannot reconcile, so it stops here rather than create the post beside it.
            run.stopped.set()
            raise JobStopped
        publish_context.state = state

    publish_context = PublishContext(state=dict(post.connector_state or {}), save_state=save_state)
    try:
        outgoing = await _outgoing(run, post, connector)
        result = await connector.publish(view, outgoing, publish_context)
    except PublishFailed as failure:
        await _after_failure(run, account, view, vault, failure)
        if failure.retryable:
            raise RetryLater(failure.message, reason="publish_failed", not_before=failure.retry_at) from failure
        if failure.authentication:
            raise JobFailed(
                f"{accounts_service.NEEDS_REAUTH}: {failure.message}", reason="authentication_failed"
            ) from failure
        raise JobFailed(failure.message, reason="publish_failed") from failure

    async def record(session: AsyncSession) -> None:
        await session.execute(
            MARK_PUBLISHED,
            {
                "post_id": post.id,
                "external_id": result.external_post_id,
                "external_link": result.external_url,
                "published": utcnow(),
            },
        )
        await _store_tokens(session, account, view, vault)
        if post.plan_id is not None:
            await complete_plan_if_done(session, post.plan_id)

    return JobResult(
        output={
            "post_id": str(post.id),
            "external_post_id": result.external_post_id,
            "external_url": result.external_url,
        },
        record=record,
    )


async def _after_failure(
    run: JobRun, account: ConnectedAccount, view: AccountSession, vault: TokenVault, failure: PublishFailed
) -> None:
    """Keeps refreshed tokens, and marks an account whose credentials the platform refused as needing a new
    sign-in: no further post is published through it until it is connected again."""
    async with run.session_factory() as session, session.begin():
        await _store_tokens(session, account, view, vault)
        if failure.authentication:
            await session.execute(
                update(ConnectedAccount)
                .where(ConnectedAccount.id == account.id)
                .values(status=accounts_service.NEEDS_REAUTH, error=failure.message, updated_at=utcnow())
                .execution_options(synchronize_session=False)
            )


async def _media_bytes(store: MediaStore, key: str) -> bytes:
    """A post's stored media; a missing object is final, a store that does not answer is retried."""
    try:
        return await store.read(key)
    except FileNotFoundError as error:
        raise PublishFailed(f"media {key} is no longer in the media store", retryable=False) from error
    except (OSError, MediaStoreUnavailable) as error:
        raise PublishFailed(f"the media store could not be read: {error}", retryable=True) from error


async def _outgoing(run: JobRun, post: Post, connector: Connector) -> OutgoingPost:
    needs_bytes = connector.uploads_media_bytes
    store = media_service.store(run.settings)
    items = []
    for entry in post.media:
        key = entry.get("r2_key")
        if key:
            items.append(
                MediaItem(
                    content_type=entry.get("content_type") or "application/octet-stream",
                    url=media_service.signed_url(run.settings, key, ttl=MEDIA_URL_TTL),
                    data=await _media_bytes(store, key) if needs_bytes else None,
                    key=key,
                    file_name=key.rsplit("/", 1)[-1],
                )
            )
        else:
            items.append(MediaItem(content_type=entry.get("content_type") or "", url=entry.get("url")))
    return OutgoingPost(
        post_id=str(post.id),
        project_id=str(post.project_id),
        platform=post.platform,
        caption=post.caption,
        title=post.title,
        hashtags=list(post.hashtags or []),
        media=items,
        media_type=post.media_type,
        platform_metadata=dict(post.platform_metadata or {}),
        scheduled_at=post.scheduled_at,
        idempotency_key=post.idempotency_key,
        attempt=post.attempt,
        created_at=post.created_at,
    )


async def _store_tokens(
    session: AsyncSession, account: ConnectedAccount, view: AccountSession, vault: TokenVault
) -> None:
    if not view.changed:
        return
    await session.execute(
        update(ConnectedAccount)
        .where(ConnectedAccount.id == account.id)
        .values(**accounts_service.refreshed_values(view, vault))
        .execution_options(synchronize_session=False)
    )


async def complete_plan_if_done(session: AsyncSession, plan_id: uuid.UUID) -> None:
    """A plan whose scheduled posts are all published or failed becomes `completed` (CATALOG.md §1.6)."""
    open_posts = await session.scalar(
        select(func.count())
        .select_from(Post)
        .where(Post.plan_id == plan_id, Post.status.in_(("draft", "pending", "scheduled", "publishing")))
    )
    if open_posts:
        return
    await session.execute(
        update(ContentPlan)
        .where(ContentPlan.id == plan_id, ContentPlan.status == "scheduled")
        .values(status="completed", updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )


JOB_TYPES = (JobType(name="publish", run=publish, policy=publish_policy, on_claim=mark_publishing, settle=settle),)


async def publish_gauges(session: AsyncSession, now: datetime) -> list[GaugeReading]:
    """Publishing for /metrics: how late the most overdue unpublished post is, and how many are overdue.

    A post is due at its scheduled time (its creation for "publish now") and overdue until it is published,
    fails or is cancelled; retries after connector failures keep it overdue. The lag rises when no worker runs,
    when workers cannot keep up, and while a connector keeps failing: what an operator is paged for.
    """
    due_time = func.coalesce(Post.scheduled_at, Post.created_at, type_=Post.created_at.type)
    count, oldest = (
        await session.execute(
            select(func.count(), func.min(due_time, type_=Post.created_at.type)).where(
                Post.status.in_(OPEN_STATUSES), due_time <= now
            )
        )
    ).one()
    return [
        GaugeReading(
            "toolhost_publish_lag_seconds",
            "Seconds since the due time of the most overdue post not yet published (0 when none is overdue).",
            max(0.0, (now - oldest).total_seconds()) if oldest is not None else 0.0,
        ),
        GaugeReading("toolhost_posts_overdue", "Posts past their due time and not yet published.", count),
    ]
