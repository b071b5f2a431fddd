"""Generated media on the platform's job machine (CATALOG.md §1.6/§1.15): cancelling a job and its status view.

The machine itself (enqueue with the reservation, claim with a lease, heartbeat, time limits, guarded refunds)
is `toolhost.platform.jobs`; the runner of jobs whose output is a media file is the media service's
`media_runner`.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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
