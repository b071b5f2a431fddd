"""Plan-approval tools: send a plan to review, put posts up for approval, decide them, list them.

submit_content_plan_for_approval is a planning tool in the catalogue; it lives here because sending a plan to
review creates its approval items, and planning sits below approvals (ARCHITECTURE.md, domain order).
"""

from __future__ import annotations

from toolhost.domains.approvals import service
from toolhost.domains.approvals.models import ApprovalItem
from toolhost.domains.approvals.schemas import (
    ApprovalItemBrief,
    ApprovalItemOut,
    CreatePlanApprovalsIn,
    CreatePlanApprovalsOut,
    ListPlanApprovalsIn,
    ListPlanApprovalsOut,
    RespondPlanApprovalIn,
    RespondPlanApprovalOut,
)
from toolhost.domains.planning import service as planning_service
from toolhost.domains.planning.schemas import SubmitContentPlanForApprovalIn, SubmitContentPlanForApprovalOut
from toolhost.platform.context import ToolContext
from toolhost.platform.dates import iso
from toolhost.platform.registry import object_lookup, tool

APPROVAL_LOOKUP = object_lookup("approval_id", service.project_of_approval)


@tool(module="planning", scope="mcp:write", project="object", object_id="plan_id", response_format="json")
async def submit_content_plan_for_approval(
    ctx: ToolContext, args: SubmitContentPlanForApprovalIn
) -> SubmitContentPlanForApprovalOut:
    """Sends a plan to review: one pending approval item per post, and the plan moves to in_review.

    People decide them with respond_plan_approval or the approvals page; once every item is decided the plan
    is approved (at least one approved or edited) or back to draft (all rejected).
    """
    plan = await planning_service.get(ctx.session, plan_id=args.plan_id, project_id=ctx.project_id)
    created = await service.submit_plan(ctx.session, plan=plan)
    return SubmitContentPlanForApprovalOut(plan_id=str(plan.id), approvals_created=created, status=plan.status)


def full_item(item: ApprovalItem) -> ApprovalItemOut:
    """An item as the approval tools show it."""
    return ApprovalItemOut(
        id=str(item.id),
        plan_id=str(item.plan_id),
        post_id=item.post_id,
        project_id=str(item.project_id),
        status=item.status,
        reason=item.reason,
        decided_at=iso(item.decided_at),
        decided_by=item.decided_by,
        auto_approved=item.auto_approved,
        original_post=item.original_post,
        edited_post=item.edited_post,
        created_at=iso(item.created_at),
        updated_at=iso(item.updated_at),
    )


@tool(module="approvals", scope="mcp:write", project="object", object_id="plan_id")
async def create_plan_approvals(ctx: ToolContext, args: CreatePlanApprovalsIn) -> CreatePlanApprovalsOut:
    """Creates a pending approval item for each given post of a stored content plan.

    Idempotent per (plan, post): posts that already have an item get it back unchanged. The plan's
    status is not changed (submit_content_plan_for_approval does that). Next: respond_plan_approval.
    """
    plan = await planning_service.get(ctx.session, plan_id=args.plan_id, project_id=ctx.project_id)
    created, items = await service.create(
        ctx.session, plan=plan, posts=[post.model_dump(mode="json", exclude_none=True) for post in args.posts]
    )
    return CreatePlanApprovalsOut(
        plan_id=str(plan.id),
        created=created,
        items=[
            ApprovalItemBrief(
                id=str(item.id),
                plan_id=str(item.plan_id),
                post_id=item.post_id,
                status=item.status,
                created_at=iso(item.created_at),
            )
            for item in items
        ],
    )


@tool(
    module="approvals",
    scope="mcp:write",
    destructive=True,
    idempotent=True,
    project="object",
    object_id="approval_id",
)
async def respond_plan_approval(ctx: ToolContext, args: RespondPlanApprovalIn) -> RespondPlanApprovalOut:
    """Approves, rejects or edits one pending approval item (edited needs edited_post).

    Each item takes one decision; repeating it identically returns the item, anything else is a
    conflict. When every item of a plan in review is decided the plan moves to approved (or back to
    draft if all were rejected). Next: schedule_content_plan.
    """
    item = await service.respond(
        ctx.session,
        approval_id=args.approval_id,
        project_id=ctx.project_id,
        decision=args.decision,
        edited_post=dict(args.edited_post) if args.edited_post is not None else None,
        reason=args.reason,
        decided_by=ctx.principal.credential_name,
    )
    return RespondPlanApprovalOut(
        id=str(item.id),
        plan_id=str(item.plan_id),
        post_id=item.post_id,
        status=item.status,
        reason=item.reason,
        decided_at=iso(item.decided_at),
        decided_by=item.decided_by,
        original_post=item.original_post,
        edited_post=item.edited_post,
    )


@tool(
    module="approvals",
    scope="mcp:read",
    read_only=True,
    idempotent=True,
    project="object",
    object_id="plan_id",
)
async def list_plan_approvals(ctx: ToolContext, args: ListPlanApprovalsIn) -> ListPlanApprovalsOut:
    """Lists the approval items of a content plan, oldest first, optionally only one status."""
    plan = await planning_service.get(ctx.session, plan_id=args.plan_id, project_id=ctx.project_id)
    items = await service.list_items(ctx.session, plan_id=plan.id, status=args.status)
    return ListPlanApprovalsOut(plan_id=str(plan.id), total=len(items), items=[full_item(item) for item in items])
