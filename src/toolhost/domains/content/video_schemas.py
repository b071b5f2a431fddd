"""Inputs and outputs of generate_video and generate_voiceover (CATALOG.md §2)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from toolhost.platform.fields import TextFormat, UUIDStr
from toolhost.platform.registry import ToolInput, ToolOutput

ImageReference = Annotated[str, StringConstraints(min_length=1, max_length=2_048)]
Voice = Literal["rachel", "daniel", "adam", "gigi", "charlotte"]


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
