"""The autopilot tools (CATALOG.md §13): list, create, update and delete configs, and read the runs."""

from __future__ import annotations

import uuid

from toolhost.domains.autopilot import service
from toolhost.domains.autopilot.models import AutopilotConfig
from toolhost.domains.autopilot.schemas import (
    ConfigItem,
    CreateAutopilotConfigIn,
    CreateAutopilotConfigOut,
    DeleteAutopilotConfigIn,
    DeleteAutopilotConfigOut,
    GetAutopilotStatusIn,
    GetAutopilotStatusOut,
    ListAutopilotConfigsIn,
    ListAutopilotConfigsOut,
    RunItem,
    ScheduleConfig,
    UpdateAutopilotConfigIn,
    UpdateAutopilotConfigOut,
    UpdatedConfig,
)
from toolhost.platform.context import ToolContext
from toolhost.platform.dates import iso
from toolhost.platform.registry import object_lookup, tool

CONFIG_LOOKUP = object_lookup("config_id", service.project_of_config)


def _project_ids(ctx: ToolContext) -> list[uuid.UUID]:
    """Project `optional`: the resolved project, else every accessible one."""
    return [ctx.project.id] if ctx.project is not None else list(ctx.accessible_project_ids)


def _schedule(config: AutopilotConfig) -> ScheduleConfig:
    return ScheduleConfig(days=list(config.schedule_days), time=config.schedule_time, timezone=config.timezone)


def _config_item(listed: service.ListedConfig) -> ConfigItem:
    config = listed.config
    return ConfigItem(
        id=str(config.id),
        name=config.name,
        project_id=str(config.project_id),
        recipe_id=config.recipe_slug,
        is_active=config.is_active,
        mode=config.mode,
        schedule_config=_schedule(config),
        approval_mode=config.approval_mode,
        max_credits_per_run=config.max_credits_per_run,
        max_credits_per_week=config.max_credits_per_week,
        credits_used_this_week=listed.credits_used_this_week,
        last_run_at=iso(config.last_run_at),
        next_run_at=iso(config.next_run_at),
        created_at=iso(config.created_at),
    )


def _run_item(recent: service.RecentRun) -> RunItem:
    run, state = recent.run, recent.state
    return RunItem(
        id=str(run.id),
        config_id=str(run.config_id),
        status=state.status,
        reason=state.reason,
        started_at=iso(run.started_at),
        completed_at=iso(state.completed_at),
        credits_used=state.credits_used,
        pipeline_id=run.pipeline_id,
        recipe_run_id=str(run.recipe_run_id) if run.recipe_run_id else None,
    )


@tool(module="autopilot", scope="mcp:autopilot", read_only=True, idempotent=True, project="optional")
async def list_autopilot_configs(ctx: ToolContext, args: ListAutopilotConfigsIn) -> ListAutopilotConfigsOut:
    """Lists the autopilot configs (standing automations): mode, schedule, budgets, this week's spend, next run.

    Change one with update_autopilot_config; see what its runs did with get_autopilot_status.
    """
    configs = await service.list_configs(
        session=ctx.session, project_ids=_project_ids(ctx), active_only=args.active_only
    )
    return ListAutopilotConfigsOut(configs=[_config_item(listed) for listed in configs])


@tool(module="autopilot", scope="mcp:autopilot", destructive=True, open_world=True, project="strict")
async def create_autopilot_config(ctx: ToolContext, args: CreateAutopilotConfigIn) -> CreateAutopilotConfigOut:
    """Creates a standing automation that runs on a weekly schedule (days + HH:MM in a timezone) and
    publishes: mode pipeline runs run_content_pipeline (topic, else the top suggestion; platforms, else the
    project's connected ones) and schedules what passes review; mode recipe runs execute_recipe.

    Active by default: creating it is the confirmation to schedule posts. Runs use this key's scopes at run
    time and stop at max_credits_per_run / max_credits_per_week (a run with no budget left is skipped).
    Pause it with update_autopilot_config is_active=false; follow it with get_autopilot_status.
    """
    config = await service.create(
        registry=ctx.registry,
        session=ctx.session,
        principal=ctx.principal,
        project_id=ctx.project_id,
        name=args.name,
        mode=args.mode,
        schedule_days=args.schedule_days,
        schedule_time=args.schedule_time,
        timezone=args.timezone,
        max_credits_per_run=args.max_credits_per_run,
        max_credits_per_week=args.max_credits_per_week,
        approval_mode=args.approval_mode,
        is_active=args.is_active,
        topic=args.topic,
        platforms=args.platforms,
        recipe_slug=args.recipe_slug,
        recipe_inputs=args.recipe_inputs,
    )
    return CreateAutopilotConfigOut(
        id=str(config.id),
        name=config.name,
        is_active=config.is_active,
        mode=config.mode,
        schedule_config=_schedule(config),
        next_run_at=iso(config.next_run_at),
    )


@tool(
    module="autopilot",
    scope="mcp:autopilot",
    destructive=True,
    idempotent=True,
    project="object",
    object_id="config_id",
    response_format=None,
    text_shape="summary",
)
async def update_autopilot_config(ctx: ToolContext, args: UpdateAutopilotConfigIn) -> UpdateAutopilotConfigOut:
    """Changes an autopilot config: pause or resume it (is_active), its days or time, or its credit budgets
    (null makes a budget unlimited). A changed schedule takes effect from the next matching time."""
    config = await service.get(ctx.session, config_id=args.config_id, project_id=ctx.project_id)
    # Left out, a budget stays as it is; given as null, it becomes unlimited.
    given = args.model_fields_set
    changed = await service.update(
        session=ctx.session,
        config=config,
        is_active=args.is_active,
        schedule_days=args.schedule_days,
        schedule_time=args.schedule_time,
        max_credits_per_run=args.max_credits_per_run if "max_credits_per_run" in given else service.UNCHANGED,
        max_credits_per_week=args.max_credits_per_week if "max_credits_per_week" in given else service.UNCHANGED,
    )
    if not changed:
        return UpdateAutopilotConfigOut(updated=None, message="No changes specified.")
    return UpdateAutopilotConfigOut(
        updated=UpdatedConfig(
            id=str(config.id),
            is_active=config.is_active,
            schedule_config=_schedule(config),
            max_credits_per_run=config.max_credits_per_run,
            max_credits_per_week=config.max_credits_per_week,
        ),
        message=f"Autopilot config {config.name} updated; next run {iso(config.next_run_at) or 'none'}.",
    )


@tool(
    module="autopilot",
    scope="mcp:autopilot",
    destructive=True,
    idempotent=True,
    project="object",
    object_id="config_id",
    response_format=None,
    text_shape="summary",
)
async def delete_autopilot_config(ctx: ToolContext, args: DeleteAutopilotConfigIn) -> DeleteAutopilotConfigOut:
    """Deletes an autopilot config; needs confirm: true. No future runs start; a run in progress finishes,
    and past runs and the posts they scheduled are kept."""
    config = await service.get(ctx.session, config_id=args.config_id, project_id=ctx.project_id)
    name = config.name
    await service.delete(session=ctx.session, config=config)
    return DeleteAutopilotConfigOut(
        success=True,
        deleted=True,
        config_id=args.config_id,
        message=f"Deleted autopilot config {name} ({args.config_id}); no further runs will start.",
    )


@tool(module="autopilot", scope="mcp:autopilot", read_only=True, idempotent=True, project="optional")
async def get_autopilot_status(ctx: ToolContext, args: GetAutopilotStatusIn) -> GetAutopilotStatusOut:
    """Shows autopilot at a glance: how many configs are active, the last 10 runs (skipped ones with their
    reason, pipeline_id or recipe_run_id to follow up) and how many approval items wait for a person."""
    status = await service.status(session=ctx.session, project_ids=_project_ids(ctx))
    return GetAutopilotStatusOut(
        activeConfigs=status.active_configs,
        recentRuns=[_run_item(recent) for recent in status.recent_runs],
        pendingApprovals=status.pending_approvals,
    )
