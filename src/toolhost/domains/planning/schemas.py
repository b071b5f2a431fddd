"""Inputs and outputs of the plan storage tools (CATALOG.md §7)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints, with_config
from typing_extensions import TypedDict

from toolhost.platform.fields import (
    SOCIAL_PLATFORMS,
    CalendarDate,
    Confirm,
    DateTimeText,
    DateTimeWithOffset,
    NotBlank,
    ShortText,
    SocialPlatform,
    Text,
    TextFormat,
    Url,
    UUIDStr,
    check_record,
)
from toolhost.platform.registry import ToolInput, ToolOutput

PlanStatus = Literal["draft", "in_review", "approved", "scheduled", "completed"]


@with_config(ConfigDict(extra="allow"))
class PlanPostFields(TypedDict, total=False):
    """The keys of a plan post that toolhost reads as values of their own; every other key is kept as given."""

    schedule_at: DateTimeText


def _plan_post_within_limits(post: PlanPostFields) -> PlanPostFields:
    check_record(dict(post))
    return post


# A post of a plan: a record (CATALOG.md §1.8 limits) whose schedule_at, when given, is a real date-time.
PlanPost = Annotated[PlanPostFields, AfterValidator(_plan_post_within_limits)]


class PlanDocument(ToolInput):
    """A content plan as an agent hands it in; unknown keys are kept."""

    model_config = ConfigDict(extra="allow")

    topic: Text
    posts: Annotated[list[PlanPost], Field(min_length=1, max_length=500)]
    plan_id: UUIDStr | None = None
    project_id: UUIDStr | None = None


class SaveContentPlanIn(ToolInput):
    """A plan to store, new or replacing one of the caller's."""

    plan: PlanDocument
    project_id: UUIDStr | None = None
    status: PlanStatus = "draft"
    response_format: TextFormat = "json"


class SaveContentPlanOut(ToolOutput):
    """Where the plan was stored."""

    plan_id: str
    project_id: str
    status: str

    def summary(self) -> str:
        return f"Saved plan {self.plan_id} ({self.status}) in project {self.project_id}."


class GetContentPlanIn(ToolInput):
    """Which plan."""

    plan_id: UUIDStr
    response_format: TextFormat = "json"


class GetContentPlanOut(ToolOutput):
    """A stored plan with its bookkeeping."""

    plan_id: str
    project_id: str
    topic: str
    status: str
    created_at: str
    updated_at: str
    insights_applied: dict[str, Any] | None
    plan: dict[str, Any]

    def summary(self) -> str:
        posts = self.plan.get("posts", [])
        return f"Plan {self.plan_id} '{self.topic}': {self.status}, {len(posts)} post(s), updated {self.updated_at}."


class PlanContentWeekIn(ToolInput):
    """A topic to plan a week of posts for."""

    topic: Annotated[str, StringConstraints(min_length=1, max_length=10_000), NotBlank]
    source_url: Url | None = None
    platforms: Annotated[list[SocialPlatform], Field(min_length=1, max_length=len(SOCIAL_PLATFORMS))]
    posts_per_day: Annotated[int, Field(ge=1, le=5)] = 1
    days: Annotated[int, Field(ge=1, le=7)] = 5
    start_date: CalendarDate | None = None
    brand_voice: Text | None = None  # CATALOG.md §7 gives no limit: the §1.8 default (10,000)
    project_id: UUIDStr | None = None
    response_format: TextFormat = "json"


class PlanContentWeekOut(ToolOutput):
    """The stored draft plan (the ContentPlan payload plus its status)."""

    model_config = ConfigDict(extra="allow")

    plan_id: str
    project_id: str
    topic: str
    status: str
    posts: list[dict[str, Any]]
    estimated_credits: int

    def summary(self) -> str:
        return f"Plan {self.plan_id} '{self.topic}': {len(self.posts)} draft post(s)."


class PostUpdate(ToolInput):
    """The fields of one post to change; only given fields change."""

    post_id: Annotated[str, StringConstraints(min_length=1, max_length=1_000)]
    caption: Text | None = None
    title: Text | None = None
    hashtags: Annotated[list[ShortText], Field(max_length=100)] | None = None
    hook: Text | None = None
    angle: Text | None = None
    visual_direction: Text | None = None
    media_url: Url | None = None
    schedule_at: DateTimeWithOffset | None = None
    platform: SocialPlatform | None = None
    status: Literal["approved", "rejected", "needs_edit"] | None = None


class UpdateContentPlanIn(ToolInput):
    """Edits to a stored plan's posts."""

    plan_id: UUIDStr
    post_updates: Annotated[list[PostUpdate], Field(min_length=1, max_length=500)]
    response_format: TextFormat = "json"


class UpdateContentPlanOut(ToolOutput):
    """How many posts changed, and the ids that matched none."""

    plan_id: str
    status: str
    updated_posts: int
    unmatched_post_ids: list[str] | None = None

    def summary(self) -> str:
        unmatched = f"; no post for {', '.join(self.unmatched_post_ids)}" if self.unmatched_post_ids else ""
        return f"Updated {self.updated_posts} post(s) of plan {self.plan_id} ({self.status}){unmatched}."


class DeleteContentPlanIn(ToolInput):
    """The plan to delete, confirmed."""

    plan_id: UUIDStr
    confirm: Confirm
    project_id: UUIDStr | None = None


class DeleteContentPlanOut(ToolOutput):
    """What was deleted."""

    success: bool
    deleted: bool
    plan_id: str
    message: str

    def summary(self) -> str:
        return self.message


class SubmitContentPlanForApprovalIn(ToolInput):
    """The plan to send to review."""

    plan_id: UUIDStr
    response_format: TextFormat = "json"


class SubmitContentPlanForApprovalOut(ToolOutput):
    """The approval items created and the plan's new status."""

    plan_id: str
    approvals_created: int
    status: str

    def summary(self) -> str:
        return f"Plan {self.plan_id} is {self.status}: {self.approvals_created} approval item(s) created."
