"""Inputs and outputs of the video tools (CATALOG.md §4) and of generate_video and generate_voiceover (§2)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from toolhost.platform.fields import TextFormat, UUIDStr
from toolhost.platform.registry import ToolInput, ToolOutput

PropsJson = Annotated[str, StringConstraints(max_length=200_000)]
CompositionId = Annotated[str, StringConstraints(min_length=1, max_length=100)]
AspectRatio = Literal["9:16", "1:1", "16:9"]
BlockCategory = Literal["transition", "social-overlay", "data-viz", "branding", "decorative"]
ImageReference = Annotated[str, StringConstraints(min_length=1, max_length=2_048)]
Voice = Literal["rachel", "daniel", "adam", "gigi", "charlotte"]


class ListCompositionsIn(ToolInput):
    """No arguments."""


class CompositionInfo(ToolOutput):
    """One built-in composition."""

    id: str
    width: int
    height: int
    fps: int
    durationInFrames: int
    durationSeconds: float
    dynamic: bool
    description: str
    props_schema: dict[str, Any]


class ListCompositionsOut(ToolOutput):
    """The 15 compositions with their props' JSON Schemas."""

    compositions: list[CompositionInfo]
    count: int

    def summary(self) -> str:
        lines = []
        for item in self.compositions:
            lines.append(
                f"{item.id} — {item.width}×{item.height} @ {item.fps}fps, {item.durationSeconds:g}s "
                f"({item.durationInFrames} frames)\n  {item.description}"
            )
        return "\n".join(lines)


class RenderDemoVideoIn(ToolInput):
    """Which composition, which format, and props to merge over its sample props."""

    composition_id: CompositionId = Field(description="One of the 15 ids of list_compositions.")
    output_format: Literal["mp4", "gif"] = Field(
        default="mp4", description="mp4 (H.264, 30 fps) or gif (540 px, 15 fps, first 15 s)."
    )
    props: PropsJson | None = Field(default=None, description="JSON object string merged over the sample props.")
    project_id: UUIDStr | None = None


class RenderDemoVideoOut(ToolOutput):
    """The render, finished or still running."""

    job_id: str
    status: Literal["completed", "pending"]
    composition_id: str
    output_format: str
    duration_seconds: float
    resolution: str
    r2_key: str | None = None
    signed_url: str | None = None

    def summary(self) -> str:
        head = (
            f"{self.composition_id} as {self.output_format.upper()}: {self.duration_seconds:g} s at {self.resolution}."
        )
        if self.status == "completed" and self.r2_key:
            return f"{head}\nFile: {self.r2_key.rsplit('/', 1)[-1]}\nURL (signed, 1 h): {self.signed_url}"
        return f"{head}\nStill rendering: poll check_status with job_id {self.job_id}."


class RenderTemplateVideoIn(ToolInput):
    """A composition rendered with the caller's props at an aspect ratio."""

    composition_id: CompositionId = Field(description="One of the 15 ids of list_compositions.")
    input_props: PropsJson = Field(description="JSON object string: the composition's props (see props_schema).")
    aspect_ratio: AspectRatio = Field(
        default="9:16", description="9:16 = 1080×1920, 1:1 = 1080×1080, 16:9 = 1920×1080."
    )
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class RenderTemplateVideoOut(ToolOutput):
    """The queued render."""

    job_id: str
    jobId: str
    composition_id: str
    content_history_id: str
    credits_charged: int
    estimated_duration_seconds: float
    project_id: str

    def summary(self) -> str:
        return (
            f"Render {self.job_id} of {self.composition_id} queued ({self.estimated_duration_seconds:g} s of video, "
            f"{self.credits_charged} credits). Poll check_status with job_id {self.job_id}."
        )


class ListHyperframesBlocksIn(ToolInput):
    """An optional category filter."""

    category: BlockCategory | None = None


class HyperframesBlock(ToolOutput):
    """One HTML building block."""

    id: str
    category: str
    description: str
    params: dict[str, Any]
    snippet: str


class ListHyperframesBlocksOut(ToolOutput):
    """The blocks (bare JSON)."""

    blocks: list[HyperframesBlock]
    total: int
    categories: list[str]


class RenderHyperframesIn(ToolInput):
    """An HTML composition (inline or by reference) rendered frame by frame in headless Chromium."""

    composition_html: Annotated[str, StringConstraints(min_length=1, max_length=500_000)] | None = Field(
        default=None, description="The page: must expose window.__hf = {duration, seek(t)}."
    )
    composition_url: Annotated[str, StringConstraints(min_length=1, max_length=2_048)] | None = Field(
        default=None, description="A media key, a toolhost signed URL, or an external https URL of the page."
    )
    input_props: PropsJson | None = Field(default=None, description="JSON string set as window.__hf.props.")
    aspect_ratio: AspectRatio = Field(default="9:16", description="9:16, 16:9 or 1:1 (draft renders at half size).")
    duration_sec: float = Field(ge=0.1, le=600, description="Seconds of video to capture.")
    fps: Literal[24, 30, 60] = 30
    quality: Literal["draft", "standard", "high"] = Field(default="standard", description="CRF 30 / 23 / 18.")
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class RenderHyperframesOut(ToolOutput):
    """The queued render."""

    job_id: str
    jobId: str
    status: Literal["pending"]
    credits_cost: int
    credits: int
    duration_sec: float
    fps: int
    aspect_ratio: str
    quality: str
    project_id: str

    def summary(self) -> str:
        return (
            f"HTML render {self.job_id} queued: {self.duration_sec:g} s at {self.fps} fps, {self.aspect_ratio}, "
            f"{self.quality} ({self.credits_cost} credits). Poll check_status with job_id {self.job_id}."
        )


class GenerateVideoIn(ToolInput):
    """What the clip says, how long, at which aspect ratio, over which frames."""

    prompt: Annotated[str, StringConstraints(min_length=1, max_length=2_500)] = Field(
        description="What the clip says: its layout, key phrases (timed captions) and emphasis words come from it."
    )
    model: Annotated[str, StringConstraints(max_length=200)] | None = Field(
        default=None, description="A configured video model or alias; default: builtin."
    )
    duration: float = Field(default=5, ge=3, le=30, description="Seconds (3–30); billed as ceil(duration).")
    aspect_ratio: Literal["16:9", "9:16", "1:1"] = Field(
        default="16:9", description="16:9 = 1920×1080, 9:16 = 1080×1920, 1:1 = 1080×1080."
    )
    enable_audio: bool = Field(default=False, description="Narrate the captions with the default voice (rachel).")
    image_url: ImageReference | None = Field(
        default=None, description="Start frame: a media key, a toolhost signed URL, or an external URL."
    )
    end_frame_url: ImageReference | None = Field(
        default=None, description="End frame the clip cross-fades to; same forms as image_url."
    )
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class GenerateVideoOut(ToolOutput):
    """The queued job; poll it with check_status."""

    jobId: str
    taskId: str
    asyncJobId: str
    model: str
    estimatedTime: int
    creditsDeducted: int

    def summary(self) -> str:
        return (
            f"Video job {self.jobId} queued (model {self.model}, about {self.estimatedTime} s, "
            f"{self.creditsDeducted} credits reserved). Poll check_status with job_id {self.jobId}."
        )


class GenerateVoiceoverIn(ToolInput):
    """The text to speak, or the job to wait on again."""

    text: Annotated[str, StringConstraints(min_length=1, max_length=5_000)] | None = Field(
        default=None, description="What to say (required unless resume_task_id)."
    )
    voice: Voice = Field(default="rachel", description="rachel, daniel, adam, gigi or charlotte.")
    speed: float = Field(default=1.0, ge=0.5, le=2.0, description="Speaking rate: 175 words/min × speed.")
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"
    resume_task_id: Annotated[str, StringConstraints(min_length=1, max_length=160)] | None = Field(
        default=None, description="The taskId of a pending answer: waits again on that job, charging nothing."
    )


class GenerateVoiceoverOut(ToolOutput):
    """The finished voiceover, or the job still running."""

    status: Literal["completed", "pending"]
    audioUrl: str | None = None
    durationSeconds: float | None = None
    voice: str | None = None
    projectId: str | None = None
    r2_key: str | None = None
    jobId: str | None = None
    taskId: str | None = None
    resumeTaskId: str | None = None
    message: str | None = None

    def summary(self) -> str:
        if self.status == "completed":
            return (
                f"Voiceover ready: {self.durationSeconds} s, voice {self.voice}.\n"
                f"Audio (signed, 1 h): {self.audioUrl}\nKey: {self.r2_key}"
            )
        return self.message or f"Voiceover {self.taskId} is still pending."
