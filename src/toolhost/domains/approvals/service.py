"""Approval items: a plan sent to review, creation (idempotent per plan and post), one decision each, and the plan
they move."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.domains.approvals.models import ApprovalItem
from toolhost.domains.planning import service as planning_service
from toolhost.domains.planning.models import ContentPlan
from toolhost.platform.models import Project
from toolhost.platform.results import Conflict, NotFound, ValidationFailed

DECIDED = frozenset({"approved", "rejected", "edited"})


async def project_of_approval(
    session: AsyncSession, approval_id: str, project_ids: Sequence[uuid.UUID]
) -> uuid.UUID | None:
    """The project of an approval item, searched only among `project_ids`."""
    try:
        parsed = uuid.UUID(approval_id)
    except ValueError:
        return None
    return await session.scalar(
        select(ApprovalItem.project_id).where(ApprovalItem.id == parsed, ApprovalItem.project_id.in_(project_ids))
    )


async def list_items(session: AsyncSession, *, plan_id: uuid.UUID, status: str | None = None) -> list[ApprovalItem]:
    """A plan's items, oldest first, optionally of one status."""
    query = select(ApprovalItem).where(ApprovalItem.plan_id == plan_id)
    if status is not None:
        query = query.where(ApprovalItem.status == status)
    return list(await session.scalars(query.order_by(ApprovalItem.created_at, ApprovalItem.post_id)))


async def plans_with_pending(
    session: AsyncSession, *, account_id: uuid.UUID, project_id: uuid.UUID | None
) -> list[tuple[ContentPlan, int]]:
    """The plans of an account (of one project when the caller is bound to one) with pending items, and how many,
    oldest plan first: what the approvals page asks list_plan_approvals about."""
    pending = func.count(ApprovalItem.id)
    query = (
        select(ContentPlan, pending)
        .join(ApprovalItem, ApprovalItem.plan_id == ContentPlan.id)
        .join(Project, Project.id == ContentPlan.project_id)
        .where(Project.account_id == account_id, ApprovalItem.status == "pending")
        .group_by(ContentPlan.id)
        .order_by(ContentPlan.created_at, ContentPlan.id)
    )
    if project_id is not None:
        query = query.where(ContentPlan.project_id == project_id)
    return [(plan, count) for plan, count in (await session.execute(query)).all()]


async def create(
    session: AsyncSession,
    *,
    plan: ContentPlan,
    posts: list[dict[str, Any]],
    status: str = "pending",
    auto_approved: bool = False,
) -> tuple[int, list[ApprovalItem]]:
    """One item per post; an existing (plan, post) item is returned unchanged. Returns (created, items)."""
    existing = {item.post_id: item for item in await list_items(session, plan_id=plan.id)}
    created = 0
    items = []
    now = datetime.now(UTC)
    for post in posts:
        post_id = str(post["id"])
        item = existing.get(post_id)
        if item is None:
            item = ApprovalItem(
                plan_id=plan.id,
                post_id=post_id,
                project_id=plan.project_id,
                status=status,
                auto_approved=auto_approved,
                original_post=post,
                decided_at=now if status in DECIDED else None,
                created_at=now,
                updated_at=now,
            )
            try:
                async with session.begin_nested():
                    session.add(item)
            except IntegrityError:
                # A concurrent call created it first: the unique (plan_id, post_id) keeps one.
                found = await session.scalar(
                    select(ApprovalItem).where(ApprovalItem.plan_id == plan.id, ApprovalItem.post_id == post_id)
                )
                if found is None:
                    raise
                item = found
            else:
                created += 1
            existing[post_id] = item
        items.append(item)
    return created, items


async def submit_plan(session: AsyncSession, *, plan: ContentPlan) -> int:
    """One pending approval item per post without one; the plan moves to in_review. Returns items created."""
    posts = plan.payload.get("posts") or []
    if not posts:
        raise ValidationFailed(
            "the plan has no posts to submit",
            recover_with="update the plan with posts (save_content_plan) first",
        )
    if plan.status in {"scheduled", "completed"}:
        raise Conflict(f"plan {plan.id} is {plan.status}; it cannot go back to review", current_status=plan.status)
    created, _items = await create(session, plan=plan, posts=posts)
    planning_service.transition(plan, "in_review")
    await session.flush()
    return created


async def get(session: AsyncSession, *, approval_id: str, project_id: uuid.UUID) -> ApprovalItem:
    """An item of the project, or not_found."""
    item = await session.get(ApprovalItem, uuid.UUID(approval_id))
    if item is None or item.project_id != project_id:
        raise NotFound(f"No approval found with ID {approval_id}")
    return item


async def respond(
    session: AsyncSession,
    *,
    approval_id: str,
    project_id: uuid.UUID,
    decision: str,
    edited_post: dict[str, Any] | None,
    reason: str | None,
    decided_by: str,
) -> ApprovalItem:
    """Decides a pending item once; the same decision again is a no-op, any other is `conflict`."""
    item = await get(session, approval_id=approval_id, project_id=project_id)
    if item.status != "pending":
        if item.status == decision and item.edited_post == edited_post and item.reason == reason:
            return item
        raise Conflict(
            f"approval {item.id} is already {item.status}; one decision per item",
            recover_with="list_plan_approvals shows the current decisions",
            current_status=item.status,
        )
    now = datetime.now(UTC)
    item.status = decision
    item.edited_post = edited_post
    item.reason = reason
    item.decided_at = now
    item.decided_by = decided_by
    item.updated_at = now
    await session.flush()
    plan = await session.get(ContentPlan, item.plan_id)
    if plan is not None:
        planning_service.mirror_post_status(plan, post_id=item.post_id, status=decision)
        await settle_plan(session, plan=plan)
    return item


async def settle_plan(session: AsyncSession, *, plan: ContentPlan) -> None:
    """A plan in review moves on once every item is decided: approved if any passed, else back to draft."""
    if plan.status != "in_review":
        return
    items = await list_items(session, plan_id=plan.id)
    if not items or any(item.status == "pending" for item in items):
        return
    passed = any(item.status in {"approved", "edited"} for item in items)
    planning_service.transition(plan, "approved" if passed else "draft")
    await session.flush()
