"""Inputs and outputs of the text generation tools (CATALOG.md §2)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from toolhost.platform.fields import NotBlank, SocialPlatform, TextFormat, Url, UUIDStr
from toolhost.platform.registry import ToolInput, ToolOutput
from toolhost.providers.platforms import rules_for

ContentType = Literal["script", "caption", "blog", "hook"]
HookFamily = Literal["curiosity", "authority", "pain_point", "contrarian", "data_driven"]
StoryboardPlatform = Literal["tiktok", "instagram-reels", "youtube-shorts", "youtube", "general"]
CarouselPlatform = Literal["linkedin", "instagram", "tiktok", "x"]
CarouselTemplate = Literal[
    "educational-series",
    "product-showcase",
    "story-arc",
    "before-after",
    "step-by-step",
    "quote-collection",
    "data-stats",
    "myth-vs-reality",
    "hormozi-authority",
]
CarouselStyle = Literal["minimal", "bold", "professional", "playful", "hormozi"]
ShotType = Literal["CU", "MS", "FS", "WS"]
CameraMovement = Literal["static", "zoom-in", "zoom-out", "pan-left", "pan-right", "tracking", "tilt-up", "tilt-down"]


Text200 = Annotated[str, StringConstraints(max_length=200)]
Text300 = Annotated[str, StringConstraints(max_length=300)]
Text500 = Annotated[str, StringConstraints(max_length=500)]
Text3000 = Annotated[str, StringConstraints(max_length=3_000)]


class GenerateContentIn(ToolInput):
    """What to write, for which platform, in which shape."""

    prompt: Annotated[str, StringConstraints(min_length=1, max_length=10_000), NotBlank] = Field(
        description="What to write about, in English for the built-in writer (a request such as 'Announce our "
        "new wholesale invoicing feature', or a topic); details and figures in it may be used, nothing else is "
        "invented. A link alone is refused: generation does not open links (extract_url_content does)."
    )
    content_type: ContentType
    platform: SocialPlatform | None = None
    brand_voice: Text500 | None = Field(default=None, description="Replaces the brand's tone words.")
    model: Text200 | None = Field(default=None, description="A configured text model or alias; default: builtin.")
    project_id: UUIDStr | None = None


class GenerateContentOut(ToolOutput):
    """The generated text and the record it was stored as."""

    text: str
    content_type: str
    platform: str | None
    model: str
    content_id: str

    def summary(self) -> str:
        return self.text or "(empty response)"


class AdaptContentIn(ToolInput):
    """Text to rewrite for another platform."""

    content: Annotated[str, StringConstraints(min_length=1, max_length=5_000), NotBlank]
    source_platform: SocialPlatform | None = None
    target_platform: SocialPlatform
    brand_voice: Text500 | None = None
    project_id: UUIDStr | None = None
    model: Text200 | None = None


class AdaptContentOut(ToolOutput):
    """The adapted text."""

    text: str
    source_platform: str | None
    target_platform: str
    model: str
    content_id: str

    def summary(self) -> str:
        source = f" (from {rules_for(self.source_platform).display_name})" if self.source_platform else ""
        return f"Adapted for {rules_for(self.target_platform).display_name}{source}:\n{self.text}"


class CreateStoryboardIn(ToolInput):
    """A concept to turn into timed frames."""

    concept: Annotated[str, StringConstraints(min_length=1, max_length=2_000), NotBlank]
    brand_context: Text3000 | None = Field(
        default=None,
        description="JSON with colors, voiceTone, visualStyle, targetAudience, contentPillars; or text.",
    )
    platform: StoryboardPlatform
    target_duration: Annotated[float, Field(ge=5, le=120)] | None = None
    num_scenes: Annotated[float, Field(ge=3, le=15)] | None = None
    style: Text500 | None = None
    project_id: UUIDStr | None = None
    response_format: TextFormat = "json"


class StoryboardFrame(ToolOutput):
    """One frame of a storyboard."""

    id: str
    frameNumber: int
    shotType: ShotType
    cameraMovement: CameraMovement
    duration: float
    imagePrompt: str
    videoPrompt: str
    caption: str
    voiceover: str
    notes: str


class CreateStoryboardOut(ToolOutput):
    """A storyboard, valid props for the StoryboardVideo compositions."""

    title: str
    totalDuration: float
    aspectRatio: Literal["9:16", "16:9"]
    characterDescription: str
    frames: list[StoryboardFrame]
    content_id: str

    def summary(self) -> str:
        lines = [f"Storyboard '{self.title}': {len(self.frames)} frames, {self.totalDuration:g} s, {self.aspectRatio}"]
        lines += [
            f"{frame.frameNumber}. [{frame.shotType}, {frame.duration:g}s] {frame.caption}" for frame in self.frames
        ]
        return "\n".join(lines)


class GenerateCarouselIn(ToolInput):
    """The carousel to write (text only)."""

    topic: Annotated[str, StringConstraints(min_length=1, max_length=200), NotBlank]
    template_id: CarouselTemplate = "hormozi-authority"
    slide_count: Annotated[int, Field(ge=3, le=10)] = 7
    aspect_ratio: Literal["1:1", "4:5", "9:16"] = "1:1"
    style: CarouselStyle | None = None
    hook: Text300 | None = None
    hook_family: HookFamily | None = None
    cta_text: Text200 | None = None
    cta_url: Url | None = None
    tone: Text200 | None = None
    constraints: Text500 | None = None
    platform: CarouselPlatform | None = None
    project_id: UUIDStr | None = None
    response_format: TextFormat = "json"


class CarouselSlide(ToolOutput):
    """One slide's text."""

    slideNumber: int
    headline: str | None = None
    subheadline: str | None = None
    body: str | None = None
    emphasisWords: list[str] | None = None
    ctaText: str | None = None


class CarouselCredits(ToolOutput):
    """What the carousel cost."""

    estimated: int
    used: int


class GenerateCarouselOut(ToolOutput):
    """The slides of a carousel."""

    carouselId: str
    templateId: str
    style: str
    slideCount: int
    slides: list[CarouselSlide]
    credits: CarouselCredits

    def summary(self) -> str:
        lines = [f"Carousel {self.carouselId} ({self.templateId}, {self.style}): {self.slideCount} slides"]
        lines += [f"{slide.slideNumber}. {slide.headline or ''} {slide.body or ''}".rstrip() for slide in self.slides]
        return "\n".join(lines)
