"""Inputs and outputs of generate_image, check_status and cancel_async_job (CATALOG.md §2)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator
from pydantic_core import PydanticCustomError

from toolhost.platform.fields import Confirm, TextFormat, UUIDStr
from toolhost.platform.registry import ToolInput, ToolOutput

AspectRatio = Literal["16:9", "9:16", "1:1", "4:3", "3:4"]
JOB_ID_PATTERN = re.compile(r"^[a-zA-Z0-9_.:-]{1,160}$")


class GenerateImageIn(ToolInput):
    """What to render, at which aspect ratio, over which reference image."""

    prompt: Annotated[str, StringConstraints(min_length=1, max_length=2_000)] = Field(
        description="What the graphic says: its content type, key phrase and emphasis words are read from it."
    )
    model: Annotated[str, StringConstraints(max_length=200)] | None = Field(
        default=None, description="A configured image model or alias; default: builtin."
    )
    aspect_ratio: AspectRatio = Field(
        default="1:1",
        description="16:9 = 1920×1080, 9:16 = 1080×1920, 1:1 = 1080×1080, 4:3 = 1440×1080, 3:4 = 1080×1440.",
    )
    image_url: Annotated[str, StringConstraints(min_length=1, max_length=2_048)] | None = Field(
        default=None,
        description="Reference image: a media key, a toolhost signed URL, or an external URL (fetched safely).",
    )
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class GenerateImageOut(ToolOutput):
    """The queued job; poll it with check_status."""

    jobId: str
    taskId: str
    asyncJobId: str
    model: str
    projectId: str
    estimatedTime: int
    creditsDeducted: int

    def summary(self) -> str:
        return (
            f"Image job {self.jobId} queued (model {self.model}, about {self.estimatedTime} s, "
            f"{self.creditsDeducted} credits reserved). Poll check_status with job_id {self.jobId}."
        )


class CheckStatusIn(ToolInput):
    """The job to read."""

    # Checked by _job_id_format for the reference service's message; the schema carries the same pattern.
    job_id: str = Field(
        description="The job id returned by the tool that queued it.",
        json_schema_extra={"pattern": JOB_ID_PATTERN.pattern},
    )
    response_format: TextFormat = "text"

    @field_validator("job_id", mode="before")
    @classmethod
    def _job_id_format(cls, value: object) -> object:
        if not isinstance(value, str) or not JOB_ID_PATTERN.match(value):
            raise PydanticCustomError("job_id_format", "Invalid job_id format.")
        return value


class CheckStatusOut(ToolOutput):
    """A job's state, outputs and billing (with the reference service's aliases)."""

    job_id: str
    job_type: str
    model: str | None
    status: str
    progress: int | None
    result_url: str | None
    r2_key: str | None
    all_urls: list[str]
    r2_keys: list[str]
    error: str | None
    credits_cost: int
    credits_reserved: int
    credits_charged: int
    credits_refunded: int
    billing_status: str
    failure_reason: str | None
    created_at: str
    completed_at: str | None
    model_requested: str | None
    model_delivered: str | None
    fallback_reason: str | None
    id: str
    jobId: str
    jobType: str
    resultUrl: str | None
    credits: int
    error_message: str | None
    createdAt: str
    completedAt: str | None
    modelRequested: str | None
    modelDelivered: str | None
    fallbackReason: str | None

    def summary(self) -> str:
        lines = [f"Job {self.job_id} ({self.job_type}): {self.status}"]
        if self.progress is not None:
            lines.append(f"Progress: {self.progress}%")
        if self.r2_keys:
            lines.append("Output: " + ", ".join(key.rsplit("/", 1)[-1] for key in self.r2_keys))
        if self.error:
            lines.append(f"Error: {self.error}")
        lines.append(
            f"Billing: {self.billing_status} (charged {self.credits_charged}, refunded {self.credits_refunded})"
        )
        return "\n".join(lines)


class CancelAsyncJobIn(ToolInput):
    """The job to cancel."""

    job_id: UUIDStr
    confirm: Confirm
    project_id: UUIDStr | None = None


class CancelAsyncJobOut(ToolOutput):
    """The cancelled job and its refund."""

    success: bool
    cancelled: bool
    job_id: str
    status: Literal["cancelled"]
    refunded_credits: int
    refund_status: Literal["refunded", "not_charged"]
    message: str
    already_cancelled: bool | None = None

    def summary(self) -> str:
        return self.message
