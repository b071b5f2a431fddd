"""The post lifecycle: schedule (idempotently), reschedule, cancel, list; one row per platform (CATALOG.md §10).

Idempotency lives in `idempotency`, the rules a post must satisfy in `rules`, and turning media references
into stored media in the media domain's service.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.distribution import idempotency, rules

# Connected accounts and posting slots have modules of their own; other domains reach them through these names.
from toolhost.domains.distribution.accounts import canonical_platform as canonical_platform
from toolhost.domains.distribution.accounts import is_usable as is_usable
from toolhost.domains.distribution.accounts import list_for_project as list_for_project
from toolhost.domains.distribution.accounts import route as route
from toolhost.domains.distribution.accounts import session_of as session_of
from toolhost.domains.distribution.accounts import store_refreshed as store_refreshed
from toolhost.domains.distribution.idempotency import ScheduledPlanPost as ScheduledPlanPost
from toolhost.domains.distribution.models import ConnectedAccount, Post
from toolhost.domains.distribution.slots import SlotPlanner as SlotPlanner
from toolhost.domains.distribution.slots import slot_planner as slot_planner
from toolhost.domains.media import service as media_service
from toolhost.platform import jobs as platform_jobs
from toolhost.platform.dates import iso
from toolhost.platform.jobs import Job
from toolhost.platform.results import Conflict, NotFound, ValidationFailed
from toolhost.providers import platforms as social_platforms
from toolhost.providers.fetch import Fetcher

if TYPE_CHECKING:
    from toolhost.config import Settings

CANCELLABLE = ("draft", "pending", "scheduled")
RESCHEDULABLE = ("pending", "scheduled")


@dataclass(frozen=True, slots=True)
class Rescheduled:
    """A post moved to a new time."""

    post_id: uuid.UUID
    project_id: uuid.UUID
    previous_scheduled_at: datetime | None
    scheduled_at: datetime


@dataclass(frozen=True, slots=True)
class Cancellation:
    """A post cancelled now, or found already cancelled (then nothing is refunded again)."""

    post_id: uuid.UUID
    refunded_credits: int
    already_cancelled: bool


@dataclass(frozen=True)
class PostRequest:
    """One scheduling request after validation: what every platform's post row is made of."""

    project_id: uuid.UUID
    account_id: uuid.UUID
    routed: dict[str, ConnectedAccount]
    caption: str
    title: str | None
    hashtags: list[str]
    media: list[dict[str, Any]]
    media_type: str | None
    metadata: dict[str, Any]
    scheduled_at: datetime | None
    key: str
    credits_per_post: int
    plan_id: uuid.UUID | None = None
    plan_post_id: str | None = None


async def create_posts(*, session: AsyncSession, request: PostRequest) -> dict[str, tuple[Post, Job]]:
    """One post row (pending or scheduled) and one publish job per platform, in the caller's transaction."""
    now = utcnow()
    created: dict[str, tuple[Post, Job]] = {}
    for platform, account in request.routed.items():
        job = await platform_jobs.enqueue(
            session=session,
            account_id=request.account_id,
            project_id=request.project_id,
            job_type="publish",
            tool_name="schedule_post",
            reserved_credits=request.credits_per_post,
            job_input={"platform": platform},
            run_after=request.scheduled_at or now,
        )
        post = Post(
            project_id=request.project_id,
            account_id=request.account_id,
            connected_account_id=account.id,
            job_id=job.id,
            platform=platform,
            status="scheduled" if request.scheduled_at else "pending",
            caption=request.caption,
            title=request.title,
            hashtags=request.hashtags,
            media=request.media,
            media_type=request.media_type,
            platform_metadata=request.metadata,
            scheduled_at=request.scheduled_at,
            due_at=request.scheduled_at or now,
            idempotency_key=f"{request.key}-{platform}",
            credits=request.credits_per_post,
            plan_id=request.plan_id,
            plan_post_id=request.plan_post_id,
        )
        session.add(post)
        await session.flush()
        job.input = {"platform": platform, "post_id": str(post.id)}
        created[platform] = (post, job)
    return created


def _plan_post_fingerprint(key: str) -> str:
    # A plan post's key is derived from the post itself, so the key alone identifies the request.
    return idempotency.request_hash({"key": key})


async def previous_plan_post(*, session: AsyncSession, project_id: uuid.UUID, key: str) -> ScheduledPlanPost | None:
    """The plan post already scheduled under this key in the last 7 days, or None."""
    previous = await idempotency.replay(
        session=session, project_id=project_id, key=key, fingerprint=_plan_post_fingerprint(key)
    )
    return ScheduledPlanPost.from_document(previous) if previous is not None else None


async def schedule_plan_post(
    *,
    session: AsyncSession,
    settings: Settings,
    fetcher: Fetcher,
    charge: Callable[[int], Awaitable[None]],
    account_id: uuid.UUID,
    project_id: uuid.UUID,
    accessible_project_ids: Sequence[uuid.UUID],
    post: Mapping[str, Any],
    account: ConnectedAccount,
    schedule_at: str,
    key: str,
    plan_id: uuid.UUID | None,
) -> ScheduledPlanPost:
    """One plan post (as the plan stores it) scheduled as schedule_post would, 1 credit, in a savepoint.

    The result is remembered under `key` (see previous_plan_post). schedule_content_plan and
    run_content_pipeline both schedule plan posts this way; each handles the errors it raises in its own terms.
    """
    platform = str(post["platform"])
    scheduled_at = rules.future_datetime(schedule_at, "schedule_at")
    media_url = str(post.get("media_url") or "")
    is_key = bool(media_url) and not media_url.lower().startswith(("http://", "https://"))
    # Before the savepoint: rehosting a URL is outside work, which ends the unit of work (no savepoint open).
    media = await media_service.resolve_references(
        session=session,
        settings=settings,
        fetcher=fetcher,
        account_id=account_id,
        project_id=project_id,
        accessible_project_ids=accessible_project_ids,
        urls=[media_url] if media_url and not is_key else [],
        keys=[media_url] if is_key else [],
        job_ids=[],
        auto_rehost=True,
    )
    async with session.begin_nested():
        hashtags = rules.normalize_hashtags(post.get("hashtags"))
        media_type = rules.infer_media_type(media, None)
        metadata = rules.with_disclosure_defaults(post.get("platform_metadata") or {})
        caption = str(post.get("caption") or "")
        rules.check_platform_rules(
            platforms=[platform],
            text=rules.published_text(caption, hashtags),
            title=post.get("title"),
            media_type=media_type,
            media=media,
            metadata=metadata,
        )
        await charge(1)
        created = await create_posts(
            session=session,
            request=PostRequest(
                project_id=project_id,
                account_id=account_id,
                routed={platform: account},
                caption=caption,
                title=post.get("title"),
                hashtags=hashtags,
                media=media.entries,
                media_type=media_type,
                metadata=metadata,
                scheduled_at=scheduled_at,
                key=key,
                credits_per_post=1,
                plan_id=plan_id,
                plan_post_id=str(post.get("id")),
            ),
        )
        row, job = created[platform]
        result = ScheduledPlanPost(
            plan_post_id=post.get("id"),
            platform=platform,
            post_id=row.id,
            job_id=job.id,
            scheduled_at=schedule_at,
        )
        record = await idempotency.remember(
            session=session, project_id=project_id, key=key, fingerprint=_plan_post_fingerprint(key)
        )
        if record is not None:
            record.payload = result.document()
        await session.flush()
    return result


async def post_of_project(session: AsyncSession, post_id: str, project_ids: Sequence[uuid.UUID]) -> uuid.UUID | None:
    """The object lookup of `post_id`: the post's project, searched only among `project_ids`."""
    try:
        parsed = uuid.UUID(post_id)
    except ValueError:
        return None
    if not project_ids:
        return None
    return await session.scalar(select(Post.project_id).where(Post.id == parsed, Post.project_id.in_(project_ids)))


async def _locked_post(session: AsyncSession, post_id: str, project_id: uuid.UUID) -> Post:
    query = select(Post).where(Post.id == uuid.UUID(post_id), Post.project_id == project_id)
    if session.get_bind().dialect.name == "postgresql":
        # The publish job's row first, then the post's, in the order the worker's claim takes them, so the
        # two never wait on each other: a claim in progress makes this wait, then see the post publishing.
        job_id = await session.scalar(select(Post.job_id).where(Post.id == uuid.UUID(post_id)))
        if job_id is not None:
            await session.execute(select(Job.id).where(Job.id == job_id).with_for_update())
        query = query.with_for_update()
    post = await session.scalar(query.execution_options(populate_existing=True))
    if post is None:
        raise NotFound(f"No post found with ID {post_id}")
    return post


async def reschedule(
    *,
    session: AsyncSession,
    project_id: uuid.UUID,
    post_id: str,
    scheduled_at: datetime,
    expected_scheduled_at: datetime | None,
) -> Rescheduled:
    """Moves a pending/scheduled post to a new future time with one conditional update."""
    new_time = rules.require_future(scheduled_at, "scheduled_at")
    post = await _locked_post(session, post_id, project_id)
    if post.status == "publishing":
        raise Conflict("the post is being published now", code="publishing_in_progress", current_status=post.status)
    if post.status not in RESCHEDULABLE:
        raise Conflict(
            f"a {post.status} post cannot be rescheduled",
            code="not_reschedulable",
            current_status=post.status,
        )
    if expected_scheduled_at is not None and post.scheduled_at != expected_scheduled_at:
        raise Conflict(
            "the post's scheduled time changed since you read it",
            code="schedule_conflict",
            current_status=post.status,
            scheduled_at=iso(post.scheduled_at),
        )
    previous = post.scheduled_at
    result = await session.execute(
        update(Post)
        .where(Post.id == post.id, Post.status.in_(RESCHEDULABLE))
        .values(status="scheduled", scheduled_at=new_time, due_at=new_time, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    if result.rowcount != 1:  # type: ignore[attr-defined]
        raise Conflict("the post is being published now", code="publishing_in_progress", current_status="publishing")
    if post.job_id is not None:
        await session.execute(
            update(Job)
            .where(Job.id == post.job_id, Job.status == "pending")
            .values(run_after=new_time, updated_at=utcnow())
            .execution_options(synchronize_session=False)
        )
    return Rescheduled(post_id=post.id, project_id=project_id, previous_scheduled_at=previous, scheduled_at=new_time)


async def cancel(*, session: AsyncSession, project_id: uuid.UUID, post_id: str) -> Cancellation:
    """Cancels a draft/pending/scheduled post, closes its job and refunds its credit, in one transaction."""
    post = await _locked_post(session, post_id, project_id)
    if post.status == "cancelled":
        return Cancellation(
            post_id=post.id, refunded_credits=post.credits if post.refunded else 0, already_cancelled=True
        )
    if post.status == "publishing":
        raise Conflict("the post is being published now", code="publishing_in_progress", current_status=post.status)
    if post.status not in CANCELLABLE:
        raise Conflict(f"a {post.status} post cannot be cancelled", code="not_cancellable", current_status=post.status)
    result = await session.execute(
        update(Post)
        .where(Post.id == post.id, Post.status.in_(CANCELLABLE))
        .values(status="cancelled", refunded=True, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    if result.rowcount != 1:  # type: ignore[attr-defined]
        raise Conflict("the post is being published now", code="publishing_in_progress", current_status="publishing")
    job = await session.get(Job, post.job_id) if post.job_id is not None else None
    refunded = (await platform_jobs.cancel(session, job) or 0) if job is not None else 0
    return Cancellation(post_id=post.id, refunded_credits=refunded, already_cancelled=False)


async def list_recent(
    *,
    session: AsyncSession,
    project_id: uuid.UUID,
    platform: str | None,
    status: str | None,
    days: int,
    limit: int,
) -> Sequence[Post]:
    """The project's posts created in the last `days`, newest first."""
    query = select(Post).where(Post.project_id == project_id, Post.created_at >= utcnow() - timedelta(days=days))
    if platform:
        query = query.where(Post.platform == platform)
    if status == "scheduled":
        query = query.where(Post.status.in_(("pending", "scheduled", "publishing")))
    elif status:
        query = query.where(Post.status == status)
    return (await session.scalars(query.order_by(Post.created_at.desc(), Post.id).limit(limit))).all()


def request_key(
    *,
    settings: Settings,
    project_id: uuid.UUID,
    platforms: Sequence[str],
    caption: str | None,
    title: str | None,
    attribution: bool,
    schedule_at: datetime | None,
    media_url: str | None,
    media_urls: Sequence[str] | None,
    r2_key: str | None,
    r2_keys: Sequence[str] | None,
    job_id: str | None,
    job_ids: Sequence[str] | None,
    idempotency_key: str | None,
) -> str:
    """schedule_post's idempotency key: the one given, else derived from the request (CATALOG.md §10).

    The request must have a caption or a title and media of one family, or it has no key (validation_error).
    """
    final_caption = rules.final_caption(settings, caption, attribution)
    title = (title or "").strip() or None
    if not final_caption and not title:
        raise ValidationFailed("give a caption or a title", field_errors=[{"path": "caption", "message": "required"}])
    media_reference = rules.single_media_family(
        media_url=media_url, media_urls=media_urls, r2_key=r2_key, r2_keys=r2_keys, job_id=job_id, job_ids=job_ids
    )
    return idempotency_key or idempotency.derived_key(
        project_id=project_id,
        platforms=list(dict.fromkeys(platforms)),
        caption=final_caption,
        title=title,
        media=media_reference,
        schedule_at=iso(schedule_at),
    )


async def schedule(
    *,
    session: AsyncSession,
    settings: Settings,
    fetcher: Fetcher,
    account_id: uuid.UUID,
    project_id: uuid.UUID,
    accessible_project_ids: Sequence[uuid.UUID],
    platforms: Sequence[str],
    caption: str | None,
    title: str | None,
    attribution: bool,
    hashtags: Sequence[str] | None,
    schedule_at: datetime | None,
    media_url: str | None,
    media_urls: Sequence[str] | None,
    r2_key: str | None,
    r2_keys: Sequence[str] | None,
    job_id: str | None,
    job_ids: Sequence[str] | None,
    media_type: str | None,
    auto_rehost: bool,
    routing_account_id: str | None,
    routing_account_ids: dict[str, str],
    platform_metadata: dict[str, Any],
    key: str,
    claimant: str,
    credits_debited: int,
) -> idempotency.ScheduledPosts:
    """schedule_post once its call holds the request's key (`request_key`, claimed by `claimant`): every rule
    first, then the rows, and the answer stored under the key in the same transaction."""
    final_caption = rules.final_caption(settings, caption, attribution)
    title = (title or "").strip() or None
    platforms = list(dict.fromkeys(platforms))
    scheduled_at = rules.require_future(schedule_at, "schedule_at") if schedule_at else None
    routed = await route(
        session=session,
        project_id=project_id,
        platforms=platforms,
        account_id=routing_account_id,
        account_ids=routing_account_ids or None,
    )
    media = await media_service.resolve_references(
        session=session,
        settings=settings,
        fetcher=fetcher,
        account_id=account_id,
        project_id=project_id,
        accessible_project_ids=accessible_project_ids,
        urls=media_urls or ([media_url] if media_url else []),
        keys=r2_keys or ([r2_key] if r2_key else []),
        job_ids=job_ids or ([job_id] if job_id else []),
        auto_rehost=auto_rehost,
    )
    media_type = rules.infer_media_type(media, media_type)
    normalized_hashtags = rules.normalize_hashtags(hashtags)
    metadata = rules.with_disclosure_defaults(platform_metadata)
    rules.check_platform_rules(
        platforms=platforms,
        text=rules.published_text(final_caption, normalized_hashtags),
        title=title,
        media_type=media_type,
        media=media,
        metadata=metadata,
    )
    created = await create_posts(
        session=session,
        request=PostRequest(
            project_id=project_id,
            account_id=account_id,
            routed=routed,
            caption=final_caption,
            title=title,
            hashtags=normalized_hashtags,
            media=media.entries,
            media_type=media_type,
            metadata=metadata,
            scheduled_at=scheduled_at,
            key=key,
            credits_per_post=1 if credits_debited else 0,
        ),
    )
    answer = idempotency.ScheduledPosts(
        posts={
            social_platforms.RULES[platform].display_name: idempotency.PlatformPost(post_id=post.id, job_id=job.id)
            for platform, (post, job) in created.items()
        },
        scheduled_at=iso(scheduled_at),
        idempotency_key=key,
    )
    await idempotency.answer(
        session=session, project_id=project_id, key=key, claimant=claimant, document=answer.document()
    )
    return answer
