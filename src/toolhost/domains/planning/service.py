"""Plan storage and the plan state machine: the one place plan statuses change."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.domains.planning.models import ContentPlan
from toolhost.platform.dates import iso
from toolhost.platform.results import Conflict, NotFound, ValidationFailed

STATUSES = ("draft", "in_review", "approved", "scheduled", "completed")
# CATALOG.md §1.6: every transition but save_content_plan's bookkeeping follows this table.
TRANSITIONS: dict[str, frozenset[str]] = {
    "draft": frozenset({"in_review", "approved"}),
    "in_review": frozenset({"approved", "draft", "in_review"}),
    "approved": frozenset({"scheduled", "approved", "in_review"}),
    "scheduled": frozenset({"completed"}),
    "completed": frozenset(),
}


def transition(plan: ContentPlan, target: str) -> None:
    """Moves a plan along the state machine; an illegal move is `conflict`."""
    if target not in TRANSITIONS[plan.status]:
        raise Conflict(
            f"plan {plan.id} is {plan.status}; it cannot move to {target}",
            current_status=plan.status,
        )
    plan.status = target


def _parse_id(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


async def project_of_plan(session: AsyncSession, plan_id: str, project_ids: Sequence[uuid.UUID]) -> uuid.UUID | None:
    """The project of a plan, searched only among `project_ids`."""
    parsed = _parse_id(plan_id)
    if parsed is None or not project_ids:
        return None
    return await session.scalar(
        select(ContentPlan.project_id).where(ContentPlan.id == parsed, ContentPlan.project_id.in_(project_ids))
    )


async def get(session: AsyncSession, *, plan_id: str, project_id: uuid.UUID) -> ContentPlan:
    """A plan of the project, or not_found."""
    parsed = _parse_id(plan_id)
    plan = await session.get(ContentPlan, parsed) if parsed else None
    if plan is None or plan.project_id != project_id:
        raise NotFound(f"No plan found with ID {plan_id}")
    return plan


def _normalized_posts(posts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    normalized = []
    for index, post in enumerate(posts, start=1):
        post = dict(post)
        if not post.get("id"):
            post["id"] = f"post-{index}"
        post["id"] = str(post["id"])
        normalized.append(post)
    return normalized


async def save(session: AsyncSession, *, project_id: uuid.UUID, document: dict[str, Any], status: str) -> ContentPlan:
    """Stores a plan: replaces the project's plan named by `plan_id` (approvals kept), else creates one."""
    given_project = document.get("project_id")
    if given_project is not None and _parse_id(given_project) != project_id:
        raise ValidationFailed(
            "plan.project_id and project_id disagree",
            field_errors=[{"path": "plan.project_id", "message": "differs from the resolved project_id"}],
        )
    existing: ContentPlan | None = None
    given_plan = _parse_id(document["plan_id"]) if document.get("plan_id") else None
    if given_plan is not None:
        existing = await session.get(ContentPlan, given_plan)
        if existing is not None and existing.project_id != project_id:
            existing = None
    topic = (document.get("topic") or "").strip() or "Untitled Plan"
    plan = existing or ContentPlan(id=uuid.uuid4(), project_id=project_id)
    payload = {**document, "topic": topic, "posts": _normalized_posts(document["posts"])}
    payload["plan_id"] = str(plan.id)
    payload["project_id"] = str(project_id)
    payload.setdefault("generated_at", iso(datetime.now(UTC)))
    plan.topic = topic
    plan.status = status
    plan.payload = payload
    if existing is None:
        session.add(plan)
    await session.flush()
    return plan


def post_ids(plan: ContentPlan) -> list[str]:
    """The ids of the plan's posts, in order."""
    return [str(post.get("id")) for post in plan.payload.get("posts", [])]


def mirror_post_status(plan: ContentPlan, *, post_id: str, status: str) -> None:
    """Copies an approval decision onto the plan post's `status` (approval items stay the source of truth)."""
    posts = [
        dict(post, status=status) if str(post.get("id")) == post_id else post for post in plan.payload.get("posts", [])
    ]
    plan.payload = {**plan.payload, "posts": posts}
