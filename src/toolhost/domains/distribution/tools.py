"""The distribution tools (CATALOG.md §10) and schedule_content_plan / find_next_slots (§7)."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution import idempotency, plans, service, slots
from toolhost.domains.distribution.models import ConnectedAccount
from toolhost.domains.distribution.schemas import (
    CancelScheduledPostIn,
    CancelScheduledPostOut,
    FindNextSlotsIn,
    FindNextSlotsOut,
    ListConnectedAccountsIn,
    ListConnectedAccountsOut,
    ListRecentPostsIn,
    ListRecentPostsOut,
    PlatformResult,
    RecentPost,
    ReschedulePostIn,
    ReschedulePostOut,
    ScheduleContentPlanIn,
    ScheduleContentPlanOut,
    SchedulePostIn,
    SchedulePostOut,
    Slot,
    StartPlatformConnectionIn,
    StartPlatformConnectionOut,
    WaitForConnectionIn,
    WaitForConnectionOut,
)
from toolhost.platform import scopes
from toolhost.platform.context import ToolContext
from toolhost.platform.dates import iso
from toolhost.platform.registry import Idempotency, connected_accounts_probe, object_lookup, tool
from toolhost.providers.fetch import Fetcher

POST_LOOKUP = object_lookup("post_id", service.post_of_project)
ACCOUNTS_PROBE = connected_accounts_probe(accounts_service.projects_with_usable_accounts)


def _platform_count(args: SchedulePostIn) -> int:
    return len(set(args.platforms))


def _schedule_key(ctx: ToolContext, args: SchedulePostIn) -> str:
    return service.request_key(
        settings=ctx.settings,
        project_id=ctx.project_id,
        platforms=args.platforms,
        caption=args.caption,
        title=args.title,
        attribution=args.attribution,
        schedule_at=args.schedule_at,
        media_url=args.media_url,
        media_urls=args.media_urls,
        r2_key=args.r2_key,
        r2_keys=args.r2_keys,
        job_id=args.job_id,
        job_ids=args.job_ids,
        idempotency_key=args.idempotency_key,
    )


def _schedule_output(answer: idempotency.ScheduledPosts) -> SchedulePostOut:
    return SchedulePostOut(
        success=True,
        results={
            name: PlatformResult(success=True, jobId=str(post.job_id), postId=str(post.post_id))
            for name, post in answer.posts.items()
        },
        scheduledAt=answer.scheduled_at,
        idempotency_key=answer.idempotency_key,
    )


async def _claim_schedule(ctx: ToolContext, args: SchedulePostIn) -> SchedulePostOut | None:
    stored = await idempotency.claim(
        transaction=ctx.fresh_transaction,
        project_id=ctx.project_id,
        key=_schedule_key(ctx, args),
        # The same key with other arguments is a different request: conflict.
        fingerprint=idempotency.request_hash(
            args.model_dump(mode="json", exclude_none=True, exclude={"response_format"})
        ),
        claimant=ctx.request_id,
        # A claim lapses as an unrenewed credit hold does: only a call whose process died leaves one that long.
        lifetime=timedelta(seconds=ctx.settings.credits.hold_seconds),
    )
    return _schedule_output(idempotency.ScheduledPosts.from_document(stored)) if stored is not None else None


async def _release_schedule(ctx: ToolContext, args: SchedulePostIn) -> None:
    async with ctx.fresh_transaction() as session:
        await idempotency.release(
            session=session, project_id=ctx.project_id, key=_schedule_key(ctx, args), claimant=ctx.request_id
        )


@tool(
    module="distribution",
    scope=scopes.DISTRIBUTE,
    credits=_platform_count,
    units=_platform_count,
    destructive=True,
    open_world=True,
    project="accounts",
    idempotency=Idempotency(claim=_claim_schedule, release=_release_schedule),
)
async def schedule_post(ctx: ToolContext, args: SchedulePostIn) -> SchedulePostOut:
    """Schedules a post to one or more platforms, or publishes it now when schedule_at is omitted.

    One post is created per platform and published once by the worker through the project's connected
    account (pass account_id / account_ids when a platform has several). Media: one family of media_url(s),
    r2_key(s) (from upload_media) or job_id(s) (completed jobs). A repeat with the same idempotency_key
    (or the same content, whose key is derived) returns the first result and costs nothing. Next:
    list_recent_posts to follow publication; reschedule_post or cancel_scheduled_post to change it.
    """
    answer = await service.schedule(
        session=ctx.session,
        settings=ctx.settings,
        fetcher=Fetcher(ctx.settings.fetch),
        account_id=ctx.principal.account_id,
        project_id=ctx.project_id,
        accessible_project_ids=ctx.accessible_project_ids,
        platforms=args.platforms,
        caption=args.caption,
        title=args.title,
        attribution=args.attribution,
        hashtags=args.hashtags,
        schedule_at=args.schedule_at,
        media_url=args.media_url,
        media_urls=args.media_urls,
        r2_key=args.r2_key,
        r2_keys=args.r2_keys,
        job_id=args.job_id,
        job_ids=args.job_ids,
        media_type=args.media_type,
        auto_rehost=args.auto_rehost,
        routing_account_id=args.account_id,
        routing_account_ids={str(platform): account for platform, account in (args.account_ids or {}).items()},
        platform_metadata=(
            args.platform_metadata.model_dump(mode="json", exclude_none=True) if args.platform_metadata else {}
        ),
        key=_schedule_key(ctx, args),
        claimant=ctx.request_id,
        credits_debited=ctx.credits_debited,
    )
    return _schedule_output(answer)


@tool(
    module="distribution",
    scope=scopes.DISTRIBUTE,
    credits=0,
    destructive=True,
    open_world=True,
    project="object",
    object_id="post_id",
)
async def reschedule_post(ctx: ToolContext, args: ReschedulePostIn) -> ReschedulePostOut:
    """Moves a pending or scheduled post to a new future time.

    Pass expected_scheduled_at (the time you last read) to fail with conflict "schedule_conflict" if someone
    changed it meanwhile. A post being published, or already published, failed or cancelled, cannot move.
    """
    moved = await service.reschedule(
        session=ctx.session,
        project_id=ctx.project_id,
        post_id=args.post_id,
        scheduled_at=args.scheduled_at,
        expected_scheduled_at=args.expected_scheduled_at,
    )
    return ReschedulePostOut(
        success=True,
        post_id=str(moved.post_id),
        project_id=str(moved.project_id),
        previous_scheduled_at=iso(moved.previous_scheduled_at),
        scheduled_at=iso(moved.scheduled_at) or "",
    )


@tool(
    module="distribution",
    scope=scopes.DISTRIBUTE,
    credits=0,
    destructive=True,
    idempotent=True,
    open_world=True,
    project="object",
    object_id="post_id",
    response_format=None,
    text_shape="summary",
)
async def cancel_scheduled_post(ctx: ToolContext, args: CancelScheduledPostIn) -> CancelScheduledPostOut:
    """Cancels a post that has not been published yet and refunds its credit (confirm must be true).

    Never deletes anything on a platform: a post being published or already published answers conflict.
    Repeating the cancel answers the same with already_cancelled true and no second refund.
    """
    cancellation = await service.cancel(session=ctx.session, project_id=ctx.project_id, post_id=args.post_id)
    refunded = cancellation.refunded_credits
    return CancelScheduledPostOut(
        success=True,
        cancelled=True,
        post_id=str(cancellation.post_id),
        status="cancelled",
        refunded_credits=refunded,
        already_cancelled=True if cancellation.already_cancelled else None,
        message=(
            "The post was already cancelled; nothing was refunded twice."
            if cancellation.already_cancelled
            else f"Post cancelled before publication; {refunded} credit(s) refunded."
        ),
    )


@tool(module="distribution", scope=scopes.READ, credits=0, read_only=True, idempotent=True, project="strict")
async def list_recent_posts(ctx: ToolContext, args: ListRecentPostsIn) -> ListRecentPostsOut:
    """Lists the project's recent posts (newest first) with their status, platform ids and errors.

    status "scheduled" also matches posts waiting to publish and being published. Use it to follow a
    schedule_post or to find a post_id for reschedule_post / cancel_scheduled_post.
    """
    posts = await service.list_recent(
        session=ctx.session,
        project_id=ctx.project_id,
        platform=args.platform,
        status=args.status,
        days=args.days,
        limit=args.limit,
    )
    return ListRecentPostsOut(
        posts=[
            RecentPost(
                id=str(post.id),
                platform=post.platform,
                status=post.status,
                title=post.title,
                external_post_id=post.external_post_id,
                published_at=iso(post.published_at),
                scheduled_at=iso(post.scheduled_at),
                created_at=iso(post.created_at) or "",
                error=post.error,
            )
            for post in posts
        ]
    )


@tool(module="distribution", scope=scopes.READ, credits=0, read_only=True, idempotent=True, project="accounts")
async def list_connected_accounts(ctx: ToolContext, args: ListConnectedAccountsIn) -> ListConnectedAccountsOut:
    """Lists the project's connected platform accounts (usable ones, or all with include_all).

    Use the ids as account_id / account_ids of schedule_post when a platform has several accounts. No account
    for a platform? Call start_platform_connection.
    """
    found = await accounts_service.list_for_project(
        session=ctx.session, project_id=ctx.project_id, include_all=args.include_all
    )
    return ListConnectedAccountsOut.model_validate(
        {
            "accounts": [
                {
                    "id": str(account.id),
                    "platform": account.platform,
                    "connector": account.connector,
                    "status": account.status,
                    "effective_status": accounts_service.effective_status(account),
                    "username": account.username,
                    "created_at": iso(account.created_at),
                    "updated_at": iso(account.updated_at),
                    "expires_at": iso(account.expires_at),
                    "has_refresh_token": account.has_refresh_token,
                    "project_id": str(account.project_id),
                }
                for account in found
            ]
        }
    )


@tool(
    module="distribution",
    scope=scopes.DISTRIBUTE,
    credits=0,
    open_world=True,
    project="strict",
    text_shape="bare",
)
async def start_platform_connection(ctx: ToolContext, args: StartPlatformConnectionIn) -> StartPlatformConnectionOut:
    """Starts connecting a platform account: returns a single-use link to toolhost's connect page.

    A person opens the link within 2 minutes and completes the platform's OAuth flow, enters a token, or
    gives a webhook URL (whose signing secret is shown once). Next: wait_for_connection.
    """
    link, url = await accounts_service.start_link(
        session=ctx.session, settings=ctx.settings, project_id=ctx.project_id, platform=args.platform
    )
    return StartPlatformConnectionOut(
        platform=link.platform,
        project_id=str(ctx.project_id),
        deep_link=url,
        expires_at=iso(link.expires_at) or "",
        next_step=f"Open the link, finish the form, then call wait_for_connection with platform={link.platform}.",
    )


@tool(
    module="distribution",
    scope=scopes.READ,
    credits=0,
    read_only=True,
    idempotent=True,
    project="strict",
    text_shape="bare",
)
async def wait_for_connection(ctx: ToolContext, args: WaitForConnectionIn) -> WaitForConnectionOut:
    """Waits until the project has a usable account on the platform (at once if it has one), or times out.

    Timing out is a success with connected false: finish the connect page, or start a new link.
    """
    await ctx.commit()
    platform = accounts_service.canonical_platform(args.platform)
    deadline = time.monotonic() + args.timeout_s
    attempts = 0
    while True:
        attempts += 1
        async with ctx.fresh_transaction() as session:
            found = [
                account
                for account in await accounts_service.list_for_project(
                    session=session, project_id=ctx.project_id, include_all=False
                )
                if account.platform == platform
            ]
        if found:
            return _connected(platform, str(ctx.project_id), found, attempts)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return WaitForConnectionOut(
                connected=False,
                platform=platform,
                project_id=str(ctx.project_id),
                timed_out=True,
                attempts=attempts,
                message=f"No {platform} account connected within {args.timeout_s} s: "
                "finish the connect page, "
                "or call start_platform_connection for a new link.",
            )
        await asyncio.sleep(min(args.poll_interval_s, remaining))


def _connected(platform: str, project_id: str, found: list[ConnectedAccount], attempts: int) -> WaitForConnectionOut:
    if len(found) == 1:
        account = found[0]
        return WaitForConnectionOut(
            connected=True,
            platform=platform,
            project_id=project_id,
            account_id=str(account.id),
            username=account.username,
            connected_at=iso(account.created_at),
            attempts=attempts,
        )
    return WaitForConnectionOut(
        connected=True,
        platform=platform,
        project_id=project_id,
        attempts=attempts,
        accounts=[{"id": str(a.id), "username": a.username, "connected_at": iso(a.created_at)} for a in found],
        message=f"{len(found)} {platform} accounts are connected; pass the one you mean as account_id.",
    )


@tool(module="planning", scope=scopes.READ, credits=0, read_only=True, idempotent=True, project="strict")
async def find_next_slots(ctx: ToolContext, args: FindNextSlotsIn) -> FindNextSlotsOut:
    """Finds the next free posting slots per platform in the coming 7 days, best engagement first.

    Slots avoid the project's drafts, pending and scheduled posts by min_gap_hours (per platform). Pass
    them as schedule_at to schedule_post; schedule_content_plan uses the same slots for posts without a time.
    """
    found = await slots.find(
        session=ctx.session,
        project_id=ctx.project_id,
        platforms=args.platforms,
        count=args.count,
        start_after=args.start_after,
        min_gap_hours=args.min_gap_hours,
    )
    return FindNextSlotsOut(
        slots=[
            Slot(
                platform=slot.platform,
                datetime=iso(slot.moment) or "",
                day_of_week=slot.day_of_week,
                hour=slot.moment.hour,
                engagement_score=slot.score,
                conflict=False,
            )
            for slot in found.slots
        ],
        total_candidates=found.total_candidates,
        conflicts_avoided=found.conflicts_avoided,
    )


def no_upfront_debit(args: ScheduleContentPlanIn) -> int:
    """schedule_content_plan debits 1 credit per post it actually schedules, inside the handler."""
    return 0


def inline_post_count(args: ScheduleContentPlanIn) -> int:
    """Posts of an inline plan (the units an operator's cost override multiplies)."""
    return len(args.plan.posts) if args.plan else 0


@tool(
    module="planning",
    scope=scopes.DISTRIBUTE,
    credits=no_upfront_debit,
    units=inline_post_count,
    destructive=True,
    open_world=True,
    project="object_or_accounts",
    object_id="plan_id",
)
async def schedule_content_plan(ctx: ToolContext, args: ScheduleContentPlanIn) -> ScheduleContentPlanOut:
    """Schedules the posts of a plan that its approvals and the quality gate let through (1 credit per post).

    Only posts with an approved or edited approval item go on when the plan has items; posts without a
    time get find_next_slots slots; posts failing quality are skipped. dry_run reports the gate without
    spending. Per-post failures are listed in posts[] and summary, never as a tool error.
    Next: list_recent_posts.
    """
    inline_plan = (
        plans.InlinePlan(
            posts=[post.model_dump(mode="json", exclude_none=True) for post in args.plan.posts],
            project_id=args.plan.project_id,
            account_ids=dict(args.plan.account_ids or {}),
        )
        if args.plan is not None
        else None
    )
    result = await plans.schedule(
        session=ctx.session,
        settings=ctx.settings,
        charge=ctx.charge,
        account_id=ctx.principal.account_id,
        project_id=ctx.project_id,
        accessible_project_ids=ctx.accessible_project_ids,
        plan_id=args.plan_id,
        inline_plan=inline_plan,
        account_ids=args.account_ids,
        auto_slot=args.auto_slot,
        dry_run=args.dry_run,
        enforce_quality=args.enforce_quality,
        quality_threshold=args.quality_threshold,
        batch_size=args.batch_size,
        idempotency_seed=args.idempotency_seed,
    )
    return ScheduleContentPlanOut(
        dry_run=True if result.dry_run else None,
        plan_id=str(result.plan_id) if result.plan_id else None,
        approvals=result.approvals,
        posts=result.posts,
        summary=result.summary,
    )
