"""Metric snapshots: the latest counters per published post, and recording new ones (refresh, import).

Snapshots are cumulative (CATALOG.md §11): every computation reads the latest snapshot per post, never
a sum. Two stores feed it: this domain's `metric_snapshots` (connector pulls, operator imports) and the
distribution domain's `connector_events` of kind `metrics` (what webhook receivers push), matched to a
post by (connected account, external post id). The newest of the two wins.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.analytics.models import MetricSnapshot
from toolhost.domains.distribution.models import ConnectorEvent, Post

COUNTERS = ("views", "likes", "comments", "shares", "saves", "watch_time_minutes")
# Large IN lists are split so neither SQLite's variable limit nor PostgreSQL's planner suffers.
CHUNK = 500


@dataclass(frozen=True, slots=True)
class Counters:
    """One snapshot's counters; `views` is None when the platform reports none (e.g. Mastodon)."""

    captured_at: datetime
    views: int | None
    likes: int
    comments: int
    shares: int
    saves: int | None = None
    watch_time_minutes: float | None = None

    @property
    def engagement(self) -> int:
        """likes + comments + shares."""
        return self.likes + self.comments + self.shares

    @property
    def view_count(self) -> int:
        """Views, a missing figure counted as 0."""
        return self.views or 0


@dataclass(frozen=True, slots=True)
class PostMetrics:
    """A published post and its latest counters (None: no snapshot yet)."""

    post: Post
    latest: Counters | None

    @property
    def views(self) -> int:
        return self.latest.view_count if self.latest else 0

    @property
    def engagement(self) -> int:
        return self.latest.engagement if self.latest else 0

    @property
    def engagement_rate(self) -> float:
        """engagement ÷ views × 100, 2 dp; 0 without views."""
        return engagement_rate(self.engagement, self.views)


def engagement_rate(engagement: int, views: int) -> float:
    """engagement ÷ views × 100, 2 dp; 0 without views."""
    return round(engagement / views * 100, 2) if views else 0.0


def change_pct(current: float, previous: float) -> float:
    """% change, 1 dp; a previous 0 is 100 when current > 0, else 0."""
    if previous == 0:
        return 100.0 if current > 0 else 0.0
    return round((current - previous) / previous * 100, 1)


def totals(items: Sequence[PostMetrics]) -> tuple[int, int]:
    """(views, engagement) summed over the posts."""
    return sum(item.views for item in items), sum(item.engagement for item in items)


def _chunks(values: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


def _whole(payload: dict[str, Any], name: str) -> int | None:
    value = payload.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return None
    return int(value)


def counters_of_event(payload: dict[str, Any], received_at: datetime) -> Counters:
    """A webhook snapshot as counters; absent or invalid counts are 0 (views stays unknown)."""
    watch = payload.get("watch_time_minutes")
    return Counters(
        captured_at=received_at,
        views=_whole(payload, "views"),
        likes=_whole(payload, "likes") or 0,
        comments=_whole(payload, "comments") or 0,
        shares=_whole(payload, "shares") or 0,
        saves=_whole(payload, "saves"),
        watch_time_minutes=float(watch) if isinstance(watch, int | float) and watch >= 0 else None,
    )


def counters_of_snapshot(row: MetricSnapshot) -> Counters:
    return Counters(
        captured_at=row.captured_at,
        views=row.views,
        likes=row.likes,
        comments=row.comments,
        shares=row.shares,
        saves=row.saves,
        watch_time_minutes=row.watch_time_minutes,
    )


async def published_posts(
    *,
    session: AsyncSession,
    project_ids: Sequence[uuid.UUID],
    platforms: Sequence[str] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[Post]:
    """The projects' published posts (with a publication time), optionally by platform and time window."""
    if not project_ids:
        return []
    query = select(Post).where(
        Post.project_id.in_(list(project_ids)), Post.status == "published", Post.published_at.is_not(None)
    )
    if platforms:
        query = query.where(Post.platform.in_(list(platforms)))
    if since is not None:
        query = query.where(Post.published_at >= since)
    if until is not None:
        query = query.where(Post.published_at < until)
    return list(await session.scalars(query.order_by(Post.published_at)))


async def latest_counters(*, session: AsyncSession, posts: Sequence[Post]) -> dict[uuid.UUID, Counters]:
    """The newest snapshot of each post, across imported/pulled snapshots and webhook events."""
    latest: dict[uuid.UUID, Counters] = {}

    def keep(post_id: uuid.UUID, counters: Counters) -> None:
        known = latest.get(post_id)
        if known is None or counters.captured_at >= known.captured_at:
            latest[post_id] = counters

    ids = [post.id for post in posts]
    for chunk in _chunks(ids):
        rows = await session.scalars(
            select(MetricSnapshot).where(MetricSnapshot.post_id.in_(chunk)).order_by(MetricSnapshot.captured_at)
        )
        for row in rows:
            keep(row.post_id, counters_of_snapshot(row))
    by_external = {
        (post.connected_account_id, post.external_post_id): post.id for post in posts if post.external_post_id
    }
    external_ids = sorted({external for _, external in by_external})
    accounts = list({account for account, _ in by_external})
    for chunk in _chunks(external_ids):
        events = await session.execute(
            select(
                ConnectorEvent.connected_account_id,
                ConnectorEvent.external_post_id,
                ConnectorEvent.payload,
                ConnectorEvent.received_at,
            )
            .where(
                ConnectorEvent.kind == "metrics",
                ConnectorEvent.connected_account_id.in_(accounts),
                ConnectorEvent.external_post_id.in_(chunk),
            )
            .order_by(ConnectorEvent.received_at)
        )
        for account_id, external_id, payload, received_at in events:
            post_id = by_external.get((account_id, external_id))
            if post_id is not None:
                keep(post_id, counters_of_event(payload, received_at))
    return latest


async def with_metrics(*, session: AsyncSession, posts: Sequence[Post]) -> list[PostMetrics]:
    """Each post paired with its latest counters."""
    latest = await latest_counters(session=session, posts=posts)
    return [PostMetrics(post=post, latest=latest.get(post.id)) for post in posts]


def record(
    *,
    session: AsyncSession,
    post: Post,
    values: dict[str, Any],
    source: str,
    captured_at: datetime | None = None,
) -> MetricSnapshot:
    """Adds one snapshot of a post; `values` are already validated counts (missing ones are 0 / unknown)."""
    snapshot = MetricSnapshot(
        project_id=post.project_id,
        post_id=post.id,
        platform=post.platform,
        captured_at=captured_at or utcnow(),
        views=values.get("views"),
        likes=int(values.get("likes") or 0),
        comments=int(values.get("comments") or 0),
        shares=int(values.get("shares") or 0),
        saves=values.get("saves"),
        watch_time_minutes=values.get("watch_time_minutes"),
        source=source,
    )
    session.add(snapshot)
    return snapshot
