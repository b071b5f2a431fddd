"""The analytics tools (CATALOG.md §11): every figure comes from stored metric snapshots. Also ideation's
find_winning_content (§5), which ranks measured posts and so lives with the metrics it reads.
"""

from __future__ import annotations

import uuid

from toolhost.domains.analytics import refresh, service, winners, youtube
from toolhost.domains.analytics.schemas import (
    DetectAnomaliesIn,
    DetectAnomaliesOut,
    FetchAnalyticsIn,
    FetchAnalyticsOut,
    FetchYoutubeAnalyticsIn,
    FetchYoutubeAnalyticsOut,
    FindWinningContentIn,
    FindWinningContentOut,
    GeneratePerformanceDigestIn,
    GeneratePerformanceDigestOut,
    GetBestPostingTimesIn,
    GetBestPostingTimesOut,
    GetLoopSummaryIn,
    GetLoopSummaryOut,
    GetPerformanceInsightsIn,
    GetPerformanceInsightsOut,
    RefreshPlatformAnalyticsIn,
    RefreshPlatformAnalyticsOut,
)
from toolhost.platform import scopes
from toolhost.platform.context import ToolContext
from toolhost.platform.registry import tool
from toolhost.providers.connectors.registry import Connectors


def _project_ids(ctx: ToolContext) -> list[uuid.UUID]:
    """The resolved project, or every accessible project for the account-wide (`optional`) tools."""
    return [ctx.project.id] if ctx.project is not None else list(ctx.accessible_project_ids)


@tool(module="analytics", scope=scopes.READ, read_only=True, idempotent=True, project="strict")
async def fetch_analytics(ctx: ToolContext, args: FetchAnalyticsIn) -> FetchAnalyticsOut:
    """Views and engagement of the project's published posts, from their latest metric snapshots.

    Filter by platform, the last `days` days of publication, or one post (content_id). Totals cover every
    matching post, `posts` the top `limit` by views. Posts without snapshots count 0 and postsWithMetrics
    says how many have data. Next: get_performance_insights or generate_performance_digest.
    """
    return FetchAnalyticsOut.model_validate(
        await service.fetch_analytics(
            session=ctx.session,
            project_id=ctx.project_id,
            platform=args.platform,
            days=args.days,
            content_id=args.content_id,
            limit=args.limit,
        )
    )


@tool(module="analytics", scope=scopes.ANALYTICS, idempotent=True, project="strict")
async def refresh_platform_analytics(ctx: ToolContext, args: RefreshPlatformAnalyticsIn) -> RefreshPlatformAnalyticsOut:
    """Queues a metrics pull for every connected account with posts published in the last 7 days.

    One analytics_refresh job per account whose connector can pull metrics (Mastodon, Bluesky, YouTube, X,
    Instagram, Facebook, Threads); webhook receivers push their own snapshots. Data lands within minutes; then
    call fetch_analytics.
    """
    return RefreshPlatformAnalyticsOut.model_validate(
        await refresh.enqueue(
            session=ctx.session,
            connectors=Connectors(ctx.settings),
            account_id=ctx.principal.account_id,
            project_id=ctx.project_id,
        )
    )


@tool(module="analytics", scope=scopes.ANALYTICS, read_only=True, idempotent=True, open_world=True, project="strict")
async def fetch_youtube_analytics(ctx: ToolContext, args: FetchYoutubeAnalyticsIn) -> FetchYoutubeAnalyticsOut:
    """Live YouTube Analytics of the project's connected YouTube channel for a date range.

    action channel (totals), daily (one row per day), video (one video_id) or topVideos (by views).
    Needs a connected YouTube account (connected_account_id when several). Next: fetch_analytics for the
    posts toolhost published.
    """
    return await youtube.fetch(ctx=ctx, args=args)


@tool(module="analytics", scope=scopes.READ, read_only=True, idempotent=True, project="strict")
async def get_performance_insights(ctx: ToolContext, args: GetPerformanceInsightsIn) -> GetPerformanceInsightsOut:
    """The project's computed insights: top hooks, optimal timing, best models, competitor patterns.

    Recomputed from the latest snapshots when new metrics arrived or a day passed; a type with fewer than
    3 measured posts has no row. Next: get_best_posting_times, or plan_content_week using the hooks.
    """
    return GetPerformanceInsightsOut.model_validate(
        await service.performance_insights(
            session=ctx.session,
            project_id=ctx.project_id,
            insight_type=args.insight_type,
            days=args.days,
            limit=args.limit,
        )
    )


@tool(module="analytics", scope=scopes.READ, read_only=True, idempotent=True, project="strict")
async def get_best_posting_times(ctx: ToolContext, args: GetBestPostingTimesIn) -> GetBestPostingTimesOut:
    """The 5 best (platform, UTC weekday, UTC hour) slots by average engagement of published posts.

    Only posts with metrics count. Next: schedule_post or find_next_slots at those times.
    """
    return GetBestPostingTimesOut.model_validate(
        await service.best_posting_times(
            session=ctx.session, project_id=ctx.project_id, platform=args.platform, days=args.days
        )
    )


@tool(
    module="analytics",
    scope=scopes.ANALYTICS,
    read_only=True,
    idempotent=True,
    project="optional",
    category="generation",
)
async def generate_performance_digest(
    ctx: ToolContext, args: GeneratePerformanceDigestIn
) -> GeneratePerformanceDigestOut:
    """A performance report for the last 7, 14 or 30 days against the period before, with recommendations.

    Without a resolvable project it covers every accessible project. has_data is false when no post of the
    period has metrics. Next: detect_anomalies, or plan_content_week with the winning patterns.
    """
    return GeneratePerformanceDigestOut.model_validate(
        await service.performance_digest(
            session=ctx.session,
            project_ids=_project_ids(ctx),
            period=args.period,
            include_recommendations=args.include_recommendations,
        )
    )


@tool(module="analytics", scope=scopes.ANALYTICS, read_only=True, idempotent=True, project="optional")
async def detect_anomalies(ctx: ToolContext, args: DetectAnomaliesIn) -> DetectAnomaliesOut:
    """Spikes, drops, viral posts and engagement-rate shifts per platform: the last `days` days vs the `days` before.

    sensitivity low/medium/high = 50/30/15 % thresholds. Without a resolvable project it covers every
    accessible project. Next: fetch_analytics on the affected posts.
    """
    return DetectAnomaliesOut.model_validate(
        await service.anomalies(
            session=ctx.session,
            project_ids=_project_ids(ctx),
            days=args.days,
            sensitivity=args.sensitivity,
            platforms=args.platforms,
        )
    )


@tool(module="analytics", scope=scopes.READ, read_only=True, idempotent=True, project="strict")
async def get_loop_summary(ctx: ToolContext, args: GetLoopSummaryIn) -> GetLoopSummaryOut:
    """Where the project stands in the create-publish-measure loop, and the one next step to take.

    Brand status, the 10 latest posts with their latest metrics, the current insights, and a recommended
    next action naming its tool.
    """
    return GetLoopSummaryOut.model_validate(await service.loop_summary(session=ctx.session, project_id=ctx.project_id))


@tool(module="ideation", scope="mcp:read", read_only=True, idempotent=True, project="optional")
async def find_winning_content(ctx: ToolContext, args: FindWinningContentIn) -> FindWinningContentOut:
    """Finds the best performers to learn from: the project's published posts with metrics (ranked by
    engagement rate) and the swipe file's items with views (ranked by views per hour), each scored by its
    percentile in its group, with its hook, story type, structure, triggers and a replication prompt.

    Without a project it looks across all your projects. With no measured posts and no swipe items it returns
    no winners (count 0) rather than guessing. Next: generate_content with a winner's replication_prompt.
    """
    project_ids = [ctx.project.id] if ctx.project else list(ctx.accessible_project_ids)
    found = await winners.find(
        session=ctx.session,
        account_id=ctx.principal.account_id,
        project_ids=project_ids,
        platform=args.platform,
        days=args.days,
        limit=args.limit,
        min_qa_score=args.min_qa_score,
    )
    filters = {
        "project_id": str(ctx.project.id) if ctx.project else None,
        "platform": args.platform,
        "days": args.days,
        "limit": args.limit,
        "min_qa_score": args.min_qa_score,
    }
    return FindWinningContentOut.model_validate({"winners": found, "count": len(found), "filters": filters})


# --- extract_url_content (brand issue) ----------------------------------------------------------------------
