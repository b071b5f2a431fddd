"""The autopilot scheduler: a worker poller that starts each active config's run at its due time.

A due config is claimed by moving its `next_run_at` to the following due time (compare-and-set on the old
value, plus a unique run per config and due time), so two workers never start one occurrence. The run then
goes through the platform's one execution path, Executor.execute(), as the config's creator: the credential
is read again at run time (its scopes within the account's current tier; a revoked key starts nothing).
A pipeline run calls run_content_pipeline and a recipe run execute_recipe, by name. A run that does not start
(budget spent, credential gone, tool missing, refused arguments) is recorded `skipped` with the reason.
"""

from __future__ import annotations

import logging
import math
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from toolhost.db.base import utcnow
from toolhost.domains.autopilot import schedule, service
from toolhost.domains.autopilot.models import AutopilotConfig, AutopilotRun
from toolhost.domains.distribution import accounts as distribution_accounts
from toolhost.domains.recipes import runner as recipes_runner
from toolhost.domains.recipes import service as recipes_service
from toolhost.platform import scopes
from toolhost.platform.context import Principal
from toolhost.platform.execution import Execution
from toolhost.platform.fields import PLATFORMS
from toolhost.platform.jobs import WorkerContext
from toolhost.platform.models import Account, ApiKey, OAuthClient
from toolhost.platform.registry import registry

logger = logging.getLogger("toolhost.autopilot")
BATCH = 10
PIPELINE_TOOL = "run_content_pipeline"
RECIPE_TOOL = "execute_recipe"
# Pipeline statuses after which nothing more happens in the run itself (CATALOG.md §1.6).
PIPELINE_FINAL = frozenset({"completed", "awaiting_approval", "paused", "failed"})


class Skip(Exception):
    """The run does not start; the message is the recorded reason."""


@dataclass(frozen=True, slots=True)
class Claimed:
    """A due occurrence this worker owns: the config as it was at claim time and its run row."""

    run_id: uuid.UUID
    config_id: uuid.UUID
    project_id: uuid.UUID
    mode: str
    creator: dict[str, Any]
    recipe_slug: str | None
    recipe_inputs: dict[str, Any]
    topic: str | None
    platforms: list[str] | None
    approval_mode: str
    days: int
    max_credits: float | None


async def run_due_autopilot(context: WorkerContext, *, now: datetime | None = None) -> int:
    """The poller: starts the runs of configs due at `now` (the clock, unless a test fixes it)."""
    now = now or utcnow()
    async with context.session_factory() as session:
        due = (
            await session.execute(
                select(AutopilotConfig.id, AutopilotConfig.next_run_at)
                .where(AutopilotConfig.is_active.is_(True), AutopilotConfig.next_run_at <= now)
                .order_by(AutopilotConfig.next_run_at)
                .limit(BATCH)
            )
        ).all()
    handled = 0
    for config_id, due_at in due:
        assert due_at is not None  # selected by `next_run_at <= now`
        took, claimed = await _claim(context, config_id, due_at, now)
        handled += took
        if claimed is None:
            continue
        try:
            await _start(context, claimed)
        except Skip as skipped:
            await _record(context, claimed.run_id, status="skipped", reason=str(skipped))
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


async def _claim(
    context: WorkerContext, config_id: uuid.UUID, due_at: datetime, now: datetime
) -> tuple[int, Claimed | None]:
    """Moves the config to its next due time and records the run, in one transaction: (1, the run to start),
    (1, None) when it was skipped for its budget, (0, None) when another worker got there first (or the
    config was paused or deleted meanwhile)."""
    try:
        async with context.session_factory() as session, session.begin():
            config = await session.scalar(
                select(AutopilotConfig)
                .where(
                    AutopilotConfig.id == config_id,
                    AutopilotConfig.is_active.is_(True),
                    AutopilotConfig.next_run_at == due_at,
                )
                .with_for_update(skip_locked=True)
            )
            if config is None:
                return 0, None
            # After a worker outage only the latest missed time runs: the next due time is after now.
            following = schedule.next_due(config.schedule_days, config.schedule_time, config.timezone, max(now, due_at))
            config.next_run_at = following
            config.last_run_at = now
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
                return 1, None
            return 1, Claimed(
                run_id=run.id,
                config_id=config.id,
                project_id=config.project_id,
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
    except IntegrityError:
        # The unique (config, due time) run: another worker recorded this occurrence.
        return 0, None


async def _principal(context: WorkerContext, claimed: Claimed) -> Principal:
    """The creator's credential as it is now: its scopes within the account's current tier."""
    credential_id = service.parse_id(str(claimed.creator.get("credential_id") or ""))
    if credential_id is None:
        raise Skip("the config has no creating credential to run as")
    async with context.session_factory() as session:
        account = await session.get(Account, uuid.UUID(str(claimed.creator["account_id"])))
        key = await session.get(ApiKey, credential_id)
        client = None if key is not None else await session.get(OAuthClient, credential_id)
    credential = key or client
    if account is None or credential is None or credential.revoked_at is not None:
        raise Skip("the key that created this config was revoked or deleted; create the config again with a live key")
    if key is not None and key.expires_at is not None and key.expires_at <= datetime.now(UTC):
        raise Skip("the key that created this config has expired; create the config again with a live key")
    return Principal(
        account_id=account.id,
        tier=account.tier,
        credential_id=credential.id,
        credential_name=credential.name,
        scopes=scopes.effective(credential.scopes, account.tier),
        project_id=credential.project_id,
        # The run's calls share a run id, so the per-run budgets (CATALOG.md §1.9) count them together.
        run_id=f"autopilot-{claimed.run_id}",
    )


async def _execute(context: WorkerContext, principal: Principal, name: str, arguments: dict[str, Any]) -> Execution:
    return await recipes_runner.executor_for(context).execute(name, arguments, principal, transport="autopilot")


def _refused(execution: Execution, tool_name: str) -> Skip | None:
    """A call that did not start the run: an unknown tool, or an error raised before or by the handler's checks."""
    error = execution.error
    if error is None:
        return None
    if registry.get(tool_name) is None:
        return Skip(f"{tool_name} is not available on this server")
    return Skip(service.reason_of(error))


async def _start(context: WorkerContext, claimed: Claimed) -> None:
    principal = await _principal(context, claimed)
    if claimed.mode == "recipe":
        await _start_recipe(context, claimed, principal)
    else:
        await _start_pipeline(context, claimed, principal)


async def _start_recipe(context: WorkerContext, claimed: Claimed, principal: Principal) -> None:
    assert claimed.recipe_slug is not None
    recipe = recipes_service.get_recipe(claimed.recipe_slug)
    estimate = recipes_service.estimated_credits(recipe, claimed.recipe_inputs)
    if claimed.max_credits is not None and estimate > claimed.max_credits:
        raise Skip(f"the recipe's estimated {estimate} credits exceed the remaining budget of {claimed.max_credits:g}")
    arguments = {"slug": claimed.recipe_slug, "inputs": claimed.recipe_inputs, "project_id": str(claimed.project_id)}
    execution = await _execute(context, principal, RECIPE_TOOL, arguments)
    refused = _refused(execution, RECIPE_TOOL)
    if refused is not None:
        raise refused
    payload = execution.result["structuredContent"]
    # The recipe run continues in the recipe worker; its job carries the status and credits from here on.
    await _record(
        context, claimed.run_id, status="pending", recipe_run_id=uuid.UUID(payload["run_id"]), arguments=arguments
    )


async def _platforms(context: WorkerContext, claimed: Claimed) -> list[str]:
    if claimed.platforms:
        return claimed.platforms
    async with context.session_factory() as session:
        usable = await distribution_accounts.list_for_project(
            session=session, project_id=claimed.project_id, include_all=False
        )
    connected = {account.platform for account in usable}
    return [platform for platform in PLATFORMS if platform in connected]


async def _topic(context: WorkerContext, claimed: Claimed, principal: Principal) -> str:
    if claimed.topic:
        return claimed.topic
    execution = await _execute(
        context, principal, "suggest_next_content", {"project_id": str(claimed.project_id), "count": 1}
    )
    if execution.error is not None:
        raise Skip("no topic: the config names none and suggest_next_content failed: " + execution.error.message)
    suggestions = execution.result["structuredContent"].get("suggestions") or []
    if not suggestions:
        raise Skip("no topic: the config names none and suggest_next_content has no evidence yet")
    return str(suggestions[0]["topic"])


async def _start_pipeline(context: WorkerContext, claimed: Claimed, principal: Principal) -> None:
    platforms = await _platforms(context, claimed)
    if not platforms:
        raise Skip("no platforms: the config names none and the project has no usable connected account")
    arguments: dict[str, Any] = {
        "project_id": str(claimed.project_id),
        "topic": await _topic(context, claimed, principal),
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
    execution = await _execute(context, principal, PIPELINE_TOOL, arguments)
    error = execution.error
    if error is not None and error.raised_by_handler and error.error_type not in {"validation_error", "not_found"}:
        # The pipeline started and failed while running (a provider, a conflict): a failed run, not a skip.
        await _record(context, claimed.run_id, status="failed", reason=service.reason_of(error), arguments=arguments)
        return
    refused = _refused(execution, PIPELINE_TOOL)
    if refused is not None:
        raise refused
    payload = execution.result["structuredContent"]
    status = str(payload.get("status") or "completed")
    await _record(
        context,
        claimed.run_id,
        status=status,
        pipeline_id=str(payload.get("pipeline_id")) if payload.get("pipeline_id") else None,
        credits_used=int(payload.get("credits_used") or 0),
        arguments=arguments,
        finished=status in PIPELINE_FINAL,
    )


async def _record(
    context: WorkerContext,
    run_id: uuid.UUID,
    *,
    status: str,
    reason: str | None = None,
    pipeline_id: str | None = None,
    recipe_run_id: uuid.UUID | None = None,
    credits_used: int = 0,
    arguments: dict[str, Any] | None = None,
    finished: bool = True,
) -> None:
    """Writes how the run started (or why it did not)."""
    async with context.session_factory() as session, session.begin():
        run = await session.get(AutopilotRun, run_id)
        if run is None:
            return
        run.status = status
        run.reason = reason[:1000] if reason else None
        run.pipeline_id = pipeline_id
        run.recipe_run_id = recipe_run_id
        run.credits_used = credits_used
        run.arguments = arguments
        run.completed_at = utcnow() if finished and recipe_run_id is None else None
    logger.info("autopilot run %s: %s%s", run_id, status, f" ({reason})" if reason else "")
