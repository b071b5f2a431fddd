"""Generated media on the platform's job machine (CATALOG.md §1.6/§1.15): cancelling a job and its status view.

The machine itself (enqueue with the reservation, claim with a lease, heartbeat, time limits, guarded refunds)
is `toolhost.platform.jobs`; the runner of jobs whose output is a media file is the media service's
`media_runner`.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.domains.media import service as media_service
from toolhost.platform import jobs as platform_jobs
from toolhost.platform.jobs import Job
from toolhost.platform.results import Conflict, ValidationFailed

if TYPE_CHECKING:
    from toolhost.config import Settings

logger = logging.getLogger(__name__)

FAILED_MESSAGE = "Generation failed. Retry or choose another model."
CANCELLED_MESSAGE = "Cancelled by user."


@dataclass(frozen=True, slots=True)
class Cancellation:
    """What cancel_async_job reports."""

    job: Job
    refunded_credits: int
    already_cancelled: bool


async def cancel(session: AsyncSession, *, job_id: str, project_id: uuid.UUID) -> Cancellation:
    """Cancels a pending or processing job of the project and refunds its reservation in this transaction."""
    job = await platform_jobs.get(session, job_id=job_id, project_id=project_id)
    if job.job_type == "publish":
        raise ValidationFailed(
            "publish jobs are cancelled through their post",
            recover_with="call cancel_scheduled_post with the post's id",
            field_errors=[{"path": "job_id", "message": "a publish job"}],
        )
    refunded = await platform_jobs.cancel(session, job)
    await session.refresh(job)
    if refunded is None:
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


@dataclass(frozen=True, slots=True)
class JobStatus:
    """check_status's reading of a job: its outputs with fresh signed URLs once completed, the models asked
    for and delivered, the message of a failure or cancellation, and where its credits went."""

    job: Job
    progress: int | None
    primary_key: str | None
    keys: list[str]
    urls: list[str]
    result_url: str | None
    model_requested: str | None
    model_delivered: str | None
    fallback_reason: str | None
    error: str | None
    credits_reserved: int
    credits_charged: int
    credits_refunded: int


def status(settings: Settings, job: Job) -> JobStatus:
    """A job as check_status reports it."""
    output = job.output or {}
    keys = [str(key) for key in output.get("keys") or ([output["primary"]] if output.get("primary") else [])]
    primary = output.get("primary") if job.status == "completed" else None
    if job.status != "completed":
        keys = []
    error = FAILED_MESSAGE if job.status == "failed" else CANCELLED_MESSAGE if job.status == "cancelled" else None
    return JobStatus(
        job=job,
        progress=None if job.status == "pending" else job.progress,
        primary_key=primary,
        keys=keys,
        urls=[media_service.signed_url(settings, key) for key in keys],
        result_url=media_service.signed_url(settings, primary) if primary else None,
        model_requested=(job.input or {}).get("model"),
        model_delivered=output.get("model") if job.status == "completed" else None,
        fallback_reason=output.get("fallback_reason"),
        error=error,
        credits_reserved=job.credits if job.billing_status in ("reserved", "charged", "refunded") else 0,
        credits_charged=job.credits if job.billing_status == "charged" else 0,
        credits_refunded=_refunded(job),
    )
