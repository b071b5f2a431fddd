"""Inputs and outputs of the apps tools (CATALOG.md §19); each output carries its UI as an extra content block."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from toolhost.domains.apps import ui
from toolhost.platform.fields import CalendarDate, SocialPlatform, UUIDStr
from toolhost.platform.registry import ToolInput, ToolOutput


class OpenContentCalendarIn(ToolInput):
    """Which project and week to show."""

    project_id: UUIDStr | None = None
    start_date: CalendarDate | None = Field(
        default=None, description="First day of the 7-day window; = this UTC week's Monday."
    )


class CalendarPost(ToolOutput):
    """A post, with list_recent_posts' keys."""

    id: str
    platform: str
    status: str
    title: str | None
    first_line: str = Field(description="The caption's first non-blank line (ext), what a card shows.")
    external_post_id: str | None
    published_at: str | None
    scheduled_at: str | None
    created_at: str | None
    error: str | None


class OpenContentCalendarOut(ToolOutput):
    """A week of the project's posts, and what the caller may do with them."""

    start_date: str
    project_id: str
    posts: list[CalendarPost]
    scopes: list[str]

    def summary(self) -> str:
        return f"Content calendar for the week of {self.start_date}: {len(self.posts)} post(s)."

    def extra_content(self) -> list[dict[str, Any]]:
        return [ui.resource_block("calendar", self.model_dump(mode="json"))]


class OpenAnalyticsPulseIn(ToolInput):
    """Which project, platform and window to show."""

    project_id: UUIDStr | None = None
    platform: SocialPlatform | None = None
    days: int = Field(default=30, ge=1, le=365)


class PulseSummary(ToolOutput):
    """Totals over the window."""

    views: int
    engagement: int
    engagement_rate: float
    posts: int
    posts_with_metrics: int = Field(description="(ext) posts that have at least one snapshot")


class PlatformTotal(ToolOutput):
    """One platform's totals."""

    platform: str
    views: int
    engagement: int
    posts: int


class PulsePost(ToolOutput):
    """A published post and its latest snapshot (zeros and a null captured_at when it has none yet)."""

    id: str = Field(description="(ext) the post id")
    platform: str
    title: str
    views: int
    likes: int
    comments: int
    shares: int
    engagement_rate: float
    captured_at: str | None
    published_at: str | None


class OpenAnalyticsPulseOut(ToolOutput):
    """The project's latest figures over the window."""

    project_id: str
    platform: str | None
    days: int
    # The catalogue's key is `summary`, which ToolOutput.summary() (the text) already names.
    totals: PulseSummary = Field(serialization_alias="summary")
    platform_totals: list[PlatformTotal]
    posts: list[PulsePost]

    def summary(self) -> str:
        figures = self.totals
        if not figures.posts:
            return f"Analytics pulse over {self.days} day(s): no published posts in this window yet."
        return (
            f"Analytics pulse over {self.days} day(s): {figures.posts} published post(s), {figures.views:,} views, "
            f"{figures.engagement:,} engagements ({figures.engagement_rate:.2f} % engagement rate)."
        )

    def extra_content(self) -> list[dict[str, Any]]:
        return [ui.resource_block("analytics", self.model_dump(mode="json", by_alias=True))]
