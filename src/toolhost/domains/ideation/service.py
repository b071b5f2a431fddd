"""Ideation services: trends (fetched, cached, recorded in the swipe file) and the ideation context; suggestions
have a module of their own (`suggestions`), re-exported here.

What worked comes from the analytics service (`performance_summary`, `performance_insights`): the project's
published posts with metrics, never an estimate.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.config import Settings
from toolhost.db.session import end_unit_of_work
from toolhost.domains.analytics import service as analytics_service
from toolhost.domains.analytics.models import SwipeItem
from toolhost.domains.analytics.service import MeasuredPost, PerformanceSummary
from toolhost.domains.brand import service as brand_service
from toolhost.domains.content import service as content_service
from toolhost.domains.ideation import trends as trend_parsing
from toolhost.domains.ideation.models import TrendCache
from toolhost.domains.ideation.suggestions import INTERNAL_TRENDS_DAYS
from toolhost.domains.ideation.suggestions import suggest_next as suggest_next
from toolhost.domains.ideation.trends import TrendRecord

# Reading a URL as extract_url_content does, for the content pipeline's research and plan stages.
from toolhost.domains.ideation.url_content import extract as extract
from toolhost.domains.ideation.youtube import ConnectedYouTube
from toolhost.domains.planning import service as planning_service
from toolhost.platform.dates import as_utc, parse_iso
from toolhost.platform.results import ValidationFailed
from toolhost.providers.fetch import Fetcher
from toolhost.providers.text.base import BrandContext

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


@dataclass(frozen=True, slots=True)
class FetchedTrends:
    """fetch_trends' answer: the trends (as the cache stores them), whether they came from it, until when."""

    trends: list[TrendRecord]
    cached: bool
    expires_at: datetime


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
) -> FetchedTrends:
    """Trends for a source, whether they came from the cache, and until when. Feed, page and YouTube results are
    cached per account.

    `youtube` is the caller's connected YouTube channel (None without the connector or a connected channel).
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
        return FetchedTrends(
            trends=[_internal_trend(post, category) for post in summary.top_posts], cached=False, expires_at=now
        )
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
        return FetchedTrends(trends=list(cached.trends), cached=True, expires_at=as_utc(cached.expires_at))
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
    return FetchedTrends(trends=found, cached=False, expires_at=expires)


def _internal_trend(post: MeasuredPost, category: str) -> TrendRecord:
    """One of the project's top posts as a trend: its opening, its figures, where it ran."""
    hook_type = f", a {post.hook_type.replace('_', '-')} opening" if post.hook_type else ""
    trend: TrendRecord = {
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


@dataclass(frozen=True, slots=True)
class PostingTime:
    """The best posting slot of the window (a weekday key, mon to sun, and an hour, in UTC) and why."""

    day_of_week: str
    hour_of_day: int
    timezone: str
    reasoning: str

    def record(self) -> dict[str, Any]:
        """The catalogue's recommendedPostingTime object, as get_ideation_context answers it and a plan stores it."""
        return {
            "dayOfWeek": self.day_of_week,
            "hourOfDay": self.hour_of_day,
            "timezone": self.timezone,
            "reasoning": self.reasoning,
        }


def _posting_time(summary: PerformanceSummary) -> PostingTime | None:
    slot = summary.best_slot
    if slot is None:
        return None
    return PostingTime(
        day_of_week=slot.day_of_week,
        hour_of_day=slot.hour,
        timezone="UTC",
        reasoning=(
            f"{slot.platform} posts published {WEEKDAY_NAMES[slot.day_of_week]} at {slot.hour:02d}:00 UTC "
            f"averaged {slot.avg_engagement:,} engagements ({slot.sample_size} post(s)), "
            f"the best slot of {summary.measured_posts} measured posts in {summary.days} days."
        ),
    )


def _injection(summary: PerformanceSummary, posting_time: PostingTime | None) -> str:
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
        parts.append(f"Best time: {WEEKDAY_NAMES[posting_time.day_of_week]} {posting_time.hour_of_day:02d}:00 UTC.")
    if summary.underperformers:
        weak = "; ".join(f'"{post.hook}" ({post.engagement_rate}%)' for post in summary.underperformers[:3])
        parts.append(f"Underperformed, avoid repeating: {weak}.")
    return " ".join(parts)[:PROMPT_CONTEXT_CHARS]


@dataclass(frozen=True, slots=True)
class IdeationContext:
    """What worked for a project over a window of days, as data and as one prompt paragraph."""

    project_id: uuid.UUID
    has_historical_data: bool
    prompt_injection: str
    recommended_posting_time: PostingTime | None
    hook_types: list[str]
    content_formats: list[str]
    cta_styles: list[str]
    top_hooks: list[str]
    insights_count: int
    generated_at: str
    top_topics: list[str]
    underperformed: list[str]
    # Posts record neither the text model nor a duration, so neither can be recommended from them.
    recommended_model: str | None = None
    recommended_duration: float | None = None

    @property
    def winning_patterns(self) -> dict[str, list[str]]:
        """The hook types, formats and calls to action of the top posts, keyed as the catalogue names them."""
        return {"hookTypes": self.hook_types, "contentFormats": self.content_formats, "ctaStyles": self.cta_styles}

    def plan_insights(self) -> planning_service.PlanInsights:
        """What plan_content_week applies and records of it (planning sits below ideation and cannot read this)."""
        return planning_service.PlanInsights(
            prompt_injection=self.prompt_injection,
            top_hooks=self.top_hooks,
            optimal_timing=self.recommended_posting_time.record() if self.recommended_posting_time else None,
            recommended_model=self.recommended_model,
            winning_patterns=self.winning_patterns,
            insights_count=self.insights_count,
            has_historical_data=self.has_historical_data,
        )


async def ideation_context(*, session: AsyncSession, project_id: uuid.UUID, days: int) -> IdeationContext:
    """get_ideation_context: what worked for the project over `days` days; without history, the brand's pillars."""
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
    return IdeationContext(
        project_id=project_id,
        has_historical_data=has_history,
        prompt_injection=injection,
        recommended_posting_time=posting_time,
        hook_types=summary.hook_types,
        content_formats=summary.content_formats,
        cta_styles=summary.cta_styles,
        top_hooks=[post.hook for post in summary.top_posts if post.hook],
        insights_count=len(insights),
        generated_at=summary.generated_at,
        top_topics=summary.topics,
        underperformed=[post.hook for post in summary.underperformers if post.hook],
    )
