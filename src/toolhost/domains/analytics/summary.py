"""What a project's measured posts say, read for ideation (`performance_summary`): the top posts, the
patterns of the top quarter, the topics that worked, the best slot and the underperformers."""

from __future__ import annotations

import math
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.analytics import insights, metrics, winners
from toolhost.domains.analytics.insights import PostingSlot
from toolhost.domains.analytics.metrics import PostMetrics
from toolhost.platform.dates import iso
from toolhost.providers.text import analysis


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
        title=insights.title(item.post),
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
