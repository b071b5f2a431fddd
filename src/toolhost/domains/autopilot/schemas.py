"""Inputs and outputs of the autopilot tools (CATALOG.md §13)."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from toolhost.domains.autopilot import schedule
from toolhost.platform.fields import SOCIAL_PLATFORMS, Confirm, Record, SocialPlatform, TextFormat, UUIDStr
from toolhost.platform.registry import ToolInput, ToolOutput

# The shape of an IANA name (Area/Location, UTC, Etc/GMT+5); which names exist is zoneinfo's to say.
TIMEZONE_NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*$"
Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
ApprovalMode = Literal["auto", "review_all", "review_low_confidence"]


def _time(value: str) -> str:
    schedule.cron_expression(["mon"], value)
    return value


def _timezone(value: str) -> str:
    schedule.zone(value)
    return value


def _budget(value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


# The validators word their own refusals; the schema carries what they check as far as JSON Schema can say it.
ScheduleTime = Annotated[
    str,
    StringConstraints(min_length=1, max_length=5),
    AfterValidator(_time),
    Field(description="HH:MM, 24 h", json_schema_extra={"pattern": schedule.TIME_PATTERN.pattern}),
]
Timezone = Annotated[
    str,
    StringConstraints(min_length=1, max_length=64),
    AfterValidator(_timezone),
    Field(
        description="An IANA timezone name that this server's zoneinfo knows, such as UTC or Europe/Paris",
        json_schema_extra={"pattern": TIMEZONE_NAME_PATTERN, "examples": ["UTC", "Europe/Paris"]},
    ),
]
ScheduleDays = Annotated[list[Weekday], Field(min_length=1, max_length=7)]
Budget = Annotated[float | None, Field(ge=0), AfterValidator(_budget)]


class ScheduleConfig(BaseModel):
    """When a config runs."""

    days: list[str]
    time: str
    timezone: str


def schedule_text(config: ScheduleConfig) -> str:
    """The schedule in words, e.g. mon, wed at 09:00 Europe/Paris."""
    return f"{', '.join(config.days)} at {config.time} {config.timezone}"


def budget_text(value: float | None) -> str:
    """A budget for people: "unlimited" when unset."""
    return "unlimited" if value is None else f"{value:g} cr"


class ConfigItem(BaseModel):
    """A config as list_autopilot_configs shows it."""

    id: str
    name: str
    project_id: str
    recipe_id: str | None
    is_active: bool
    mode: str
    schedule_config: ScheduleConfig
    approval_mode: str
    max_credits_per_run: float | None
    max_credits_per_week: float | None
    credits_used_this_week: int
    last_run_at: str | None
    next_run_at: str | None
    created_at: str


class ListAutopilotConfigsIn(ToolInput):
    """Which configs to list."""

    active_only: bool = False
    response_format: TextFormat = "text"


class ListAutopilotConfigsOut(ToolOutput):
    """The configs (the JSON envelope's data is the array itself)."""

    configs: list[ConfigItem]

    def envelope_data(self, payload: dict[str, Any]) -> Any:
        return payload["configs"]

    def summary(self) -> str:
        if not self.configs:
            return "No autopilot configs."
        return "\n".join(
            f"{'ACTIVE' if item.is_active else 'PAUSED'} {item.name} ({item.id}): {item.mode}"
            f"{' ' + item.recipe_id if item.recipe_id else ''}, {schedule_text(item.schedule_config)}; "
            f"budget {budget_text(item.max_credits_per_run)}/run, {budget_text(item.max_credits_per_week)}/week, "
            f"{item.credits_used_this_week} cr used this week; next run {item.next_run_at or 'none'}"
            for item in self.configs
        )


class CreateAutopilotConfigIn(ToolInput):
    """A new standing automation."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    project_id: UUIDStr
    mode: Literal["recipe", "pipeline"] = "pipeline"
    schedule_days: ScheduleDays
    schedule_time: ScheduleTime
    timezone: Timezone = "UTC"
    max_credits_per_run: Budget = None
    max_credits_per_week: Budget = None
    approval_mode: ApprovalMode = "review_low_confidence"
    is_active: bool = True
    response_format: TextFormat = "text"
    topic: Annotated[str, StringConstraints(max_length=500)] | None = None
    platforms: Annotated[list[SocialPlatform], Field(min_length=1, max_length=len(SOCIAL_PLATFORMS))] | None = None
    recipe_slug: Annotated[str, StringConstraints(min_length=1, max_length=100)] | None = None
    recipe_inputs: Record | None = None


class CreateAutopilotConfigOut(ToolOutput):
    """The config created."""

    id: str
    name: str
    is_active: bool
    mode: str
    schedule_config: ScheduleConfig
    next_run_at: str | None

    def summary(self) -> str:
        state = "active" if self.is_active else "paused"
        return (
            f"Autopilot config {self.name} ({self.id}) created, {state}: {self.mode} "
            f"{schedule_text(self.schedule_config)}. Next run: {self.next_run_at or 'none (paused)'}."
        )


class UpdateAutopilotConfigIn(ToolInput):
    """The fields to change (all optional; a budget given as null becomes unlimited)."""

    config_id: UUIDStr
    is_active: bool | None = None
    schedule_days: ScheduleDays | None = None
    schedule_time: ScheduleTime | None = None
    max_credits_per_run: Budget = None
    max_credits_per_week: Budget = None


class UpdatedConfig(BaseModel):
    """The config after an update."""

    id: str
    is_active: bool
    schedule_config: ScheduleConfig
    max_credits_per_run: float | None
    max_credits_per_week: float | None


class UpdateAutopilotConfigOut(ToolOutput):
    """The config after the update, or null when nothing was asked."""

    updated: UpdatedConfig | None
    message: str

    def summary(self) -> str:
        if self.updated is None:
            return self.message
        return (
            f"Autopilot config updated. Active: {'yes' if self.updated.is_active else 'no'}. "
            f"Schedule: {schedule_text(self.updated.schedule_config)}. "
            f"Budgets: {budget_text(self.updated.max_credits_per_run)}/run, "
            f"{budget_text(self.updated.max_credits_per_week)}/week."
        )


class DeleteAutopilotConfigIn(ToolInput):
    """The config to delete, confirmed."""

    config_id: UUIDStr
    confirm: Confirm
    project_id: UUIDStr | None = None


class DeleteAutopilotConfigOut(ToolOutput):
    """The deleted config."""

    success: bool
    deleted: bool
    config_id: str
    message: str

    def summary(self) -> str:
        return self.message


class RunItem(BaseModel):
    """One run of a config."""

    id: str
    config_id: str
    status: str
    reason: str | None = None
    started_at: str
    completed_at: str | None
    credits_used: int
    pipeline_id: str | None
    recipe_run_id: str | None


class GetAutopilotStatusIn(ToolInput):
    """Nothing but the text format."""

    response_format: TextFormat = "text"


class GetAutopilotStatusOut(ToolOutput):
    """Active configs, the last runs, and the approvals waiting for a person."""

    activeConfigs: int
    recentRuns: list[RunItem]
    pendingApprovals: int

    def summary(self) -> str:
        lines = [
            f"{self.activeConfigs} active autopilot config(s); {self.pendingApprovals} approval(s) pending.",
        ]
        if not self.recentRuns:
            lines.append("No runs yet.")
        for run in self.recentRuns:
            detail = f" ({run.reason})" if run.reason else ""
            lines.append(f"{run.started_at} {run.status}{detail}: {run.credits_used} cr, config {run.config_id}")
        return "\n".join(lines)
