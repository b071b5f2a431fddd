"""The analytics computations over the latest snapshot of each published post (CATALOG.md §11).

Every figure comes from stored snapshots; a post without one counts as published but unmeasured, and
results say so (`postsWithMetrics`, `has_data`) instead of inventing numbers.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.analytics import insights, metrics, winners
from toolhost.domains.analytics.insights import PostingSlot
from toolhost.domains.analytics.metrics import PostMetrics
from toolhost.domains.analytics.models import PerformanceInsight
from toolhost.domains.approvals.models import ApprovalItem
from toolhost.domains.brand.models import BrandProfileVersion
from toolhost.domains.distribution import service as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount, Post
from toolhost.platform.dates import iso
from toolhost.providers.text import analysis

SENSITIVITY = {"low": 50.0, "medium": 30.0, "high": 15.0}


def title(post: Post) -> str:
    """What a post is called in analytics: its title, else its opening line."""
    return (post.title or insights.hook_of(post.caption) or "")[:300]


def content_format(post: Post) -> str:
    """The post's format: its media type in lower case, or text."""
    return insights.content_format(post)


def change_pct(current: float, previous: float) -> float:
    """% change, 1 dp; a previous 0 is 100 when current > 0, else 0."""
    if previous == 0:
        return 100.0 if current > 0 else 0.0
    return round((current - previous) / previous * 100, 1)


Direction = Literal["up", "down", "flat"]


def _direction(change: float) -> Direction:
    return "up" if change > 5 else "down" if change < -5 else "flat"


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


def _totals(items: Sequence[PostMetrics]) -> tuple[int, int]:
    return sum(item.views for item in items), sum(item.engagement for item in items)


@dataclass(frozen=True, slots=True)
class PlatformBreakdown:
    """One platform's posts of the period, and their views and engagement."""

    platform: str
    posts: int
    views: int
    engagement: int


@dataclass(frozen=True, slots=True)
class TrendChange:
    """How a total moved against the previous period."""

    direction: Direction
    change_pct: float


@dataclass(frozen=True, slots=True)
class WinningPatterns:
    """The most common hook types, formats and posting times of the period's top quarter by views."""

    hook_types: list[str]
    content_formats: list[str]
    posting_times: list[str]


@dataclass(frozen=True, slots=True)
class Digest:
    """A period's totals, best and worst posts, trends against the period before, and what to do next."""

    period: str
    period_start: date
    period_end: date
    total_posts: int
    total_views: int
    total_engagement: int
    avg_engagement_rate: float
    best_performing: PostMetrics | None
    worst_performing: PostMetrics | None
    platform_breakdown: list[PlatformBreakdown]
    posts_with_metrics: int
    views_trend: TrendChange
    engagement_trend: TrendChange
    recommendations: list[str]
    winning_patterns: WinningPatterns

    @property
    def has_data(self) -> bool:
        """Whether any post of the period has metrics."""
        return self.posts_with_metrics > 0


def _trend(current: int, previous: int) -> TrendChange:
    change = change_pct(current, previous)
    return TrendChange(direction=_direction(change), change_pct=change)


async def performance_digest(
    *,
    session: AsyncSession,
    project_ids: Sequence[uuid.UUID],
    period: str,
    include_recommendations: bool,
) -> Digest:
    """The period's totals, best/worst posts, trends vs the previous equal period and what to do next."""
    days = int(period.rstrip("d"))
    end = utcnow()
    start = end - timedelta(days=days)
    current_posts = await metrics.published_posts(session=session, project_ids=project_ids, since=start, until=end)
    previous_posts = await metrics.published_posts(
        session=session, project_ids=project_ids, since=start - timedelta(days=days), until=start
    )
    current = await metrics.with_metrics(session=session, posts=current_posts)
    previous = await metrics.with_metrics(session=session, posts=previous_posts)
    views, engagement = _totals(current)
    previous_views, previous_engagement = _totals(previous)
    measured = [item for item in current if item.latest]
    by_views = sorted(measured, key=lambda item: (-item.views, -item.engagement, str(item.post.id)))
    breakdown: dict[str, list[PostMetrics]] = defaultdict(list)
    for item in current:
        breakdown[item.post.platform].append(item)
    views_trend, engagement_trend = _trend(views, previous_views), _trend(engagement, previous_engagement)
    rate = metrics.engagement_rate(engagement, views)
    return Digest(
        period=period,
        period_start=start.date(),
        period_end=end.date(),
        total_posts=len({item.post.id for item in current}),
        total_views=views,
        total_engagement=engagement,
        avg_engagement_rate=rate,
        best_performing=by_views[0] if by_views else None,
        worst_performing=by_views[-1] if by_views else None,
        platform_breakdown=sorted(
            (
                PlatformBreakdown(
                    platform=platform, posts=len(items), views=_totals(items)[0], engagement=_totals(items)[1]
                )
                for platform, items in breakdown.items()
            ),
            key=lambda entry: (-entry.views, entry.platform),
        ),
        posts_with_metrics=len(measured),
        views_trend=views_trend,
        engagement_trend=engagement_trend,
        recommendations=_recommendations(
            days=days,
            posts=len(current),
            measured=len(measured),
            platforms=len(breakdown),
            rate=rate,
            views=views,
            views_change=views_trend.change_pct,
            engagement_change=engagement_trend.change_pct,
        )
        if include_recommendations
        else [],
        winning_patterns=_winning_patterns(by_views[: max(1, math.ceil(len(by_views) / 4))] if by_views else []),
    )


def _winning_patterns(top: Sequence[PostMetrics]) -> WinningPatterns:
    hooks: Counter[str] = Counter()
    formats: Counter[str] = Counter()
    times: Counter[str] = Counter()
    for item in top:
        hooks[insights.hook_type(insights.hook_of(item.post.title or item.post.caption))] += 1
        formats[insights.content_format(item.post)] += 1
        day, hour = insights.slot_of(item.post)
        times[f"{day} {hour:02d}:00 UTC"] += 1
    return WinningPatterns(
        hook_types=[name for name, _ in hooks.most_common(3)],
        content_formats=[name for name, _ in formats.most_common(3)],
        posting_times=[name for name, _ in times.most_common(3)],
    )


def _recommendations(
    *,
    days: int,
    posts: int,
    measured: int,
    platforms: int,
    rate: float,
    views: int,
    views_change: float,
    engagement_change: float,
) -> list[str]:
    if posts == 0:
        return [
            "No posts were published in this period, so there is nothing to measure yet: "
            "schedule posts with schedule_post."
        ]
    advice: list[str] = []
    if measured == 0:
        advice.append(
            "No metrics were received for this period's posts yet: call refresh_platform_analytics "
            "or have the webhook receiver send snapshots."
        )
    if measured and views_change < -10:
        advice.append("Views fell: try new hooks and different posting times (get_best_posting_times).")
    if measured and rate < 2:
        advice.append("Engagement rate is under 2 %: try interactive content (questions, polls, calls to comment).")
    if posts < days / 2:
        advice.append(f"Only {posts} post(s) in {days} days: post more often to build reach.")
    if platforms == 1:
        advice.append("All posts went to one platform: diversify to a second platform.")
    if measured and views_change > 20:
        advice.append("Views grew over 20 %: replicate this period's best performing posts.")
    if measured and engagement_change > 20 and views > 0:
        advice.append("Engagement grew over 20 %: the current strategy works, keep it.")
    return advice or ["Performance is stable: keep the current cadence and mix."]


AnomalyType = Literal["spike", "drop", "viral", "trend_shift"]


@dataclass(frozen=True, slots=True)
class Anomaly:
    """An unusual move of one metric on one platform, the posts behind it, and what to do about it."""

    type: AnomalyType
    metric: str
    platform: str
    magnitude: float
    affected_posts: list[PostMetrics]
    confidence: float
    suggested_action: str


@dataclass(frozen=True, slots=True)
class Anomalies:
    """The anomalies of the current window (largest first), the window's dates, and a sentence on them."""

    anomalies: list[Anomaly]
    current_start: date
    current_end: date
    summary: str


async def anomalies(
    *,
    session: AsyncSession,
    project_ids: Sequence[uuid.UUID],
    days: int,
    sensitivity: str,
    platforms: Sequence[str] | None,
) -> Anomalies:
    """Spikes, drops, viral posts and engagement-rate shifts per platform: the last `days` days vs the `days` before."""
    threshold = SENSITIVITY[sensitivity]
    end = utcnow()
    start = end - timedelta(days=days)
    previous_start = start - timedelta(days=days)
    posts = await metrics.published_posts(
        session=session, project_ids=project_ids, platforms=platforms, since=previous_start, until=end
    )
    measured = await metrics.with_metrics(session=session, posts=posts)
    windows: dict[str, tuple[list[PostMetrics], list[PostMetrics]]] = defaultdict(lambda: ([], []))
    for item in measured:
        assert item.post.published_at is not None
        current, previous = windows[item.post.platform]
        (current if item.post.published_at >= start else previous).append(item)
    found: list[Anomaly] = []
    for platform, (current, previous) in sorted(windows.items()):
        if not any(item.latest for item in (*current, *previous)):
            continue
        found.extend(_platform_anomalies(platform, current, previous, threshold))
    found.sort(key=lambda anomaly: -abs(anomaly.magnitude))
    if found:
        platforms_hit = len({anomaly.platform for anomaly in found})
        summary = f"{len(found)} anomal{'y' if len(found) == 1 else 'ies'} across {platforms_hit} platform(s)."
    elif any(item.latest for item in measured):
        summary = f"No anomalies at {sensitivity} sensitivity over the last {days} days vs the {days} before."
    else:
        summary = "No metrics for these posts yet, so no anomaly can be detected."
    return Anomalies(anomalies=found, current_start=start.date(), current_end=end.date(), summary=summary)


def _platform_anomalies(
    platform: str, current: list[PostMetrics], previous: list[PostMetrics], threshold: float
) -> list[Anomaly]:
    found = []
    for metric_name in ("views", "engagement"):
        now_total = sum(getattr(item, metric_name) for item in current)
        before_total = sum(getattr(item, metric_name) for item in previous)
        change = change_pct(now_total, before_total)
        if abs(change) >= threshold and (now_total or before_total):
            kind: AnomalyType = "spike" if change > 0 else "drop"
            drivers = current if kind == "spike" else previous
            found.append(
                Anomaly(
                    type=kind,
                    metric=metric_name,
                    platform=platform,
                    magnitude=round(change, 1),
                    affected_posts=_drivers(drivers, metric_name),
                    confidence=round(min(1.0, abs(change) / 100), 2),
                    suggested_action=(
                        f"Study what the top {platform} posts did and repeat it."
                        if kind == "spike"
                        else f"Check {platform} posting times and hooks "
                        "(get_best_posting_times, get_performance_insights)."
                    ),
                )
            )
    if current and previous:
        average_now = sum(item.views for item in current) / len(current)
        average_before = sum(item.views for item in previous) / len(previous)
        if average_before > 0 and average_now > 10 * average_before:
            found.append(
                Anomaly(
                    type="viral",
                    metric="views",
                    platform=platform,
                    magnitude=round(average_now / average_before, 2),
                    affected_posts=_drivers(current, "views"),
                    confidence=0.9,
                    suggested_action="A post went viral: reply to its comments and follow up on its topic soon.",
                )
            )
    if len(current) >= 2 and len(previous) >= 2:
        rate_now = metrics.engagement_rate(*_totals(current)[::-1])
        rate_before = metrics.engagement_rate(*_totals(previous)[::-1])
        change = change_pct(rate_now, rate_before)
        if abs(change) >= threshold and (rate_now or rate_before):
            found.append(
                Anomaly(
                    type="trend_shift",
                    metric="engagement_rate",
                    platform=platform,
                    magnitude=round(change, 1),
                    affected_posts=_drivers(current, "engagement"),
                    confidence=round(min(1.0, min(len(current), len(previous)) / 5), 2),
                    suggested_action=(
                        "Engagement per view rose: keep the formats that drive it."
                        if change > 0
                        else "Engagement per view fell: revisit hooks and calls to action."
                    ),
                )
            )
    return found


def _drivers(items: Sequence[PostMetrics], metric_name: str) -> list[PostMetrics]:
    ranked = sorted((item for item in items if item.latest), key=lambda item: -getattr(item, metric_name))
    return ranked[:5]


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


@dataclass(frozen=True, slots=True)
class MeasuredPost:
    """One published post with its latest counters, as ideation reads it."""

    id: str
    platform: str
    title: str
    hook: str
    hook_type: str | None
    content_format: str
    url: str | None
    published_at: str | None
    views: int
    engagement: int
    engagement_rate: float


@dataclass(frozen=True, slots=True)
class PerformanceSummary:
    """What the project's measured posts of a window say: what worked, when, and what did not."""

    days: int
    measured_posts: int
    top_posts: list[MeasuredPost]
    underperformers: list[MeasuredPost]
    hook_types: list[str]
    content_formats: list[str]
    cta_styles: list[str]
    topics: list[str]
    best_slot: PostingSlot | None
    generated_at: str


def _measured_post(item: PostMetrics) -> MeasuredPost:
    hook = insights.hook_of(item.post.title or item.post.caption)
    return MeasuredPost(
        id=str(item.post.id),
        platform=item.post.platform,
        title=title(item.post),
        hook=hook[:300],
        hook_type=winners.hook_type(hook),
        content_format=insights.content_format(item.post),
        url=item.post.external_url,
        published_at=iso(item.post.published_at),
        views=item.views,
        engagement=item.engagement,
        engagement_rate=metrics.engagement_rate(item.engagement, item.views),
    )


def _topics(top: Sequence[PostMetrics], rest: Sequence[PostMetrics]) -> list[str]:
    """Words that recur in the top posts more than in the others: the subjects that worked."""

    def words_of(item: PostMetrics) -> set[str]:
        text = f"{item.post.title or ''} {item.post.caption or ''}"
        return {
            word
            for word in analysis.words(text)
            if len(word) >= 4 and word not in analysis.STOPWORDS and not word.startswith(("http", "www"))
        }

    in_top = Counter(word for item in top for word in words_of(item))
    in_rest = Counter(word for item in rest for word in words_of(item))
    lift = {
        word: count / len(top) - in_rest[word] / max(len(rest), 1)
        for word, count in in_top.items()
        if count >= 2 or len(top) == 1
    }
    return [word for word, score in sorted(lift.items(), key=lambda entry: (-entry[1], entry[0])) if score > 0][:5]


async def performance_summary(*, session: AsyncSession, project_id: uuid.UUID, days: int) -> PerformanceSummary:
    """The project's posts published in the last `days` days that have metrics, read for ideation.

    Top posts are the five with most engagement (views break ties); patterns come from the top quartile;
    underperformers are the bottom quartile by engagement rate, each only when three or more posts are measured.
    """
    posts = await metrics.published_posts(
        session=session, project_ids=[project_id], since=utcnow() - timedelta(days=days)
    )
    measured = [item for item in await metrics.with_metrics(session=session, posts=posts) if item.latest]
    ranked = sorted(measured, key=lambda item: (-item.engagement, -item.views, str(item.post.id)))
    enough = len(measured) >= insights.MINIMUM_POSTS
    quartile = ranked[: max(1, math.ceil(len(ranked) / 4))] if enough else []
    by_rate = sorted(measured, key=lambda item: (metrics.engagement_rate(item.engagement, item.views), item.engagement))
    bottom = by_rate[: max(1, len(by_rate) // 4)] if enough else []
    hook_types = Counter(
        kind
        for kind in (winners.hook_type(insights.hook_of(item.post.title or item.post.caption)) for item in quartile)
        if kind
    )
    formats = Counter(insights.content_format(item.post) for item in quartile)
    ctas = Counter(match.lower() for item in quartile for match in winners.CTA.findall(item.post.caption or ""))
    slots = insights.best_slots(measured, limit=1) if enough else []
    return PerformanceSummary(
        days=days,
        measured_posts=len(measured),
        top_posts=[_measured_post(item) for item in ranked[:5]] if enough else [],
        underperformers=[_measured_post(item) for item in bottom if item not in quartile],
        hook_types=[name for name, _ in hook_types.most_common()],
        content_formats=[name for name, _ in formats.most_common()],
        cta_styles=[name for name, _ in ctas.most_common(5)],
        topics=_topics(quartile, [item for item in ranked if item not in quartile]) if enough else [],
        best_slot=slots[0] if slots else None,
        generated_at=iso(utcnow()),
    )
