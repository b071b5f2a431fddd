"""The dispatcher poller: claims due posts with a lease and publishes each once through its connector.

Claim: one short transaction selects due rows (`pending`, `scheduled` whose time has come, or
`publishing` whose lease expired) with `FOR UPDATE SKIP LOCKED` on PostgreSQL (SQLite's write lock,
taken by BEGIN IMMEDIATE, makes the claim single-writer there), and marks them `publishing` with this
worker's name and a lease. Publishing happens outside any transaction, with the post's stable
idempotency key; the outcome is written in a transaction of its own. A worker that dies mid-publication
leaves an expired lease: the next claim takes the post again (attempt + 1) with the same key, so the
platform (or the webhook receiver) recognises the repeat and nothing is published twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount, Post
from toolhost.domains.distribution.service import settle_failed_or_cancelled
from toolhost.domains.media import service as media_service
from toolhost.domains.planning.models import ContentPlan
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.providers.connectors.base import (
    AccountSession,
    Connector,
    MediaItem,
    OutgoingPost,
    PublishContext,
    PublishFailed,
    PublishResult,
)
from toolhost.providers.connectors.registry import Connectors
from toolhost.providers.connectors.vault import TokenVault
from toolhost.providers.media_store import MediaStore, MediaStoreUnavailable

logger = logging.getLogger(__name__)

MEDIA_URL_TTL = 24 * 3600  # receivers may fetch attachments well after the delivery


async def claim(context: WorkerContext, *, limit: int) -> list[Post]:
    """Claims up to `limit` due posts for this worker, in one transaction."""
    lease = timedelta(seconds=context.settings.jobs.lease_seconds)
    async with context.session_factory() as session, session.begin():
        now = utcnow()
        due = or_(
            and_(Post.status.in_(("pending", "scheduled")), Post.due_at <= now),
            and_(Post.status == "publishing", Post.lease_expires_at < now),
        )
        query = select(Post.id).where(due).order_by(Post.due_at).limit(limit)
        if session.get_bind().dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        ids = list(await session.scalars(query))
        if not ids:
            return []
        await session.execute(
            update(Post)
            .where(Post.id.in_(ids))
            .values(
                status="publishing",
                lease_owner=context.worker_id,
                lease_expires_at=now + lease,
                attempt=Post.attempt + 1,
                updated_at=now,
            )
            .execution_options(synchronize_session=False)
        )
        posts = list(await session.scalars(select(Post).where(Post.id.in_(ids)).order_by(Post.due_at)))
        await session.execute(
            update(Job)
            .where(Job.id.in_([post.job_id for post in posts if post.job_id]))
            .values(
                status="processing",
                attempt=Job.attempt + 1,
                lease_owner=context.worker_id,
                lease_expires_at=now + lease,
                updated_at=now,
            )
            .execution_options(synchronize_session=False)
        )
        return posts


async def publish_due_posts(context: WorkerContext) -> int:
    """The poller: claims a batch and publishes it, `distribution.publish_concurrency` at a time."""
    options = context.settings.distribution
    posts = await claim(context, limit=options.claim_batch)
    if not posts:
        return 0
    connectors = Connectors(context.settings)
    vault = TokenVault(context.settings.secret_key)
    accounts = await _accounts(context, {post.connected_account_id for post in posts})
    limiter = asyncio.Semaphore(max(1, options.publish_concurrency))
    in_flight = {post.id for post in posts}

    async def one(post: Post) -> None:
        async with limiter:
            try:
                await publish_one(context, post, accounts.get(post.connected_account_id), connectors, vault)
            except Exception:
                # A bug or a database blip on one post must not stop the batch; the lease brings it back.
                logger.exception("publishing post %s failed unexpectedly", post.id)
            finally:
                in_flight.discard(post.id)

    heartbeat = asyncio.create_task(_heartbeat(context, in_flight))
    try:
        await asyncio.gather(*(one(post) for post in posts))
    finally:
        heartbeat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await heartbeat
    return len(posts)


async def _heartbeat(context: WorkerContext, in_flight: set[uuid.UUID]) -> None:
    """Extends the leases of posts still being published, so a slow upload is not taken over."""
    lease = context.settings.jobs.lease_seconds
    while True:
        await asyncio.sleep(max(1.0, lease / 3))
        if not in_flight:
            continue
        async with context.session_factory() as session, session.begin():
            await session.execute(
                update(Post)
                .where(
                    Post.id.in_(list(in_flight)),
                    Post.lease_owner == context.worker_id,
                    Post.status == "publishing",
                )
                .values(lease_expires_at=utcnow() + timedelta(seconds=lease))
                .execution_options(synchronize_session=False)
            )


async def _accounts(context: WorkerContext, ids: set[uuid.UUID]) -> dict[uuid.UUID, ConnectedAccount]:
    async with context.session_factory() as session:
        found = await session.scalars(select(ConnectedAccount).where(ConnectedAccount.id.in_(list(ids))))
        return {account.id: account for account in found}


async def _media_bytes(store: MediaStore, key: str) -> bytes:
    """A post's stored media; a missing object is final, a store that does not answer is retried."""
    try:
        return await store.read(key)
    except FileNotFoundError as error:
        raise PublishFailed(f"media {key} is no longer in the media store", retryable=False) from error
    except (OSError, MediaStoreUnavailable) as error:
        raise PublishFailed(f"the media store could not be read: {error}", retryable=True) from error


async def _outgoing(context: WorkerContext, post: Post, connector: Connector) -> OutgoingPost:
    needs_bytes = connector.name != "webhook"
    store = media_service.store(context.settings)
    items = []
    for entry in post.media:
        key = entry.get("r2_key")
        if key:
            items.append(
                MediaItem(
                    content_type=entry.get("content_type") or "application/octet-stream",
                    url=media_service.signed_url(context.settings, key, ttl=MEDIA_URL_TTL),
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


async def publish_one(
    context: WorkerContext,
    post: Post,
    account: ConnectedAccount | None,
    connectors: Connectors,
    vault: TokenVault,
) -> None:
    """Publishes one claimed post and records the outcome."""
    options = context.settings.distribution
    if post.attempt - post.failures > options.max_lease_losses + 1:
        await _finish_failed(
            context, post, "publication was interrupted by lost workers too often", reason="worker_lost"
        )
        return
    if account is None or not accounts_service.is_usable(account):
        status = accounts_service.effective_status(account) if account else "missing"
        await _finish_failed(
            context, post, f"the connected account is {status}", reason="authentication_failed"
        )
        return
    connector = connectors.get(account.connector)
    if connector is None:
        await _finish_failed(
            context, post, f"connector {account.connector} is not configured", reason="publish_failed"
        )
        return
    session_view = accounts_service.session_of(account, vault)

    async def save_state(state: dict[str, Any]) -> None:
        async with context.session_factory() as session, session.begin():
            await session.execute(
                update(Post)
                .where(Post.id == post.id, Post.lease_owner == context.worker_id)
                .values(connector_state=state)
                .execution_options(synchronize_session=False)
            )
        publish_context.state = state

    publish_context = PublishContext(state=dict(post.connector_state or {}), save_state=save_state)
    try:
        outgoing = await _outgoing(context, post, connector)
        result = await connector.publish(session_view, outgoing, publish_context)
    except PublishFailed as failure:
        await _record_failure(context, post, account, session_view, vault, failure)
        return
    await _finish_published(context, post, account, session_view, vault, result)


async def _finish_published(
    context: WorkerContext,
    post: Post,
    account: ConnectedAccount,
    view: AccountSession,
    vault: TokenVault,
    result: PublishResult,
) -> None:
    now = utcnow()
    async with context.session_factory() as session, session.begin():
        # Whoever holds the lease now, the post is out: a second worker that took over an expired
        # lease finds it published and its own delivery is the receiver's duplicate to drop.
        done = await session.execute(
            update(Post)
            .where(Post.id == post.id, Post.status == "publishing")
            .values(
                status="published",
                external_post_id=result.external_post_id,
                external_url=result.external_url,
                published_at=now,
                lease_owner=None,
                lease_expires_at=None,
                error=None,
                updated_at=now,
            )
            .execution_options(synchronize_session=False)
        )
        if done.rowcount == 1 and post.job_id is not None:  # type: ignore[attr-defined]
            await session.execute(
                update(Job)
                .where(Job.id == post.job_id)
                .values(
                    status="completed",
                    progress=100,
                    completed_at=now,
                    lease_owner=None,
                    billing_status="charged" if post.credits else "not_charged",
                    output={
                        "post_id": str(post.id),
                        "external_post_id": result.external_post_id,
                        "external_url": result.external_url,
                    },
                )
                .execution_options(synchronize_session=False)
            )
        await _store_tokens(session, account, view, vault)
        if done.rowcount == 1 and post.plan_id is not None:  # type: ignore[attr-defined]
            await complete_plan_if_done(session, post.plan_id)


async def _record_failure(
    context: WorkerContext,
    post: Post,
    account: ConnectedAccount,
    view: AccountSession,
    vault: TokenVault,
    failure: PublishFailed,
) -> None:
    delays: Sequence[int] = context.settings.distribution.retry_delays
    failures = post.failures + 1
    if failure.retryable and failures <= len(delays):
        now = utcnow()
        async with context.session_factory() as session, session.begin():
            await session.execute(
                update(Post)
                .where(Post.id == post.id, Post.status == "publishing", Post.lease_owner == context.worker_id)
                .values(
                    status="scheduled",
                    due_at=now + timedelta(seconds=delays[failures - 1]),
                    failures=failures,
                    error=failure.message,
                    lease_owner=None,
                    lease_expires_at=None,
                    updated_at=now,
                )
                .execution_options(synchronize_session=False)
            )
            if post.job_id is not None:
                await session.execute(
                    update(Job)
                    .where(Job.id == post.job_id)
                    .values(status="pending", lease_owner=None, error=failure.message)
                    .execution_options(synchronize_session=False)
                )
            await _store_tokens(session, account, view, vault)
        return
    if failure.authentication:
        async with context.session_factory() as session, session.begin():
            await session.execute(
                update(ConnectedAccount)
                .where(ConnectedAccount.id == account.id)
                .values(status="error", error=failure.message, updated_at=utcnow())
                .execution_options(synchronize_session=False)
            )
    await _finish_failed(
        context,
        post,
        failure.message,
        reason="authentication_failed" if failure.authentication else "publish_failed",
        failures=failures if failure.retryable else post.failures,
    )


async def _finish_failed(
    context: WorkerContext, post: Post, message: str, *, reason: str, failures: int | None = None
) -> None:
    now = utcnow()
    async with context.session_factory() as session, session.begin():
        done = await session.execute(
            update(Post)
            .where(Post.id == post.id, Post.status == "publishing", Post.lease_owner == context.worker_id)
            .values(
                status="failed",
                error=message,
                lease_owner=None,
                lease_expires_at=None,
                updated_at=now,
                failures=failures if failures is not None else post.failures,
            )
            .execution_options(synchronize_session=False)
        )
        if done.rowcount != 1:  # type: ignore[attr-defined]
            return  # another worker took the post over; it decides
        fresh = await session.get(Post, post.id)
        assert fresh is not None
        await settle_failed_or_cancelled(session, fresh, job_status="failed", reason=reason)
        if post.job_id is not None:
            await session.execute(
                update(Job)
                .where(Job.id == post.job_id)
                .values(error=message)
                .execution_options(synchronize_session=False)
            )
        if post.plan_id is not None:
            await complete_plan_if_done(session, post.plan_id)


async def _store_tokens(
    session: AsyncSession, account: ConnectedAccount, view: AccountSession, vault: TokenVault
) -> None:
    if not view.changed:
        return
    await session.execute(
        update(ConnectedAccount)
        .where(ConnectedAccount.id == account.id)
        .values(secret=vault.seal(view.secrets), updated_at=utcnow())
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
