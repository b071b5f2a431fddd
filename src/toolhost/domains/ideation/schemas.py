"""Inputs and outputs of the ideation tools (CATALOG.md §5)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from toolhost.platform.fields import SOCIAL_PLATFORMS, SocialPlatform, TextFormat, Url, UUIDStr
from toolhost.platform.registry import ToolInput, ToolOutput


class FetchTrendsIn(ToolInput):
    """Where to look for trends."""

    source: Literal["youtube", "google_trends", "rss", "url", "internal"]
    category: Annotated[str, StringConstraints(max_length=100)] = "general"
    niche: Annotated[str, StringConstraints(max_length=200)] | None = None
    url: Url | None = Field(default=None, description="Required for rss and url.")
    force_refresh: bool = False
    project_id: UUIDStr | None = Field(default=None, description="For source internal.")


class Trend(ToolOutput):
    """One trend."""

    title: str
    description: str | None = None
    url: str | None = None
    views: int | None = None
    publishedAt: str | None = None
    source: str
    category: str | None = None
    thumbnail: str | None = None


class FetchTrendsOut(ToolOutput):
    """Trends, newest and most recurring first."""

    trends: list[Trend]
    source: str
    category: str
    cached: bool
    expiresAt: str
    count: int

    def summary(self) -> str:
        if not self.trends:
            return "No trends found for the given criteria."
        lines = [f"Found {self.count} trends from {self.source} ({'cached' if self.cached else 'fresh'}):"]
        for trend in self.trends:
            views = f" ({trend.views:,} views)" if trend.views is not None else ""
            lines.append(f"- {trend.title}{views}")
            if trend.description:
                lines.append(f"  {trend.description[:150]}")
            if trend.url:
                lines.append(f"  {trend.url}")
        return "\n".join(lines)


class GetIdeationContextIn(ToolInput):
    """Which project and window."""

    project_id: UUIDStr | None = None
    days: Annotated[int, Field(ge=1, le=90)] = 30
    response_format: TextFormat = "text"


class GetIdeationContextOut(ToolOutput):
    """What has worked for the project, as data and as one prompt paragraph."""

    projectId: str
    hasHistoricalData: bool
    promptInjection: str
    recommendedModel: str | None
    recommendedDuration: float | None
    recommendedPostingTime: dict[str, Any] | None
    winningPatterns: dict[str, list[str]]
    topHooks: list[str]
    insightsCount: int
    generatedAt: str
    topTopics: list[str] = Field(default_factory=list, description="(ext) words the top posts share more than the rest")
    underperformed: list[str] = Field(
        default_factory=list, description="(ext) the openings of the bottom quarter by engagement rate"
    )

    def summary(self) -> str:
        if not self.hasHistoricalData:
            head = "No performance history yet (fewer than 3 published posts with metrics)."
            return f"{head}\n{self.promptInjection}" if self.promptInjection else head + " No brand pillars either."
        return self.promptInjection


class SuggestNextContentIn(ToolInput):
    """How many suggestions, for which project."""

    project_id: UUIDStr | None = None
    count: Annotated[int, Field(ge=1, le=10)] = 3
    platforms: Annotated[list[SocialPlatform], Field(max_length=len(SOCIAL_PLATFORMS))] | None = None
    response_format: TextFormat = "text"


class Suggestion(ToolOutput):
    """One suggestion with its evidence."""

    topic: str
    platform: str | None
    content_type: str
    rationale: str
    confidence: float
    based_on: list[str]
    suggested_hook: str
    suggested_angle: str


class SuggestNextContentOut(ToolOutput):
    """Suggestions from stored evidence."""

    suggestions: list[Suggestion]
    data_quality: Literal["strong", "moderate", "weak"]
    last_analysis_at: str | None

    def summary(self) -> str:
        if not self.suggestions:
            return f"No suggestions: there is no stored evidence yet (data quality {self.data_quality})."
        lines = [f"{len(self.suggestions)} suggestion(s) (data quality {self.data_quality}):"]
        for number, item in enumerate(self.suggestions, start=1):
            lines.append(
                f"{number}. {item.topic} [{item.content_type}, {item.platform or 'any platform'}] - {item.rationale}"
            )
        return "\n".join(lines)


# --- extract_url_content (brand issue; shares the SSRF-safe fetcher) ----------------------------------------


class ExtractUrlContentIn(ToolInput):
    url: Url
    extract_type: Literal["auto", "transcript", "article", "product"] = "auto"
    response_format: TextFormat = "text"


class VideoMetadata(ToolOutput):
    views: int | None = None
    likes: int | None = None
    duration: str | None = None
    tags: list[str] = Field(default_factory=list)
    channel_name: str | None = None


class ExtractUrlContentOut(ToolOutput):
    source_type: Literal["youtube_video", "youtube_channel", "article", "product"]
    url: str
    title: str
    description: str
    transcript: str | None = Field(default=None, description="For articles: the main text")
    video_metadata: VideoMetadata | None = None
    recent_videos: list[dict[str, Any]] | None = None
    features: list[str] | None = None
    benefits: list[str] | None = None
    usp: str | None = None
    suggested_hooks: list[str] | None = None
    author: str | None = Field(default=None, description="(ext) the article's author")
    published_at: str | None = Field(default=None, description="(ext) the article's date")
    items: list[dict[str, Any]] | None = Field(default=None, description="(ext) a feed's items")

    def summary(self) -> str:
        lines = [f"{self.source_type}: {self.title or self.url}", self.url]
        if self.author or self.published_at:
            lines.append(" · ".join(part for part in (self.author, self.published_at) if part))
        if self.description:
            lines.append(self.description[:300])
        if self.items is not None:
            lines += [f"- {item.get('title')}" for item in self.items[:20]]
        if self.features:
            lines.append("Features: " + "; ".join(self.features[:8]))
        if self.usp:
            lines.append(f"USP: {self.usp}")
        if self.transcript:
            cut = self.transcript[:3000]
            lines.append(cut + (" [...]" if len(self.transcript) > 3000 else ""))
        return "\n".join(lines)
