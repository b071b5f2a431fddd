"""Inputs and outputs of the quality tools: quality_check, quality_check_plan and the visual gate (CATALOG.md §9)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, field_validator

from toolhost.platform.fields import SOCIAL_PLATFORMS, ShortText, SocialPlatform, Text, TextFormat, UUIDStr
from toolhost.platform.registry import ToolInput, ToolOutput
from toolhost.providers import platforms as social_platforms

Threshold = Annotated[float, Field(ge=0, le=35)]
# What PlanPostIn.platform accepts, as the schema lists it (lower case): the platforms and their aliases.
PLATFORM_NAMES = sorted(
    {*SOCIAL_PLATFORMS, *(alias for rules in social_platforms.RULES.values() for alias in rules.aliases)}
)


class QualityCheckIn(ToolInput):
    """A post to score for its platforms."""

    caption: Annotated[str, StringConstraints(max_length=10_000)]
    title: Text | None = None
    platforms: Annotated[list[SocialPlatform], Field(min_length=1, max_length=len(SOCIAL_PLATFORMS))]
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
    maxScore: int
    detail: str


class QualityCheckOut(ToolOutput):
    """The score, its categories and what blocks the post."""

    threshold: float
    total: int
    maxTotal: int
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
    platform: Annotated[str, StringConstraints(max_length=40)] = Field(
        description="A platform name, in any case; x means twitter",
        json_schema_extra={"enum": [*PLATFORM_NAMES]},
    )

    @field_validator("platform")
    @classmethod
    def known_platform(cls, value: str) -> str:
        """Platforms are lower-cased (x means twitter); anything outside P9 is refused."""
        name = social_platforms.canonical_name(value)
        if name not in SOCIAL_PLATFORMS:
            raise ValueError("must be one of " + ", ".join(SOCIAL_PLATFORMS))
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
            f"{self.totals.passed} of {self.totals.total_posts} posts passed (average {self.totals.avg_score:g}/35)."
        ]
        for post in self.posts:
            quality = post["quality"]
            mark = "PASS" if quality["passed"] else "FAIL"
            blockers = f" - {'; '.join(quality['blockers'])}" if quality["blockers"] else ""
            lines.append(f"{post.get('id')} ({post.get('platform')}): {quality['score']}/35 {mark}{blockers}")
        return "\n".join(lines)


LayoutName = Literal[
    "authority-statement",
    "authority-cta",
    "editorial-content",
    "editorial-cta",
    "cinematic-hook",
    "cinematic-content",
    "cinematic-cta",
]


class VisualSlideIn(ToolInput):
    """One slide's text; other keys are kept (a `layout` key names the layout to check it in)."""

    model_config = ConfigDict(extra="allow")

    slideNumber: Annotated[int, Field(ge=1)]
    type: ShortText | None = None
    headline: Text | None = None
    body: Text | None = None
    visualDirection: Text | None = None
    footnote: Text | None = None
    accentWord: Text | None = None
    bullets: Annotated[list[ShortText], Field(max_length=100)] | None = None


class VisualQualityCheckIn(ToolInput):
    """The slides of a carousel, checked in the layouts of a visual style."""

    slides: Annotated[list[VisualSlideIn], Field(min_length=1, max_length=10)]
    visual_style: Literal["dark-cinematic", "clean-editorial", "bold-authority"] = "clean-editorial"
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class OverflowIssue(ToolOutput):
    """A field predicted to take more lines than its layout allows. slideIdx is 0-based."""

    slideIdx: int
    field: str
    kind: Literal["overflow", "single-line-exceeded"]
    detail: str
    estimatedLines: int
    maxLines: int


class SpellingIssue(ToolOutput):
    """A word in neither the shipped word list nor the brand's vocabulary."""

    slideIdx: int
    field: str
    word: str


class PreRender(ToolOutput):
    """What the font metrics predict before anything is rendered."""

    ok: bool
    overflowIssues: list[OverflowIssue]
    spellingIssues: list[SpellingIssue]
    highRiskSlideIdx: list[int]


class VisualQualityCheckOut(ToolOutput):
    """The visual gate's verdict: passed when no field overflows."""

    passed: bool
    preRender: PreRender
    attempts: int
    elapsedMs: int
    checkedAt: str
    correctiveHint: str | None

    def summary(self) -> str:
        check = self.preRender
        lines = [
            f"VISUAL GATE: {'PASS' if self.passed else 'FAIL'} - {len(check.overflowIssues)} overflow issue(s), "
            f"{len(check.spellingIssues)} spelling issue(s)"
        ]
        lines += [f"Slide {issue.slideIdx + 1} {issue.field}: {issue.detail}" for issue in check.overflowIssues]
        if check.spellingIssues:
            lines.append("Check spelling: " + ", ".join(dict.fromkeys(issue.word for issue in check.spellingIssues)))
        if check.highRiskSlideIdx:
            lines.append("High-risk slides: " + ", ".join(str(index + 1) for index in check.highRiskSlideIdx))
        if self.correctiveHint:
            lines.append("Fix: " + self.correctiveHint)
        return "\n".join(lines)


class VisualGateConstraintsIn(ToolInput):
    """Which layout's limits to show."""

    layout: LayoutName | None = None
    response_format: TextFormat = "json"


class VisualGateConstraintsOut(ToolOutput):
    """Each layout's fields: font size, wrap width, expected and maximum lines, flags."""

    layouts: dict[str, dict[str, dict[str, int | bool]]]

    def envelope_data(self, payload: dict[str, Any]) -> Any:
        return payload["layouts"]  # CATALOG.md §1.2: the envelope's data is the layout map itself

    def summary(self) -> str:
        lines = []
        for name, fields in self.layouts.items():
            shown = [
                f"{field} {spec['fontSize']}px/{spec['effectiveWidthPx']}px "
                f"{spec['expectedLines']}-{spec['maxLines']} lines"
                + (" single" if spec.get("singleLine") else "")
                + (" upper" if spec.get("uppercase") else "")
                for field, spec in fields.items()
            ]
            lines.append(f"{name}: " + "; ".join(shown))
        return "\n".join(lines)
