"""The analytics computations over the latest snapshot of each published post (CATALOG.md §11).

Every figure comes from stored snapshots; a post without one counts as published but unmeasured, and
results say so (`postsWithMetrics`, `has_data`) instead of inventing numbers. The digest, anomaly detection and
the summary ideation reads have modules of their own (`digest`, `anomalies`, `summary`); the snapshot reads are
in `metrics`. This module is the entry other domains call and re-exports what they use of those.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.analytics import insights, metrics
from toolhost.domains.analytics.anomalies import Anomalies as Anomalies
from toolhost.domains.analytics.anomalies import Anomaly as Anomaly
from toolhost.domains.analytics.anomalies import anomalies as anomalies
from toolhost.domains.analytics.digest import Digest as Digest
from toolhost.domains.analytics.digest import performance_digest as performance_digest
from toolhost.domains.analytics.insights import PostingSlot
from toolhost.domains.analytics.insights import content_format as content_format
from toolhost.domains.analytics.insights import title as title

# Snapshot reads: the people's pages (apps) read a project's posts with their latest counters through these.
from toolhost.domains.analytics.metrics import PostMetrics as PostMetrics
from toolhost.domains.analytics.metrics import engagement_rate as engagement_rate
from toolhost.domains.analytics.metrics import published_posts as published_posts
from toolhost.domains.analytics.metrics import with_metrics as with_metrics
from toolhost.domains.analytics.models import PerformanceInsight
from toolhost.domains.analytics.summary import MeasuredPost as MeasuredPost
from toolhost.domains.analytics.summary import PerformanceSummary as PerformanceSummary
from toolhost.domains.analytics.summary import performance_summary as performance_summary
from toolhost.domains.approvals.models import ApprovalItem
from toolhost.domains.brand.models import BrandProfileVersion
from toolhost.domains.distribution import service as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount, Post


@dataclass(frozen=True, slots=True)
class Analytics:
    """The totals of the matching posts, and the top of them by views."""

    total_views: int
    total_engagement: int
    post_count: int
    posts_with_metrics: int
    top_posts: list[PostMetrics]


async def fetch_analytics(
    *,
    session: AsyncSession,
    project_id: uuid.UUID,
    platform: str | None,
    days: int,
    content_id: str | None,
    limit: int,
) -> Analytics:
    """Totals and the top posts by views of the project's posts published in the last `days` days."""
    posts = await metrics.published_posts(
        session=session,
        project_ids=[project_id],
        platforms=[platform] if platform else None,
        since=utcnow() - timedelta(days=days),
    )
    if content_id is not None:
        posts = [post for post in posts if str(post.id) == content_id.lower() or str(post.plan_id) == content_id]
    measured = await metrics.with_metrics(session=session, posts=posts)
    ranked = sorted(measured, key=lambda item: (-item.views, -item.engagement, str(item.post.id)))
    return Analytics(
        total_views=sum(item.views for item in measured),
        total_engagement=sum(item.engagement for item in measured),
        post_count=len(measured),
        posts_with_metrics=sum(1 for item in measured if item.latest),
        top_posts=ranked[:limit],
    )


@dataclass(frozen=True, slots=True)
class PostingTimes:
    """The best slots, and how many measured posts they were ranked from."""

    records_analyzed: int
    slots: list[PostingSlot]


async def best_posting_times(
    *, session: AsyncSession, project_id: uuid.UUID, platform: str | None, days: int
) -> PostingTimes:
    """The top 5 (platform, UTC weekday, UTC hour) slots by average engagement of published posts."""
    posts = await metrics.published_posts(
        session=session,
        project_ids=[project_id],
        platforms=[platform] if platform else None,
        since=utcnow() - timedelta(days=days),
    )
    measured = [item for item in await metrics.with_metrics(session=session, posts=posts) if item.latest]
    return PostingTimes(records_analyzed=len(measured), slots=insights.best_slots(measured, limit=5))


async def performance_insights(
    *, session: AsyncSession, project_id: uuid.UUID, insight_type: str | None, days: int, limit: int
) -> list[PerformanceInsight]:
    """The project's insight rows generated in the last `days` days, newest first, recomputed first when stale."""
    if await insights.stale(session=session, project_id=project_id):
        await insights.recompute(session=session, project_id=project_id)
    query = select(PerformanceInsight).where(
        PerformanceInsight.project_id == project_id,
        PerformanceInsight.generated_at >= utcnow() - timedelta(days=days),
    )
    if insight_type:
        query = query.where(PerformanceInsight.insight_type == insight_type)
    return list(await session.scalars(query.order_by(PerformanceInsight.generated_at.desc()).limit(limit)))


@dataclass(frozen=True, slots=True)
class LoopSummary:
    """Where a project stands: its brand profile, its latest posts and insights, and the next step to take."""

    profile: BrandProfileVersion | None
    recent_posts: list[PostMetrics]
    current_insights: list[PerformanceInsight]
    next_action: str


async def loop_summary(*, session: AsyncSession, project_id: uuid.UUID) -> LoopSummary:
    """The brand profile, the 10 latest posts with their latest metrics, the newest insight of each type, and
    the next step."""
    profile = await session.scalar(
        select(BrandProfileVersion)
        .where(BrandProfileVersion.project_id == project_id)
        .order_by(BrandProfileVersion.version.desc())
        .limit(1)
    )
    latest_posts = list(
        await session.scalars(
            select(Post).where(Post.project_id == project_id).order_by(Post.created_at.desc()).limit(10)
        )
    )
    counters = await metrics.latest_counters(session=session, posts=latest_posts)
    rows = await session.scalars(
        select(PerformanceInsight)
        .where(PerformanceInsight.project_id == project_id)
        .order_by(PerformanceInsight.generated_at.desc())
    )
    current_insights: dict[str, PerformanceInsight] = {}
    for row in rows:
        current_insights.setdefault(row.insight_type, row)
    return LoopSummary(
        profile=profile,
        recent_posts=[PostMetrics(post=post, latest=counters.get(post.id)) for post in latest_posts],
        current_insights=list(current_insights.values()),
        next_action=await _next_action(session, project_id, profile is not None),
    )


async def _next_action(session: AsyncSession, project_id: uuid.UUID, has_profile: bool) -> str:
    if not has_profile:
        return "Extract the brand first: call extract_brand with the brand's website."
    accounts = await session.scalars(select(ConnectedAccount).where(ConnectedAccount.project_id == project_id))
    if not any(accounts_service.is_usable(account) for account in accounts):
        return "Connect a platform account: call start_platform_connection, then wait_for_connection."
    now = utcnow()
    upcoming = await session.scalar(
        select(func.count())
        .select_from(Post)
        .where(
            Post.project_id == project_id,
            Post.status.in_(("pending", "scheduled", "publishing")),
            Post.due_at <= now + timedelta(days=7),
        )
    )
    if not upcoming:
        return "Nothing is scheduled for the next 7 days: call plan_content_week to plan the week."
    pending = await session.scalar(
        select(func.count())
        .select_from(ApprovalItem)
        .where(ApprovalItem.project_id == project_id, ApprovalItem.status == "pending")
    )
    if pending:
        return (
            f"{pending} approval item(s) wait for a decision: "
            "review them with list_plan_approvals and respond_plan_approval."
        )
    stale_posts = await metrics.published_posts(
        session=session, project_ids=[project_id], until=now - timedelta(hours=24)
    )
    counters = await metrics.latest_counters(session=session, posts=stale_posts)
    if any(post.id not in counters for post in stale_posts):
        return "Published posts have had no metrics for 24 hours: call refresh_platform_analytics."
    return "Review performance: call generate_performance_digest."
