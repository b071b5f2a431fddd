"""The analytics tools (CATALOG.md §11): every figure comes from stored metric snapshots. Also ideation's
find_winning_content (§5), which ranks measured posts and so lives with the metrics it reads.
"""

from __future__ import annotations

import uuid
from typing import Any

from toolhost.domains.analytics import refresh, service, winners, youtube
from toolhost.domains.analytics.metrics import PostMetrics
from toolhost.domains.analytics.models import PerformanceInsight
from toolhost.domains.analytics.schemas import (
    AnalyticsPost,
    Anomaly,
    AnomalyPeriod,
    BrandStatus,
    BriefPost,
    DetectAnomaliesIn,
    DetectAnomaliesOut,
    DigestMetrics,
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
    Insight,
    PlatformBreakdown,
    PostingSlot,
    RefreshPlatformAnalyticsIn,
    RefreshPlatformAnalyticsOut,
    TrendChange,
    Trends,
    Winner,
    WinningPatterns,
)
from toolhost.platform import scopes
from toolhost.platform.context import ToolContext
from toolhost.platform.dates import iso
from toolhost.platform.registry import tool
from toolhost.providers.connectors.registry import Connectors


def _project_ids(ctx: ToolContext) -> list[uuid.UUID]:
    """The resolved project, or every accessible project for the account-wide (`optional`) tools."""
    return [ctx.project.id] if ctx.project is not None else list(ctx.accessible_project_ids)


def _brief(item: PostMetrics) -> BriefPost:
    return BriefPost(
        id=str(item.post.id),
        platform=item.post.platform,
        title=service.title(item.post),
        views=item.views,
        engagement=item.engagement,
    )


def _analytics_post(item: PostMetrics) -> AnalyticsPost:
    return AnalyticsPost(
        id=str(item.post.id),
        platform=item.post.platform,
        title=service.title(item.post),
        views=item.views,
        engagement=item.engagement,
        posted_at=iso(item.post.published_at),
        content_type=service.content_format(item.post),
        model_used=None,
        captured_at=iso(item.latest.captured_at) if item.latest else None,
    )


def _insight(row: PerformanceInsight) -> Insight:
    return Insight(
        id=str(row.id),
        project_id=str(row.project_id),
        insight_type=row.insight_type,
        insight_data=row.insight_data,
        confidence_score=row.confidence_score,
        generated_at=iso(row.generated_at),
    )


def _recent_post(item: PostMetrics) -> dict[str, Any]:
    """A post of get_loop_summary's recentContent, with its latest counters (views null when unreported)."""
    post, latest = item.post, item.latest
    return {
        "id": str(post.id),
        "platform": post.platform,
        "status": post.status,
        "title": service.title(post),
        "published_at": iso(post.published_at),
        "metrics": None
        if latest is None
        else {
            "views": latest.views,
            "likes": latest.likes,
            "comments": latest.comments,
            "shares": latest.shares,
            "engagement": latest.engagement,
            "captured_at": iso(latest.captured_at),
        },
    }


@tool(module="analytics", scope=scopes.READ, read_only=True, idempotent=True, project="strict")
async def fetch_analytics(ctx: ToolContext, args: FetchAnalyticsIn) -> FetchAnalyticsOut:
    """Views and engagement of the project's published posts, from their latest metric snapshots.

    Filter by platform, the last `days` days of publication, or one post (content_id). Totals cover every
    matching post, `posts` the top `limit` by views. Posts without snapshots count 0 and postsWithMetrics
    says how many have data. Next: get_performance_insights or generate_performance_digest.
    """
    analytics = await service.fetch_analytics(
        session=ctx.session,
        project_id=ctx.project_id,
        platform=args.platform,
        days=args.days,
        content_id=args.content_id,
        limit=args.limit,
    )
    return FetchAnalyticsOut(
        platform=args.platform,
        totalViews=analytics.total_views,
        totalEngagement=analytics.total_engagement,
        postCount=analytics.post_count,
        postsWithMetrics=analytics.posts_with_metrics,
        posts=[_analytics_post(item) for item in analytics.top_posts],
        days=args.days,
    )


@tool(module="analytics", scope=scopes.ANALYTICS, idempotent=True, project="strict")
async def refresh_platform_analytics(ctx: ToolContext, args: RefreshPlatformAnalyticsIn) -> RefreshPlatformAnalyticsOut:
    """Queues a metrics pull for every connected account with posts published in the last 7 days.

    One analytics_refresh job per account whose connector can pull metrics (Mastodon, Bluesky, YouTube, X,
    Instagram, Facebook, Threads); webhook receivers push their own snapshots. Data lands within minutes; then
    call fetch_analytics.
    """
    queued = await refresh.enqueue(
        session=ctx.session,
        connectors=Connectors(ctx.settings),
        account_id=ctx.principal.account_id,
        project_id=ctx.project_id,
    )
    return RefreshPlatformAnalyticsOut(
        success=True,
        postsProcessed=queued.posts_processed,
        queued=queued.queued,
        errored=queued.errored,
        pushed=queued.pushed,
        projectId=str(ctx.project_id),
    )


@tool(module="analytics", scope=scopes.ANALYTICS, read_only=True, idempotent=True, open_world=True, project="strict")
async def fetch_youtube_analytics(ctx: ToolContext, args: FetchYoutubeAnalyticsIn) -> FetchYoutubeAnalyticsOut:
    """Live YouTube Analytics of the project's connected YouTube channel for a date range.

    action channel (totals), daily (one row per day), video (one video_id) or topVideos (by views).
    Needs a connected YouTube account (connected_account_id when several). Next: fetch_analytics for the
    posts toolhost published.
    """
    report = await youtube.fetch(
        session=ctx.session,
        settings=ctx.settings,
        project_id=ctx.project_id,
        action=args.action,
        start_date=args.start_date,
        end_date=args.end_date,
        video_id=args.video_id,
        max_results=args.max_results,
        connected_account_id=args.connected_account_id,
    )
    return FetchYoutubeAnalyticsOut(
        action=args.action,
        startDate=args.start_date.isoformat(),
        endDate=args.end_date.isoformat(),
        analytics=report.totals,
        dailyAnalytics=report.daily,
        videoId=report.video_id,
        averageViewDuration=report.average_view_duration,
        topVideos=report.top_videos,
    )


@tool(module="analytics", scope=scopes.READ, read_only=True, idempotent=True, project="strict")
async def get_performance_insights(ctx: ToolContext, args: GetPerformanceInsightsIn) -> GetPerformanceInsightsOut:
    """The project's computed insights: top hooks, optimal timing, best models, competitor patterns.

    Recomputed from the latest snapshots when new metrics arrived or a day passed; a type with fewer than
    3 measured posts has no row. Next: get_best_posting_times, or plan_content_week using the hooks.
    """
    rows = await service.performance_insights(
        session=ctx.session, project_id=ctx.project_id, insight_type=args.insight_type, days=args.days, limit=args.limit
    )
    return GetPerformanceInsightsOut(
        insights=[_insight(row) for row in rows], days=args.days, insightType=args.insight_type
    )


@tool(module="analytics", scope=scopes.READ, read_only=True, idempotent=True, project="strict")
async def get_best_posting_times(ctx: ToolContext, args: GetBestPostingTimesIn) -> GetBestPostingTimesOut:
    """The 5 best (platform, UTC weekday, UTC hour) slots by average engagement of published posts.

    Only posts with metrics count. Next: schedule_post or find_next_slots at those times.
    """
    times = await service.best_posting_times(
        session=ctx.session, project_id=ctx.project_id, platform=args.platform, days=args.days
    )
    return GetBestPostingTimesOut(
        platform=args.platform,
        days=args.days,
        recordsAnalyzed=times.records_analyzed,
        slots=[PostingSlot.model_validate(slot, from_attributes=True) for slot in times.slots],
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
    digest = await service.performance_digest(
        session=ctx.session,
        project_ids=_project_ids(ctx),
        period=args.period,
        include_recommendations=args.include_recommendations,
    )
    return GeneratePerformanceDigestOut(
        period=digest.period,
        period_start=digest.period_start.isoformat(),
        period_end=digest.period_end.isoformat(),
        metrics=DigestMetrics(
            total_posts=digest.total_posts,
            total_views=digest.total_views,
            total_engagement=digest.total_engagement,
            avg_engagement_rate=digest.avg_engagement_rate,
            best_performing=_brief(digest.best_performing) if digest.best_performing else None,
            worst_performing=_brief(digest.worst_performing) if digest.worst_performing else None,
            platform_breakdown=[
                PlatformBreakdown.model_validate(entry, from_attributes=True) for entry in digest.platform_breakdown
            ],
            posts_with_metrics=digest.posts_with_metrics,
        ),
        trends=Trends(
            views=TrendChange.model_validate(digest.views_trend, from_attributes=True),
            engagement=TrendChange.model_validate(digest.engagement_trend, from_attributes=True),
        ),
        recommendations=digest.recommendations,
        winning_patterns=WinningPatterns.model_validate(digest.winning_patterns, from_attributes=True),
        has_data=digest.has_data,
    )


@tool(module="analytics", scope=scopes.ANALYTICS, read_only=True, idempotent=True, project="optional")
async def detect_anomalies(ctx: ToolContext, args: DetectAnomaliesIn) -> DetectAnomaliesOut:
    """Spikes, drops, viral posts and engagement-rate shifts per platform: the last `days` days vs the `days` before.

    sensitivity low/medium/high = 50/30/15 % thresholds. Without a resolvable project it covers every
    accessible project. Next: fetch_analytics on the affected posts.
    """
    found = await service.anomalies(
        session=ctx.session,
        project_ids=_project_ids(ctx),
        days=args.days,
        sensitivity=args.sensitivity,
        platforms=args.platforms,
    )
    period = AnomalyPeriod(current_start=found.current_start.isoformat(), current_end=found.current_end.isoformat())
    return DetectAnomaliesOut(
        anomalies=[
            Anomaly(
                type=anomaly.type,
                metric=anomaly.metric,
                platform=anomaly.platform,
                magnitude=anomaly.magnitude,
                period=period,
                affected_posts=[_brief(item) for item in anomaly.affected_posts],
                confidence=anomaly.confidence,
                suggested_action=anomaly.suggested_action,
            )
            for anomaly in found.anomalies
        ],
        summary_text=found.summary,
    )


@tool(module="analytics", scope=scopes.READ, read_only=True, idempotent=True, project="strict")
async def get_loop_summary(ctx: ToolContext, args: GetLoopSummaryIn) -> GetLoopSummaryOut:
    """Where the project stands in the create-publish-measure loop, and the one next step to take.

    Brand status, the 10 latest posts with their latest metrics, the current insights, and a recommended
    next action naming its tool.
    """
    loop = await service.loop_summary(session=ctx.session, project_id=ctx.project_id)
    profile = loop.profile
    return GetLoopSummaryOut(
        brandStatus=BrandStatus(hasProfile=False)
        if profile is None
        else BrandStatus(
            hasProfile=True, brandName=profile.brand_name, version=profile.version, updatedAt=iso(profile.created_at)
        ),
        recentContent=[_recent_post(item) for item in loop.recent_posts],
        currentInsights=[_insight(row) for row in loop.current_insights],
        recommendedNextAction=loop.next_action,
    )


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
    return FindWinningContentOut(
        winners=[Winner.model_validate(winner, from_attributes=True) for winner in found],
        count=len(found),
        filters=filters,
    )


# --- extract_url_content (brand issue) ----------------------------------------------------------------------
