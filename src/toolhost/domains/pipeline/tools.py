"""Pipeline tools: readiness, one run from topic to schedule, its status, and automatic plan approval."""

from __future__ import annotations

from toolhost.domains.pipeline import runner, service
from toolhost.domains.pipeline.schemas import (
    AutoApprovePlanIn,
    AutoApprovePlanOut,
    CheckPipelineReadinessIn,
    CheckPipelineReadinessOut,
    GetPipelineStatusIn,
    GetPipelineStatusOut,
    RunContentPipelineIn,
    RunContentPipelineOut,
)
from toolhost.domains.planning import service as planning_service
from toolhost.platform.context import ToolContext
from toolhost.platform.registry import object_lookup, tool

PIPELINE_LOOKUP = object_lookup("pipeline_id", service.project_of_run)


@tool(module="pipeline", scope="mcp:read", read_only=True, idempotent=True, project="strict")
async def check_pipeline_readiness(ctx: ToolContext, args: CheckPipelineReadinessIn) -> CheckPipelineReadinessOut:
    """Checks whether run_content_pipeline can run for these platforms: credits for the plan and the posts,
    a usable connected account per platform, a brand profile, pending approvals and fresh insights.

    Blockers stop a run; warnings do not. Next: start_platform_connection for missing accounts, then
    run_content_pipeline (dry_run first to review the plan for free).
    """
    checked = await service.readiness(
        session=ctx.session,
        account_id=ctx.principal.account_id,
        project_id=ctx.project_id,
        platforms=args.platforms,
        estimated_posts=args.estimated_posts,
    )
    return CheckPipelineReadinessOut.model_validate(checked)


@tool(
    module="pipeline",
    scope="mcp:autopilot",
    credits=runner.pipeline_credits,
    destructive=True,
    open_world=True,
    project="strict",
    response_format="json",
    category="generation",
)
async def run_content_pipeline(ctx: ToolContext, args: RunContentPipelineIn) -> RunContentPipelineOut:
    """Runs the whole content pipeline in one call: research, a week's plan, the quality gate, approval
    items by approval_mode, and scheduling of the approved posts (1 credit each, up to max_credits).

    Scheduling needs schedule_confirmed: true; dry_run: true plans and scores for free without scheduling.
    Flagged posts wait for a person (status awaiting_approval: list_plan_approvals, respond_plan_approval).
    get_pipeline_status follows the run; check_pipeline_readiness first tells you what is missing.
    """
    return RunContentPipelineOut.model_validate(await runner.run(ctx=ctx, args=args))


@tool(
    module="pipeline",
    scope="mcp:read",
    read_only=True,
    idempotent=True,
    project="object_or_optional",
    object_id="pipeline_id",
    polling=True,
)
async def get_pipeline_status(ctx: ToolContext, args: GetPipelineStatusIn) -> GetPipelineStatusOut:
    """Shows a pipeline run's stages, counts, credits and errors; without pipeline_id, the latest run.

    Poll it while run_content_pipeline is running; no runs is a success with found: false.
    """
    projects = [ctx.project.id] if ctx.project is not None else ctx.accessible_project_ids
    found = await service.find_run(session=ctx.session, pipeline_id=args.pipeline_id, project_ids=projects)
    if found is None:
        return GetPipelineStatusOut(found=False)
    return GetPipelineStatusOut.model_validate(service.describe(found))


@tool(
    module="pipeline",
    scope="mcp:autopilot",
    destructive=True,
    idempotent=True,
    project="object",
    object_id="plan_id",
    response_format="json",
)
async def auto_approve_plan(ctx: ToolContext, args: AutoApprovePlanIn) -> AutoApprovePlanOut:
    """Decides a plan's posts by quality score: at or above quality_threshold with no blockers -> approved,
    within 5 points -> flagged for review (needs_edit), else rejected. Decisions a person made stay.

    The plan moves to in_review while anything is flagged, draft when all are rejected, else approved.
    Next: respond_plan_approval for flagged posts, then schedule_content_plan.
    """
    plan = await planning_service.get(ctx.session, plan_id=args.plan_id, project_id=ctx.project_id)
    decided = await service.auto_approve(
        session=ctx.session, settings=ctx.settings, plan=plan, threshold=args.quality_threshold
    )
    return AutoApprovePlanOut.model_validate(decided)
