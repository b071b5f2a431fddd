"""Insight rows (CATALOG.md §11): recomputed from the latest snapshots; a type with fewer than 3 posts gets none.

Each row's `insight_data` is JSON stored as the catalogue shows it (get_performance_insights returns it as is),
so the functions that compute it build dicts.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.analytics import metrics
from toolhost.domains.analytics.metrics import PostMetrics
from toolhost.domains.analytics.models import MetricSnapshot, PerformanceInsight, SwipeItem
from toolhost.domains.distribution.models import ConnectorEvent, Post
from toolhost.platform.jobs import Job
from toolhost.platform.models import Project

MINIMUM_POSTS = 3
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
INSIGHT_TYPES = ("top_hooks", "optimal_timing", "best_models", "competitor_patterns")
HISTORY_DAYS = 90


def hook_of(text: str) -> str:
    """The opening line or sentence of a caption or title: what a reader sees first."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    sentence = re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0]
    return sentence[:160]


def hook_type(hook: str) -> str:
    """A coarse family of an opening line: question, number, how_to, exclamation or statement."""
    lowered = hook.lower()
    if hook.rstrip().endswith("?"):
        return "question"
    if lowered.startswith(("how to", "how i", "how we", "why ", "what ")):
        return "how_to"
    if re.match(r"^\s*\d", hook):
        return "number"
    if hook.rstrip().endswith("!"):
        return "exclamation"
    return "statement"


def content_format(post: Post) -> str:
    """The post's format: its media type in lower case, or text."""
    return (post.media_type or "text").lower()


def title(post: Post) -> str:
    """What a post is called in analytics: its title, else its opening line."""
    return (post.title or hook_of(post.caption) or "")[:300]


def slot_of(post: Post) -> tuple[str, int]:
    """(UTC weekday, UTC hour) of the publication."""
    moment = post.published_at
    assert moment is not None  # published_posts only returns posts with a publication time
    return WEEKDAYS[moment.weekday()], moment.hour


@dataclass(frozen=True, slots=True)
class PostingSlot:
    """A (platform, UTC weekday, UTC hour) slot: the average engagement of its posts and how many there were."""

    platform: str
    day_of_week: str
    hour: int
    avg_engagement: float
    sample_size: int


def best_slots(measured: Sequence[PostMetrics], *, limit: int) -> list[PostingSlot]:
    """The top slots by average engagement: (platform, weekday, hour) groups of posts with metrics."""
    groups: dict[tuple[str, str, int], list[int]] = defaultdict(list)
    for item in measured:
        if item.latest is None:
            continue
        day, hour = slot_of(item.post)
        groups[(item.post.platform, day, hour)].append(item.engagement)
    ranked = sorted(
        groups.items(),
        key=lambda entry: (-sum(entry[1]) / len(entry[1]), -len(entry[1]), entry[0]),
    )
    return [
        PostingSlot(
            platform=platform,
            day_of_week=day,
            hour=hour,
            avg_engagement=round(sum(values) / len(values), 2),
            sample_size=len(values),
        )
        for (platform, day, hour), values in ranked[:limit]
    ]


def _confidence(count: int) -> float:
    # More posts, more trust: 3 posts are 0.3, 10 or more are 1.
    return round(min(1.0, count / 10), 2)


def _top_hooks(measured: list[PostMetrics]) -> dict[str, Any] | None:
    with_text = [item for item in measured if item.latest and hook_of(item.post.title or item.post.caption)]
    if len(with_text) < MINIMUM_POSTS:
        return None
    ranked = sorted(with_text, key=lambda item: (-item.engagement, -item.views))
    families: Counter[str] = Counter()
    hooks = []
    for item in ranked[:10]:
        hook = hook_of(item.post.title or item.post.caption)
        families[hook_type(hook)] += 1
        hooks.append(
            {
                "hook": hook,
                "hook_type": hook_type(hook),
                "post_id": str(item.post.id),
                "platform": item.post.platform,
                "views": item.views,
                "engagement": item.engagement,
                "engagement_rate": metrics.engagement_rate(item.engagement, item.views),
            }
        )
    return {"hooks": hooks, "hook_types": dict(families.most_common()), "posts_analyzed": len(with_text)}


def _optimal_timing(measured: list[PostMetrics]) -> dict[str, Any] | None:
    counted = [item for item in measured if item.latest]
    if len(counted) < MINIMUM_POSTS:
        return None
    return {
        "slots": [dataclasses.asdict(slot) for slot in best_slots(counted, limit=5)],
        "posts_analyzed": len(counted),
    }


async def _best_models(session: AsyncSession, measured: list[PostMetrics]) -> dict[str, Any] | None:
    """Groups posts by the generation model recorded on the job that produced their media, when known."""
    job_ids: dict[uuid.UUID, uuid.UUID] = {}
    for item in measured:
        for entry in item.post.media or []:
            job_id = entry.get("job_id") if isinstance(entry, dict) else None
            if item.latest and job_id:
                try:
                    job_ids[item.post.id] = uuid.UUID(str(job_id))
                except ValueError:
                    continue
                break
    if len(job_ids) < MINIMUM_POSTS:
        return None
    models: dict[uuid.UUID, str] = {}
    for job in await session.scalars(select(Job).where(Job.id.in_(set(job_ids.values())))):
        model = (job.input or {}).get("model") or (job.output or {}).get("model")
        if isinstance(model, str) and model:
            models[job.id] = model[:200]
    groups: dict[str, list[PostMetrics]] = defaultdict(list)
    for item in measured:
        job_id = job_ids.get(item.post.id)
        if job_id in models:
            groups[models[job_id]].append(item)
    if sum(len(items) for items in groups.values()) < MINIMUM_POSTS:
        return None
    return {
        "models": sorted(
            (
                {
                    "model": model,
                    "posts": len(items),
                    "avg_views": round(sum(item.views for item in items) / len(items), 2),
                    "avg_engagement": round(sum(item.engagement for item in items) / len(items), 2),
                }
                for model, items in groups.items()
            ),
            key=lambda entry: (-entry["avg_engagement"], entry["model"]),
        )
    }


async def _competitor_patterns(session: AsyncSession, project_id: uuid.UUID) -> dict[str, Any] | None:
    """The hook families of the account's swipe file items that report views, weighted by views."""
    account_id = await session.scalar(select(Project.account_id).where(Project.id == project_id))
    items = list(
        await session.scalars(
            select(SwipeItem)
            .where(SwipeItem.account_id == account_id, SwipeItem.views.is_not(None))
            .order_by(SwipeItem.views.desc())
            .limit(200)
        )
    )
    if len(items) < MINIMUM_POSTS:
        return None
    families: dict[str, list[int]] = defaultdict(list)
    for item in items:
        families[hook_type(hook_of(item.title))].append(item.views or 0)
    return {
        "hook_types": sorted(
            (
                {"hook_type": family, "items": len(views), "avg_views": round(sum(views) / len(views), 2)}
                for family, views in families.items()
            ),
            key=lambda entry: (-entry["avg_views"], entry["hook_type"]),
        ),
        "top_titles": [{"title": item.title[:300], "views": item.views, "source": item.source} for item in items[:5]],
        "items_analyzed": len(items),
    }


async def recompute(*, session: AsyncSession, project_id: uuid.UUID) -> list[PerformanceInsight]:
    """Replaces the project's insight rows with ones computed from the last 90 days' latest snapshots."""
    since = utcnow() - timedelta(days=HISTORY_DAYS)
    posts = await metrics.published_posts(session=session, project_ids=[project_id], since=since)
    measured = await metrics.with_metrics(session=session, posts=posts)
    computed: dict[str, tuple[dict[str, Any] | None, int]] = {
        "top_hooks": (_top_hooks(measured), sum(1 for item in measured if item.latest)),
        "optimal_timing": (_optimal_timing(measured), sum(1 for item in measured if item.latest)),
        "best_models": (await _best_models(session, measured), sum(1 for item in measured if item.latest)),
    }
    competitor = await _competitor_patterns(session, project_id)
    computed["competitor_patterns"] = (competitor, int(competitor["items_analyzed"]) if competitor else 0)
    await session.execute(delete(PerformanceInsight).where(PerformanceInsight.project_id == project_id))
    now = utcnow()
    rows = [
        PerformanceInsight(
            project_id=project_id,
            insight_type=insight_type,
            insight_data=data,
            confidence_score=_confidence(count),
            generated_at=now,
        )
        for insight_type, (data, count) in computed.items()
        if data is not None
    ]
    session.add_all(rows)
    await session.flush()
    return rows


async def stale(*, session: AsyncSession, project_id: uuid.UUID) -> bool:
    """True when no insight row exists, it is a day old, or a snapshot arrived since it was computed."""
    generated = await session.scalar(
        select(func.max(PerformanceInsight.generated_at)).where(PerformanceInsight.project_id == project_id)
    )
    if generated is None:
        return True
    if utcnow() - generated > timedelta(days=1):
        return True
    pulled = await session.scalar(
        select(func.max(MetricSnapshot.captured_at)).where(MetricSnapshot.project_id == project_id)
    )
    pushed = await session.scalar(
        select(func.max(ConnectorEvent.received_at))
        .join(Post, Post.connected_account_id == ConnectorEvent.connected_account_id)
        .where(Post.project_id == project_id, ConnectorEvent.kind == "metrics")
    )
    return any(moment is not None and moment > generated for moment in (pulled, pushed))
