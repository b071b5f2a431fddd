"""Inputs and outputs of the brand tools (CATALOG.md §6)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from toolhost.platform.fields import Record, SocialPlatform, TextFormat, Url, UUIDStr, when_given
from toolhost.platform.registry import ToolInput, ToolOutput

ExtractionMethod = Literal["manual", "url_extract", "business_profiler", "product_showcase"]
HexColor = Annotated[str, StringConstraints(pattern=r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")]
ListItem = Annotated[str, StringConstraints(max_length=1_000)]


class ExtractBrandIn(ToolInput):
    """Exactly one of url, html or text."""

    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {"oneOf": [when_given(name, {"type": "string", "minLength": 1}) for name in ("url", "html", "text")]}
            ]
        }
    )

    url: Annotated[str, StringConstraints(min_length=1, max_length=2_048)] | None = Field(
        default=None, description="A full URL, or platform:handle (instagram:acme, tiktok:acme, x:acme, ...)"
    )
    html: Annotated[str, StringConstraints(max_length=5 * 1024 * 1024)] | None = Field(
        default=None, description="Raw HTML of a page (≤5 MB); read as is, nothing fetched"
    )
    text: Annotated[str, StringConstraints(max_length=200_000)] | None = Field(
        default=None, description="Plain copy (≤200,000 chars): voice, keywords and audience only"
    )
    response_format: TextFormat = "text"

    @model_validator(mode="after")
    def exactly_one_source(self) -> ExtractBrandIn:
        """The three sources exclude each other."""
        given = [name for name in ("url", "html", "text") if getattr(self, name) not in (None, "")]
        if len(given) != 1:
            raise ValueError("give exactly one of url, html or text")
        return self


class BrandColors(ToolOutput):
    primary: str | None = None
    secondary: str | None = None
    accent: str | None = None


class BrandVoice(ToolOutput):
    tone: str
    style: str
    keywords: list[str]


class BrandAudience(ToolOutput):
    primary: str
    painPoints: list[str]


class ExtractBrandOut(ToolOutput):
    brandName: str
    description: str
    colors: BrandColors
    voice: BrandVoice
    audience: BrandAudience
    logoUrl: str | None
    brand_context: dict[str, Any]
    extraction_metadata: dict[str, Any]

    def summary(self) -> str:
        confidence = self.brand_context.get("confidence", {})
        palette = ", ".join(f"{slot} {value}" for slot, value in self.colors.model_dump().items() if value)
        return "\n".join(
            [
                f"Brand: {self.brandName or '(name not found)'}",
                f"Colors: {palette or 'none found'}",
                f"Voice: {self.voice.tone or 'unknown'}; style: {self.voice.style or 'unknown'}",
                f"Keywords: {', '.join(self.voice.keywords[:8]) or 'none'}",
                f"Confidence: {confidence.get('overall')} from {confidence.get('pagesScraped', 0)} page(s)."
                " Nothing saved: review brand_context, then save_brand_profile.",
            ]
        )


class GetBrandProfileIn(ToolInput):
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class GetBrandProfileOut(ToolOutput):
    found: bool
    profile_id: str | None = None
    project_id: str
    brand_name: str | None = None
    brand_context: dict[str, Any] | None = None
    profile_data: dict[str, Any] | None = None
    version: int | None = None
    updated_at: str | None = None
    extraction_method: str | None = None
    extraction_metadata: dict[str, Any] | None = None
    source_url: str | None = None
    default_style_ref_url: str | None = None

    def summary(self) -> str:
        if not self.found:
            return "No active brand profile found for this project."
        return (
            f"Brand profile {self.brand_name or '(unnamed)'}: version {self.version}, "
            f"updated {self.updated_at}, method {self.extraction_method}."
        )


class SaveBrandProfileIn(ToolInput):
    project_id: UUIDStr | None = None
    brand_context: Record
    change_summary: Annotated[str, StringConstraints(max_length=500)] | None = None
    changed_paths: Annotated[list[ListItem], Field(max_length=100)] | None = None
    source_url: Url | None = None
    extraction_method: ExtractionMethod = "manual"
    overall_confidence: Annotated[float, Field(ge=0, le=1)] | None = None
    extraction_metadata: Record | None = None
    response_format: TextFormat = "text"


class SaveBrandProfileOut(ToolOutput):
    success: bool
    profile_id: str
    version: int
    updated_at: str
    changed: bool = Field(description="(ext) false when the content equals the active version")

    def summary(self) -> str:
        if not self.changed:
            return f"Brand profile unchanged: identical to version {self.version}."
        return f"Brand profile saved as version {self.version}."


class UpdatePlatformVoiceIn(ToolInput):
    platform: SocialPlatform
    project_id: UUIDStr | None = None
    samples: Annotated[str, StringConstraints(max_length=3_000)] | None = None
    tone: Annotated[list[ListItem], Field(max_length=100)] | None = None
    style: Annotated[list[ListItem], Field(max_length=100)] | None = None
    avoid_patterns: Annotated[list[ListItem], Field(max_length=100)] | None = None
    hashtag_strategy: Annotated[str, StringConstraints(max_length=300)] | None = None
    cta_style: Annotated[str, StringConstraints(max_length=300)] | None = None
    response_format: TextFormat = "text"


class PlatformOverride(ToolOutput):
    tone: list[str]
    style: list[str]
    sampleContent: str
    hashtagStrategy: str
    ctaStyle: str
    avoidPatterns: list[str]


class UpdatePlatformVoiceOut(ToolOutput):
    success: bool
    profile_id: str
    project_id: str
    platform: str
    override: PlatformOverride
    version: int = Field(description="(ext) the profile version holding the override")

    def summary(self) -> str:
        return f"Voice for {self.platform} saved in brand profile version {self.version}."


class ProjectOnlyIn(ToolInput):
    project_id: UUIDStr | None = None


class GetBrandRuntimeIn(ProjectOnlyIn):
    """The project whose runtime to read."""


class GetBrandRuntimeOut(ToolOutput):
    found: bool
    message: str | None = Field(default=None, description="(ext) what to do when no profile exists")
    name: str | None = None
    tagline: str | None = None
    description: str | None = None
    industry: str | None = None
    positioning: str | None = None
    archetype: str = ""
    messaging: dict[str, Any] = Field(default_factory=dict)
    voice: dict[str, Any] = Field(default_factory=dict)
    visual: dict[str, Any] = Field(default_factory=dict)
    audience: dict[str, Any] = Field(default_factory=dict)
    confidence: dict[str, Any] = Field(default_factory=dict)


class ExplainBrandSystemIn(ProjectOnlyIn):
    """The project whose brand to explain."""


class ExplainSection(ToolOutput):
    name: str
    present: int
    total: int
    label: Literal["OK", "PARTIAL", "MISSING"]
    missing_fields: list[str]


class ExplainBrandSystemOut(ToolOutput):
    found: bool
    sections: list[ExplainSection]
    confidence: dict[str, Any]
    recommendations: list[str]

    def summary(self) -> str:
        if not self.found:
            return (
                "No brand profile for this project: every section is MISSING. "
                "Run extract_brand, then save_brand_profile."
            )
        lines = []
        for section in self.sections:
            missing = f" (missing: {', '.join(section.missing_fields)})" if section.missing_fields else ""
            lines.append(f"{section.name}: {section.label} {section.present}/{section.total}{missing}")
        overall = self.confidence.get("overall")
        lines.append(
            f"Confidence: {overall if overall is not None else 'unknown'}, "
            f"pages scraped: {self.confidence.get('pagesScraped', 0)}"
        )
        lines += [f"{index}. {item}" for index, item in enumerate(self.recommendations, start=1)]
        return "\n".join(lines)


class CheckBrandConsistencyIn(ToolInput):
    content: Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
    project_id: UUIDStr | None = None


class CheckBrandConsistencyOut(ToolOutput):
    overall: int
    passed: bool
    clearToPublish: bool  # ext: passed, and no blocker
    dimensions: dict[str, Any]
    preferredTermsUsed: list[str]
    bannedTermsFound: list[str]
    fabricationWarnings: list[str]
    issues: list[dict[str, Any]]
    claims: list[dict[str, Any]]
    blockers: list[str]  # ext: why a text is not clear to publish whatever its overall


class AuditBrandColorsIn(ToolInput):
    content_colors: Annotated[list[HexColor], Field(min_length=1, max_length=100)]
    project_id: UUIDStr | None = None
    threshold: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 10.0


class AuditBrandColorsOut(ToolOutput):
    entries: list[dict[str, Any]]
    overallScore: int
    passed: bool
    contrast: list[dict[str, Any]]


class ExportDesignTokensIn(ToolInput):
    format: Literal["css", "tailwind", "figma", "dtcg"]
    project_id: UUIDStr | None = None


class ExportDesignTokensOut(ToolOutput):
    format: str
    tokens: str
