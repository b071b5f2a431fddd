"""The async job machine of CATALOG.md §1.6/§1.15 for generated media: enqueue, status, cancel, and the worker.

A job row and its credit reservation are written in the enqueuing call's transaction (`execute()` debits the
tool's declared cost there). The poller `run_media_jobs` claims one due job at a time with a lease, runs the
job type's runner under the type's time limit (`jobs.timeouts`) while a heartbeat extends the lease and
notices cancellation, and finishes it with guarded updates: a job leaves `processing` exactly once, and
`billing_status` leaves `reserved` exactly once, so a job is never both charged and refunded, nor refunded
twice. A lease that expires returns the job to `pending` with attempt + 1; the last attempt fails it
(`worker_lost`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, case, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from toolhost.db.base import utcnow
from toolhost.domains.content.models import ContentRecord
from toolhost.domains.media import service as media_service
from toolhost.platform import credits
from toolhost.platform.jobs import Job, WorkerContext
from toolhost.platform.results import Conflict, NotFound, ValidationFailed

if TYPE_CHECKING:
    from toolhost.config import Settings

logger = logging.getLogger(__name__)

FAILED_MESSAGE = "Generation failed. Retry or choose another model."
CANCELLED_MESSAGE = "Cancelled by user."
# The tool whose reservation a job holds (the ledger names it on refunds).
TOOL_OF_JOB_TYPE = {
    "image": "generate_image",
    "video": "generate_video",
    "voiceover": "generate_voiceover",
    "demo_render": "render_demo_video",
    "template_render": "render_template_video",
    "hyperframes_render": "render_hyperframes",
    "recipe_run": "execute_recipe",
    "analytics_refresh": "refresh_platform_analytics",
    "publish": "schedule_post",
}
DEFAULT_TIMEOUT = 3600.0


class JobStopped(Exception):
    """Raised at a checkpoint when the job is no longer this worker's to finish (cancelled, lease lost, timed out)."""


def parse_job_id(value: str) -> uuid.UUID | None:
    """A job id as a UUID; anything else names no job."""
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


async def project_of_job(session: AsyncSession, job_id: str, project_ids: Sequence[uuid.UUID]) -> uuid.UUID | None:
    """The project of a job, searched only among `project_ids` (the object lookup of `job_id`)."""
    parsed = parse_job_id(job_id)
    if parsed is None or not project_ids:
        return None
    return await session.scalar(select(Job.project_id).where(Job.id == parsed, Job.project_id.in_(project_ids)))


async def get(session: AsyncSession, *, job_id: str, project_id: uuid.UUID) -> Job:
    """A job of the project, or not_found."""
    parsed = parse_job_id(job_id)
    job = await session.get(Job, parsed) if parsed is not None else None
    if job is None or job.project_id != project_id:
        raise NotFound(f"No job found with ID {job_id}")
    return job


async def enqueue(
    *,
    session: AsyncSession,
    account_id: uuid.UUID,
    project_id: uuid.UUID,
    job_type: str,
    reserved_credits: int,
    job_input: dict[str, Any],
) -> Job:
    """A pending job holding `reserved_credits` already debited in this transaction (0 = not charged)."""
    job = Job(
        id=uuid.uuid4(),
        account_id=account_id,
        project_id=project_id,
        job_type=job_type,
        status="pending",
        credits=reserved_credits,
        billing_status="reserved" if reserved_credits > 0 else "not_charged",
        input=job_input,
    )
    session.add(job)
    await session.flush()
    return job


async def refund(session: AsyncSession, job: Job) -> int:
    """Returns a job's reservation once: only the call that moves billing_status off `reserved` refunds."""
    result = await session.execute(
        update(Job)
        .where(Job.id == job.id, Job.billing_status == "reserved")
        .values(billing_status="refunded")
        .returning(Job.credits)
        .execution_options(synchronize_session=False)
    )
    row = result.first()
    if row is None:
        return 0
    await credits.refund(
        session,
        account_id=job.account_id,
        amount=int(row.credits),
        tool_name=TOOL_OF_JOB_TYPE.get(job.job_type, job.job_type),
        reference=f"job:{job.id}",
    )
    return int(row.credits)


@dataclass(frozen=True, slots=True)
class Cancellation:
    """What cancel_async_job reports."""

    job: Job
    refunded_credits: int
    already_cancelled: bool


async def cancel(session: AsyncSession, *, job_id: str, project_id: uuid.UUID) -> Cancellation:
    """Cancels a pending or processing job and refunds its reservation in this transaction."""
    job = await get(session, job_id=job_id, project_id=project_id)
    if job.job_type == "publish":
        raise ValidationFailed(
            "publish jobs are cancelled through their post",
            recover_with="call cancel_scheduled_post with the post's id",
            field_errors=[{"path": "job_id", "message": "a publish job"}],
        )
    now = utcnow()
    result = await session.execute(
        update(Job)
        .where(Job.id == job.id, Job.status.in_(("pending", "processing")))
        .values(
            status="cancelled",
            failure_reason="cancelled_by_user",
            lease_owner=None,
            lease_expires_at=None,
            completed_at=now,
            updated_at=now,
        )
        .returning(Job.id)
        .execution_options(synchronize_session=False)
    )
    changed = result.first() is not None
    refunded = await refund(session, job) if changed else 0
    await session.refresh(job)
    if not changed:
        if job.status == "cancelled":
            return Cancellation(job=job, refunded_credits=_refunded(job), already_cancelled=True)
        raise Conflict(
            f"the job is already {job.status} and cannot be cancelled",
            current_status=job.status,
            recover_with="read its result with check_status",
        )
    return Cancellation(job=job, refunded_credits=refunded, already_cancelled=False)


def _refunded(job: Job) -> int:
    return job.credits if job.billing_status == "refunded" else 0


def status_view(settings: Settings, job: Job) -> dict[str, Any]:
    """check_status's payload: state, progress, fresh signed URLs of the outputs, and the billing."""
    output = job.output or {}
    keys = [str(key) for key in output.get("keys") or ([output["primary"]] if output.get("primary") else [])]
    primary = output.get("primary") if job.status == "completed" else None
    if job.status != "completed":
        keys = []
    urls = [media_service.signed_url(settings, key) for key in keys]
    requested = (job.input or {}).get("model")
    delivered = output.get("model") if job.status == "completed" else None
    error = FAILED_MESSAGE if job.status == "failed" else CANCELLED_MESSAGE if job.status == "cancelled" else None
    reserved = job.credits if job.billing_status in ("reserved", "charged", "refunded") else 0
    return {
        "job_id": str(job.id),
        "job_type": job.job_type,
        "model": delivered or requested,
        "status": job.status,
        "progress": None if job.status == "pending" else job.progress,
        "result_url": media_service.signed_url(settings, primary) if primary else None,
        "r2_key": primary,
        "all_urls": urls,
        "r2_keys": keys,
        "error": error,
        "credits_cost": job.credits,
        "credits_reserved": reserved,
        "credits_charged": job.credits if job.billing_status == "charged" else 0,
        "credits_refunded": _refunded(job),
        "billing_status": job.billing_status,
        "failure_reason": job.failure_reason,
        "created_at": job.created_at.isoformat(),
        "completed_at": job.completed_at.isoformat() if job.completed_at else None,
        "model_requested": requested,
        "model_delivered": delivered,
        "fallback_reason": output.get("fallback_reason"),
    }


# ---------------------------------------------------------------------------------------------------------
# The worker side.


@dataclass(frozen=True, slots=True)
class JobOutput:
    """What a runner produced: one file for the media store, and what check_status reports about it."""

    data: bytes
    content_type: str
    model: str
    details: dict[str, Any] = field(default_factory=dict)
    record_kind: str | None = None


@dataclass(slots=True)
class JobRun:
    """What a runner gets: the job's snapshot, the settings, a session factory, and its checkpoints."""

    job_id: uuid.UUID
    job_type: str
    account_id: uuid.UUID
    project_id: uuid.UUID
    job_input: dict[str, Any]
    settings: Settings
    session_factory: async_sessionmaker[AsyncSession]
    worker_id: str
    deadline: float
    stopped: threading.Event

    def checkpoint(self) -> None:
        """Raises JobStopped when the job was cancelled, lost its lease or passed its time limit (thread-safe)."""
        if self.stopped.is_set() or time.monotonic() > self.deadline:
            raise JobStopped

    async def report(self, progress: int) -> None:
        """Writes progress (and extends the lease) between steps; stops when the job is no longer ours."""
        self.checkpoint()
        if not await _extend_lease(self, progress=progress):
            self.stopped.set()
            raise JobStopped


Runner = Callable[[JobRun], Awaitable[JobOutput]]


def _runners() -> dict[str, Runner]:
    # Imported here: the runners import the brand and media domains, which this module's importers need not load.
    from toolhost.domains.content import image_jobs, video_jobs
    from toolhost.domains.video import hyperframes
    from toolhost.domains.video import jobs as render_jobs

    return {
        "image": image_jobs.run,
        "video": video_jobs.run_video,
        "voiceover": video_jobs.run_voiceover,
        "demo_render": render_jobs.run_render,
        "template_render": render_jobs.run_render,
        "hyperframes_render": hyperframes.run_hyperframes,
    }


def handled_types() -> tuple[str, ...]:
    """The job types this poller runs."""
    return tuple(_runners())


async def _extend_lease(run: JobRun, *, progress: int | None = None) -> bool:
    values: dict[str, Any] = {
        "lease_expires_at": utcnow() + timedelta(seconds=run.settings.jobs.lease_seconds),
        "updated_at": utcnow(),
    }
    if progress is not None:
        values["progress"] = max(0, min(100, progress))
    async with run.session_factory() as session, session.begin():
        result = await session.execute(
            update(Job)
            .where(Job.id == run.job_id, Job.status == "processing", Job.lease_owner == run.worker_id)
            .values(**values)
            .returning(Job.id)
        )
        return result.first() is not None


async def heartbeat(run: JobRun) -> None:
    """Extends the lease every third of it; a job that is no longer ours (cancelled) stops the runner."""
    interval = max(0.05, run.settings.jobs.lease_seconds / 3)
    while not run.stopped.is_set():
        await asyncio.sleep(interval)
        if not await _extend_lease(run):
            run.stopped.set()


def _is_postgres(session: AsyncSession) -> bool:
    return session.get_bind().dialect.name == "postgresql"


async def reap_expired(context: WorkerContext, types: tuple[str, ...]) -> int:
    """Processing jobs whose lease expired (their worker died): back to pending, or failed after the last attempt."""
    async with context.session_factory() as session, session.begin():
        now = utcnow()
        query = select(Job).where(Job.job_type.in_(types), Job.status == "processing", Job.lease_expires_at < now)
        if _is_postgres(session):
            query = query.with_for_update(skip_locked=True)
        expired = list(await session.scalars(query))
        for job in expired:
            job.attempt += 1
            job.lease_owner = None
            job.lease_expires_at = None
            job.updated_at = now
            if job.attempt >= context.settings.jobs.max_attempts:
                job.status = "failed"
                job.failure_reason = "worker_lost"
                job.error = f"the worker's lease expired {job.attempt} times"
                job.completed_at = now
                await session.flush()
                await refund(session, job)
            else:
                job.status = "pending"
        return len(expired)


async def claim(context: WorkerContext, types: tuple[str, ...]) -> Job | None:
    """The oldest pending job of an account below its concurrency limit, now processing under our lease."""
    async with context.session_factory() as session, session.begin():
        now = utcnow()
        running = dict(
            (
                await session.execute(
                    select(Job.account_id, func.count())
                    .where(Job.status == "processing", Job.lease_expires_at >= now)
                    .group_by(Job.account_id)
                )
            ).all()
        )
        limit = context.settings.jobs.per_account_concurrency
        busy = [account_id for account_id, count in running.items() if count >= limit]
        query = select(Job).where(Job.job_type.in_(types), Job.status == "pending")
        if busy:
            query = query.where(Job.account_id.not_in(busy))
        query = query.order_by(Job.created_at).limit(1)
        if _is_postgres(session):
            query = query.with_for_update(skip_locked=True)
        job = await session.scalar(query)
        if job is None:
            return None
        job.status = "processing"
        job.progress = 0
        job.lease_owner = context.worker_id
        job.lease_expires_at = now + timedelta(seconds=context.settings.jobs.lease_seconds)
        job.updated_at = now
        await session.flush()
        session.expunge(job)
        return job


async def run_media_jobs(context: WorkerContext) -> int:
    """The poller: returns expired leases to the queue, then claims and runs one due media job."""
    types = handled_types()
    reaped = await reap_expired(context, types)
    job = await claim(context, types)
    if job is None:
        return reaped
    await run_claimed(context, job)
    return reaped + 1


async def run_claimed(context: WorkerContext, job: Job) -> None:
    """Runs one claimed job to its end state (completed, failed, or left as the canceller set it)."""
    assert job.project_id is not None
    timeout = float(context.settings.jobs.timeouts.get(job.job_type, DEFAULT_TIMEOUT))
    run = JobRun(
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
    beating = asyncio.create_task(heartbeat(run))
    try:
        async with asyncio.timeout(timeout):
            output = await _runners()[job.job_type](run)
    except TimeoutError:
        await _fail(run, reason="timeout", error=f"exceeded the {timeout:g} s limit of {job.job_type} jobs")
    except JobStopped:
        if time.monotonic() > run.deadline:
            await _fail(run, reason="timeout", error=f"exceeded the {timeout:g} s limit of {job.job_type} jobs")
        # Otherwise it was cancelled (already refunded by the canceller) or its lease went to another worker.
    except Exception as error:
        logger.exception("%s job %s failed", job.job_type, job.id)
        await _fail(run, reason="generation_failed", error=str(error)[:1000] or type(error).__name__)
    else:
        await _complete(run, output)
    finally:
        run.stopped.set()
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating


def _ours(run: JobRun) -> Any:
    return and_(Job.id == run.job_id, Job.status == "processing", Job.lease_owner == run.worker_id)


async def _fail(run: JobRun, *, reason: str, error: str) -> None:
    async with run.session_factory() as session, session.begin():
        now = utcnow()
        result = await session.execute(
            update(Job)
            .where(_ours(run))
            .values(
                status="failed",
                failure_reason=reason,
                error=error,
                lease_owner=None,
                lease_expires_at=None,
                completed_at=now,
                updated_at=now,
            )
            .returning(Job.id)
            .execution_options(synchronize_session=False)
        )
        if result.first() is None:
            return
        job = await session.get(Job, run.job_id)
        assert job is not None
        await refund(session, job)


async def _complete(run: JobRun, output: JobOutput) -> None:
    async with run.session_factory() as session, session.begin():
        now = utcnow()
        # Claim the completion first: a job cancelled meanwhile stores nothing (partial output is discarded).
        result = await session.execute(
            update(Job)
            .where(_ours(run))
            .values(status="completed", progress=100, lease_owner=None, lease_expires_at=None, completed_at=now)
            .returning(Job.id)
            .execution_options(synchronize_session=False)
        )
        if result.first() is None:
            return
        stored = await media_service.save(
            session=session,
            settings=run.settings,
            account_id=run.account_id,
            project_id=run.project_id,
            data=output.data,
            content_type=output.content_type,
            kind=run.job_type,
            job_id=run.job_id,
        )
        key = stored.media.key
        await session.execute(
            update(Job)
            .where(Job.id == run.job_id)
            .values(
                output={"primary": key, "keys": [key], "model": output.model, **output.details},
                billing_status=case((Job.billing_status == "reserved", "charged"), else_=Job.billing_status),
                updated_at=now,
            )
            .execution_options(synchronize_session=False)
        )
        if output.record_kind is not None:
            session.add(
                ContentRecord(
                    project_id=run.project_id,
                    kind=output.record_kind,
                    model=output.model,
                    prompt=str(run.job_input.get("prompt") or ""),
                    data={"job_id": str(run.job_id), "r2_key": key, **output.details},
                )
            )
