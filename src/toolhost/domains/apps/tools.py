"""The apps tools: the content calendar and the analytics pulse, each with its UI resource."""

from __future__ import annotations

from toolhost.db.base import utcnow
from toolhost.domains.apps import service
from toolhost.domains.apps.schemas import (
    CalendarPost,
    OpenAnalyticsPulseIn,
    OpenAnalyticsPulseOut,
    OpenContentCalendarIn,
    OpenContentCalendarOut,
    PlatformTotal,
    PulsePost,
    PulseSummary,
)
from toolhost.domains.distribution.models import Post
from toolhost.platform.context import ToolContext
from toolhost.platform.dates import iso
from toolhost.platform.registry import tool

FIRST_LINE_LIMIT = 200


def _first_line(caption: str) -> str:
    """What a calendar card names a post by: the caption's first non-blank line, cut to fit a card."""
    return next((line.strip() for line in caption.splitlines() if line.strip()), "")[:FIRST_LINE_LIMIT]


def _calendar_post(post: Post) -> CalendarPost:
    return CalendarPost(
        id=str(post.id),
        platform=post.platform,
        status=post.status,
        title=post.title,
        first_line=_first_line(post.caption),
        external_post_id=post.external_post_id,
        published_at=iso(post.published_at),
        scheduled_at=iso(post.scheduled_at),
        created_at=iso(post.created_at),
        error=post.error,
    )


@tool(
    module="apps",
    scope="mcp:read",
    read_only=True,
    idempotent=True,
    project="strict",
    response_format=None,
    text_shape="summary",
)
async def open_content_calendar(ctx: ToolContext, args: OpenContentCalendarIn) -> OpenContentCalendarOut:
    """Opens the project's content calendar: a 7-day week (from start_date, default this UTC week's Monday) of
    its draft, pending, scheduled and published posts, with an interactive UI resource for MCP hosts.

    In the UI a person can move a scheduled post (reschedule_post with expected_scheduled_at, so a stale view
    never overwrites a newer change) or schedule a new one (schedule_post); the same view is the web page
    /app/calendar. To read posts as data only, list_recent_posts is enough.
    """
    start = args.start_date or service.week_start(utcnow().date())
    posts = await service.calendar(session=ctx.session, project_id=ctx.project_id, start_date=start)
    return OpenContentCalendarOut(
        start_date=start.isoformat(),
        project_id=str(ctx.project_id),
        posts=[_calendar_post(post) for post in posts],
        scopes=sorted(ctx.principal.scopes),
    )


@tool(
    module="apps",
    scope="mcp:read",
    read_only=True,
    idempotent=True,
    project="strict",
    response_format=None,
    text_shape="summary",
)
async def open_analytics_pulse(ctx: ToolContext, args: OpenAnalyticsPulseIn) -> OpenAnalyticsPulseOut:
    """Opens the project's analytics pulse: views, engagement and engagement rate of the posts published in
    the last `days` days (optionally one platform), per-platform totals and the top 100 posts by views, from
    the latest metric snapshot of each post, with an interactive UI resource for MCP hosts.

    The same view is the web page /app/analytics. Posts without a snapshot yet count with zeros; call
    refresh_platform_analytics to pull fresh figures, or fetch_analytics for the data without a UI.
    """
    pulse = await service.pulse(session=ctx.session, project_id=ctx.project_id, platform=args.platform, days=args.days)
    return OpenAnalyticsPulseOut(
        project_id=str(ctx.project_id),
        platform=args.platform,
        days=args.days,
        totals=PulseSummary(
            views=pulse.views,
            engagement=pulse.engagement,
            engagement_rate=pulse.engagement_rate,
            posts=pulse.posts,
            posts_with_metrics=pulse.posts_with_metrics,
        ),
        platform_totals=[
            PlatformTotal(
                platform=totals.platform, views=totals.views, engagement=totals.engagement, posts=totals.posts
            )
            for totals in pulse.platform_totals
        ],
        posts=[
            PulsePost(
                id=str(item.post.id),
                platform=item.post.platform,
                title=(item.post.title or item.post.caption.strip().split("\n", 1)[0])[:300],
                views=item.views,
                likes=item.latest.likes if item.latest else 0,
                comments=item.latest.comments if item.latest else 0,
                shares=item.latest.shares if item.latest else 0,
                engagement_rate=item.engagement_rate,
                captured_at=iso(item.latest.captured_at) if item.latest else None,
                published_at=iso(item.post.published_at),
            )
            for item in pulse.top_posts
        ],
    )
