"""Autopilot configs (CATALOG.md §13): create, read, change and delete them; their runs and weekly spend."""

from __future__ import annotations

import enum
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.domains.approvals.models import ApprovalItem
from toolhost.domains.autopilot import schedule
from toolhost.domains.autopilot.models import AutopilotConfig, AutopilotRun
from toolhost.domains.recipes import service as recipes_service
from toolhost.platform.context import Principal
from toolhost.platform.jobs import Job
from toolhost.platform.registry import Registry
from toolhost.platform.results import NotFound, ToolError, ValidationFailed

RECENT_RUNS = 10
# A recipe run shows its job's status (CATALOG.md §1.6): `processing` reads as `running`.
RECIPE_RUN_STATUS = {"processing": "running"}


def parse_id(value: str) -> uuid.UUID | None:
    """A UUID from a string, or None when it is not one."""
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


async def project_of_config(
    session: AsyncSession, config_id: str, project_ids: Sequence[uuid.UUID]
) -> uuid.UUID | None:
    """The project of a config among `project_ids` (the object lookup of `config_id`)."""
    parsed = parse_id(config_id)
    if parsed is None or not project_ids:
        return None
    return await session.scalar(
        select(AutopilotConfig.project_id).where(
            AutopilotConfig.id == parsed, AutopilotConfig.project_id.in_(project_ids)
        )
    )


async def get(session: AsyncSession, *, config_id: str, project_id: uuid.UUID) -> AutopilotConfig:
    """A config of the project, or not_found."""
    parsed = parse_id(config_id)
    config = (
        await session.scalar(
            select(AutopilotConfig).where(AutopilotConfig.id == parsed, AutopilotConfig.project_id == project_id)
        )
        if parsed is not None
        else None
    )
    if config is None:
        raise NotFound(f"No autopilot config found with ID {config_id}", recover_with="call list_autopilot_configs")
    return config


def _check_recipe(
    registry: Registry, principal: Principal, slug: str | None, inputs: dict[str, Any] | None
) -> tuple[str, dict[str, Any]]:
    """A recipe config's slug and inputs, checked now so a bad config fails at creation, not at 3 a.m.

    The inputs stay a dict: they are the recipe's own JSON, whose shape its inputs_schema gives.
    """
    if slug is None:
        raise ValidationFailed(
            "recipe_slug is required when mode is recipe",
            recover_with="call list_recipes for the slugs",
            field_errors=[{"path": "recipe_slug", "message": "required for mode recipe"}],
        )
    try:
        recipe = recipes_service.get_recipe(slug)
    except NotFound:
        raise ValidationFailed(
            f"unknown recipe {slug!r}",
            recover_with="call list_recipes for the slugs",
            field_errors=[{"path": "recipe_slug", "message": "no recipe with this slug"}],
        ) from None
    try:
        recipes_service.validate_inputs(recipe, inputs or {})
    except ValidationFailed as error:
        for item in error.details.get("field_errors", []):
            item["path"] = "recipe_" + item["path"]
        raise
    # The runs execute as this credential, so a recipe it could never run is refused now.
    recipes_service.check_scopes(registry, recipe, principal)
    return recipe.slug, dict(inputs or {})


async def create(
    *,
    registry: Registry,
    session: AsyncSession,
    principal: Principal,
    project_id: uuid.UUID,
    name: str,
    mode: str,
    schedule_days: Sequence[str],
    schedule_time: str,
    timezone: str,
    max_credits_per_run: float | None,
    max_credits_per_week: float | None,
    approval_mode: str,
    is_active: bool,
    topic: str | None,
    platforms: Sequence[str] | None,
    recipe_slug: str | None,
    recipe_inputs: dict[str, Any] | None,
) -> AutopilotConfig:
    """Stores a config with its creator's credential; an active one gets its first due time."""
    if mode == "recipe":
        recipe_slug, recipe_inputs = _check_recipe(registry, principal, recipe_slug, recipe_inputs)
    elif recipe_slug is not None or recipe_inputs is not None:
        raise ValidationFailed(
            "recipe_slug and recipe_inputs are only for mode recipe",
            field_errors=[{"path": "recipe_slug", "message": "only for mode recipe"}],
        )
    days = schedule.ordered_days(schedule_days)
    config = AutopilotConfig(
        project_id=project_id,
        name=name,
        mode=mode,
        recipe_slug=recipe_slug,
        recipe_inputs=recipe_inputs,
        topic=topic,
        platforms=list(dict.fromkeys(platforms)) if platforms else None,
        schedule_days=days,
        schedule_time=schedule_time,
        timezone=timezone,
        approval_mode=approval_mode,
        max_credits_per_run=max_credits_per_run,
        max_credits_per_week=max_credits_per_week,
        is_active=is_active,
        creator={
            "account_id": str(principal.account_id),
            "credential_id": str(principal.credential_id) if principal.credential_id else None,
            "credential_name": principal.credential_name,
            "project_id": str(principal.project_id) if principal.project_id else None,
        },
        next_run_at=schedule.next_due(days, schedule_time, timezone, utcnow()) if is_active else None,
    )
    session.add(config)
    await session.flush()
    return config


class Unchanged(enum.Enum):
    """A budget the caller left out, which stays as it is (None, by contrast, makes a budget unlimited)."""

    UNCHANGED = "unchanged"


UNCHANGED = Unchanged.UNCHANGED


async def update(
    *,
    session: AsyncSession,
    config: AutopilotConfig,
    is_active: bool | None = None,
    schedule_days: Sequence[str] | None = None,
    schedule_time: str | None = None,
    max_credits_per_run: float | None | Unchanged = UNCHANGED,
    max_credits_per_week: float | None | Unchanged = UNCHANGED,
) -> bool:
    """Applies the fields given (None leaves a field as it is, but makes a budget unlimited); False when none were."""
    budgets = (max_credits_per_run, max_credits_per_week)
    if all(value is None for value in (is_active, schedule_days, schedule_time)) and all(
        isinstance(budget, Unchanged) for budget in budgets
    ):
        return False
    if schedule_days is not None:
        config.schedule_days = schedule.ordered_days(schedule_days)
    if schedule_time is not None:
        config.schedule_time = schedule_time
    if is_active is not None:
        config.is_active = is_active
    if not isinstance(max_credits_per_run, Unchanged):
        config.max_credits_per_run = max_credits_per_run
    if not isinstance(max_credits_per_week, Unchanged):
        config.max_credits_per_week = max_credits_per_week
    # A changed schedule or a resumed config is due at the next matching time from now, never in the past.
    config.next_run_at = (
        schedule.next_due(config.schedule_days, config.schedule_time, config.timezone, utcnow())
        if config.is_active
        else None
    )
    await session.flush()
    return True


async def delete(*, session: AsyncSession, config: AutopilotConfig) -> None:
    """Removes the config: no future runs; its past runs (and what they made) are kept."""
    await session.delete(config)
    await session.flush()


async def recipe_jobs(session: AsyncSession, runs: Sequence[AutopilotRun]) -> dict[uuid.UUID, Job]:
    """The recipe_run jobs behind these runs, by id."""
    ids = [run.recipe_run_id for run in runs if run.recipe_run_id is not None]
    if not ids:
        return {}
    return {job.id: job for job in await session.scalars(select(Job).where(Job.id.in_(ids)))}


@dataclass(frozen=True, slots=True)
class RunState:
    """A run as get_autopilot_status shows it."""

    status: str
    reason: str | None
    credits_used: int
    completed_at: datetime | None


def run_state(run: AutopilotRun, jobs: dict[uuid.UUID, Job]) -> RunState:
    """A run's status, reason, credits used and completion: a recipe run's come from its job, which keeps
    running after the autopilot started it (a failed one gives its failed step's reason)."""
    job = jobs.get(run.recipe_run_id) if run.recipe_run_id is not None else None
    if job is None:
        return RunState(run.status, run.reason, run.credits_used, run.completed_at)
    output = job.output or {}
    error = output.get("error") or {}
    reason = f"{error.get('error_type')}: {error.get('message')}" if job.status == "failed" and error else run.reason
    return RunState(
        RECIPE_RUN_STATUS.get(job.status, job.status), reason, int(output.get("credits_used") or 0), job.completed_at
    )


async def credits_used_this_week(session: AsyncSession, config: AutopilotConfig, now: datetime) -> int:
    """Credits the config's runs used since Monday 00:00 in its timezone."""
    runs = list(
        await session.scalars(
            select(AutopilotRun).where(
                AutopilotRun.config_id == config.id,
                AutopilotRun.started_at >= schedule.week_start(now, config.timezone),
            )
        )
    )
    jobs = await recipe_jobs(session, runs)
    return sum(run_state(run, jobs).credits_used for run in runs)


@dataclass(frozen=True, slots=True)
class ListedConfig:
    """A config and the credits its runs used this week."""

    config: AutopilotConfig
    credits_used_this_week: int


async def list_configs(
    *, session: AsyncSession, project_ids: Sequence[uuid.UUID], active_only: bool
) -> list[ListedConfig]:
    """The configs of these projects, newest first, with this week's spend."""
    query = select(AutopilotConfig).where(AutopilotConfig.project_id.in_(project_ids))
    if active_only:
        query = query.where(AutopilotConfig.is_active.is_(True))
    now = utcnow()
    return [
        ListedConfig(config=config, credits_used_this_week=await credits_used_this_week(session, config, now))
        for config in await session.scalars(query.order_by(AutopilotConfig.created_at.desc(), AutopilotConfig.id))
    ]


@dataclass(frozen=True, slots=True)
class RecentRun:
    """A run and its state (a recipe run's comes from its job)."""

    run: AutopilotRun
    state: RunState


@dataclass(frozen=True, slots=True)
class Status:
    """Autopilot over some projects: active configs, the latest runs, approval items waiting for a person."""

    active_configs: int
    recent_runs: list[RecentRun]
    pending_approvals: int


async def status(*, session: AsyncSession, project_ids: Sequence[uuid.UUID]) -> Status:
    """get_autopilot_status over these projects."""
    active = await session.scalar(
        select(func.count())
        .select_from(AutopilotConfig)
        .where(AutopilotConfig.project_id.in_(project_ids), AutopilotConfig.is_active.is_(True))
    )
    runs = list(
        await session.scalars(
            select(AutopilotRun)
            .where(AutopilotRun.project_id.in_(project_ids))
            .order_by(AutopilotRun.started_at.desc(), AutopilotRun.id)
            .limit(RECENT_RUNS)
        )
    )
    jobs = await recipe_jobs(session, runs)
    pending = await session.scalar(
        select(func.count())
        .select_from(ApprovalItem)
        .where(ApprovalItem.project_id.in_(project_ids), ApprovalItem.status == "pending")
    )
    return Status(
        active_configs=int(active or 0),
        recent_runs=[RecentRun(run=run, state=run_state(run, jobs)) for run in runs],
        pending_approvals=int(pending or 0),
    )


def reason_of(error: ToolError) -> str:
    """A run's recorded reason from a tool error: its type and message, bounded."""
    return f"{error.error_type}: {error.message}"[:1000]
