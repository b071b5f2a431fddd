"""The apps tools: the content calendar and the analytics pulse, each with its UI resource."""

from __future__ import annotations

from toolhost.db.base import utcnow
from toolhost.domains.apps import service
from toolhost.domains.apps.schemas import (
    OpenAnalyticsPulseIn,
    OpenAnalyticsPulseOut,
    OpenContentCalendarIn,
    OpenContentCalendarOut,
)
from toolhost.platform.context import ToolContext
from toolhost.platform.registry import tool


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
    return OpenContentCalendarOut.model_validate(
        {
            "start_date": start.isoformat(),
            "project_id": str(ctx.project_id),
            "posts": posts,
            "scopes": sorted(ctx.principal.scopes),
        }
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
    pulse["totals"] = pulse.pop("summary")
    return OpenAnalyticsPulseOut.model_validate(pulse)
