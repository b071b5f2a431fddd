"""Inputs and outputs of the plan storage tools (CATALOG.md §7)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from toolhost.platform.fields import Record, Text, TextFormat, UUIDStr
from toolhost.platform.registry import ToolInput, ToolOutput

PlanStatus = Literal["draft", "in_review", "approved", "scheduled", "completed"]


class PlanDocument(ToolInput):
    """A content plan as an agent hands it in; unknown keys are kept."""

    model_config = ConfigDict(extra="allow")

    topic: Text
    posts: Annotated[list[Record], Field(min_length=1, max_length=500)]
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
