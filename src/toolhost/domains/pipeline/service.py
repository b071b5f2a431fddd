"""Pipeline readiness, run records and auto-approval (CATALOG.md §14); the run itself is in runner.py."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.config import Settings
from toolhost.domains.analytics.models import PerformanceInsight
from toolhost.domains.approvals import service as approvals_service
from toolhost.domains.approvals.models import ApprovalItem
from toolhost.domains.brand import service as brand_service
from toolhost.domains.distribution import service as distribution_service
from toolhost.domains.pipeline.models import PipelineRun
from toolhost.domains.planning import service as planning_service
from toolhost.domains.planning.models import ContentPlan
from toolhost.domains.quality import service as quality_service
from toolhost.platform.models import Account
from toolhost.platform.results import Conflict, NotFound, ValidationFailed

INSIGHTS_FRESH = timedelta(days=7)
FLAG_MARGIN = 5  # auto_approve_plan: a post within 5 points of the threshold is flagged, not rejected


@dataclass(frozen=True, slots=True)
class Readiness:
    """What a pipeline run would find: credits, accounts, brand, pending approvals, insights; what stops it
    (blockers) and what only weakens it (warnings)."""

    available_credits: int
    estimated_cost: int
    connected_platforms: list[str]
    missing_platforms: list[str]
    has_brand: bool
    pending_approvals: int
    insight_count: int
    insights_fresh: bool
    insights_generated_at: datetime | None
    blockers: list[str]
    warnings: list[str]


@dataclass(frozen=True, slots=True)
class PostDecision:
    """auto_approve_plan's decision on one post, with its quality score."""

    post_id: str
    action: str
    score: int


@dataclass(frozen=True, slots=True)
class AutoApproval:
    """What auto_approve_plan decided: counts of the decisions it made, each post's decision, the plan after."""

    plan: ContentPlan
    approved: int
    flagged: int
    rejected: int
    decisions: list[PostDecision]


async def balance(session: AsyncSession, account_id: uuid.UUID) -> int:
    """The account's credit balance as the ledger holds it now."""
    value = await session.scalar(select(Account.credit_balance).where(Account.id == account_id))
    return int(value or 0)


async def readiness(
    *,
    session: AsyncSession,
    account_id: uuid.UUID,
    project_id: uuid.UUID,
    platforms: Sequence[str],
    estimated_posts: int,
) -> Readiness:
    """check_pipeline_readiness: credits, accounts, brand, pending approvals, insights; blockers and warnings."""
    available = await balance(session, account_id)
    estimated_cost = planning_service.BASE_CREDITS + estimated_posts
    usable = await distribution_service.list_for_project(session=session, project_id=project_id, include_all=False)
    connected = {account.platform for account in usable}
    targets = list(dict.fromkeys(distribution_service.canonical_platform(platform) for platform in platforms))
    missing = [platform for platform in targets if platform not in connected]
    has_brand = await brand_service.get_active(session=session, project_id=project_id) is not None
    pending = int(
        await session.scalar(
            select(func.count())
            .select_from(ApprovalItem)
            .where(ApprovalItem.project_id == project_id, ApprovalItem.status == "pending")
        )
        or 0
    )
    insight_count, newest = (
        await session.execute(
            select(func.count(), func.max(PerformanceInsight.generated_at)).where(
                PerformanceInsight.project_id == project_id
            )
        )
    ).one()
    if newest is not None and newest.tzinfo is None:
        newest = newest.replace(tzinfo=UTC)
    fresh = newest is not None and datetime.now(UTC) - newest < INSIGHTS_FRESH
    blockers: list[str] = []
    warnings: list[str] = []
    if available < estimated_cost:
        blockers.append(f"Not enough credits: {estimated_cost} estimated, {available} available")
    if missing:
        blockers.append("No usable connected account for " + ", ".join(missing) + " (call start_platform_connection)")
    if not has_brand:
        warnings.append("No brand profile: posts use a generic voice (extract_brand, then save_brand_profile)")
    if pending:
        warnings.append(f"{pending} approval item(s) are pending review")
    if not insight_count:
        warnings.append("No performance insights yet: the plan cannot learn from past posts")
    elif not fresh:
        warnings.append("Performance insights are older than 7 days (refresh_platform_analytics)")
    return Readiness(
        available_credits=available,
        estimated_cost=estimated_cost,
        connected_platforms=sorted(connected),
        missing_platforms=missing,
        has_brand=has_brand,
        pending_approvals=pending,
        insight_count=int(insight_count),
        insights_fresh=fresh,
        insights_generated_at=newest,
        blockers=blockers,
        warnings=warnings,
    )


async def project_of_run(session: AsyncSession, pipeline_id: str, project_ids: Sequence[uuid.UUID]) -> uuid.UUID | None:
    """The project of a pipeline run, searched only among `project_ids`."""
    try:
        parsed = uuid.UUID(pipeline_id)
    except ValueError:
        return None
    if not project_ids:
        return None
    return await session.scalar(
        select(PipelineRun.project_id).where(PipelineRun.id == parsed, PipelineRun.project_id.in_(project_ids))
    )


async def find_run(
    *, session: AsyncSession, pipeline_id: str | None, project_ids: Sequence[uuid.UUID]
) -> PipelineRun | None:
    """The named run, or the latest one in the given projects."""
    query = select(PipelineRun).where(PipelineRun.project_id.in_(project_ids))
    if pipeline_id is not None:
        run = await session.scalar(query.where(PipelineRun.id == uuid.UUID(pipeline_id)))
        if run is None:
            raise NotFound(f"No pipeline run found with ID {pipeline_id}")
        return run
    return await session.scalar(query.order_by(PipelineRun.created_at.desc(), PipelineRun.id).limit(1))


def move_plan(plan: ContentPlan, target: str) -> None:
    """Moves a plan to `target` along the state machine, through in_review when approved goes back to draft."""
    if plan.status == target:
        return
    if plan.status == "approved" and target == "draft":
        planning_service.transition(plan, "in_review")
    planning_service.transition(plan, target)


def plan_status_of(items: Sequence[ApprovalItem]) -> str:
    """§1.6 after automatic decisions: in_review while any item is pending, draft when all are rejected."""
    if any(item.status == "pending" for item in items):
        return "in_review"
    if items and all(item.status == "rejected" for item in items):
        return "draft"
    return "approved"


async def auto_approve(
    *, session: AsyncSession, settings: Settings, plan: ContentPlan, threshold: float
) -> AutoApproval:
    """auto_approve_plan: score every post, upsert its approval item, settle the plan status."""
    if plan.status in {"scheduled", "completed"}:
        raise Conflict(f"plan {plan.id} is {plan.status}; its approvals are settled", current_status=plan.status)
    posts = [dict(post) for post in plan.payload.get("posts", [])]
    if not posts:
        raise ValidationFailed(
            "the plan has no posts to approve", recover_with="update the plan with posts (save_content_plan) first"
        )
    judge = await quality_service.judge_for(session, project_id=plan.project_id, keyword=settings.quality.brand_keyword)
    recent = await quality_service.recent_posts(session, project_id=plan.project_id)
    scored, _summary = quality_service.score_plan_posts(posts, judge=judge, recent=recent, threshold=threshold)
    existing = {item.post_id: item for item in await approvals_service.list_items(session, plan_id=plan.id)}
    now = datetime.now(UTC)
    decisions: list[PostDecision] = []
    counts = {"approved": 0, "flagged": 0, "rejected": 0}
    for post in scored:
        quality = post["quality"]
        if quality["passed"]:
            action, item_status, post_status = "approved", "approved", "approved"
        elif quality["score"] >= threshold - FLAG_MARGIN:
            action, item_status, post_status = "flagged", "pending", "needs_edit"
        else:
            action, item_status, post_status = "rejected", "rejected", "rejected"
        post_id = str(post["id"])
        item = existing.get(post_id)
        if item is not None and item.decided_by is not None:
            # A person decided it: their decision stands (reported as it is), and the post keeps it.
            kept = "rejected" if item.status == "rejected" else "approved"
            decisions.append(PostDecision(post_id=post_id, action=kept, score=quality["score"]))
            continue
        counts[action] += 1
        decisions.append(PostDecision(post_id=post_id, action=action, score=quality["score"]))
        original = {key: value for key, value in post.items() if key != "quality"}
        if item is None:
            _created, items = await approvals_service.create(
                session, plan=plan, posts=[original], status=item_status, auto_approved=action == "approved"
            )
            existing[post_id] = items[0]
        else:
            item.status = item_status
            item.auto_approved = action == "approved"
            item.decided_at = now if item_status != "pending" else None
            item.updated_at = now
        post["status"] = post_status
    plan.payload = {**plan.payload, "posts": scored}
    await session.flush()
    items = await approvals_service.list_items(session, plan_id=plan.id)
    move_plan(plan, plan_status_of(items))
    await session.flush()
    return AutoApproval(
        plan=plan,
        approved=counts["approved"],
        flagged=counts["flagged"],
        rejected=counts["rejected"],
        decisions=decisions,
    )
