"""Posts: schedule (idempotently), reschedule, cancel, list; one row per platform (CATALOG.md §10)."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.db.session import end_unit_of_work
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount, IdempotencyRecord, Post
from toolhost.domains.media import service as media_service
from toolhost.platform import jobs as platform_jobs
from toolhost.platform.dates import iso, parse_iso
from toolhost.platform.jobs import Job
from toolhost.platform.results import Conflict, NotFound, ValidationFailed
from toolhost.providers import platforms as social_platforms
from toolhost.providers.fetch import Fetcher

if TYPE_CHECKING:
    from toolhost.config import Settings

IDEMPOTENCY_DAYS = 7
VIDEO_EXTENSIONS = {"mp4", "mov", "m4v", "webm", "avi", "mkv", "mpeg", "mpg"}
IMAGE_EXTENSIONS = {"jpg", "jpeg", "png", "webp", "gif", "avif", "heic"}
ACTIVE = ("draft", "pending", "scheduled")
CANCELLABLE = ("draft", "pending", "scheduled")
RESCHEDULABLE = ("pending", "scheduled")


def parse_datetime(value: str, path: str) -> datetime:
    """An ISO-8601 datetime with an offset (Z allowed), as UTC; anything else is validation_error."""
    try:
        moment = parse_iso(value)
    except ValueError as error:
        raise ValidationFailed(
            f"{path} is not an ISO-8601 datetime",
            field_errors=[{"path": path, "message": "not an ISO-8601 datetime"}],
        ) from error
    if moment.tzinfo is None:
        raise ValidationFailed(
            f"{path} needs a UTC offset (e.g. Z or +02:00)",
            field_errors=[{"path": path, "message": "missing UTC offset"}],
        )
    return moment.astimezone(UTC)


def future_datetime(value: str, path: str) -> datetime:
    """A datetime that must lie in the future."""
    moment = parse_datetime(value, path)
    if moment <= utcnow():
        raise ValidationFailed(
            f"{path} is in the past; give a future time or omit it to publish now",
            field_errors=[{"path": path, "message": "must be in the future"}],
        )
    return moment


def derived_key(
    *,
    project_id: uuid.UUID,
    platforms: Sequence[str],
    caption: str,
    title: str | None,
    media: Any,
    schedule_at: str | None,
) -> str:
    """The idempotency key of a schedule_post call without one (CATALOG.md §10)."""
    document = {
        "projectId": str(project_id),
        "platforms": sorted(platforms),
        "caption": caption or "",
        "title": title or "",
        "media": media,
        "scheduleAt": schedule_at,
    }
    return hashlib.sha256(json.dumps(document, separators=(",", ":"), sort_keys=True).encode()).hexdigest()[:64]


def request_hash(arguments: dict[str, Any]) -> str:
    """Fingerprint of a request, to tell a repeat from a different request under the same key."""
    return hashlib.sha256(
        json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str).encode()
    ).hexdigest()


async def replay(*, session: AsyncSession, project_id: uuid.UUID, key: str, fingerprint: str) -> dict[str, Any] | None:
    """The stored answer of a key used in the last 7 days, or None; a different request is conflict."""
    record = await session.scalar(
        select(IdempotencyRecord).where(IdempotencyRecord.project_id == project_id, IdempotencyRecord.key == key)
    )
    if record is None:
        return None
    if record.expires_at <= utcnow():
        await session.delete(record)
        await session.flush()
        return None
    if record.request_hash != fingerprint:
        raise Conflict(
            "this idempotency_key was already used for a different request",
            code="idempotency_key_reused",
            recover_with="use a new idempotency_key",
        )
    return dict(record.payload)


async def remember(
    *, session: AsyncSession, project_id: uuid.UUID, key: str, fingerprint: str
) -> IdempotencyRecord | None:
    """Claims a key for this request; None when a concurrent request committed it first (replay that)."""
    record = IdempotencyRecord(
        project_id=project_id,
        key=key,
        request_hash=fingerprint,
        payload={},
        expires_at=utcnow() + timedelta(days=IDEMPOTENCY_DAYS),
    )
    try:
        async with session.begin_nested():
            session.add(record)
            await session.flush()
    except IntegrityError:
        return None
    return record


@dataclass
class ResolvedMedia:
    """Media of a post: stored entries ({r2_key, content_type}) or external https URLs ({url})."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)


def _extension(name: str) -> str:
    return PurePosixPath(urlsplit(name).path).suffix.lstrip(".").lower()


def infer_media_type(media: ResolvedMedia, declared: str | None) -> str | None:
    """IMAGE, VIDEO or CAROUSEL_ALBUM; None without media."""
    if declared:
        return declared
    if not media.entries:
        return None
    if len(media.entries) > 1:
        return "CAROUSEL_ALBUM"
    entry = media.entries[0]
    content_type = entry.get("content_type") or ""
    extension = _extension(media.names[0]) if media.names else ""
    if content_type.startswith("video/") or extension in VIDEO_EXTENSIONS:
        return "VIDEO"
    if content_type.startswith("image/") or extension in IMAGE_EXTENSIONS:
        return "IMAGE"
    raise ValidationFailed(
        "media_type cannot be inferred from the media; give media_type",
        field_errors=[{"path": "media_type", "message": "required for this media"}],
    )


async def resolve_media(
    *,
    session: AsyncSession,
    settings: Settings,
    fetcher: Fetcher,
    account_id: uuid.UUID,
    project_id: uuid.UUID,
    accessible_project_ids: Sequence[uuid.UUID],
    urls: Sequence[str],
    keys: Sequence[str],
    job_ids: Sequence[str],
    auto_rehost: bool,
) -> ResolvedMedia:
    """Checks every media reference of a post; URLs are rehosted into the store unless auto_rehost."""
    media = ResolvedMedia()
    for key in keys:
        stored = await media_service.find(
            session=session, key=key, account_id=account_id, accessible_project_ids=accessible_project_ids
        )
        media.entries.append({"r2_key": stored.key, "content_type": stored.content_type})
        media.names.append(stored.key)
    for job_id in job_ids:
        try:
            parsed = uuid.UUID(job_id)
        except ValueError as error:
            raise NotFound(f"No job found with ID {job_id}") from error
        job = await session.get(Job, parsed)
        if job is None or job.project_id not in accessible_project_ids:
            raise NotFound(f"No job found with ID {job_id}")
        if job.status != "completed":
            raise ValidationFailed(
                f"job {job_id} is {job.status}; poll check_status first",
                recover_with="poll check_status until the job is completed",
                current_status=job.status,
            )
        stored = await media_service.job_output(
            session=session, job_id=parsed, accessible_project_ids=accessible_project_ids
        )
        media.entries.append({"r2_key": stored.key, "content_type": stored.content_type})
        media.names.append(stored.key)
    for index, url in enumerate(urls):
        path = "media_url" if len(urls) == 1 else f"media_urls.{index}"
        if auto_rehost:
            upload = await media_service.upload(
                session=session,
                settings=settings,
                fetcher=fetcher,
                account_id=account_id,
                project_id=project_id,
                source=url,
                file_data=None,
                file_name=None,
                content_type=None,
            )
            media.entries.append({"r2_key": upload.media.key, "content_type": upload.media.content_type})
        else:
            if not url.lower().startswith("https://"):
                raise ValidationFailed(
                    "media URLs handed to a platform must be https (or set auto_rehost)",
                    field_errors=[{"path": path, "message": "not https"}],
                )
            await end_unit_of_work(session)
            await fetcher.check_url(url, https_only=True)
            media.entries.append({"url": url})
        media.names.append(url)
    return media


def final_caption(settings: Settings, caption: str | None, attribution: bool) -> str:
    """The caption as published: with the operator's attribution line when asked."""
    text = (caption or "").strip()
    if attribution:
        text = f"{text}\n\n{settings.distribution.attribution_text}" if text else settings.distribution.attribution_text
    return text


def normalize_hashtags(hashtags: Sequence[str] | None) -> list[str]:
    """Hashtags with their "#", empty ones dropped."""
    return [tag if tag.startswith("#") else f"#{tag}" for tag in (tag.strip() for tag in hashtags or []) if tag]


def published_text(caption: str, hashtags: Sequence[str]) -> str:
    """Caption plus the hashtags not already in it: what the platform's limit applies to."""
    missing = [tag for tag in hashtags if tag.lower() not in caption.lower()]
    return "\n\n".join(part for part in (caption, " ".join(missing)) if part)


def check_platform_rules(
    *,
    platforms: Sequence[str],
    text: str,
    title: str | None,
    media_type: str | None,
    media_count: int,
    metadata: dict[str, Any],
) -> None:
    """Caption limits, required media and titles, TikTok's privacy rules (CATALOG.md §1.5, §10)."""
    too_long = [platform for platform in platforms if len(text) > social_platforms.RULES[platform].caption_limit]
    if too_long:
        raise ValidationFailed(
            "the caption is over the limit of "
            + ", ".join(f"{p} ({social_platforms.RULES[p].caption_limit})" for p in too_long),
            field_errors=[{"path": "caption", "message": f"too long for {', '.join(too_long)}"}],
        )
    if media_type == "CAROUSEL_ALBUM" and not 2 <= media_count <= 10:
        raise ValidationFailed(
            "CAROUSEL_ALBUM needs 2 to 10 media items",
            field_errors=[{"path": "media_type", "message": "needs 2-10 items"}],
        )
    missing_media = [
        platform for platform in platforms if social_platforms.RULES[platform].needs_media and media_count == 0
    ]
    if missing_media:
        raise ValidationFailed(
            f"{', '.join(missing_media)} need media to publish",
            recover_with="add media_url, r2_key or job_id",
            field_errors=[{"path": "media_url", "message": f"required for {', '.join(missing_media)}"}],
        )
    if "youtube" in platforms and not (title or (metadata.get("youtube") or {}).get("title")):
        raise ValidationFailed(
            "youtube needs a title", field_errors=[{"path": "title", "message": "required for youtube"}]
        )
    tiktok = metadata.get("tiktok") or {}
    if "tiktok" in platforms:
        if not tiktok.get("privacy_status") and not tiktok.get("use_inbox"):
            raise ValidationFailed(
                "tiktok needs platform_metadata.tiktok.privacy_status (or use_inbox)",
                code="TIKTOK_PRIVACY_LEVEL_REQUIRED",
                field_errors=[{"path": "platform_metadata.tiktok.privacy_status", "message": "required"}],
            )
        if tiktok.get("brand_content") and tiktok.get("privacy_status") == "SELF_ONLY":
            raise ValidationFailed(
                "branded content cannot be SELF_ONLY on tiktok",
                code="TIKTOK_BRANDED_SELF_ONLY_CONFLICT",
                field_errors=[{"path": "platform_metadata.tiktok.privacy_status", "message": "not SELF_ONLY"}],
            )


def with_disclosure_defaults(metadata: dict[str, Any]) -> dict[str, Any]:
    """AI-disclosure flags default to true unless the caller set them (CATALOG.md §10)."""
    result = {name: dict(value) if isinstance(value, dict) else value for name, value in metadata.items()}
    for platform, flag in (
        ("tiktok", "is_ai_generated"),
        ("instagram", "is_ai_generated"),
        ("youtube", "contains_synthetic_media"),
    ):
        options = result.setdefault(platform, {}) or {}
        if options.get(flag) is None:
            options[flag] = True
        result[platform] = options
    return result


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


async def schedule_plan_post(
    *,
    session: AsyncSession,
    settings: Settings,
    fetcher: Fetcher,
    charge: Callable[[int], Awaitable[None]],
    account_id: uuid.UUID,
    project_id: uuid.UUID,
    accessible_project_ids: Sequence[uuid.UUID],
    post: dict[str, Any],
    account: ConnectedAccount,
    schedule_at: str,
    key: str,
    fingerprint: str,
    plan_id: uuid.UUID | None,
) -> dict[str, Any]:
    """One plan post scheduled as schedule_post would, 1 credit, in a savepoint; remembered under its key.

    schedule_content_plan and run_content_pipeline both schedule plan posts this way; each handles the
    errors it raises in its own terms.
    """
    platform = str(post["platform"])
    scheduled_at = future_datetime(schedule_at, "schedule_at")
    media_url = str(post.get("media_url") or "")
    is_key = bool(media_url) and not media_url.lower().startswith(("http://", "https://"))
    # Before the savepoint: rehosting a URL is outside work, which ends the unit of work (no savepoint open).
    media = await resolve_media(
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
        hashtags = normalize_hashtags(post.get("hashtags"))
        media_type = infer_media_type(media, None)
        metadata = with_disclosure_defaults(post.get("platform_metadata") or {})
        caption = str(post.get("caption") or "")
        check_platform_rules(
            platforms=[platform],
            text=published_text(caption, hashtags),
            title=post.get("title"),
            media_type=media_type,
            media_count=len(media.entries),
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
        result = {
            "id": post.get("id"),
            "platform": platform,
            "success": True,
            "post_id": str(row.id),
            "job_id": str(job.id),
            "scheduled_at": schedule_at,
        }
        record = await remember(session=session, project_id=project_id, key=key, fingerprint=fingerprint)
        if record is not None:
            record.payload = result
        await session.flush()
    return result


def schedule_payload(created: dict[str, tuple[Post, Job]], scheduled_at: datetime | None, key: str) -> dict[str, Any]:
    """The schedule_post payload for the created rows."""
    return {
        "success": True,
        "results": {
            social_platforms.RULES[platform].display_name: {
                "success": True,
                "jobId": str(job.id),
                "postId": str(post.id),
            }
            for platform, (post, job) in created.items()
        },
        "scheduledAt": iso(scheduled_at),
        "idempotency_key": key,
    }


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
    scheduled_at: str,
    expected_scheduled_at: str | None,
) -> dict[str, Any]:
    """Moves a pending/scheduled post to a new future time with one conditional update."""
    new_time = future_datetime(scheduled_at, "scheduled_at")
    expected = parse_datetime(expected_scheduled_at, "expected_scheduled_at") if expected_scheduled_at else None
    post = await _locked_post(session, post_id, project_id)
    if post.status == "publishing":
        raise Conflict("the post is being published now", code="publishing_in_progress", current_status=post.status)
    if post.status not in RESCHEDULABLE:
        raise Conflict(
            f"a {post.status} post cannot be rescheduled",
            code="not_reschedulable",
            current_status=post.status,
        )
    if expected is not None and post.scheduled_at != expected:
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
    return {
        "success": True,
        "post_id": str(post.id),
        "project_id": str(project_id),
        "previous_scheduled_at": iso(previous),
        "scheduled_at": iso(new_time),
    }


async def cancel(*, session: AsyncSession, project_id: uuid.UUID, post_id: str) -> dict[str, Any]:
    """Cancels a draft/pending/scheduled post, closes its job and refunds its credit, in one transaction."""
    post = await _locked_post(session, post_id, project_id)
    if post.status == "cancelled":
        return {
            "success": True,
            "cancelled": True,
            "post_id": str(post.id),
            "status": "cancelled",
            "refunded_credits": post.credits if post.refunded else 0,
            "already_cancelled": True,
            "message": "The post was already cancelled; nothing was refunded twice.",
        }
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
    return {
        "success": True,
        "cancelled": True,
        "post_id": str(post.id),
        "status": "cancelled",
        "refunded_credits": refunded,
        "message": f"Post cancelled before publication; {refunded} credit(s) refunded.",
    }


async def list_recent(
    *,
    session: AsyncSession,
    project_id: uuid.UUID,
    platform: str | None,
    status: str | None,
    days: int,
    limit: int,
) -> list[dict[str, Any]]:
    """The project's posts created in the last `days`, newest first."""
    query = select(Post).where(Post.project_id == project_id, Post.created_at >= utcnow() - timedelta(days=days))
    if platform:
        query = query.where(Post.platform == platform)
    if status == "scheduled":
        query = query.where(Post.status.in_(("pending", "scheduled", "publishing")))
    elif status:
        query = query.where(Post.status == status)
    posts = await session.scalars(query.order_by(Post.created_at.desc(), Post.id).limit(limit))
    return [
        {
            "id": str(post.id),
            "platform": post.platform,
            "status": post.status,
            "title": post.title,
            "external_post_id": post.external_post_id,
            "published_at": iso(post.published_at),
            "scheduled_at": iso(post.scheduled_at),
            "created_at": iso(post.created_at),
            "error": post.error,
        }
        for post in posts
    ]


async def schedule(
    *,
    session: AsyncSession,
    settings: Settings,
    fetcher: Fetcher,
    account_id: uuid.UUID,
    project_id: uuid.UUID,
    accessible_project_ids: Sequence[uuid.UUID],
    arguments: dict[str, Any],
    credits_debited: int,
) -> tuple[dict[str, Any], bool]:
    """schedule_post: every rule first, then the rows; a repeat of a request returns its first answer.

    Returns the payload and whether it repeats an earlier request (which the caller does not pay for).
    """
    caption = final_caption(settings, arguments.get("caption"), bool(arguments.get("attribution")))
    title = (arguments.get("title") or "").strip() or None
    if not caption and not title:
        raise ValidationFailed("give a caption or a title", field_errors=[{"path": "caption", "message": "required"}])
    platforms = list(dict.fromkeys(arguments["platforms"]))
    families = [
        name
        for name in ("media_url", "media_urls", "r2_key", "r2_keys", "job_id", "job_ids")
        if arguments.get(name) is not None
    ]
    if len(families) > 1:
        raise ValidationFailed(
            "give media in one family only: " + ", ".join(families),
            field_errors=[{"path": name, "message": "one media family only"} for name in families],
        )
    media_reference = next(
        (
            arguments[name]
            for name in ("media_urls", "media_url", "r2_keys", "r2_key", "job_ids", "job_id")
            if arguments.get(name) is not None
        ),
        None,
    )
    key = arguments.get("idempotency_key") or derived_key(
        project_id=project_id,
        platforms=platforms,
        caption=caption,
        title=title,
        media=media_reference,
        schedule_at=arguments.get("schedule_at"),
    )
    fingerprint = request_hash({name: value for name, value in arguments.items() if name != "response_format"})
    previous = await replay(session=session, project_id=project_id, key=key, fingerprint=fingerprint)
    if previous is not None:
        return previous, True
    scheduled_at = future_datetime(arguments["schedule_at"], "schedule_at") if arguments.get("schedule_at") else None
    routed = await accounts_service.route(
        session=session,
        project_id=project_id,
        platforms=platforms,
        account_id=arguments.get("account_id"),
        account_ids=arguments.get("account_ids"),
    )
    media = await resolve_media(
        session=session,
        settings=settings,
        fetcher=fetcher,
        account_id=account_id,
        project_id=project_id,
        accessible_project_ids=accessible_project_ids,
        urls=arguments.get("media_urls") or ([arguments["media_url"]] if arguments.get("media_url") else []),
        keys=arguments.get("r2_keys") or ([arguments["r2_key"]] if arguments.get("r2_key") else []),
        job_ids=arguments.get("job_ids") or ([arguments["job_id"]] if arguments.get("job_id") else []),
        auto_rehost=bool(arguments.get("auto_rehost", True)),
    )
    media_type = infer_media_type(media, arguments.get("media_type"))
    hashtags = normalize_hashtags(arguments.get("hashtags"))
    metadata = with_disclosure_defaults(arguments.get("platform_metadata") or {})
    check_platform_rules(
        platforms=platforms,
        text=published_text(caption, hashtags),
        title=title,
        media_type=media_type,
        media_count=len(media.entries),
        metadata=metadata,
    )
    record = await remember(session=session, project_id=project_id, key=key, fingerprint=fingerprint)
    if record is None:  # a concurrent identical request committed first: answer as it did
        previous = await replay(session=session, project_id=project_id, key=key, fingerprint=fingerprint)
        return previous or {}, True
    created = await create_posts(
        session=session,
        request=PostRequest(
            project_id=project_id,
            account_id=account_id,
            routed=routed,
            caption=caption,
            title=title,
            hashtags=hashtags,
            media=media.entries,
            media_type=media_type,
            metadata=metadata,
            scheduled_at=scheduled_at,
            key=key,
            credits_per_post=1 if credits_debited else 0,
        ),
    )
    payload = schedule_payload(created, scheduled_at, key)
    record.payload = payload
    await session.flush()
    return payload, False
