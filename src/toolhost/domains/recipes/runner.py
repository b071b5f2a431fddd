"""The `recipe_run` worker: claims a run and executes its steps one by one through execute() as the caller.

Each step goes through the platform's Executor with the principal rebuilt from the run (account, credential,
scopes, project binding; the tier is read again, so a downgrade applies), so scopes, rate limits and each
step's own debit apply step by step. Progress (outputs so far, current step, credits used) is written after
every step; a failed step fails the run and earlier steps keep their results. Webhook steps POST the rendered
body, signed like the webhook connector, through the SSRF-safe fetcher (https only).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import threading
import time
import uuid
from typing import Any

from sqlalchemy import select, update

from toolhost.config import Settings
from toolhost.db.base import utcnow
from toolhost.db.point_reads import PointReader
from toolhost.domains.content import jobs
from toolhost.domains.recipes.definitions import BY_SLUG, Step, lookup, render
from toolhost.platform.context import Principal
from toolhost.platform.execution import Executor
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.models import Account, UsageRecord
from toolhost.platform.ratelimit import RateLimiter
from toolhost.platform.registry import registry
from toolhost.platform.usage import UsageRecorder
from toolhost.providers.connectors import webhook
from toolhost.providers.fetch import Fetcher

JOB_TYPES = ("recipe_run",)
_executors: dict[int, Executor] = {}


class StepFailed(Exception):
    """A step's tool call or delivery failed; the run fails with it."""

    def __init__(self, step: str, error_type: str, message: str) -> None:
        super().__init__(message)
        self.details = {"step": step, "error_type": error_type, "message": message[:500]}


def executor_for(context: WorkerContext) -> Executor:
    """One executor per worker settings (its in-memory rate limits must persist across runs)."""
    executor = _executors.get(id(context.settings))
    if executor is None:
        # Imported here: the worker process may not have loaded the tool modules yet (the composition root's list).
        from toolhost.catalog import load_tools

        load_tools()
        executor = Executor(
            registry=registry,
            settings=context.settings,
            session_factory=context.session_factory,
            rate_limiter=RateLimiter(context.settings.ratelimit, context.settings.redis_url),
            usage=UsageRecorder(context.session_factory),
            point_reads=PointReader(context.settings.database_url, context.session_factory.kw["bind"]),
        )
        _executors[id(context.settings)] = executor
    return executor


async def run_recipe_runs(context: WorkerContext) -> int:
    """The poller: returns expired leases to the queue, then claims and runs one pending recipe run."""
    reaped = await jobs.reap_expired(context, JOB_TYPES)
    job = await jobs.claim(context, JOB_TYPES)
    if job is None:
        return reaped
    await _run(context, job)
    return reaped + 1


async def _principal(context: WorkerContext, saved: dict[str, Any]) -> Principal:
    async with context.session_factory() as session:
        account = await session.get(Account, uuid.UUID(saved["account_id"]))
        tier = account.tier if account is not None else "trial"
    return Principal(
        account_id=uuid.UUID(saved["account_id"]),
        tier=tier,
        credential_id=uuid.UUID(saved["credential_id"]) if saved.get("credential_id") else None,
        credential_name=str(saved.get("credential_name") or "recipe"),
        scopes=frozenset(saved.get("scopes") or ()),
        project_id=uuid.UUID(saved["project_id"]) if saved.get("project_id") else None,
        run_id=saved.get("run_id"),
    )


async def _run(context: WorkerContext, job: Job) -> None:
    assert job.project_id is not None
    timeout = float(context.settings.jobs.timeouts.get("recipe_run", jobs.DEFAULT_TIMEOUT))
    run = jobs.JobRun(
        job_id=job.id,
        job_type=job.job_type,
        account_id=job.account_id,
        project_id=job.project_id,
        job_input=dict(job.input or {}),
        settings=context.settings,
        session_factory=context.session_factory,
        worker_id=context.worker_id,
        deadline=time.monotonic() + timeout,
        stopped=threading.Event(),
    )
    state: dict[str, Any] = {"outputs": {}, "current_step": None, "credits_used": 0}
    beating = asyncio.create_task(jobs.heartbeat(run))
    try:
        async with asyncio.timeout(timeout):
            await _steps(context, run, state)
    except (TimeoutError, jobs.JobStopped):
        if time.monotonic() > run.deadline:
            await _finish(run, state, status="failed", reason="timeout", error=f"exceeded the {timeout:g} s limit")
    except StepFailed as failure:
        state["error"] = failure.details
        await _finish(run, state, status="failed", reason="generation_failed", error=str(failure))
    else:
        state["current_step"] = None
        await _finish(run, state, status="completed")
    finally:
        run.stopped.set()
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating


async def _steps(context: WorkerContext, run: jobs.JobRun, state: dict[str, Any]) -> None:
    recipe = BY_SLUG[str(run.job_input["recipe_slug"])]
    principal = await _principal(context, run.job_input["principal"])
    scope: dict[str, Any] = {
        "inputs": run.job_input["inputs"],
        "steps": state["outputs"],
        "project_id": str(run.project_id),
    }
    for index, step in enumerate(recipe.steps):
        state["current_step"] = step.id
        await _save(run, state, progress=round(index * 100 / len(recipe.steps)))
        if step.type == "webhook":
            state["outputs"][step.id] = await _deliver(run.settings, principal, step, scope)
            continue
        assert step.tool is not None
        items = lookup(scope, step.for_each) if step.for_each else None
        if isinstance(items, list):
            results = []
            for item in items:
                run.checkpoint()
                results.append(await _call(context, principal, step, render(step.args, {**scope, "item": item}), state))
            state["outputs"][step.id] = results
        else:
            state["outputs"][step.id] = await _call(context, principal, step, render(step.args, scope), state)


async def _call(
    context: WorkerContext, principal: Principal, step: Step, args: dict[str, Any], state: dict[str, Any]
) -> Any:
    assert step.tool is not None
    request_id = "req_" + uuid.uuid4().hex
    execution = await executor_for(context).execute(
        step.tool, args, principal, transport="recipe", request_id=request_id
    )
    async with context.session_factory() as session:
        spent = await session.scalar(select(UsageRecord.credits).where(UsageRecord.request_id == request_id))
    state["credits_used"] += int(spent or 0)
    if execution.error is not None:
        raise StepFailed(
            step.id, execution.error.error_type, f"step '{step.id}' ({step.tool}): {execution.error.message}"
        )
    return execution.result.get("structuredContent")


def _signing_secret(settings: Settings, principal: Principal, inputs: dict[str, Any]) -> str:
    given = inputs.get("signing_secret")
    if isinstance(given, str) and given:
        return given
    # Without a caller-chosen secret: a per-account key derived from the server secret (stable, never shown).
    return hmac.new(
        settings.secret_key.encode(), f"recipe-webhook:{principal.account_id}".encode(), hashlib.sha256
    ).hexdigest()


async def _deliver(settings: Settings, principal: Principal, step: Step, scope: dict[str, Any]) -> dict[str, Any]:
    rendered = render(step.args, scope)
    body = json.dumps(rendered.get("body", {}), separators=(",", ":"), default=str).encode()
    secret = _signing_secret(settings, principal, scope["inputs"])
    headers = {
        "Content-Type": "application/json",
        webhook.SIGNATURE_HEADER: webhook.sign(secret, body, int(time.time())),
        "Idempotency-Key": f"recipe-{uuid.uuid4().hex}",
    }
    try:
        response = await Fetcher(settings.fetch).post(str(rendered["url"]), content=body, headers=headers)
    except Exception as error:  # the fetcher's refusals and upstream failures alike fail this step
        error_type = getattr(error, "error_type", "upstream_error")
        raise StepFailed(
            step.id, error_type, f"step '{step.id}' (webhook): {getattr(error, 'message', error)}"
        ) from None
    if not 200 <= response.status < 300:
        raise StepFailed(
            step.id, "upstream_error", f"step '{step.id}' (webhook): the receiver answered {response.status}"
        )
    return {"delivered": True, "status_code": response.status, "bytes": len(body)}


def _ours(run: jobs.JobRun) -> Any:
    return (Job.id == run.job_id) & (Job.status == "processing") & (Job.lease_owner == run.worker_id)


async def _save(run: jobs.JobRun, state: dict[str, Any], *, progress: int) -> None:
    """Writes the outputs so far and progress; stops when the run is no longer ours (cancelled)."""
    async with run.session_factory() as session, session.begin():
        result = await session.execute(
            update(Job)
            .where(_ours(run))
            .values(output=json.loads(json.dumps(state, default=str)), progress=progress, updated_at=utcnow())
            .returning(Job.id)
            .execution_options(synchronize_session=False)
        )
        if result.first() is None:
            run.stopped.set()
            raise jobs.JobStopped


async def _finish(
    run: jobs.JobRun, state: dict[str, Any], *, status: str, reason: str | None = None, error: str | None = None
) -> None:
    async with run.session_factory() as session, session.begin():
        now = utcnow()
        await session.execute(
            update(Job)
            .where(_ours(run))
            .values(
                status=status,
                progress=100 if status == "completed" else Job.progress,
                failure_reason=reason,
                error=error[:1000] if error else None,
                output=json.loads(json.dumps(state, default=str)),
                lease_owner=None,
                lease_expires_at=None,
                completed_at=now,
                updated_at=now,
            )
            .execution_options(synchronize_session=False)
        )
