"""run_content_pipeline (CATALOG.md §14): the stages, each committed as it completes so get_pipeline_status
sees the run meanwhile.

The call's hold carries the declared cost (the plan's 10 or 13 credits). Guards run before the first commit,
so a refused run is returned its hold; after it, every stage's progress and the credits it spent are
committed stage by stage, each stage a unit of work of its own.
"""

from __future__ import annotations

import functools
import re
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolhost.db.base import utcnow
from toolhost.domains.approvals import service as approvals_service
from toolhost.domains.distribution import service as distribution_service
from toolhost.domains.ideation import service as ideation_service
from toolhost.domains.pipeline import service
from toolhost.domains.pipeline.models import PipelineRun
from toolhost.domains.pipeline.schemas import RunContentPipelineIn
from toolhost.domains.planning import service as planning_service
from toolhost.domains.quality import service as quality_service
from toolhost.platform.dates import iso
from toolhost.platform.results import BillingFailed, ToolError
from toolhost.providers.fetch import Fetcher

if TYPE_CHECKING:
    from toolhost.domains.distribution.models import ConnectedAccount
    from toolhost.domains.planning.models import ContentPlan
    from toolhost.platform.context import ToolContext

TOPIC_CHARS = 500
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def pipeline_credits(args: RunContentPipelineIn) -> int:
    """The declared cost: the plan (10, 13 with a source URL), nothing on a dry run; posts are charged as scheduled."""
    return 0 if args.dry_run else planning_service.plan_credits(args.source_url)


def clean_topic(topic: str) -> str:
    """The topic without control characters, cut at 500 characters."""
    return " ".join(CONTROL_CHARACTERS.sub(" ", topic).split())[:TOPIC_CHARS]


def post_key(plan_id: uuid.UUID, post_id: str) -> str:
    """The per-post idempotency key of a pipeline run (CATALOG.md §14)."""
    return f"pipeline-{plan_id}-{post_id}"


@dataclass
class Outcome:
    """What the run has done so far; mirrored onto its row after every stage."""

    run: PipelineRun
    errors: list[dict[str, Any]] = field(default_factory=list)
    stopped_early: bool = False

    def error(self, stage: str, message: str) -> None:
        self.errors.append({"stage": stage, "message": message})
        self.run.errors = list(self.errors)

    def complete(self, stage: str) -> None:
        self.run.stages_completed = [*self.run.stages_completed, stage]

    def skip(self, stage: str) -> None:
        self.run.stages_skipped = [*self.run.stages_skipped, stage]


async def run(*, ctx: ToolContext, args: RunContentPipelineIn) -> dict[str, Any]:
    """Runs the stages in order and returns run_content_pipeline's payload."""
    session = ctx.session
    platforms = list(dict.fromkeys(distribution_service.canonical_platform(name) for name in args.platforms))
    plan_cost = pipeline_credits(args)

    # Guards, before anything is committed: account routing when scheduling, the budget for the plan itself.
    routed: dict[str, ConnectedAccount] = {}
    if args.schedules:
        routed = await distribution_service.route(
            session=session, project_id=ctx.project_id, platforms=platforms, account_ids=args.account_ids
        )
    if args.max_credits is not None and plan_cost > args.max_credits:
        raise BillingFailed(
            f"max_credits {int(args.max_credits)} does not cover the plan ({plan_cost} credits)",
            recover_with="raise max_credits, or run with dry_run true (free)",
            balance=await service.balance(session, ctx.principal.account_id),
            required_credits=plan_cost,
        )

    record = PipelineRun(
        project_id=ctx.project_id,
        config=args.model_dump(mode="json", exclude={"response_format"}),
        status="running",
        current_stage="budget_check",
        stages_completed=[],
        stages_skipped=[],
        errors=[],
        credits_used=plan_cost,
    )
    session.add(record)
    await session.flush()
    outcome = Outcome(run=record)
    outcome.complete("budget_check")
    await _commit(ctx, record, next_stage="research")
    try:
        return await _stages(ctx, args, outcome, platforms, plan_cost, routed)
    except BaseException as error:
        # Earlier stages are committed: the run must not stay `running` when a later one breaks.
        await _abandon(ctx, record.id, error)
        raise


async def _stages(
    ctx: ToolContext,
    args: RunContentPipelineIn,
    outcome: Outcome,
    platforms: list[str],
    plan_cost: int,
    routed: dict[str, ConnectedAccount],
) -> dict[str, Any]:
    """research -> planning -> quality_check -> persist_plan -> schedule, committed one by one."""
    record = outcome.run
    topic = clean_topic(args.topic or "")
    if "research" in args.skip_stages:
        outcome.skip("research")
    else:
        topic = await _research(ctx, outcome, topic, args.source_url)
    if not topic:
        topic = urlsplit(args.source_url or "").hostname or "Untitled"
    await _commit(ctx, record, next_stage="planning")

    plan = await _plan(ctx, args, outcome, topic, platforms, plan_cost)
    if plan is None:
        return await _finish(ctx, args, outcome, plan=None)
    await _commit(ctx, record, next_stage="quality_check")

    posts = [dict(post) for post in plan.payload.get("posts", [])]
    if "quality" in args.skip_stages:
        outcome.skip("quality_check")
        for post in posts:
            post["status"] = "approved"
    else:
        await _quality(ctx, args, posts)
        outcome.complete("quality_check")
    approved = [post for post in posts if post["status"] == "approved"]
    record.posts_approved = len(approved)
    record.posts_flagged = len(posts) - len(approved)
    await _commit(ctx, record, next_stage="persist_plan")

    await _persist(ctx, plan, posts)
    outcome.complete("persist_plan")
    await _commit(ctx, record, next_stage="schedule")

    if not args.schedules:
        outcome.skip("schedule")
    else:
        await _schedule(ctx, args, outcome, plan, approved, routed)
        outcome.complete("schedule")
    return await _finish(ctx, args, outcome, plan=plan)


async def _abandon(ctx: ToolContext, run_id: uuid.UUID, error: BaseException) -> None:
    """Marks the run failed in a transaction of its own, after dropping the broken stage's work."""
    await ctx.session.rollback()
    message = error.message if isinstance(error, ToolError) else f"internal error (request {ctx.request_id})"
    async with ctx.fresh_transaction() as session:
        record = await session.get(PipelineRun, run_id)
        if record is None:
            return
        stage = record.current_stage or "unknown"
        record.errors = [*record.errors, {"stage": stage, "message": message}]
        record.status = "failed"
        record.completed_at = utcnow()
        record.updated_at = record.completed_at


async def _commit(ctx: ToolContext, record: PipelineRun, *, next_stage: str | None) -> None:
    """Records the stage reached and commits the progress (and the credits spent so far)."""
    record.current_stage = next_stage
    record.updated_at = utcnow()
    await ctx.session.flush()
    await ctx.commit()


async def _research(ctx: ToolContext, outcome: Outcome, topic: str, source_url: str | None) -> str:
    """Ideation context (best effort, the plan loads it too) and, without a topic, the source page's title."""
    try:
        await ideation_service.ideation_context(session=ctx.session, project_id=ctx.project_id, days=30)
        await ctx.commit()
        if source_url and not topic:
            page = await ideation_service.extract(Fetcher(ctx.settings.fetch), source_url, "auto")
            topic = clean_topic(str(page.get("title") or ""))
    except ToolError as error:
        outcome.error("research", error.message)
        return topic
    outcome.complete("research")
    return topic


async def _plan(
    ctx: ToolContext,
    args: RunContentPipelineIn,
    outcome: Outcome,
    topic: str,
    platforms: list[str],
    plan_cost: int,
) -> ContentPlan | None:
    """plan_content_week's composer; a failure refunds the plan's credits and ends the run."""
    try:
        # plan_week reads, ends its unit of work, composes, and writes the plan last: a failure wrote nothing.
        context = await ideation_service.ideation_context(session=ctx.session, project_id=ctx.project_id, days=30)
        plan = await planning_service.plan_week(
            session=ctx.session,
            settings=ctx.settings,
            project_id=ctx.project_id,
            context=context,
            topic=topic,
            source_url=args.source_url if "research" not in args.skip_stages else None,
            platforms=platforms,
            posts_per_day=args.posts_per_day,
            days=args.days,
            start_date=None,
            brand_voice=None,
            read_page=functools.partial(ideation_service.extract, Fetcher(ctx.settings.fetch), extract_type="auto"),
        )
    except ToolError as error:
        outcome.error("planning", error.message)
        await ctx.refund(plan_cost)
        outcome.run.credits_used -= plan_cost
        return None
    limit = len(platforms) * args.days * args.posts_per_day
    kept = [post for post in plan.payload.get("posts", []) if post.get("platform") in platforms][:limit]
    plan.payload = {**plan.payload, "posts": kept, "pipeline_id": str(outcome.run.id)}
    outcome.run.plan_id = plan.id
    outcome.run.posts_generated = len(kept)
    outcome.complete("planning")
    return plan


async def _quality(ctx: ToolContext, args: RunContentPipelineIn, posts: list[dict[str, Any]]) -> None:
    """Scores each post for its platform with the project's brand and decides it by approval_mode."""
    judge = await quality_service.judge_for(
        ctx.session, project_id=ctx.project_id, keyword=ctx.settings.quality.brand_keyword
    )
    recent = await quality_service.recent_posts(ctx.session, project_id=ctx.project_id)
    scored, _summary = quality_service.score_plan_posts(
        posts, judge=judge, recent=recent, threshold=args.auto_approve_threshold
    )
    for post, result in zip(posts, scored, strict=True):
        post["quality"] = result["quality"]
        passed = result["quality"]["passed"]
        if args.approval_mode == "review_all":
            post["status"] = "pending"
        elif passed:
            post["status"] = "approved"
        else:
            post["status"] = "pending" if args.approval_mode == "auto" else "needs_edit"


async def _persist(ctx: ToolContext, plan: ContentPlan, posts: list[dict[str, Any]]) -> None:
    """The plan with its decided posts, approval items for each, and the plan status."""
    plan.payload = {**plan.payload, "posts": posts}
    approved = [post for post in posts if post["status"] == "approved"]
    flagged = [post for post in posts if post["status"] != "approved"]
    if approved:
        await approvals_service.create(ctx.session, plan=plan, posts=approved, status="approved", auto_approved=True)
    if flagged:
        await approvals_service.create(ctx.session, plan=plan, posts=flagged, status="pending")
    planning_service.transition(plan, "in_review" if flagged else "approved")
    await ctx.session.flush()


async def _schedule(
    ctx: ToolContext,
    args: RunContentPipelineIn,
    outcome: Outcome,
    plan: ContentPlan,
    approved: list[dict[str, Any]],
    routed: dict[str, ConnectedAccount],
) -> None:
    """Approved posts at their schedule_at or the first free slot from their day, 1 credit each, until
    max_credits or the balance runs out."""
    session = ctx.session
    tomorrow = utcnow().replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    planners: dict[int, distribution_service.SlotPlanner] = {}
    results: dict[str, dict[str, Any]] = {}
    fetcher = Fetcher(ctx.settings.fetch)
    for post in approved:
        post_id = str(post["id"])
        if args.max_credits is not None and outcome.run.credits_used + 1 > args.max_credits:
            outcome.stopped_early = True
            break
        platform = str(post["platform"])
        when = post.get("schedule_at")
        if not when:
            day = int(post.get("day") or 1)
            if day not in planners:
                # Posts already created in this run are flushed rows, so the next day's planner avoids them.
                await session.flush()
                planners[day] = await distribution_service.slot_planner(
                    session=session,
                    project_id=ctx.project_id,
                    platforms=list(routed),
                    start=tomorrow + timedelta(days=day - 1) - timedelta(microseconds=1),
                    min_gap_hours=4,
                )
            slot = planners[day].pick(platform)
            if slot is None:
                outcome.error("schedule", f"{post_id}: no free slot in the 7 days from day {day}")
                continue
            when = iso(slot.moment)
        try:
            result = await _schedule_one(ctx, plan, post, str(when), routed[platform], fetcher)
        except BillingFailed:
            outcome.stopped_early = True  # the balance ran out: the rest wait for credits
            break
        except ToolError as error:
            outcome.error("schedule", f"{post_id}: {error.message}")
            continue
        results[post_id] = result
        if result.get("charged"):
            outcome.run.credits_used += 1
        outcome.run.posts_scheduled += 1
        await session.flush()
    plan.payload = {
        **plan.payload,
        "posts": [
            {**post, "schedule_result": _public(results[str(post.get("id"))])}
            if str(post.get("id")) in results
            else post
            for post in plan.payload.get("posts", [])
        ],
    }
    # Flagged posts keep the plan in review; an approved plan is scheduled once every post of it is.
    if plan.status == "approved" and not outcome.stopped_early and results and len(results) == len(approved):
        planning_service.transition(plan, "scheduled")
    await session.flush()


def _public(result: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in result.items() if key != "charged"}


async def _schedule_one(
    ctx: ToolContext,
    plan: ContentPlan,
    post: dict[str, Any],
    when: str,
    account: ConnectedAccount,
    fetcher: Fetcher,
) -> dict[str, Any]:
    """One post as schedule_post would create it, under its pipeline key; a repeat of the key is free."""
    session = ctx.session
    key = post_key(plan.id, str(post["id"]))
    previous = await distribution_service.previous_plan_post(session=session, project_id=ctx.project_id, key=key)
    if previous is not None:
        return {**previous.document(), "charged": False}
    result = await distribution_service.schedule_plan_post(
        session=session,
        settings=ctx.settings,
        fetcher=fetcher,
        charge=ctx.charge,
        account_id=ctx.principal.account_id,
        project_id=ctx.project_id,
        accessible_project_ids=ctx.accessible_project_ids,
        post=post,
        account=account,
        schedule_at=when,
        key=key,
        plan_id=plan.id,
    )
    return {**result.document(), "charged": True}


async def _finish(
    ctx: ToolContext, args: RunContentPipelineIn, outcome: Outcome, *, plan: ContentPlan | None
) -> dict[str, Any]:
    """The final status (§14), the run row closed, and the payload."""
    record = outcome.run
    if outcome.errors and len(record.stages_completed) <= 2:
        status = "failed"
    elif outcome.stopped_early:
        status = "paused"
    elif record.posts_flagged:
        status = "awaiting_approval"
    else:
        status = "completed"
    record.status = status
    record.current_stage = None
    record.completed_at = utcnow()
    record.updated_at = record.completed_at
    await ctx.session.flush()
    remaining = await service.balance(ctx.session, ctx.principal.account_id)
    return {
        "pipeline_id": str(record.id),
        "stages_completed": list(record.stages_completed),
        "stages_skipped": list(record.stages_skipped),
        "plan_id": str(plan.id) if plan is not None else None,
        "posts_generated": record.posts_generated,
        "posts_approved": record.posts_approved,
        "posts_scheduled": record.posts_scheduled,
        "posts_flagged": record.posts_flagged,
        "credits_used": record.credits_used,
        "credits_remaining": remaining,
        "dry_run": args.dry_run,
        "status": status,
        "next_action": _next_action(status, args, plan),
        "errors": list(outcome.errors) or None,
    }


def _next_action(status: str, args: RunContentPipelineIn, plan: ContentPlan | None) -> str:
    plan_ref = f"plan {plan.id}" if plan is not None else "the plan"
    if status == "failed":
        return "Read errors[], fix the cause (topic, source_url, credits) and run the pipeline again."
    if status == "paused":
        return (
            f"Scheduling stopped at max_credits or the balance; add credits, then call schedule_content_plan "
            f"with {plan_ref.replace('plan ', 'plan_id ')} for the approved posts left."
        )
    if status == "awaiting_approval":
        return (
            f"Review the flagged posts of {plan_ref} with list_plan_approvals and respond_plan_approval "
            "(or update_content_plan), then schedule_content_plan."
        )
    if args.dry_run:
        return f"Review {plan_ref} (get_content_plan), then run again with dry_run false and schedule_confirmed true."
    if not args.schedules:
        return f"Schedule {plan_ref} with schedule_content_plan when ready."
    return "Watch the scheduled posts with list_recent_posts; get_pipeline_status shows this run."
