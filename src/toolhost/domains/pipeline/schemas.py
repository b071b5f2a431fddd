"""Inputs and outputs of the pipeline tools (CATALOG.md §14)."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, ValidationInfo, field_validator

from toolhost.platform.fields import (
    NOT_BLANK_PATTERN,
    SOCIAL_PLATFORMS,
    SocialPlatform,
    Text,
    TextFormat,
    Url,
    UUIDStr,
    when_given,
)
from toolhost.platform.registry import ToolInput, ToolOutput

Stage = Literal["research", "quality", "schedule"]
ApprovalMode = Literal["auto", "review_all", "review_low_confidence"]


class CheckPipelineReadinessIn(ToolInput):
    """The platforms a pipeline run would post to, and how many posts it would schedule."""

    project_id: UUIDStr | None = None
    platforms: Annotated[list[SocialPlatform], Field(min_length=1, max_length=len(SOCIAL_PLATFORMS))]
    estimated_posts: Annotated[int, Field(ge=1, le=50)] = 5
    response_format: TextFormat = "text"


class CheckPipelineReadinessOut(ToolOutput):
    """Whether a run can start, and what stands in its way."""

    ready: bool
    checks: dict[str, Any]
    blockers: list[str]
    warnings: list[str]

    def summary(self) -> str:
        lines = ["READY" if self.ready else "NOT READY"]
        credits = self.checks["credits"]
        lines.append(f"Credits: {credits['available']} available, {credits['estimated_cost']} estimated")
        lines += [f"Blocker: {blocker}" for blocker in self.blockers]
        lines += [f"Warning: {warning}" for warning in self.warnings]
        return "\n".join(lines)


_DRY_RUN = when_given("dry_run", {"const": True})
_SKIPS_SCHEDULING = when_given("skip_stages", {"contains": {"const": "schedule"}})


class RunContentPipelineIn(ToolInput):
    """One run: research, plan, quality gate, approvals and (when confirmed) scheduling."""

    # The rules of the validators below, in JSON Schema.
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {
                    "anyOf": [
                        when_given("source_url", {"type": "string"}),
                        when_given("topic", {"type": "string", "pattern": NOT_BLANK_PATTERN}),
                    ]
                },
                {"anyOf": [_DRY_RUN, _SKIPS_SCHEDULING, when_given("schedule_confirmed", {"const": True})]},
                {
                    "anyOf": [
                        _DRY_RUN,
                        _SKIPS_SCHEDULING,
                        {"not": when_given("skip_stages", {"contains": {"const": "quality"}})},
                    ]
                },
            ]
        }
    )

    project_id: UUIDStr | None = None
    topic: Text | None = None
    platforms: Annotated[list[SocialPlatform], Field(min_length=1, max_length=len(SOCIAL_PLATFORMS))]
    account_ids: dict[str, UUIDStr] | None = Field(default=None, max_length=len(SOCIAL_PLATFORMS))
    days: Annotated[int, Field(ge=1, le=7)] = 5
    posts_per_day: Annotated[int, Field(ge=1, le=3)] = 1
    approval_mode: ApprovalMode = "review_low_confidence"
    auto_approve_threshold: Annotated[float, Field(ge=0, le=35, allow_inf_nan=False)] = 28
    max_credits: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    dry_run: bool = False
    skip_stages: Annotated[list[Stage], Field(max_length=3)] = Field(default_factory=list)
    # Declared after dry_run and skip_stages: its check reads them (CATALOG.md §1.7), and runs for the default.
    schedule_confirmed: bool = Field(default=False, validate_default=True)
    source_url: Url | None = Field(default=None, validate_default=True)
    response_format: TextFormat = "json"

    @property
    def schedules(self) -> bool:
        """Whether this run would schedule posts."""
        return not self.dry_run and "schedule" not in self.skip_stages

    @field_validator("skip_stages")
    @classmethod
    def _schedule_needs_quality(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if "quality" in value and "schedule" not in value and not info.data.get("dry_run", False):
            raise ValueError("scheduling needs the quality stage: add 'schedule' to skip_stages or keep 'quality'")
        return list(dict.fromkeys(value))

    @field_validator("schedule_confirmed")
    @classmethod
    def _confirmed_when_scheduling(cls, value: bool, info: ValidationInfo) -> bool:
        skipped = info.data.get("skip_stages") or []
        if not value and not info.data.get("dry_run", False) and "schedule" not in skipped:
            raise ValueError(
                "this run would schedule posts: set schedule_confirmed to true, or dry_run to true, "
                "or add 'schedule' to skip_stages"
            )
        return value

    @field_validator("source_url")
    @classmethod
    def _topic_or_source(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and not (info.data.get("topic") or "").strip():
            raise ValueError("give topic or source_url")
        return value

    @field_validator("max_credits")
    @classmethod
    def _whole_credits(cls, value: float | None) -> float | None:
        return None if value is None else float(math.floor(value))


class RunContentPipelineOut(ToolOutput):
    """What the run did."""

    pipeline_id: str
    stages_completed: list[str]
    stages_skipped: list[str]
    plan_id: str | None
    posts_generated: int
    posts_approved: int
    posts_scheduled: int
    posts_flagged: int
    credits_used: int
    credits_remaining: int
    dry_run: bool
    status: str
    next_action: str
    errors: list[dict[str, Any]] | None = None

    def summary(self) -> str:
        return (
            f"Pipeline {self.pipeline_id}: {self.status}. {self.posts_generated} generated, "
            f"{self.posts_approved} approved, {self.posts_flagged} flagged, {self.posts_scheduled} scheduled; "
            f"{self.credits_used} credits used.\nNext: {self.next_action}"
        )


class GetPipelineStatusIn(ToolInput):
    """Which run; omitted = the latest."""

    pipeline_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class GetPipelineStatusOut(ToolOutput):
    """A run's progress and outcome."""

    found: bool
    id: str | None = None
    project_id: str | None = None
    plan_id: str | None = None
    config: dict[str, Any] | None = None
    stages_completed: list[str] = Field(default_factory=list)
    stages_skipped: list[str] = Field(default_factory=list)
    current_stage: str | None = None
    status: str | None = None
    posts_generated: int = 0
    posts_approved: int = 0
    posts_scheduled: int = 0
    posts_flagged: int = 0
    credits_used: int = 0
    errors: list[dict[str, Any]] = Field(default_factory=list)
    started_at: str | None = None
    completed_at: str | None = None
    created_at: str | None = None
    updated_at: str | None = None

    def summary(self) -> str:
        if not self.found:
            return "No pipeline runs found."
        lines = [
            f"Pipeline {self.id}: {self.status}" + (f" (stage {self.current_stage})" if self.current_stage else ""),
            f"Stages done: {', '.join(self.stages_completed) or 'none'}",
            f"Posts: {self.posts_generated} generated, {self.posts_approved} approved, "
            f"{self.posts_flagged} flagged, {self.posts_scheduled} scheduled",
            f"Credits used: {self.credits_used}",
        ]
        lines += [f"Error ({error.get('stage')}): {error.get('message')}" for error in self.errors]
        return "\n".join(lines)


class AutoApprovePlanIn(ToolInput):
    """A plan to decide automatically by quality score."""

    plan_id: UUIDStr
    quality_threshold: Annotated[float, Field(ge=0, le=35, allow_inf_nan=False)] = 26
    response_format: TextFormat = "json"


class AutoApprovePlanOut(ToolOutput):
    """The automatic decisions and the plan's resulting status."""

    plan_id: str
    auto_approved: int
    flagged_for_review: int
    rejected: int
    details: list[dict[str, Any]]
    plan_status: str

    def summary(self) -> str:
        return (
            f"Plan {self.plan_id}: {self.auto_approved} approved, {self.flagged_for_review} flagged, "
            f"{self.rejected} rejected; plan is {self.plan_status}."
        )
