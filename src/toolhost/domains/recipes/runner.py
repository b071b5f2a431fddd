"""The `recipe_run` job type: a run's steps executed one by one through the platform's Executor as the caller.

Before every step the runner turns the run's stored credential into a principal afresh
(Authenticator.principal_for_credential: revocation, expiry, tier and scopes read again), so a revoked
key's run stops at its next step with an `unauthenticated` error, and the steps after it neither run nor
charge. Each call debits on its own through execute() (scopes, rate limits and per-run budgets apply step
by step), under a request id fixed per run and call: an attempt after a lost worker resumes after the
saved steps and never runs a charged call twice. Progress (outputs so far, current step, credits used) is
written after every call; a failed step fails the run and earlier steps keep their results. Webhook steps
POST the rendered body, signed like the webhook connector, through the SSRF-safe fetcher (https only).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from typing import Any

from sqlalchemy import select

from toolhost.config import Settings
from toolhost.domains.recipes.definitions import BY_SLUG, Step, lookup, render
from toolhost.platform import jobs as platform_jobs
from toolhost.platform.context import Principal
from toolhost.platform.jobs import JobFailed, JobResult, JobRun, JobType
from toolhost.platform.models import UsageRecord
from toolhost.platform.results import Unauthenticated
from toolhost.providers.connectors import webhook
from toolhost.providers.fetch import Fetcher

JOB_TYPE = "recipe_run"


class StepFailed(Exception):
    """A step's tool call or delivery failed, or the caller may no longer act; the run fails with it."""

    def __init__(self, step: str, error_type: str, message: str, *, reason: str = "generation_failed") -> None:
        super().__init__(message)
        self.reason = reason
        self.details = {"step": step, "error_type": error_type, "message": message[:500]}


def _stored(state: dict[str, Any]) -> dict[str, Any]:
    """The run's state as its job stores it: JSON (each step's payload is whatever that tool answered)."""
    return dict(json.loads(json.dumps(state, default=str)))


async def run_recipe(run: JobRun) -> JobResult:
    """Runs the recipe's steps not yet done (all of them, unless an earlier attempt saved some)."""
    recipe = BY_SLUG[str(run.job_input["recipe_slug"])]
    saved = run.saved_output
    state: dict[str, Any] = {
        "outputs": dict(saved.get("outputs") or {}),
        "current_step": None,
        "credits_used": int(saved.get("credits_used") or 0),
        # Results of a for_each step's items so far, so a resumed run does not repeat them.
        "items": dict(saved.get("items") or {}),
    }
    scope: dict[str, Any] = {
        "inputs": run.job_input["inputs"],
        "steps": state["outputs"],
        "project_id": str(run.project_id),
    }
    try:
        for index, step in enumerate(recipe.steps):
            if step.id in state["outputs"]:
                continue
            state["current_step"] = step.id
            await run.report(round(index * 100 / len(recipe.steps)), output=_stored(state))
            state["outputs"][step.id] = await _step(run, step, scope, state)
    except StepFailed as failure:
        state["error"] = failure.details
        raise JobFailed(str(failure), reason=failure.reason, output=_stored(state)) from None
    state["current_step"] = None
    return JobResult(output=_stored(state))


async def _step(run: JobRun, step: Step, scope: dict[str, Any], state: dict[str, Any]) -> Any:
    if step.type == "webhook":
        principal = await _principal(run, step)
        return await _deliver(run, principal, step, scope)
    items = lookup(scope, step.for_each) if step.for_each else None
    if not isinstance(items, list):
        return await _call(run, step, step.id, render(step.args, scope), state)
    done: list[Any] = state["items"].setdefault(step.id, [])
    for position, item in enumerate(items):
        if position < len(done):
            continue
        done.append(await _call(run, step, f"{step.id}:{position}", render(step.args, {**scope, "item": item}), state))
        await run.report(output=_stored(state))
    return state["items"].pop(step.id)


async def _principal(run: JobRun, step: Step) -> Principal:
    """The run's caller as its credential stands now; a caller who may no longer act stops the run here."""
    saved = run.job_input["principal"]
    try:
        if not saved.get("credential_id"):
            raise Unauthenticated("the run has no stored credential to act as")
        return await run.authenticator.principal_for_credential(
            uuid.UUID(str(saved["credential_id"])),
            within=frozenset(saved.get("scopes") or ()),
            run_id=saved.get("run_id"),
        )
    except Unauthenticated as error:
        raise StepFailed(
            step.id, error.error_type, f"step '{step.id}' was not run: {error.message}", reason="authentication_failed"
        ) from None


async def _call(run: JobRun, step: Step, call: str, args: dict[str, Any], state: dict[str, Any]) -> Any:
    assert step.tool is not None
    principal = await _principal(run, step)
    request_id = platform_jobs.step_request_id(run.job_id, call)
    async with run.session_factory() as session:
        ran = await platform_jobs.step_ran(session, account_id=run.account_id, request_id=request_id)
    if ran:
        # It ran and was charged under an attempt whose worker stopped before saving the result: never again.
        raise StepFailed(
            step.id,
            "worker_lost",
            f"step '{step.id}' ran, but its worker stopped before saving the result; start the recipe again",
            reason="worker_lost",
        )
    run.checkpoint()
    execution = await run.executor.execute(step.tool, args, principal, transport="recipe", request_id=request_id)
    async with run.session_factory() as session:
        spent = await session.scalar(
            select(UsageRecord.credits).where(
                UsageRecord.account_id == run.account_id, UsageRecord.request_id == request_id
            )
        )
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
        settings.keyring.current().signing, f"recipe-webhook:{principal.account_id}".encode(), hashlib.sha256
    ).hexdigest()


async def _deliver(run: JobRun, principal: Principal, step: Step, scope: dict[str, Any]) -> dict[str, Any]:
    """POSTs a webhook step's body, signed; its payload, stored among the run's outputs like a tool's."""
    rendered = render(step.args, scope)
    body = json.dumps(rendered.get("body", {}), separators=(",", ":"), default=str).encode()
    secret = _signing_secret(run.settings, principal, scope["inputs"])
    headers = {
        "Content-Type": "application/json",
        webhook.SIGNATURE_HEADER: webhook.sign(secret, body, int(time.time())),
        # The same key on every attempt of the run: a receiver drops a repeat after a lost worker.
        "Idempotency-Key": f"recipe-{run.job_id}-{step.id}",
    }
    try:
        response = await Fetcher(run.settings.fetch).post(str(rendered["url"]), content=body, headers=headers)
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


JOB_TYPES = (JobType(name=JOB_TYPE, run=run_recipe),)
