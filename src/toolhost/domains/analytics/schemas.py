"""Input and output models of the analytics tools (CATALOG.md §11)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from toolhost.platform.fields import CalendarDate, SocialPlatform, TextFormat, UUIDStr, when_given
from toolhost.platform.registry import ToolInput, ToolOutput

InsightType = Literal["top_hooks", "optimal_timing", "best_models", "competitor_patterns"]


class FetchAnalyticsIn(ToolInput):
    platform: SocialPlatform | None = None
    days: Annotated[int, Field(ge=1, le=365)] = 30
    content_id: UUIDStr | None = None
    project_id: UUIDStr | None = None
    limit: Annotated[int, Field(ge=1, le=100)] = 20
    response_format: TextFormat = "text"


class AnalyticsPost(BaseModel):
    id: str
    platform: str
    title: str
    views: int
    engagement: int
    posted_at: str | None
    content_type: str
    model_used: str | None
    captured_at: str | None = Field(description="(ext) when the latest snapshot was taken; null = no metrics yet")


class FetchAnalyticsOut(ToolOutput):
    platform: str | None
    totalViews: int
    totalEngagement: int
    postCount: int
    postsWithMetrics: int = Field(description="(ext) posts that have at least one snapshot")
    posts: list[AnalyticsPost]
    days: int

    def summary(self) -> str:
        scope = self.platform or "all platforms"
        if self.postCount == 0:
            return f"No published posts on {scope} in the last {self.days} days, so there are no analytics yet."
        if self.postsWithMetrics == 0:
            return (
                f"{self.postCount} published post(s) on {scope} in the last {self.days} days, but no metrics "
                "received yet. Call refresh_platform_analytics or send snapshots through the webhook."
            )
        lines = [
            f"{self.postCount} post(s) on {scope} in {self.days} days ({self.postsWithMetrics} with metrics): "
            f"{self.totalViews} views, {self.totalEngagement} engagements."
        ]
        lines += [
            f"{post.views} views, {post.engagement} eng. - {post.platform}: {post.title or post.id}"
            for post in self.posts[:10]
        ]
        return "\n".join(lines)


class RefreshPlatformAnalyticsIn(ToolInput):
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class RefreshPlatformAnalyticsOut(ToolOutput):
    success: bool
    postsProcessed: int
    queued: int
    errored: int
    pushed: int = Field(description="(ext) posts on webhook accounts, whose receivers push their metrics")
    projectId: str

    def summary(self) -> str:
        if self.postsProcessed == 0:
            return "No posts were published in the last 7 days: nothing to refresh."
        return (
            f"{self.postsProcessed} recent post(s): {self.queued} refresh job(s) queued, {self.errored} post(s) "
            f"on unusable accounts or connectors without metrics, {self.pushed} pushed by webhook receivers."
        )


class FetchYoutubeAnalyticsIn(ToolInput):
    model_config = ConfigDict(
        json_schema_extra={"if": when_given("action", {"const": "video"}), "then": when_given("video_id")}
    )

    action: Literal["channel", "daily", "video", "topVideos"]
    start_date: CalendarDate
    # JSON Schema cannot compare two fields: the order of the dates is said in words.
    end_date: CalendarDate = Field(description="YYYY-MM-DD, not before start_date")
    video_id: Annotated[str, Field(min_length=1, max_length=100)] | None = None
    max_results: Annotated[int, Field(ge=1, le=50)] = 10
    connected_account_id: UUIDStr | None = None
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"

    @model_validator(mode="after")
    def _ordered(self) -> FetchYoutubeAnalyticsIn:
        if self.start_date > self.end_date:
            raise ValueError("start_date must not be after end_date")
        if self.action == "video" and not self.video_id:
            raise ValueError("video_id is required for action video")
        return self


class GetPerformanceInsightsIn(ToolInput):
    insight_type: InsightType | None = None
    days: Annotated[int, Field(ge=1, le=90)] = 30
    limit: Annotated[int, Field(ge=1, le=50)] = 10
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class Insight(BaseModel):
    id: str
    project_id: str
    insight_type: str
    insight_data: dict[str, Any]
    confidence_score: float
    generated_at: str | None


class GetPerformanceInsightsOut(ToolOutput):
    insights: list[Insight]
    days: int
    insightType: str | None

    def summary(self) -> str:
        if not self.insights:
            return (
                "No insights yet: each insight type needs at least 3 published posts with metrics "
                "(competitor patterns: 3 swipe file items with views)."
            )
        return "\n".join(
            f"{row.insight_type} (confidence {row.confidence_score:.2f}, {row.generated_at})" for row in self.insights
        )


class GetBestPostingTimesIn(ToolInput):
    platform: SocialPlatform | None = None
    days: Annotated[int, Field(ge=1, le=90)] = 30
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class PostingSlot(BaseModel):
    platform: str
    day_of_week: str
    hour: int
    avg_engagement: float
    sample_size: int


class GetBestPostingTimesOut(ToolOutput):
    platform: str | None
    days: int
    recordsAnalyzed: int
    slots: list[PostingSlot]

    def summary(self) -> str:
        if not self.slots:
            return f"No published posts with metrics in the last {self.days} days: no posting times can be ranked."
        return f"{self.recordsAnalyzed} post(s) analysed. Best slots (UTC):\n" + "\n".join(
            f"{slot.platform} {slot.day_of_week} {slot.hour:02d}:00 - avg engagement {slot.avg_engagement} "
            f"({slot.sample_size} post(s))"
            for slot in self.slots
        )


class GeneratePerformanceDigestIn(ToolInput):
    project_id: UUIDStr | None = None
    period: Literal["7d", "14d", "30d"] = "7d"
    include_recommendations: bool = True
    response_format: TextFormat = "text"


class BriefPost(BaseModel):
    id: str
    platform: str
    title: str
    views: int
    engagement: int


class PlatformBreakdown(BaseModel):
    platform: str
    posts: int
    views: int
    engagement: int


class DigestMetrics(BaseModel):
    total_posts: int
    total_views: int
    total_engagement: int
    avg_engagement_rate: float
    best_performing: BriefPost | None
    worst_performing: BriefPost | None
    platform_breakdown: list[PlatformBreakdown]
    posts_with_metrics: int = Field(description="(ext) posts of the period that have at least one snapshot")


class TrendChange(BaseModel):
    direction: Literal["up", "down", "flat"]
    change_pct: float


class Trends(BaseModel):
    views: TrendChange
    engagement: TrendChange


class WinningPatterns(BaseModel):
    hook_types: list[str]
    content_formats: list[str]
    posting_times: list[str]


class GeneratePerformanceDigestOut(ToolOutput):
    period: str
    period_start: str
    period_end: str
    metrics: DigestMetrics
    trends: Trends
    recommendations: list[str]
    winning_patterns: WinningPatterns
    has_data: bool = Field(description="(ext) false when no post of the period has metrics")

    def summary(self) -> str:
        m = self.metrics
        head = f"Digest {self.period_start} to {self.period_end}: {m.total_posts} post(s)"
        if not self.has_data:
            head += ", no metrics received for them yet."
        else:
            head += (
                f", {m.total_views} views ({self.trends.views.direction} {self.trends.views.change_pct}%), "
                f"{m.total_engagement} engagements ({self.trends.engagement.direction} "
                f"{self.trends.engagement.change_pct}%), engagement rate {m.avg_engagement_rate}%."
            )
        return "\n".join([head, *(f"- {line}" for line in self.recommendations)])


class DetectAnomaliesIn(ToolInput):
    project_id: UUIDStr | None = None
    days: Annotated[int, Field(ge=7, le=90)] = 14
    sensitivity: Literal["low", "medium", "high"] = "medium"
    platforms: Annotated[list[SocialPlatform], Field(max_length=100)] | None = None
    response_format: TextFormat = "text"


class AnomalyPeriod(BaseModel):
    current_start: str
    current_end: str


class Anomaly(BaseModel):
    type: Literal["spike", "drop", "viral", "trend_shift"]
    metric: str
    platform: str
    magnitude: float
    period: AnomalyPeriod
    affected_posts: list[BriefPost]
    confidence: float
    suggested_action: str


class DetectAnomaliesOut(ToolOutput):
    anomalies: list[Anomaly]
    # The catalogue names this key `summary`, which ToolOutput uses for the text method.
    summary_text: str = Field(alias="summary")

    model_config = ConfigDict(populate_by_name=True, extra="forbid", serialize_by_alias=True)

    def summary(self) -> str:
        return "\n".join(
            [self.summary_text] + [f"- {a.type} in {a.metric} on {a.platform}: {a.magnitude}" for a in self.anomalies]
        )


class GetLoopSummaryIn(ToolInput):
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class BrandStatus(BaseModel):
    hasProfile: bool
    brandName: str | None = None
    version: int | None = None
    updatedAt: str | None = None


class GetLoopSummaryOut(ToolOutput):
    brandStatus: BrandStatus
    recentContent: list[dict[str, Any]]
    currentInsights: list[Insight]
    recommendedNextAction: str

    def summary(self) -> str:
        brand = self.brandStatus.brandName or (
            "brand profile saved" if self.brandStatus.hasProfile else "no brand profile"
        )
        counts = f"{len(self.recentContent)} recent post(s); {len(self.currentInsights)} insight(s)"
        return f"{brand}; {counts}.\nNext: {self.recommendedNextAction}"


class FetchYoutubeAnalyticsOut(ToolOutput):
    action: str
    startDate: str
    endDate: str
    analytics: dict[str, float | int] | None = None
    dailyAnalytics: list[dict[str, Any]] | None = None
    videoId: str | None = None
    averageViewDuration: float | int | None = None
    topVideos: list[dict[str, Any]] | None = None

    def summary(self) -> str:
        head = f"YouTube {self.action} {self.startDate} to {self.endDate}"
        if self.analytics is not None:
            return f"{head}: " + ", ".join(f"{name} {value}" for name, value in self.analytics.items())
        if self.dailyAnalytics is not None:
            return f"{head}: {len(self.dailyAnalytics)} day(s) of data."
        return f"{head}: {len(self.topVideos or [])} video(s)."


# --- find_winning_content ------------------------------------------------------------------------------------


class FindWinningContentIn(ToolInput):
    """Where and how far back to look for winners, and how good they must be."""

    project_id: UUIDStr | None = None
    platform: SocialPlatform | None = None
    days: Annotated[int, Field(ge=1, le=365)] = 30
    limit: Annotated[int, Field(ge=1, le=50)] = 10
    min_qa_score: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 0.5
    response_format: TextFormat = "text"


class WinnerMetrics(ToolOutput):
    """The counters behind a winner (a swipe item only has views)."""

    views: int
    likes: int | None
    comments: int | None
    shares: int | None


class Winner(ToolOutput):
    """One winning post or swipe-file item, with a rule-based analysis of why."""

    id: str
    source_platform: str
    source_url: str | None
    creator_name: str | None
    title: str
    hook_text: str
    hook_type: str | None
    story_type: Literal["list", "how-to", "story", "opinion", "announcement"]
    visual_pattern: str
    emotional_triggers: list[str]
    content_structure: str
    metrics: WinnerMetrics
    velocity_vph: float
    qa_score: float
    is_viral: bool
    ai_analysis: str
    replication_prompt: str
    scanned_at: str


class FindWinningContentOut(ToolOutput):
    """The winners, best first."""

    winners: list[Winner]
    count: int
    filters: dict[str, Any]

    def summary(self) -> str:
        if not self.winners:
            return self.model_dump_json(indent=2)
        lines = [f"{self.count} winner(s):"]
        for number, item in enumerate(self.winners, start=1):
            viral = ", viral" if item.is_viral else ""
            lines.append(
                f"{number}. [{item.source_platform}] {item.title} - qa {item.qa_score:.2f}, "
                f"{item.metrics.views:,} views, {item.velocity_vph:,.2f} views/h{viral}"
            )
        return "\n".join(lines)
