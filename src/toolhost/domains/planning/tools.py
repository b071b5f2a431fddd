"""Plan tools: plan a week, save, read, update, delete and submit content plans."""

from __future__ import annotations

from toolhost.domains.ideation import url_content
from toolhost.domains.ideation.youtube import ConnectedYouTube
from toolhost.domains.planning import authoring, service
from toolhost.domains.planning.schemas import (
    DeleteContentPlanIn,
    DeleteContentPlanOut,
    GetContentPlanIn,
    GetContentPlanOut,
    PlanContentWeekIn,
    PlanContentWeekOut,
    SaveContentPlanIn,
    SaveContentPlanOut,
    SubmitContentPlanForApprovalIn,
    SubmitContentPlanForApprovalOut,
    UpdateContentPlanIn,
    UpdateContentPlanOut,
)
from toolhost.platform.context import ToolContext
from toolhost.platform.dates import iso
from toolhost.platform.registry import object_lookup, tool

object_lookup("plan_id", service.project_of_plan)


@tool(module="planning", scope="mcp:write", project="strict", response_format="json")
async def save_content_plan(ctx: ToolContext, args: SaveContentPlanIn) -> SaveContentPlanOut:
    """Stores a content plan (topic and posts) as given, or replaces one of yours named by plan.plan_id.

    Use it to keep a plan you wrote yourself; plan_content_week writes and stores one for you. It is the
    one tool that may set any plan status (bookkeeping). Next: submit_content_plan_for_approval.
    """
    plan = await service.save(
        ctx.session, project_id=ctx.project_id, document=args.plan.model_dump(), status=args.status
    )
    return SaveContentPlanOut(plan_id=str(plan.id), project_id=str(plan.project_id), status=plan.status)


@tool(
    module="planning",
    scope="mcp:read",
    read_only=True,
    idempotent=True,
    project="object",
    object_id="plan_id",
    response_format="json",
)
async def get_content_plan(ctx: ToolContext, args: GetContentPlanIn) -> GetContentPlanOut:
    """Reads a stored content plan with its posts, status and the insights it applied."""
    plan = await service.get(ctx.session, plan_id=args.plan_id, project_id=ctx.project_id)
    return GetContentPlanOut(
        plan_id=str(plan.id),
        project_id=str(plan.project_id),
        topic=plan.topic,
        status=plan.status,
        created_at=iso(plan.created_at),
        updated_at=iso(plan.updated_at),
        insights_applied=plan.payload.get("insights_applied"),
        plan=plan.payload,
    )


@tool(
    module="planning",
    scope="mcp:write",
    credits=lambda args: authoring.plan_credits(args.source_url),
    project="strict",
    response_format="json",
    category="generation",
)
async def plan_content_week(ctx: ToolContext, args: PlanContentWeekIn) -> PlanContentWeekOut:
    """Plans up to a week of posts on a topic: one per platform per day (posts_per_day more), each with hook,
    angle, caption, hashtags and media type, rotating hook types, brand pillars and formats.

    The plan is stored as a draft. Next: quality_check_plan, update_content_plan (media_url for instagram,
    tiktok and youtube posts), then submit_content_plan_for_approval.
    """
    youtube = None
    if args.source_url and url_content.youtube_kind(args.source_url) is not None:
        youtube = await ConnectedYouTube.load(session=ctx.session, settings=ctx.settings, principal=ctx.principal)
    plan = await authoring.plan_week(
        session=ctx.session,
        settings=ctx.settings,
        project_id=ctx.project_id,
        topic=args.topic,
        source_url=args.source_url,
        platforms=list(dict.fromkeys(args.platforms)),
        posts_per_day=args.posts_per_day,
        days=args.days,
        start_date=args.start_date,
        brand_voice=args.brand_voice,
        youtube=youtube,
    )
    if youtube is not None:
        youtube.store_refreshed()
    return PlanContentWeekOut.model_validate({**plan.payload, "status": plan.status})


@tool(
    module="planning",
    scope="mcp:write",
    destructive=True,
    idempotent=True,
    project="object",
    object_id="plan_id",
    response_format="json",
)
async def update_content_plan(ctx: ToolContext, args: UpdateContentPlanIn) -> UpdateContentPlanOut:
    """Edits posts of a stored plan by post_id: only the fields you give change; the plan status stays.

    It never schedules or publishes. Ids that match no post are listed in unmatched_post_ids.
    """
    plan = await service.get(ctx.session, plan_id=args.plan_id, project_id=ctx.project_id)
    updates = [update.model_dump(mode="json", exclude_unset=True) for update in args.post_updates]
    updated, unmatched = authoring.update_posts(plan, updates)
    await ctx.session.flush()
    return UpdateContentPlanOut(
        plan_id=str(plan.id), status=plan.status, updated_posts=updated, unmatched_post_ids=unmatched or None
    )


@tool(
    module="planning",
    scope="mcp:write",
    destructive=True,
    idempotent=True,
    project="object",
    object_id="plan_id",
    response_format=None,
    text_shape="summary",
)
async def delete_content_plan(ctx: ToolContext, args: DeleteContentPlanIn) -> DeleteContentPlanOut:
    """Deletes a content plan and its approval items; needs confirm: true.

    Posts already scheduled from it stay scheduled (cancel_scheduled_post cancels them).
    """
    plan = await service.get(ctx.session, plan_id=args.plan_id, project_id=ctx.project_id)
    await authoring.delete_plan(ctx.session, plan=plan)
    return DeleteContentPlanOut(
        success=True,
        deleted=True,
        plan_id=args.plan_id,
        message=f"Deleted plan {args.plan_id} and its approval items.",
    )


@tool(module="planning", scope="mcp:write", project="object", object_id="plan_id", response_format="json")
async def submit_content_plan_for_approval(
    ctx: ToolContext, args: SubmitContentPlanForApprovalIn
) -> SubmitContentPlanForApprovalOut:
    """Sends a plan to review: one pending approval item per post, and the plan moves to in_review.

    People decide them with respond_plan_approval or the approvals page; once every item is decided the plan
    is approved (at least one approved or edited) or back to draft (all rejected).
    """
    plan = await service.get(ctx.session, plan_id=args.plan_id, project_id=ctx.project_id)
    created = await authoring.submit(ctx.session, plan=plan)
    return SubmitContentPlanForApprovalOut(plan_id=str(plan.id), approvals_created=created, status=plan.status)
