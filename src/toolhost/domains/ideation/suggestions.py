"""suggest_next_content: what to post next, from stored evidence only, in the catalogue's rule order (the
project's top hooks, the account's swipe file, the brand's pillars against what was made recently)."""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.domains.analytics import service as analytics_service
from toolhost.domains.analytics.models import PerformanceInsight, SwipeItem
from toolhost.domains.brand import service as brand_service
from toolhost.domains.content.models import ContentRecord
from toolhost.domains.planning.models import ContentPlan
from toolhost.providers.text.base import BrandContext
from toolhost.providers.text.compose import extract_topic

CONTENT_TYPES = ("script", "caption", "blog", "hook")
# The window of measured posts that internal trends and suggestions both stand on.
INTERNAL_TRENDS_DAYS = 90


async def _recent_titles(session: AsyncSession, project_ids: list[uuid.UUID], since: datetime) -> str:
    texts = list(
        await session.scalars(
            select(ContentRecord.prompt).where(
                ContentRecord.project_id.in_(project_ids), ContentRecord.created_at >= since
            )
        )
    )
    texts += list(
        await session.scalars(
            select(ContentPlan.topic).where(ContentPlan.project_id.in_(project_ids), ContentPlan.created_at >= since)
        )
    )
    return " \n ".join(texts).lower()


async def _latest_plan_platforms(session: AsyncSession, project_ids: list[uuid.UUID]) -> list[str]:
    plan = await session.scalar(
        select(ContentPlan)
        .where(ContentPlan.project_id.in_(project_ids))
        .order_by(ContentPlan.created_at.desc())
        .limit(1)
    )
    if plan is None:
        return []
    platforms = plan.payload.get("platforms") or [post.get("platform") for post in plan.payload.get("posts", [])]
    return [str(platform) for platform in dict.fromkeys(platforms) if platform]


def _confidence(evidence: int) -> float:
    return round(min(0.9, 0.3 + 0.15 * evidence), 2)


Quality = Literal["strong", "moderate", "weak"]


@dataclass(frozen=True, slots=True)
class Suggestion:
    """Something to post next, why, and the stored evidence it is based on (`kind:id` references)."""

    topic: str
    platform: str | None
    content_type: str
    rationale: str
    confidence: float
    based_on: list[str]
    suggested_hook: str
    suggested_angle: str


@dataclass(frozen=True, slots=True)
class Suggestions:
    """The suggestions, how much measured evidence they stand on, and when the insights were last computed."""

    suggestions: list[Suggestion]
    data_quality: Quality
    last_analysis_at: datetime | None


async def suggest_next(
    *,
    session: AsyncSession,
    account_id: uuid.UUID,
    project_ids: list[uuid.UUID],
    brand_project_id: uuid.UUID | None,
    count: int,
    platforms: Sequence[str] | None,
) -> Suggestions:
    """suggest_next_content: suggestions from stored evidence only, in the catalogue's rule order."""
    now = datetime.now(UTC)
    plan_platforms = await _latest_plan_platforms(session, project_ids)
    rotation = plan_platforms or list(platforms or [])
    suggestions: list[Suggestion] = []

    def platform_for(index: int) -> str | None:
        return rotation[index % len(rotation)] if rotation else None

    # (1) Hook insights: the openings of the posts with most engagement, on the platform they ran on.
    measured_posts = 0
    last_analysis: datetime | None = None
    hook_insights: list[PerformanceInsight] = []
    for project_id in project_ids:
        summary = await analytics_service.performance_summary(
            session=session, project_id=project_id, days=INTERNAL_TRENDS_DAYS
        )
        measured_posts += summary.measured_posts
        found = await analytics_service.performance_insights(
            session=session, project_id=project_id, insight_type=None, days=INTERNAL_TRENDS_DAYS, limit=50
        )
        for insight in found:
            if last_analysis is None or insight.generated_at > last_analysis:
                last_analysis = insight.generated_at
            if insight.insight_type == "top_hooks":
                hook_insights.append(insight)
    for insight in hook_insights[: math.ceil(count / 2)]:
        for hook in insight.insight_data["hooks"][:2]:
            if len(suggestions) >= count:
                break
            topic = extract_topic(hook["hook"])
            suggestions.append(
                Suggestion(
                    topic=topic,
                    platform=hook["platform"],
                    content_type="caption",
                    rationale=(
                        f'Your {hook["platform"]} post opening "{hook["hook"][:120]}" drew '
                        f"{hook['engagement']:,} engagements on {hook['views']:,} views "
                        f"({hook['engagement_rate']}%), among your best of the last {INTERNAL_TRENDS_DAYS} days."
                    ),
                    confidence=_confidence(1 + insight.insight_data["posts_analyzed"] // 3),
                    based_on=[f"insight:{insight.id}", f"post:{hook['post_id']}"],
                    suggested_hook=hook["hook"][:300],
                    suggested_angle=f"a follow-up on {topic}: the same kind of opening, a new example",
                )
            )
    # (2) The swipe file's most-viewed items.
    covered = await _recent_titles(session, project_ids, now - timedelta(days=30))
    swipe = list(
        await session.scalars(
            select(SwipeItem)
            .where(SwipeItem.account_id == account_id)
            .order_by(SwipeItem.views.desc().nulls_last(), SwipeItem.captured_at.desc())
            .limit(50)
        )
    )
    for item in swipe:
        if len([s for s in suggestions if s.based_on[0].startswith("swipe")]) >= math.ceil(count / 3):
            break
        if item.title.lower() in covered or len(suggestions) >= count:
            continue
        views = f" with {item.views:,} views" if item.views else ""
        suggestions.append(
            Suggestion(
                topic=item.title,
                platform=platform_for(len(suggestions)),
                content_type="caption",
                rationale=f"A {item.source} item in your swipe file{views} that no recent post covers.",
                confidence=_confidence(1 + (1 if item.views else 0)),
                based_on=[f"swipe_item:{item.id}"],
                suggested_hook=f"What {item.title[:80]} means for you",
                suggested_angle="your take on it, with one concrete example",
            )
        )
    # (3) Content types the project under-uses.
    made_rows = list(
        await session.execute(
            select(ContentRecord.content_type, ContentRecord.prompt)
            .where(
                ContentRecord.project_id.in_(project_ids),
                ContentRecord.kind == "text",
                ContentRecord.created_at >= now - timedelta(days=90),
            )
            .order_by(ContentRecord.created_at.desc())
        )
    )
    used = [row[0] for row in made_rows]
    brand = BrandContext.from_runtime(
        await brand_service.get_runtime(session=session, project_id=brand_project_id) if brand_project_id else None
    )
    pillar = brand.content_pillars[0][0] if brand.content_pillars else None
    if used:
        share = len(used) / len(CONTENT_TYPES)
        for content_type in CONTENT_TYPES:
            if len(suggestions) >= count:
                break
            made = used.count(content_type)
            if made < share / 2:
                # The topic is one the project already writes about, in a format it has not used for it.
                topic = pillar or extract_topic(made_rows[0][1])
                suggestions.append(
                    Suggestion(
                        topic=topic,
                        platform=platform_for(len(suggestions)),
                        content_type=content_type,
                        rationale=f"{made} of your last {len(used)} were {content_type}s, under half an even share.",
                        confidence=_confidence(2),
                        based_on=[f"content_records:{len(used)}"],
                        suggested_hook=f"A {content_type} on {topic}",
                        suggested_angle="a format your audience has not seen from you lately",
                    )
                )
    # (4) One behind-the-scenes post from the brand's pillars.
    if pillar and len(suggestions) < count:
        suggestions.append(
            Suggestion(
                topic=f"Behind the scenes: {pillar}",
                platform=platform_for(len(suggestions)),
                content_type="caption",
                rationale="Built from your brand's top content pillar"
                + ("." if measured_posts else "; no performance data exists yet."),
                confidence=_confidence(1),
                based_on=[f"brand_pillar:{pillar}"],
                suggested_hook=f"How we actually work on {pillar}",
                suggested_angle="show the process and the people, not the product",
            )
        )
    # Quality counts measured posts: the insight rows are recomputed into at most four per project, so the
    # catalogue's count of rows (>= 10 strong) could never leave weak-or-moderate.
    quality: Quality = "strong" if measured_posts >= 10 else "moderate" if measured_posts >= 3 else "weak"
    return Suggestions(suggestions=suggestions[:count], data_quality=quality, last_analysis_at=last_analysis)
