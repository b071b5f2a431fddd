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
from toolhost.platform.dates import iso
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
    return CheckPipelineReadinessOut(
        ready=not checked.blockers,
        checks={
            "credits": {
                "available": checked.available_credits,
                "estimated_cost": checked.estimated_cost,
                "sufficient": checked.available_credits >= checked.estimated_cost,
            },
            "connected_accounts": {"platforms": checked.connected_platforms, "missing": checked.missing_platforms},
            "brand_profile": {"exists": checked.has_brand},
            "pending_approvals": {"count": checked.pending_approvals},
            "insights_available": {
                "count": checked.insight_count,
                "fresh": checked.insights_fresh,
                "last_generated_at": iso(checked.insights_generated_at),
            },
        },
        blockers=checked.blockers,
        warnings=checked.warnings,
    )


@tool(
    module="pipeline",
    scope="mcp:autopilot",
    credits=lambda args: runner.pipeline_credits(dry_run=args.dry_run, source_url=args.source_url),
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
    result = await runner.run(
        session=ctx.session,
        session_factory=ctx.session_factory,
        settings=ctx.settings,
        account_id=ctx.principal.account_id,
        project_id=ctx.project_id,
        accessible_project_ids=ctx.accessible_project_ids,
        request_id=ctx.request_id,
        charge=ctx.charge,
        refund=ctx.refund,
        request=runner.PipelineRequest(
            topic=args.topic,
            platforms=list(args.platforms),
            account_ids=args.account_ids,
            days=args.days,
            posts_per_day=args.posts_per_day,
            approval_mode=args.approval_mode,
            auto_approve_threshold=args.auto_approve_threshold,
            max_credits=args.max_credits,
            dry_run=args.dry_run,
            skip_stages=list(args.skip_stages),
            source_url=args.source_url,
            config=args.model_dump(mode="json", exclude={"response_format"}),
        ),
    )
    run = result.run
    return RunContentPipelineOut(
        pipeline_id=str(run.id),
        stages_completed=list(run.stages_completed),
        stages_skipped=list(run.stages_skipped),
        plan_id=str(run.plan_id) if run.plan_id is not None else None,
        posts_generated=run.posts_generated,
        posts_approved=run.posts_approved,
        posts_scheduled=run.posts_scheduled,
        posts_flagged=run.posts_flagged,
        credits_used=run.credits_used,
        credits_remaining=result.credits_remaining,
        dry_run=args.dry_run,
        status=run.status,
        next_action=result.next_action,
        errors=list(run.errors) or None,
    )


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
    return GetPipelineStatusOut(
        found=True,
        id=str(found.id),
        project_id=str(found.project_id),
        plan_id=str(found.plan_id) if found.plan_id else None,
        config=found.config,
        stages_completed=list(found.stages_completed),
        stages_skipped=list(found.stages_skipped),
        current_stage=found.current_stage,
        status=found.status,
        posts_generated=found.posts_generated,
        posts_approved=found.posts_approved,
        posts_scheduled=found.posts_scheduled,
        posts_flagged=found.posts_flagged,
        credits_used=found.credits_used,
        errors=list(found.errors),
        started_at=iso(found.started_at),
        completed_at=iso(found.completed_at),
        created_at=iso(found.created_at),
        updated_at=iso(found.updated_at),
    )


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
    return AutoApprovePlanOut(
        plan_id=str(decided.plan.id),
        auto_approved=decided.approved,
        flagged_for_review=decided.flagged,
        rejected=decided.rejected,
        details=[
            {"post_id": decision.post_id, "action": decision.action, "score": decision.score}
            for decision in decided.decisions
        ],
        plan_status=decided.plan.status,
    )
