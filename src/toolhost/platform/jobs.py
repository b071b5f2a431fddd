"""The job machine as tools and runners see it: the job table, enqueue, look up, cancel, refund, and what a
domain declares (job types, their runners and policies, and the run a runner is handed).

Domains declare job types (`JobType`: a runner and how the machine treats its jobs); the composition root
(`toolhost.catalog.JOB_TYPES`) names them and hands them to the worker (`platform/worker.py`), so this module
imports no domain.

A job is enqueued in the transaction of the change that asks for it, holding the credits that call debited
(its reservation); `billing_status` leaves `reserved` exactly once, so a job is never both charged and
refunded, nor refunded twice. A lease that expires returns the job to `pending` with attempt + 1; the type's
last attempt fails it (`worker_lost`). A runner that raises RetryLater is run again after its type's next
retry delay, or fails when the delays are spent.

Runners keep no transaction open while they work: they read in a short transaction, do the work (outside
I/O, rendering) with no session, and hand back a JobResult whose rows are written with the completion.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import ColumnElement, ForeignKey, Index, Integer, String, Text, and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from toolhost.db.base import Base, new_id, utcnow
from toolhost.platform import credits
from toolhost.platform.models import UsageRecord
from toolhost.platform.observability import GaugeReading
from toolhost.platform.results import NotFound

if TYPE_CHECKING:
    from toolhost.config import Settings
    from toolhost.platform.auth import Authenticator
    from toolhost.platform.execution import Executor
    from toolhost.platform.runtime import Platform

logger = logging.getLogger(__name__)

JOB_STATUSES = ("pending", "processing", "completed", "failed", "cancelled")
FINISHED_JOB_STATUSES = frozenset({"completed", "failed", "cancelled"})


class Job(Base):
    """One unit of async work (CATALOG.md §1.6 job machine) with its credit reservation."""

    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_claim", "status", "job_type", "run_after"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), default=None, index=True
    )
    job_type: Mapped[str] = mapped_column(String(30))
    tool_name: Mapped[str | None] = mapped_column(
        String(100), default=None, doc="the tool whose call reserved the credits (the ledger names it on a refund)"
    )
    status: Mapped[str] = mapped_column(String(20), default="pending")
    progress: Mapped[int] = mapped_column(Integer, default=0)
    attempt: Mapped[int] = mapped_column(Integer, default=0, doc="leases lost to workers that stopped")
    retries: Mapped[int] = mapped_column(Integer, default=0, doc="runs its runner asked to retry (RetryLater)")
    run_after: Mapped[datetime] = mapped_column(
        default=utcnow, doc="when a worker may claim it: enqueue time, a scheduled time or a retry's backoff"
    )
    billing_status: Mapped[str] = mapped_column(String(20), default="not_charged")
    credits: Mapped[int] = mapped_column(Integer, default=0)
    failure_reason: Mapped[str | None] = mapped_column(String(40), default=None)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    input: Mapped[dict[str, Any]] = mapped_column(default=dict)
    output: Mapped[dict[str, Any]] = mapped_column(default=dict, doc="`primary`: the media key of the main output")
    lease_owner: Mapped[str | None] = mapped_column(String(100), default=None)
    lease_expires_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(default=None)


# ---------------------------------------------------------------------------------------------------------
# Jobs as the tools see them: enqueue, look up, cancel, refund.


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
    tool_name: str | None,
    reserved_credits: int,
    job_input: dict[str, Any],
    run_after: datetime | None = None,
) -> Job:
    """A pending job holding `reserved_credits` already debited in this transaction (0 = not charged)."""
    now = utcnow()
    job = Job(
        id=uuid.uuid4(),
        account_id=account_id,
        project_id=project_id,
        job_type=job_type,
        tool_name=tool_name,
        status="pending",
        credits=reserved_credits,
        billing_status="reserved" if reserved_credits > 0 else "not_charged",
        input=job_input,
        run_after=run_after or now,
        created_at=now,
        updated_at=now,
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
        tool_name=job.tool_name or job.job_type,
        reference=f"job:{job.id}",
    )
    return int(row.credits)


async def cancel(session: AsyncSession, job: Job) -> int | None:
    """Cancels a pending or processing job and refunds its reservation in this transaction.

    Returns the credits refunded, or None when the job had already left pending and processing. A
    processing job's worker sees the cancellation at its next heartbeat or checkpoint and stops.
    """
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
    if result.first() is None:
        return None
    return await refund(session, job)


async def queue_gauges(session: AsyncSession, now: datetime, job_types: Sequence[str]) -> list[GaugeReading]:
    """The job queue for /metrics, per job type: jobs due and unclaimed, the oldest one's wait, jobs running.

    Every type gets its samples, zeros included, so a series never vanishes when its queue empties.
    """
    rows = (
        await session.execute(
            select(Job.job_type, Job.status, func.count(), func.min(Job.run_after, type_=Job.run_after.type))
            .where(or_(and_(Job.status == "pending", Job.run_after <= now), Job.status == "processing"))
            .group_by(Job.job_type, Job.status)
        )
    ).all()
    due = dict.fromkeys(job_types, 0)
    running = dict.fromkeys(job_types, 0)
    oldest_wait = dict.fromkeys(job_types, 0.0)
    for job_type, status, count, oldest in rows:
        if status == "pending":
            due[job_type] = count
            oldest_wait[job_type] = max(0.0, (now - oldest).total_seconds())
        else:
            running[job_type] = count
    readings = []
    for job_type in sorted(due):
        labels = {"job_type": job_type}
        readings += [
            GaugeReading(
                "toolhost_jobs_due", "Jobs due and not yet claimed by a worker: the queue depth.", due[job_type], labels
            ),
            GaugeReading(
                "toolhost_job_oldest_due_seconds",
                "How long the oldest due, unclaimed job has waited past its run time (0 when none waits).",
                oldest_wait[job_type],
                labels,
            ),
            GaugeReading("toolhost_jobs_running", "Jobs claimed by a worker and running.", running[job_type], labels),
        ]
    return readings


def step_request_id(job_id: uuid.UUID, step: str) -> str:
    """The request id of one tool call a job makes: the same on every attempt, so a retry can tell it ran."""
    return "req_" + uuid.uuid5(job_id, step).hex


async def step_ran(session: AsyncSession, *, account_id: uuid.UUID, request_id: str) -> bool:
    """Whether a call with this request id succeeded (its usage record commits with its work)."""
    found = await session.scalar(
        select(UsageRecord.id)
        .where(UsageRecord.account_id == account_id, UsageRecord.request_id == request_id, UsageRecord.outcome == "ok")
        .limit(1)
    )
    return found is not None


# ---------------------------------------------------------------------------------------------------------
# What a domain declares: job types and their runners.


class JobStopped(Exception):
    """Raised at a checkpoint when the job is no longer this worker's to finish (cancelled, lease lost, timed out)."""


class JobFailed(Exception):
    """Raised by a runner: the job fails with `reason` (its reservation refunded); `output` replaces its output."""

    def __init__(
        self, message: str, *, reason: str = "generation_failed", output: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.output = output


class RetryLater(Exception):
    """Raised by a runner whose failure may pass: the job runs again after its type's next retry delay, or
    fails with `reason` when the delays are spent.

    `not_before`: the outside service said when it takes the request again (a rate limit's reset); the job
    waits until then, and such a wait does not use up one of the retry delays (the request was refused, not
    failed).
    """

    def __init__(self, message: str, *, reason: str, not_before: datetime | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.not_before = not_before


RowWriter = Callable[[AsyncSession], Awaitable[None]]
Shared = TypeVar("Shared")


@dataclass(frozen=True, slots=True)
class JobResult:
    """What a runner produced: the job's output, the domain rows written in the completing transaction
    (only while the job is still this worker's), and what undoes outside work when it no longer is."""

    output: dict[str, Any] = field(default_factory=dict)
    record: RowWriter | None = None
    discard: Callable[[], Awaitable[None]] | None = None


@dataclass(frozen=True, slots=True)
class JobPolicy:
    """How the machine runs the jobs of one type."""

    max_attempts: int
    retry_delays: tuple[float, ...] = ()
    batch: int = 1
    concurrency: int = 1
    per_account_limit: bool = True


def default_policy(settings: Settings) -> JobPolicy:
    """One job per claim, `jobs.max_attempts` attempts, no retries, within the account's concurrency."""
    return JobPolicy(max_attempts=settings.jobs.max_attempts)


Runner = Callable[["JobRun"], Awaitable[JobResult]]


@dataclass(frozen=True, slots=True)
class JobType:
    """A job type a domain declares: its runner, its policy, and its hooks into the machine's transactions.

    `on_claim` runs in the claiming transaction (a post becomes `publishing` with its job) and returns, by job
    id, what it read there for the runs (`JobRun.claimed_with`: one read per claim instead of one per job);
    `settle` runs in every transaction in which the machine fails a job or schedules its retry, so the domain's
    own rows follow.
    """

    name: str
    run: Runner
    policy: Callable[[Settings], JobPolicy] = default_policy
    on_claim: Callable[[AsyncSession, Sequence[JobRun]], Awaitable[Mapping[uuid.UUID, object]]] | None = None
    settle: Callable[[AsyncSession, Job], Awaitable[None]] | None = None


# ---------------------------------------------------------------------------------------------------------
# The worker side.


@dataclass(frozen=True, slots=True)
class WorkerContext:
    """What a poller gets: the process's platform (sessions, executor, authenticator), its name, its job types
    and the event that asks it to stop (claim nothing more, finish what it runs)."""

    platform: Platform
    worker_id: str
    job_types: Mapping[str, JobType]
    stopping: asyncio.Event = field(default_factory=asyncio.Event)

    def shared(self, kind: type[Shared], build: Callable[[], Shared]) -> Shared:
        """One object of `kind` for all the process's runners, built on first use (clients and their TLS
        contexts, which are costly to build per job; never per-job state); the platform closes it."""
        return self.platform.shared(kind, build)

    @property
    def settings(self) -> Settings:
        """The process's settings."""
        return self.platform.settings

    @property
    def session_factory(self) -> async_sessionmaker[AsyncSession]:
        """Sessions for the poller's own short transactions."""
        return self.platform.session_factory


@dataclass(slots=True)
class JobRun:
    """One claimed job as its runner sees it: the row's snapshot, the worker's platform, and checkpoints."""

    job_id: uuid.UUID
    job_type: str
    account_id: uuid.UUID
    project_id: uuid.UUID
    job_input: dict[str, Any]
    saved_output: dict[str, Any]
    context: WorkerContext
    deadline: float
    stopped: threading.Event = field(default_factory=threading.Event)
    claimed_with: object = None  # what the type's on_claim read for this job in the claiming transaction

    @property
    def settings(self) -> Settings:
        """The process's settings."""
        return self.context.settings

    @property
    def session_factory(self) -> async_sessionmaker[AsyncSession]:
        """Sessions for short transactions (never held across outside work)."""
        return self.context.session_factory

    @property
    def executor(self) -> Executor:
        """The platform's one execution path, for runners that call tools."""
        return self.context.platform.executor

    @property
    def authenticator(self) -> Authenticator:
        """The platform's authenticator, for runners that act as a stored credential."""
        return self.context.platform.authenticator

    def holds_lease(self) -> ColumnElement[bool]:
        """An SQL condition that is true while this run still holds its job."""
        return and_(Job.id == self.job_id, Job.status == "processing", Job.lease_owner == self.context.worker_id)

    def checkpoint(self) -> None:
        """Raises JobStopped when the job was cancelled, lost its lease or passed its time limit (thread-safe)."""
        if self.stopped.is_set() or time.monotonic() > self.deadline:
            raise JobStopped

    async def report(self, progress: int | None = None, *, output: dict[str, Any] | None = None) -> None:
        """Writes progress and the output so far (and extends the lease); stops when the job is no longer ours."""
        self.checkpoint()
        values: dict[str, Any] = {"lease_expires_at": lease_end(self.settings), "updated_at": utcnow()}
        if progress is not None:
            values["progress"] = max(0, min(100, progress))
        if output is not None:
            values["output"] = output
        async with self.session_factory() as session, session.begin():
            result = await session.execute(update(Job).where(self.holds_lease()).values(**values).returning(Job.id))
            held = result.first() is not None
        if not held:
            self.stopped.set()
            raise JobStopped


def lease_end(settings: Settings) -> datetime:
    """When a lease taken or extended now runs out."""
    return utcnow() + timedelta(seconds=settings.jobs.lease_seconds)
