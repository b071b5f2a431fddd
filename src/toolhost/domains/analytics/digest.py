"""The performance digest: a period's totals, best and worst posts, trends against the period before, the
patterns of its top quarter and what to do next (generate_performance_digest)."""

from __future__ import annotations

import math
import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.analytics import insights, metrics
from toolhost.domains.analytics.metrics import PostMetrics

Direction = Literal["up", "down", "flat"]


def _direction(change: float) -> Direction:
    return "up" if change > 5 else "down" if change < -5 else "flat"


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
    change = metrics.change_pct(current, previous)
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
    views, engagement = metrics.totals(current)
    previous_views, previous_engagement = metrics.totals(previous)
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
                    platform=platform,
                    posts=len(items),
                    views=metrics.totals(items)[0],
                    engagement=metrics.totals(items)[1],
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
