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
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from toolhost.db.base import utcnow
from toolhost.db.session import end_unit_of_work
from toolhost.domains.approvals import service as approvals_service
from toolhost.domains.distribution import service as distribution_service
from toolhost.domains.ideation import service as ideation_service
from toolhost.domains.pipeline import service
from toolhost.domains.pipeline.models import PipelineRun
from toolhost.domains.planning import service as planning_service
from toolhost.domains.quality import service as quality_service
from toolhost.platform.dates import iso
from toolhost.platform.results import BillingFailed, ToolError
from toolhost.providers.fetch import Fetcher

if TYPE_CHECKING:
    from toolhost.config import Settings
    from toolhost.domains.distribution.models import ConnectedAccount
    from toolhost.domains.planning.models import ContentPlan

TOPIC_CHARS = 500
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def pipeline_credits(*, dry_run: bool, source_url: str | None) -> int:
    """The declared cost: the plan (10, 13 with a source URL), nothing on a dry run; posts are charged as scheduled."""
    return 0 if dry_run else planning_service.plan_credits(source_url)


def clean_topic(topic: str) -> str:
    """The topic without control characters, cut at 500 characters."""
    return " ".join(CONTROL_CHARACTERS.sub(" ", topic).split())[:TOPIC_CHARS]


def post_key(plan_id: uuid.UUID, post_id: str) -> str:
    """The per-post idempotency key of a pipeline run (CATALOG.md §14)."""
    return f"pipeline-{plan_id}-{post_id}"


@dataclass(frozen=True, slots=True)
class PipelineRequest:
    """One run's options, as run_content_pipeline takes them."""

    topic: str | None
    platforms: list[str]
    account_ids: dict[str, str] | None
    days: int
    posts_per_day: int
    approval_mode: str
    auto_approve_threshold: float
    max_credits: float | None
    dry_run: bool
    skip_stages: list[str]
    source_url: str | None
    # The call's arguments as given, kept on the run for get_pipeline_status (free-form JSON).
    config: dict[str, Any]

    @property
    def schedules(self) -> bool:
        """Whether this run would schedule posts."""
        return not self.dry_run and "schedule" not in self.skip_stages


@dataclass(frozen=True, slots=True)
class PipelineResult:
    """A finished run: its row (stages, counts, credits, errors, status), the balance left, and what to do next."""

    run: PipelineRun
    credits_remaining: int
    next_action: str


@dataclass(frozen=True, slots=True)
class _Caller:
    """Who runs the pipeline: the call's session and project, and how its credits move."""

    session: AsyncSession
    session_factory: async_sessionmaker[AsyncSession]
    settings: Settings
    account_id: uuid.UUID
    project_id: uuid.UUID
    accessible_project_ids: Sequence[uuid.UUID]
    request_id: str
    charge: Callable[[int], Awaitable[None]]
    refund: Callable[[int], Awaitable[None]]


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


async def run(
    *,
    session: AsyncSession,
    session_factory: async_sessionmaker[AsyncSession],
    settings: Settings,
    account_id: uuid.UUID,
    project_id: uuid.UUID,
    accessible_project_ids: Sequence[uuid.UUID],
    request_id: str,
    charge: Callable[[int], Awaitable[None]],
    refund: Callable[[int], Awaitable[None]],
    request: PipelineRequest,
) -> PipelineResult:
    """Runs the stages in order; `charge` debits the posts it schedules, `refund` gives back the plan's cost when
    planning fails. Stages commit in `session` as they complete; a run that breaks is marked failed through
    `session_factory`, and its error names `request_id`."""
    caller = _Caller(
        session=session,
        session_factory=session_factory,
        settings=settings,
        account_id=account_id,
        project_id=project_id,
        accessible_project_ids=accessible_project_ids,
        request_id=request_id,
        charge=charge,
        refund=refund,
    )
    platforms = list(dict.fromkeys(distribution_service.canonical_platform(name) for name in request.platforms))
    plan_cost = pipeline_credits(dry_run=request.dry_run, source_url=request.source_url)

    # Guards, before anything is committed: account routing when scheduling, the budget for the plan itself.
    routed: dict[str, ConnectedAccount] = {}
    if request.schedules:
        routed = await distribution_service.route(
            session=session, project_id=caller.project_id, platforms=platforms, account_ids=request.account_ids
        )
    if request.max_credits is not None and plan_cost > request.max_credits:
        raise BillingFailed(
            f"max_credits {int(request.max_credits)} does not cover the plan ({plan_cost} credits)",
            recover_with="raise max_credits, or run with dry_run true (free)",
            balance=await service.balance(session, caller.account_id),
            required_credits=plan_cost,
        )

    record = PipelineRun(
        project_id=caller.project_id,
        config=request.config,
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
    await _commit(caller, record, next_stage="research")
    try:
        return await _stages(caller, request, outcome, platforms, plan_cost, routed)
    except BaseException as error:
        # Earlier stages are committed: the run must not stay `running` when a later one breaks.
        await _abandon(caller, record.id, error)
        raise


async def _stages(
    caller: _Caller,
    request: PipelineRequest,
    outcome: Outcome,
    platforms: list[str],
    plan_cost: int,
    routed: dict[str, ConnectedAccount],
) -> PipelineResult:
    """research -> planning -> quality_check -> persist_plan -> schedule, committed one by one."""
    record = outcome.run
    topic = clean_topic(request.topic or "")
    if "research" in request.skip_stages:
        outcome.skip("research")
    else:
        topic = await _research(caller, outcome, topic, request.source_url)
    if not topic:
        topic = urlsplit(request.source_url or "").hostname or "Untitled"
    await _commit(caller, record, next_stage="planning")

    plan = await _plan(caller, request, outcome, topic, platforms, plan_cost)
    if plan is None:
        return await _finish(caller, request, outcome, plan=None)
    await _commit(caller, record, next_stage="quality_check")

    posts = [dict(post) for post in plan.payload.get("posts", [])]
    if "quality" in request.skip_stages:
        outcome.skip("quality_check")
        for post in posts:
            post["status"] = "approved"
    else:
        await _quality(caller, request, posts)
        outcome.complete("quality_check")
    approved = [post for post in posts if post["status"] == "approved"]
    record.posts_approved = len(approved)
    record.posts_flagged = len(posts) - len(approved)
    await _commit(caller, record, next_stage="persist_plan")

    await _persist(caller, plan, posts)
    outcome.complete("persist_plan")
    await _commit(caller, record, next_stage="schedule")

    if not request.schedules:
        outcome.skip("schedule")
    else:
        await _schedule(caller, request, outcome, plan, approved, routed)
        outcome.complete("schedule")
    return await _finish(caller, request, outcome, plan=plan)


async def _abandon(caller: _Caller, run_id: uuid.UUID, error: BaseException) -> None:
    """Marks the run failed in a transaction of its own, after dropping the broken stage's work."""
    await caller.session.rollback()
    message = error.message if isinstance(error, ToolError) else f"internal error (request {caller.request_id})"
    async with caller.session_factory() as session, session.begin():
        record = await session.get(PipelineRun, run_id)
        if record is None:
            return
        stage = record.current_stage or "unknown"
        record.errors = [*record.errors, {"stage": stage, "message": message}]
        record.status = "failed"
        record.completed_at = utcnow()
        record.updated_at = record.completed_at


async def _commit(caller: _Caller, record: PipelineRun, *, next_stage: str | None) -> None:
    """Records the stage reached and commits the progress (and the credits spent so far)."""
    record.current_stage = next_stage
    record.updated_at = utcnow()
    await caller.session.flush()
    await end_unit_of_work(caller.session)


async def _research(caller: _Caller, outcome: Outcome, topic: str, source_url: str | None) -> str:
    """Ideation context (best effort, the plan loads it too) and, without a topic, the source page's title."""
    try:
        await ideation_service.ideation_context(session=caller.session, project_id=caller.project_id, days=30)
        await end_unit_of_work(caller.session)
        if source_url and not topic:
            page = await ideation_service.extract(Fetcher(caller.settings.fetch), source_url, "auto")
            topic = clean_topic(str(page.get("title") or ""))
    except ToolError as error:
        outcome.error("research", error.message)
        return topic
    outcome.complete("research")
    return topic


async def _plan(
    caller: _Caller,
    request: PipelineRequest,
    outcome: Outcome,
    topic: str,
    platforms: list[str],
    plan_cost: int,
) -> ContentPlan | None:
    """plan_content_week's composer; a failure refunds the plan's credits and ends the run."""
    try:
        # plan_week reads, ends its unit of work, composes, and writes the plan last: a failure wrote nothing.
        context = await ideation_service.ideation_context(session=caller.session, project_id=caller.project_id, days=30)
        plan = await planning_service.plan_week(
            session=caller.session,
            settings=caller.settings,
            project_id=caller.project_id,
            insights=context.plan_insights(),
            topic=topic,
            source_url=request.source_url if "research" not in request.skip_stages else None,
            platforms=platforms,
            posts_per_day=request.posts_per_day,
            days=request.days,
            start_date=None,
            brand_voice=None,
            read_page=functools.partial(ideation_service.extract, Fetcher(caller.settings.fetch), extract_type="auto"),
        )
    except ToolError as error:
        outcome.error("planning", error.message)
        await caller.refund(plan_cost)
        outcome.run.credits_used -= plan_cost
        return None
    limit = len(platforms) * request.days * request.posts_per_day
    kept = [post for post in plan.payload.get("posts", []) if post.get("platform") in platforms][:limit]
    plan.payload = {**plan.payload, "posts": kept, "pipeline_id": str(outcome.run.id)}
    outcome.run.plan_id = plan.id
    outcome.run.posts_generated = len(kept)
    outcome.complete("planning")
    return plan


async def _quality(caller: _Caller, request: PipelineRequest, posts: list[dict[str, Any]]) -> None:
    """Scores each post for its platform with the project's brand and decides it by approval_mode."""
    judge = await quality_service.judge_for(
        caller.session, project_id=caller.project_id, keyword=caller.settings.quality.brand_keyword
    )
    recent = await quality_service.recent_posts(caller.session, project_id=caller.project_id)
    scored, _summary = quality_service.score_plan_posts(
        posts, judge=judge, recent=recent, threshold=request.auto_approve_threshold
    )
    for post, result in zip(posts, scored, strict=True):
        post["quality"] = result["quality"]
        passed = result["quality"]["passed"]
        if request.approval_mode == "review_all":
            post["status"] = "pending"
        elif passed:
            post["status"] = "approved"
        else:
            post["status"] = "pending" if request.approval_mode == "auto" else "needs_edit"


async def _persist(caller: _Caller, plan: ContentPlan, posts: list[dict[str, Any]]) -> None:
    """The plan with its decided posts, approval items for each, and the plan status."""
    plan.payload = {**plan.payload, "posts": posts}
    approved = [post for post in posts if post["status"] == "approved"]
    flagged = [post for post in posts if post["status"] != "approved"]
    if approved:
        await approvals_service.create(caller.session, plan=plan, posts=approved, status="approved", auto_approved=True)
    if flagged:
        await approvals_service.create(caller.session, plan=plan, posts=flagged, status="pending")
    planning_service.transition(plan, "in_review" if flagged else "approved")
    await caller.session.flush()


async def _schedule(
    caller: _Caller,
    request: PipelineRequest,
    outcome: Outcome,
    plan: ContentPlan,
    approved: list[dict[str, Any]],
    routed: dict[str, ConnectedAccount],
) -> None:
    """Approved posts at their schedule_at or the first free slot from their day, 1 credit each, until
    max_credits or the balance runs out."""
    session = caller.session
    tomorrow = utcnow().replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    planners: dict[int, distribution_service.SlotPlanner] = {}
    results: dict[str, distribution_service.ScheduledPlanPost] = {}
    fetcher = Fetcher(caller.settings.fetch)
    for post in approved:
        post_id = str(post["id"])
        if request.max_credits is not None and outcome.run.credits_used + 1 > request.max_credits:
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
                    project_id=caller.project_id,
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
            result, charged = await _schedule_one(caller, plan, post, str(when), routed[platform], fetcher)
        except BillingFailed:
            outcome.stopped_early = True  # the balance ran out: the rest wait for credits
            break
        except ToolError as error:
            outcome.error("schedule", f"{post_id}: {error.message}")
            continue
        results[post_id] = result
        if charged:
            outcome.run.credits_used += 1
        outcome.run.posts_scheduled += 1
        await session.flush()
    plan.payload = {
        **plan.payload,
        "posts": [
            {**post, "schedule_result": results[str(post.get("id"))].document()}
            if str(post.get("id")) in results
            else post
            for post in plan.payload.get("posts", [])
        ],
    }
    # Flagged posts keep the plan in review; an approved plan is scheduled once every post of it is.
    if plan.status == "approved" and not outcome.stopped_early and results and len(results) == len(approved):
        planning_service.transition(plan, "scheduled")
    await session.flush()


async def _schedule_one(
    caller: _Caller,
    plan: ContentPlan,
    post: dict[str, Any],
    when: str,
    account: ConnectedAccount,
    fetcher: Fetcher,
) -> tuple[distribution_service.ScheduledPlanPost, bool]:
    """One post as schedule_post would create it, under its pipeline key, and whether it was charged: a repeat
    of the key is free."""
    session = caller.session
    key = post_key(plan.id, str(post["id"]))
    previous = await distribution_service.previous_plan_post(session=session, project_id=caller.project_id, key=key)
    if previous is not None:
        return previous, False
    result = await distribution_service.schedule_plan_post(
        session=session,
        settings=caller.settings,
        fetcher=fetcher,
        charge=caller.charge,
        account_id=caller.account_id,
        project_id=caller.project_id,
        accessible_project_ids=caller.accessible_project_ids,
        post=post,
        account=account,
        schedule_at=when,
        key=key,
        plan_id=plan.id,
    )
    return result, True


async def _finish(
    caller: _Caller, request: PipelineRequest, outcome: Outcome, *, plan: ContentPlan | None
) -> PipelineResult:
    """The final status (§14) and the run row closed."""
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
    await caller.session.flush()
    return PipelineResult(
        run=record,
        credits_remaining=await service.balance(caller.session, caller.account_id),
        next_action=_next_action(status, request, plan),
    )


def _next_action(status: str, request: PipelineRequest, plan: ContentPlan | None) -> str:
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
    if request.dry_run:
        return f"Review {plan_ref} (get_content_plan), then run again with dry_run false and schedule_confirmed true."
    if not request.schedules:
        return f"Schedule {plan_ref} with schedule_content_plan when ready."
    return "Watch the scheduled posts with list_recent_posts; get_pipeline_status shows this run."
