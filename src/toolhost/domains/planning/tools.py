"""Plan storage tools: save and read content plans."""

from __future__ import annotations

from toolhost.domains.planning import service
from toolhost.domains.planning.schemas import (
    GetContentPlanIn,
    GetContentPlanOut,
    SaveContentPlanIn,
    SaveContentPlanOut,
)
from toolhost.platform.context import ToolContext
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


@tool(module="planning", scope="mcp:read", read_only=True, idempotent=True, project="object", object_id="plan_id", response_format="json")
async def get_content_plan(ctx: ToolContext, args: GetContentPlanIn) -> GetContentPlanOut:
    """Reads a stored content plan with its posts, status and the insights it applied."""
    plan = await service.get(ctx.session, plan_id=args.plan_id, project_id=ctx.project_id)
    return GetContentPlanOut(
        plan_id=str(plan.id),
        project_id=str(plan.project_id),
        topic=plan.topic,
        status=plan.status,
        created_at=service.iso(plan.created_at),
        updated_at=service.iso(plan.updated_at),
        insights_applied=plan.payload.get("insights_applied"),
        plan=plan.payload,
    )
