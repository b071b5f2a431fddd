"""The data behind the two apps: a week of the project's posts, and its latest metrics per published post.

Posts come from the distribution domain's rows (listed with list_recent_posts' keys), figures from the
analytics domain's latest snapshot per post (CATALOG.md §11); nothing is computed from anything else.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.analytics import service as analytics_service
from toolhost.domains.analytics.service import PostMetrics
from toolhost.domains.distribution.models import Post

CALENDAR_STATUSES = ("draft", "pending", "scheduled", "published")
CALENDAR_DAYS = 7
# A week holds at most this many posts on the calendar; more would not be readable in one view anyway.
CALENDAR_LIMIT = 500
PULSE_POSTS = 100


def week_start(today: date) -> date:
    """The Monday of the week of `today`."""
    return today - timedelta(days=today.weekday())


def _calendar_time(post: Post) -> datetime:
    """Where a post sits on the calendar: when it was published, else when it is due, else when it was made."""
    moment = post.published_at if post.status == "published" else None
    moment = moment or post.scheduled_at or post.created_at
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _in_window(column: Any, start: datetime, end: datetime) -> Any:
    return and_(column >= start, column < end)


async def calendar(*, session: AsyncSession, project_id: uuid.UUID, start_date: date) -> list[Post]:
    """The project's draft, pending, scheduled and published posts whose calendar time falls in the week."""
    start = datetime.combine(start_date, time.min, tzinfo=UTC)
    end = start + timedelta(days=CALENDAR_DAYS)
    candidates = await session.scalars(
        select(Post)
        .where(
            Post.project_id == project_id,
            Post.status.in_(CALENDAR_STATUSES),
            or_(
                _in_window(Post.published_at, start, end),
                _in_window(Post.scheduled_at, start, end),
                _in_window(Post.created_at, start, end),
            ),
        )
        .order_by(Post.created_at, Post.id)
    )
    posts = sorted(
        (post for post in candidates if start <= _calendar_time(post) < end),
        key=lambda post: (_calendar_time(post), str(post.id)),
    )
    return posts[:CALENDAR_LIMIT]


@dataclass(frozen=True, slots=True)
class PlatformTotals:
    """One platform's published posts in the window, and their views and engagement."""

    platform: str
    views: int
    engagement: int
    posts: int


@dataclass(frozen=True, slots=True)
class Pulse:
    """The posts published in the window with their latest figures: totals, per platform, the top by views."""

    views: int
    engagement: int
    posts: int
    posts_with_metrics: int
    platform_totals: list[PlatformTotals]
    top_posts: list[PostMetrics]

    @property
    def engagement_rate(self) -> float:
        """engagement ÷ views × 100, 2 dp."""
        return analytics_service.engagement_rate(self.engagement, self.views)


async def pulse(*, session: AsyncSession, project_id: uuid.UUID, platform: str | None, days: int) -> Pulse:
    """Totals, per-platform totals and the top posts by views of the posts published in the last `days` days."""
    posts = await analytics_service.published_posts(
        session=session,
        project_ids=[project_id],
        platforms=[platform] if platform else None,
        since=utcnow() - timedelta(days=days),
    )
    measured = await analytics_service.with_metrics(session=session, posts=posts)
    by_platform: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for item in measured:
        totals = by_platform[item.post.platform]
        totals[0] += item.views
        totals[1] += item.engagement
        totals[2] += 1
    ranked = sorted(measured, key=lambda item: (-item.views, -item.engagement, str(item.post.id)))
    return Pulse(
        views=sum(item.views for item in measured),
        engagement=sum(item.engagement for item in measured),
        posts=len(measured),
        posts_with_metrics=sum(1 for item in measured if item.latest),
        platform_totals=[
            PlatformTotals(platform=name, views=totals[0], engagement=totals[1], posts=totals[2])
            for name, totals in sorted(by_platform.items(), key=lambda entry: (-entry[1][0], entry[0]))
        ],
        top_posts=ranked[:PULSE_POSTS],
    )
