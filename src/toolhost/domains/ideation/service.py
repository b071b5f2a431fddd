"""Ideation services: trends (fetched, cached, recorded in the swipe file), ideation context, suggestions.

What worked comes from the analytics service (`performance_summary`, `performance_insights`): the project's
published posts with metrics, never an estimate.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.config import Settings
from toolhost.db.session import end_unit_of_work
from toolhost.domains.analytics import service as analytics_service
from toolhost.domains.analytics.models import PerformanceInsight, SwipeItem
from toolhost.domains.analytics.service import MeasuredPost, PerformanceSummary
from toolhost.domains.brand import service as brand_service
from toolhost.domains.content import service as content_service
from toolhost.domains.content.models import ContentRecord
from toolhost.domains.ideation import trends as trend_parsing
from toolhost.domains.ideation.models import TrendCache

# Reading a URL as extract_url_content does, for the content pipeline's research and plan stages.
from toolhost.domains.ideation.url_content import extract as extract
from toolhost.domains.ideation.youtube import ConnectedYouTube
from toolhost.domains.planning.models import ContentPlan
from toolhost.platform.dates import as_utc, parse_iso
from toolhost.platform.results import ValidationFailed
from toolhost.providers.fetch import Fetcher
from toolhost.providers.text.base import BrandContext
from toolhost.providers.text.compose import extract_topic

CONTENT_TYPES = ("script", "caption", "blog", "hook")
INTERNAL_TRENDS_DAYS = 90
PROMPT_CONTEXT_CHARS = 2000
WEEKDAY_NAMES = {
    "mon": "Monday",
    "tue": "Tuesday",
    "wed": "Wednesday",
    "thu": "Thursday",
    "fri": "Friday",
    "sat": "Saturday",
    "sun": "Sunday",
}


# --- swipe file -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SwipeEntry:
    """An external item the account read (an article, a video, a feed entry), for the swipe file."""

    title: str
    url: str | None = None
    views: int | None = None
    published_at: datetime | None = None
    source: str = "url"


async def record_swipe_items(session: AsyncSession, *, account_id: uuid.UUID, items: Sequence[SwipeEntry]) -> int:
    """Adds external items to the swipe file, once per URL and title; returns the new rows."""
    added = 0
    for item in items:
        title = item.title.strip()[:1000]
        if not title:
            continue
        key = hashlib.sha256(f"{item.url or ''}\x1f{title.lower()}".encode()).hexdigest()
        exists = await session.scalar(
            select(SwipeItem.id).where(SwipeItem.account_id == account_id, SwipeItem.item_key == key)
        )
        if exists is not None:
            continue
        session.add(
            SwipeItem(
                id=uuid.uuid4(),
                account_id=account_id,
                item_key=key,
                url=item.url,
                title=title,
                views=item.views,
                published_at=item.published_at,
                source=(item.source or "url")[:40],
            )
        )
        added += 1
    await session.flush()
    return added


# --- fetch_trends -----------------------------------------------------------------------------------------


async def fetch_trends(
    *,
    session: AsyncSession,
    settings: Settings,
    account_id: uuid.UUID,
    project_id: uuid.UUID | None,
    source: str,
    category: str,
    niche: str | None,
    url: str | None,
    force_refresh: bool,
    youtube: ConnectedYouTube | None,
) -> tuple[list[dict[str, Any]], bool, datetime]:
    """Trends for a source: (trends, cached, expires_at). Feed, page and YouTube results are cached per account.

    `youtube` is the caller's connected YouTube channel (None without the connector or a connected channel).
    A trend is a dict in the catalogue's shape because that is what the cache stores and returns.
    """
    if source == "google_trends":
        raise ValidationFailed(
            "google_trends is not available: no trends provider is configured",
            recover_with="use source rss or url with a feed or page of your niche",
        )
    if source == "youtube" and youtube is None:
        raise ValidationFailed(
            "youtube trends need the YouTube connector and a connected YouTube channel: set "
            "distribution.connectors.youtube_client_id and youtube_client_secret, and connect a YouTube account "
            "(start_platform_connection, platform youtube)",
            recover_with="use source rss with a channel or news feed instead",
        )
    now = datetime.now(UTC)
    if source == "internal":
        if project_id is None:
            raise ValidationFailed(
                "project_id is required for source internal",
                field_errors=[{"path": "project_id", "message": "required for internal"}],
            )
        summary = await analytics_service.performance_summary(
            session=session, project_id=project_id, days=INTERNAL_TRENDS_DAYS
        )
        return [_internal_trend(post, category) for post in summary.top_posts], False, now
    if source != "youtube" and not url:
        raise ValidationFailed(
            f"url is required for source {source}",
            field_errors=[{"path": "url", "message": f"required for source {source}"}],
        )
    key = hashlib.sha256("\x1f".join([source, url or "", category, niche or ""]).encode()).hexdigest()
    cached = await session.scalar(
        select(TrendCache).where(TrendCache.account_id == account_id, TrendCache.cache_key == key)
    )
    if cached is not None and not force_refresh and as_utc(cached.expires_at) > now:
        return list(cached.trends), True, as_utc(cached.expires_at)
    await end_unit_of_work(session)
    if youtube is not None and source == "youtube":
        # The search already asked YouTube for the niche: its matches need not repeat the niche's words.
        found = await youtube.trends(niche=niche, category=category)
        youtube.store_refreshed()
    else:
        assert url is not None  # checked above for every source but youtube
        fetched = (await Fetcher(settings.fetch).get(url, max_bytes=settings.fetch.max_page_bytes)).ensure_success()
        if source == "rss":
            found = trend_parsing.parse_feed(fetched.content, category=category)
        else:
            found = trend_parsing.parse_page(fetched.text, url=fetched.url, category=category)
        found = trend_parsing.keep_niche(found, niche)
    expires = now + timedelta(seconds=settings.quality.trends_cache_seconds)
    if cached is None:
        session.add(
            TrendCache(
                id=uuid.uuid4(),
                account_id=account_id,
                cache_key=key,
                source=source,
                trends=found,
                fetched_at=now,
                expires_at=expires,
            )
        )
    else:
        cached.trends, cached.fetched_at, cached.expires_at = found, now, expires
    await record_swipe_items(
        session,
        account_id=account_id,
        items=[
            SwipeEntry(
                url=item.get("url"),
                title=item["title"],
                views=item.get("views"),
                source=source,
                published_at=parse_iso(item["publishedAt"]) if item.get("publishedAt") else None,
            )
            for item in found
        ],
    )
    await session.flush()
    return found, False, expires


def _internal_trend(post: MeasuredPost, category: str) -> dict[str, Any]:
    """One of the project's top posts as a trend: its opening, its figures, where it ran."""
    hook_type = f", a {post.hook_type.replace('_', '-')} opening" if post.hook_type else ""
    trend: dict[str, Any] = {
        "title": post.hook or post.title or f"{post.platform} post {post.id}",
        "description": (
            f"{post.engagement:,} engagements on {post.views:,} views ({post.engagement_rate}%) on "
            f"{post.platform}, {post.content_format}{hook_type}."
        ),
        "views": post.views,
        "source": "internal",
        "category": category,
    }
    if post.url:
        trend["url"] = post.url
    if post.published_at:
        trend["publishedAt"] = post.published_at
    return trend


# --- get_ideation_context ---------------------------------------------------------------------------------


def _posting_time(summary: PerformanceSummary) -> dict[str, Any] | None:
    slot = summary.best_slot
    if slot is None:
        return None
    return {
        "dayOfWeek": slot.day_of_week,
        "hourOfDay": slot.hour,
        "timezone": "UTC",
        "reasoning": (
            f"{slot.platform} posts published {WEEKDAY_NAMES[slot.day_of_week]} at {slot.hour:02d}:00 UTC "
            f"averaged {slot.avg_engagement:,} engagements ({slot.sample_size} post(s)), "
            f"the best slot of {summary.measured_posts} measured posts in {summary.days} days."
        ),
    }


def _injection(summary: PerformanceSummary, posting_time: dict[str, Any] | None) -> str:
    """One compact paragraph of what worked and what did not, for a generation prompt."""
    parts = [f"From {summary.measured_posts} measured posts of the last {summary.days} days:"]
    if summary.top_posts:
        hooks = "; ".join(f'"{post.hook}" ({post.engagement:,} engagements)' for post in summary.top_posts[:3])
        parts.append(f"openings that worked: {hooks}.")
    if summary.hook_types:
        parts.append(f"Hook types of the top posts: {', '.join(summary.hook_types)}.")
    if summary.content_formats:
        parts.append(f"Formats of the top posts: {', '.join(summary.content_formats)}.")
    if summary.topics:
        parts.append(f"Subjects that did well: {', '.join(summary.topics)}.")
    if summary.cta_styles:
        parts.append(f"Calls to action in top posts: {', '.join(summary.cta_styles)}.")
    if posting_time:
        parts.append(f"Best time: {WEEKDAY_NAMES[posting_time['dayOfWeek']]} {posting_time['hourOfDay']:02d}:00 UTC.")
    if summary.underperformers:
        weak = "; ".join(f'"{post.hook}" ({post.engagement_rate}%)' for post in summary.underperformers[:3])
        parts.append(f"Underperformed, avoid repeating: {weak}.")
    return " ".join(parts)[:PROMPT_CONTEXT_CHARS]


async def ideation_context(*, session: AsyncSession, project_id: uuid.UUID, days: int) -> dict[str, Any]:
    """get_ideation_context: what worked for the project over `days` days; without history, the brand's pillars.

    A dict in the catalogue's shape, because planning (below ideation, so it cannot import a type of it) reads
    it as JSON and stores it in the plan as `insights_applied`.
    """
    summary = await analytics_service.performance_summary(session=session, project_id=project_id, days=days)
    insights = await analytics_service.performance_insights(
        session=session, project_id=project_id, insight_type=None, days=days, limit=50
    )
    has_history = bool(summary.top_posts)
    posting_time = _posting_time(summary) if has_history else None
    if has_history:
        injection = _injection(summary, posting_time)
    else:
        brand = BrandContext.from_runtime(await brand_service.get_runtime(session=session, project_id=project_id))
        injection = content_service.pillar_sentence(brand)[:PROMPT_CONTEXT_CHARS]
    return {
        "projectId": str(project_id),
        "hasHistoricalData": has_history,
        "promptInjection": injection,
        # Posts record neither the text model nor a duration, so neither can be recommended from them.
        "recommendedModel": None,
        "recommendedDuration": None,
        "recommendedPostingTime": posting_time,
        "winningPatterns": {
            "hookTypes": summary.hook_types,
            "contentFormats": summary.content_formats,
            "ctaStyles": summary.cta_styles,
        },
        "topHooks": [post.hook for post in summary.top_posts if post.hook],
        "insightsCount": len(insights),
        "generatedAt": summary.generated_at,
        "topTopics": summary.topics,
        "underperformed": [post.hook for post in summary.underperformers if post.hook],
    }


# --- suggest_next_content ---------------------------------------------------------------------------------


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
