"""Plan tools: save, read, update and delete content plans.

Two planning tools of the catalogue live above planning: plan_content_week in ideation/tools.py (it reads a
source URL through ideation) and submit_content_plan_for_approval in approvals/tools.py (it creates approval items).
"""

from __future__ import annotations

from toolhost.domains.planning import service
from toolhost.domains.planning.schemas import (
    DeleteContentPlanIn,
    DeleteContentPlanOut,
    GetContentPlanIn,
    GetContentPlanOut,
    SaveContentPlanIn,
    SaveContentPlanOut,
    UpdateContentPlanIn,
    UpdateContentPlanOut,
)
from toolhost.platform.context import ToolContext
from toolhost.platform.dates import iso
from toolhost.platform.registry import object_lookup, tool

PLAN_LOOKUP = object_lookup("plan_id", service.project_of_plan)


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
    updated, unmatched = service.update_posts(plan, updates)
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
    await service.delete_plan(ctx.session, plan=plan)
    return DeleteContentPlanOut(
        success=True,
        deleted=True,
        plan_id=args.plan_id,
        message=f"Deleted plan {args.plan_id} and its approval items.",
    )
