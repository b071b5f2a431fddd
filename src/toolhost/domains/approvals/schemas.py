"""Inputs and outputs of the plan-approval tools (CATALOG.md §8)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, model_validator

from toolhost.domains.planning.schemas import PlanPostFields
from toolhost.platform.fields import (
    DateTimeWithOffset,
    ShortText,
    TextFormat,
    UUIDStr,
    check_record,
    when_given,
)
from toolhost.platform.registry import ToolInput, ToolOutput

EDITED_POST_MAX_BYTES = 64 * 1024


def _edited_post_within_limits(post: PlanPostFields) -> PlanPostFields:
    check_record(dict(post), EDITED_POST_MAX_BYTES)
    return post


# A post as a reviewer edited it: a record of at most 64 KB whose schedule_at, when given, is a real date-time.
EditedPost = Annotated[PlanPostFields, AfterValidator(_edited_post_within_limits)]
Decision = Literal["approved", "rejected", "edited"]
ApprovalStatus = Literal["pending", "approved", "rejected", "edited"]


class ApprovalPost(ToolInput):
    """A post to approve; its own keys beyond these are kept."""

    model_config = ConfigDict(extra="allow")

    id: Annotated[str, Field(min_length=1, max_length=1_000)]
    platform: ShortText | None = None
    caption: str | None = Field(default=None, max_length=10_000)
    title: ShortText | None = None
    media_url: str | None = Field(default=None, max_length=2_048)
    schedule_at: DateTimeWithOffset | None = None


class CreatePlanApprovalsIn(ToolInput):
    """Posts of a stored plan to put up for approval."""

    plan_id: UUIDStr
    posts: Annotated[list[ApprovalPost], Field(min_length=1, max_length=500)]
    project_id: UUIDStr | None = None
    response_format: TextFormat = "text"


class ApprovalItemBrief(ToolOutput):
    """An item as create_plan_approvals reports it."""

    id: str
    plan_id: str
    post_id: str
    status: str
    created_at: str


class CreatePlanApprovalsOut(ToolOutput):
    """New and existing items for the posts given."""

    plan_id: str
    created: int
    items: list[ApprovalItemBrief]

    def summary(self) -> str:
        pending = sum(1 for item in self.items if item.status == "pending")
        return (
            f"Plan {self.plan_id}: {self.created} approval item(s) created, {len(self.items)} in all, "
            f"{pending} pending. Decide them with respond_plan_approval."
        )


class RespondPlanApprovalIn(ToolInput):
    """A decision on one pending item."""

    model_config = ConfigDict(
        json_schema_extra={
            "if": when_given("decision", {"const": "edited"}),
            "then": when_given("edited_post", {"type": "object"}),
        }
    )

    approval_id: UUIDStr
    decision: Decision
    edited_post: EditedPost | None = Field(default=None, description="The post as edited; required with edited.")
    reason: Annotated[str, Field(max_length=1_000)] | None = None
    response_format: TextFormat = "text"

    @model_validator(mode="after")
    def edited_needs_post(self) -> RespondPlanApprovalIn:
        if self.decision == "edited" and self.edited_post is None:
            raise ValueError("edited_post is required when decision is edited")
        return self


class RespondPlanApprovalOut(ToolOutput):
    """The item after the decision."""

    id: str
    plan_id: str
    post_id: str
    status: str
    reason: str | None
    decided_at: str | None
    decided_by: str | None
    original_post: dict[str, Any]
    edited_post: dict[str, Any] | None

    def summary(self) -> str:
        reason = f" Reason: {self.reason}" if self.reason else ""
        return f"Approval {self.id} (post {self.post_id}): {self.status} by {self.decided_by}.{reason}"


class ListPlanApprovalsIn(ToolInput):
    """Which plan, optionally which status."""

    plan_id: UUIDStr
    status: ApprovalStatus | None = None
    response_format: TextFormat = "text"


class ApprovalItemOut(ToolOutput):
    """A full approval item."""

    id: str
    plan_id: str
    post_id: str
    project_id: str
    status: str
    reason: str | None
    decided_at: str | None
    decided_by: str | None
    auto_approved: bool
    original_post: dict[str, Any]
    edited_post: dict[str, Any] | None
    created_at: str
    updated_at: str


class ListPlanApprovalsOut(ToolOutput):
    """The plan's items, oldest first."""

    plan_id: str
    total: int
    items: list[ApprovalItemOut]

    def summary(self) -> str:
        lines = [f"Plan {self.plan_id}: {self.total} approval item(s)"]
        lines += [f"- {item.post_id}: {item.status} ({item.id})" for item in self.items[:50]]
        return "\n".join(lines)
