"""Inputs and outputs of quality_check and quality_check_plan (CATALOG.md §9)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field, StringConstraints, field_validator

from toolhost.platform.fields import PLATFORMS, Platform, ShortText, Text, TextFormat, UUIDStr
from toolhost.platform.registry import ToolInput, ToolOutput

Threshold = Annotated[float, Field(ge=0, le=35)]


class QualityCheckIn(ToolInput):
    """A post to score for its platforms."""

    caption: Annotated[str, StringConstraints(max_length=10_000)]
    title: Text | None = None
    platforms: Annotated[list[Platform], Field(min_length=1, max_length=9)]
    threshold: Threshold = 26
    brand_keyword: Text | None = None  # CATALOG.md §9 gives no limit: the §1.8 default (10,000)
    brand_avoid_patterns: Annotated[list[ShortText], Field(max_length=100)] | None = None
    custom_banned_terms: Annotated[list[ShortText], Field(max_length=100)] | None = None
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class QualityCategory(ToolOutput):
    """One category's score and why."""

    name: str
    score: int
    maxScore: int  # noqa: N815 - the catalogue's key names
    detail: str


class QualityCheckOut(ToolOutput):
    """The score, its categories and what blocks the post."""

    threshold: float
    total: int
    maxTotal: int  # noqa: N815
    categories: list[QualityCategory]
    blockers: list[str]
    passed: bool

    def summary(self) -> str:
        lines = [f"QUALITY SCORE: {self.total}/{self.maxTotal} [{'PASS' if self.passed else 'FAIL'}]"]
        lines += [f"{item.name}: {item.score}/{item.maxScore} - {item.detail}" for item in self.categories]
        if self.blockers:
            lines.append("Blockers: " + "; ".join(self.blockers))
        lines.append(f"Threshold: {self.threshold:g}")
        return "\n".join(lines)


class PlanPostIn(ToolInput):
    """A plan post to score; other keys are kept."""

    model_config = ConfigDict(extra="allow")

    id: Annotated[str, StringConstraints(max_length=1_000)]
    caption: Text
    title: Text | None = None
    platform: Annotated[str, StringConstraints(max_length=40)]

    @field_validator("platform")
    @classmethod
    def known_platform(cls, value: str) -> str:
        """Platforms are lower-cased (x means twitter); anything outside P9 is refused."""
        name = value.strip().lower()
        name = "twitter" if name == "x" else name
        if name not in PLATFORMS:
            raise ValueError("must be one of " + ", ".join(PLATFORMS))
        return name


class PlanIn(ToolInput):
    """The plan whose posts are scored; other keys are kept."""

    model_config = ConfigDict(extra="allow")

    posts: Annotated[list[PlanPostIn], Field(max_length=500)]


class QualityCheckPlanIn(ToolInput):
    """A plan to score post by post."""

    plan: PlanIn
    threshold: Threshold = 26
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class PlanQualitySummary(ToolOutput):
    """How the plan fared."""

    total_posts: int
    passed: int
    failed: int
    avg_score: float


class QualityCheckPlanOut(ToolOutput):
    """Every post with its quality, and a summary."""

    posts: list[dict[str, Any]]
    # Serialized as `summary`; the attribute is named otherwise because summary() is the text method.
    totals: PlanQualitySummary = Field(serialization_alias="summary")

    def summary(self) -> str:
        lines = [
            f"{self.totals.passed} of {self.totals.total_posts} posts passed "
            f"(average {self.totals.avg_score:g}/35)."
        ]
        for post in self.posts:
            quality = post["quality"]
            mark = "PASS" if quality["passed"] else "FAIL"
            blockers = f" - {'; '.join(quality['blockers'])}" if quality["blockers"] else ""
            lines.append(f"{post.get('id')} ({post.get('platform')}): {quality['score']}/35 {mark}{blockers}")
        return "\n".join(lines)
