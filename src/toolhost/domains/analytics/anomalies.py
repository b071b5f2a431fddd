"""Anomalies (detect_anomalies): spikes, drops, viral posts and engagement-rate shifts per platform, the
current window against the one before."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.analytics import metrics
from toolhost.domains.analytics.metrics import PostMetrics

SENSITIVITY = {"low": 50.0, "medium": 30.0, "high": 15.0}


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
        change = metrics.change_pct(now_total, before_total)
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
        rate_now = metrics.engagement_rate(*metrics.totals(current)[::-1])
        rate_before = metrics.engagement_rate(*metrics.totals(previous)[::-1])
        change = metrics.change_pct(rate_now, rate_before)
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
