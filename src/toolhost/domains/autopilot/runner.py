"""The autopilot scheduler, and the `autopilot_run` job type that starts each due run.

The poller run_due_autopilot finds active configs whose due time has come; for each, one transaction moves
`next_run_at` to the following due time (compare-and-set on the old value and the config's updated_at),
records the run and enqueues its `autopilot_run` job, so two workers never start one occurrence (a unique
run per config and due time backs this up). The platform's job machine runs the job: the run goes through
the one execution path, Executor.execute(), as the config's creator, whose credential is turned into a
principal afresh before every call (Authenticator.principal_for_credential: revocation, expiry, the
account's current tier and scopes), so a revoked key starts nothing. A pipeline run calls
run_content_pipeline and a recipe run execute_recipe, by name; that call is made at most once, even when a
lost worker's job runs again. A run that does not start (budget spent, credential gone, tool missing,
refused arguments) is recorded `skipped` with the reason.
"""

from __future__ import annotations

import logging
import math
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.config import Settings
from toolhost.db.base import utcnow
from toolhost.domains.autopilot import schedule, service
from toolhost.domains.autopilot.models import AutopilotConfig, AutopilotRun
from toolhost.domains.distribution import service as distribution_service
from toolhost.domains.recipes import service as recipes_service
from toolhost.platform import jobs as platform_jobs
from toolhost.platform.context import Principal
from toolhost.platform.execution import Execution
from toolhost.platform.fields import SOCIAL_PLATFORMS
from toolhost.platform.jobs import Job, JobFailed, JobPolicy, JobResult, JobRun, JobType, WorkerContext
from toolhost.platform.registry import Registry
from toolhost.platform.results import Unauthenticated

logger = logging.getLogger("toolhost.autopilot")
JOB_TYPE = "autopilot_run"
BATCH = 10
PIPELINE_TOOL = "run_content_pipeline"
RECIPE_TOOL = "execute_recipe"
# Pipeline statuses after which nothing more happens in the run itself (CATALOG.md §1.6).
PIPELINE_FINAL = frozenset({"completed", "awaiting_approval", "paused", "failed"})


class Skip(Exception):
    """The run does not start; the message is the recorded reason."""


@dataclass(frozen=True, slots=True)
class Claimed:
    """A due occurrence: the config as it was when its run was scheduled (the job's input)."""

    run_id: str
    config_id: str
    project_id: str
    mode: str
    creator: dict[str, Any]
    recipe_slug: str | None
    recipe_inputs: dict[str, Any]
    topic: str | None
    platforms: list[str] | None
    approval_mode: str
    days: int
    max_credits: float | None


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a run started, or why it did not: what its row records."""

    status: str
    reason: str | None = None
    pipeline_id: str | None = None
    recipe_run_id: uuid.UUID | None = None
    credits_used: int = 0
    arguments: dict[str, Any] | None = None
    finished: bool = True


async def run_due_autopilot(context: WorkerContext, *, now: datetime | None = None) -> int:
    """The poller: schedules the runs of configs due at `now` (the clock, unless a test fixes it)."""
    now = now or utcnow()
    async with context.session_factory() as session:
        due = list(
            await session.scalars(
                select(AutopilotConfig.id)
                .where(AutopilotConfig.is_active.is_(True), AutopilotConfig.next_run_at <= now)
                .order_by(AutopilotConfig.next_run_at)
                .limit(BATCH)
            )
        )
    handled = 0
    for config_id in due:
        handled += await _schedule(context, config_id, now)
    return handled


def _days_until(following: datetime, due_at: datetime) -> int:
    """The pipeline's `days`: whole days until the next run, within 1–7."""
    return max(1, min(7, math.ceil((following - due_at) / timedelta(days=1))))


def _remaining(config: AutopilotConfig, used_this_week: int) -> float | None:
    """The smaller remaining budget (per run, or what is left of the week); None when both are unlimited."""
    limits = [config.max_credits_per_run] if config.max_credits_per_run is not None else []
    if config.max_credits_per_week is not None:
        limits.append(max(0.0, config.max_credits_per_week - used_this_week))
    return min(limits) if limits else None


async def _schedule(context: WorkerContext, config_id: uuid.UUID, now: datetime) -> int:
    """Moves the config to its next due time and records the run with its job, in one transaction: 1 when
    this worker took the occurrence (started later by the job, or skipped now for its budget), 0 when
    another worker got there first or the config changed meanwhile."""
    try:
        async with context.session_factory() as session, session.begin():
            config = await session.get(AutopilotConfig, config_id)
            if config is None or not config.is_active or config.next_run_at is None or config.next_run_at > now:
                return 0
            due_at = config.next_run_at
            # After a worker outage only the latest missed time runs: the next due time is after now.
            following = schedule.next_due(config.schedule_days, config.schedule_time, config.timezone, max(now, due_at))
            moved = await session.execute(
                update(AutopilotConfig)
                .where(
                    AutopilotConfig.id == config.id,
                    AutopilotConfig.is_active.is_(True),
                    AutopilotConfig.next_run_at == due_at,
                    AutopilotConfig.updated_at == config.updated_at,
                )
                .values(next_run_at=following, last_run_at=now, updated_at=now)
                .execution_options(synchronize_session=False)
            )
            if moved.rowcount != 1:  # type: ignore[attr-defined]
                return 0
            used = await service.credits_used_this_week(session, config, now)
            remaining = _remaining(config, used)
            run = AutopilotRun(
                config_id=config.id,
                project_id=config.project_id,
                mode=config.mode,
                status="running",
                due_at=due_at,
                started_at=now,
            )
            if remaining is not None and remaining <= 0:
                run.status = "skipped"
                run.reason = (
                    f"credit budget spent: {used} of {config.max_credits_per_week:g} credits used this week"
                    if config.max_credits_per_week is not None and used >= config.max_credits_per_week
                    else "credit budget spent: max_credits_per_run is 0"
                )
                run.completed_at = now
            session.add(run)
            await session.flush()
            if run.status == "skipped":
                return 1
            claimed = Claimed(
                run_id=str(run.id),
                config_id=str(config.id),
                project_id=str(config.project_id),
                mode=config.mode,
                creator=dict(config.creator),
                recipe_slug=config.recipe_slug,
                recipe_inputs=dict(config.recipe_inputs or {}),
                topic=config.topic,
                platforms=list(config.platforms) if config.platforms else None,
                approval_mode=config.approval_mode,
                days=_days_until(following, due_at),
                max_credits=remaining,
            )
            await platform_jobs.enqueue(
                session=session,
                account_id=uuid.UUID(str(config.creator["account_id"])),
                project_id=config.project_id,
                job_type=JOB_TYPE,
                tool_name=None,
                reserved_credits=0,
                job_input=asdict(claimed),
            )
            return 1
    except IntegrityError:
        # The unique (config, due time) run: another worker recorded this occurrence.
        return 0


async def run_autopilot(run: JobRun) -> JobResult:
    """Starts one scheduled run (or records why it does not start) as the config's creator."""
    claimed = Claimed(**run.job_input)
    started = run.saved_output.get("started")
    if started:
        raise JobFailed(
            f"the worker stopped while {started} was starting the run; see that tool's status, nothing runs twice",
            reason="worker_lost",
        )
    try:
        outcome = await _start(run, claimed)
    except Skip as skipped:
        outcome = Outcome(status="skipped", reason=str(skipped))

    async def record(session: AsyncSession) -> None:
        await _record(session, uuid.UUID(claimed.run_id), outcome)

    return JobResult(output={"status": outcome.status}, record=record)


async def settle(session: AsyncSession, job: Job) -> None:
    """A run whose job failed (time limit, lost workers, a crash) is recorded failed with the reason."""
    reason = f"{job.failure_reason}: {job.error}" if job.error else job.failure_reason
    await _record(session, uuid.UUID(str(job.input["run_id"])), Outcome(status="failed", reason=reason))


async def _principal(run: JobRun, claimed: Claimed) -> Principal:
    """The creator's credential as it is now: its scopes within the account's current tier."""
    credential_id = service.parse_id(str(claimed.creator.get("credential_id") or ""))
    if credential_id is None:
        raise Skip("the config has no creating credential to run as")
    try:
        # The run's calls share a run id, so the per-run budgets (CATALOG.md §1.9) count them together.
        return await run.authenticator.principal_for_credential(credential_id, run_id=f"autopilot-{claimed.run_id}")
    except Unauthenticated as error:
        raise Skip(service.reason_of(error) + "; create the config again with a live key") from None


async def _execute(
    run: JobRun, claimed: Claimed, name: str, arguments: dict[str, Any], *, starts_run: bool = False
) -> Execution:
    principal = await _principal(run, claimed)
    if starts_run:
        # Written before the call: if this worker is lost during it, the job's next attempt does not call again.
        await run.report(output={"started": name})
    return await run.executor.execute(
        name,
        arguments,
        principal,
        transport="autopilot",
        request_id=platform_jobs.step_request_id(run.job_id, name),
    )


def _refused(registry: Registry, execution: Execution, tool_name: str) -> Skip | None:
    """A call that did not start the run: an unknown tool, or an error raised before or by the handler's checks."""
    error = execution.error
    if error is None:
        return None
    if registry.get(tool_name) is None:
        return Skip(f"{tool_name} is not available on this server")
    return Skip(service.reason_of(error))


async def _start(run: JobRun, claimed: Claimed) -> Outcome:
    await _principal(run, claimed)
    if claimed.mode == "recipe":
        return await _start_recipe(run, claimed)
    return await _start_pipeline(run, claimed)


async def _start_recipe(run: JobRun, claimed: Claimed) -> Outcome:
    assert claimed.recipe_slug is not None
    recipe = recipes_service.get_recipe(claimed.recipe_slug)
    estimate = recipes_service.estimated_credits(run.executor.registry, recipe, claimed.recipe_inputs)
    if claimed.max_credits is not None and estimate > claimed.max_credits:
        raise Skip(f"the recipe's estimated {estimate} credits exceed the remaining budget of {claimed.max_credits:g}")
    arguments = {"slug": claimed.recipe_slug, "inputs": claimed.recipe_inputs, "project_id": claimed.project_id}
    execution = await _execute(run, claimed, RECIPE_TOOL, arguments, starts_run=True)
    refused = _refused(run.executor.registry, execution, RECIPE_TOOL)
    if refused is not None:
        raise refused
    payload = execution.result["structuredContent"]
    # The recipe run continues as its own job, which carries the status and credits from here on.
    return Outcome(status="pending", recipe_run_id=uuid.UUID(payload["run_id"]), arguments=arguments)


async def _platforms(run: JobRun, claimed: Claimed) -> list[str]:
    if claimed.platforms:
        return claimed.platforms
    async with run.session_factory() as session:
        usable = await distribution_service.list_for_project(
            session=session, project_id=uuid.UUID(claimed.project_id), include_all=False
        )
    connected = {account.platform for account in usable}
    return [platform for platform in SOCIAL_PLATFORMS if platform in connected]


async def _topic(run: JobRun, claimed: Claimed) -> str:
    if claimed.topic:
        return claimed.topic
    execution = await _execute(run, claimed, "suggest_next_content", {"project_id": claimed.project_id, "count": 1})
    if execution.error is not None:
        raise Skip("no topic: the config names none and suggest_next_content failed: " + execution.error.message)
    suggestions = execution.result["structuredContent"].get("suggestions") or []
    if not suggestions:
        raise Skip("no topic: the config names none and suggest_next_content has no evidence yet")
    return str(suggestions[0]["topic"])


async def _start_pipeline(run: JobRun, claimed: Claimed) -> Outcome:
    platforms = await _platforms(run, claimed)
    if not platforms:
        raise Skip("no platforms: the config names none and the project has no usable connected account")
    arguments: dict[str, Any] = {
        "project_id": claimed.project_id,
        "topic": await _topic(run, claimed),
        "platforms": platforms,
        "days": claimed.days,
        "posts_per_day": 1,
        "approval_mode": claimed.approval_mode,
        # Creating an active config is the confirmation to schedule (CATALOG.md §13).
        "schedule_confirmed": True,
        "response_format": "json",
    }
    if claimed.max_credits is not None:
        arguments["max_credits"] = claimed.max_credits
    execution = await _execute(run, claimed, PIPELINE_TOOL, arguments, starts_run=True)
    error = execution.error
    if error is not None and error.raised_by_handler and error.error_type not in {"validation_error", "not_found"}:
        # The pipeline started and failed while running (a provider, a conflict): a failed run, not a skip.
        return Outcome(status="failed", reason=service.reason_of(error), arguments=arguments)
    refused = _refused(run.executor.registry, execution, PIPELINE_TOOL)
    if refused is not None:
        raise refused
    payload = execution.result["structuredContent"]
    status = str(payload.get("status") or "completed")
    return Outcome(
        status=status,
        pipeline_id=str(payload.get("pipeline_id")) if payload.get("pipeline_id") else None,
        credits_used=int(payload.get("credits_used") or 0),
        arguments=arguments,
        finished=status in PIPELINE_FINAL,
    )


async def _record(session: AsyncSession, run_id: uuid.UUID, outcome: Outcome) -> None:
    """Writes how the run started (or why it did not)."""
    run = await session.get(AutopilotRun, run_id)
    if run is None:
        return
    run.status = outcome.status
    run.reason = outcome.reason[:1000] if outcome.reason else None
    run.pipeline_id = outcome.pipeline_id
    run.recipe_run_id = outcome.recipe_run_id
    run.credits_used = outcome.credits_used
    run.arguments = outcome.arguments
    run.completed_at = utcnow() if outcome.finished and outcome.recipe_run_id is None else None
    logger.info("autopilot run %s: %s%s", run_id, outcome.status, f" ({outcome.reason})" if outcome.reason else "")


def autopilot_policy(settings: Settings) -> JobPolicy:
    """A run starts at its due time, whatever media jobs its account has running."""
    return JobPolicy(max_attempts=settings.jobs.max_attempts, per_account_limit=False)


JOB_TYPES = (JobType(name=JOB_TYPE, run=run_autopilot, policy=autopilot_policy, settle=settle),)
