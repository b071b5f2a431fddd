"""The job machine: one durable job table, one claim/lease/heartbeat/reap path, and the worker loop.

Domains declare job types (`JobType`: a runner and how the machine treats its jobs); the composition root
(`toolhost.catalog.JOB_TYPES`) names them and hands them to `run_worker`, so this module imports no domain.

A job is enqueued in the transaction of the change that asks for it, holding the credits that call debited
(its reservation). The `run_jobs` poller returns expired leases to the queue, then claims due jobs of each
type (`FOR UPDATE SKIP LOCKED` on PostgreSQL; SQLite's write lock, taken by BEGIN IMMEDIATE, makes the
claim single-writer there) and runs them under the type's time limit (`jobs.timeouts`), while one heartbeat
extends the leases of the worker's jobs and notices the ones it lost (cancelled, or taken over after an
expiry). A job leaves `processing` only through guarded transitions (the row must still be this worker's),
and `billing_status` leaves `reserved` exactly once, so a job is never both charged and refunded, nor
refunded twice. A lease that expires returns the job to `pending` with attempt + 1; the type's last attempt
fails it (`worker_lost`). A runner that raises RetryLater is run again after its type's next retry delay,
or fails when the delays are spent.

Runners keep no transaction open while they work: they read in a short transaction, do the work (outside
I/O, rendering) with no session, and hand back a JobResult whose rows are written with the completion.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import ColumnElement, ForeignKey, Index, Integer, String, Text, and_, case, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from toolhost.db.base import Base, new_id, utcnow
from toolhost.db.session import call_scope
from toolhost.platform import credits
from toolhost.platform.models import UsageRecord
from toolhost.platform.results import NotFound

if TYPE_CHECKING:
    from toolhost.config import Settings
    from toolhost.platform.auth import Authenticator
    from toolhost.platform.execution import Executor
    from toolhost.platform.runtime import Platform

logger = logging.getLogger(__name__)

JOB_STATUSES = ("pending", "processing", "completed", "failed", "cancelled")
FINISHED_JOB_STATUSES = frozenset({"completed", "failed", "cancelled"})
DEFAULT_TIMEOUT = 3600.0


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
    fails with `reason` when the delays are spent."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason


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

    `on_claim` runs in the claiming transaction (a post becomes `publishing` with its job); `settle` runs in
    every transaction in which the machine fails a job or schedules its retry, so the domain's own rows follow.
    """

    name: str
    run: Runner
    policy: Callable[[Settings], JobPolicy] = default_policy
    on_claim: Callable[[AsyncSession, Sequence[Job]], Awaitable[None]] | None = None
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
    _shared: dict[type[Any], Any] = field(default_factory=dict)

    def shared(self, kind: type[Shared], build: Callable[[], Shared]) -> Shared:
        """One object of `kind` for all this worker's runners, built on first use (clients and their TLS
        contexts, which are costly to build per job; never per-job state)."""
        found = self._shared.get(kind)
        if not isinstance(found, kind):
            found = self._shared[kind] = build()
        return found

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
        values: dict[str, Any] = {"lease_expires_at": _lease_end(self.settings), "updated_at": utcnow()}
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


Poller = Callable[[WorkerContext], Awaitable[int]]


def load_pollers(names: Sequence[str]) -> list[Poller]:
    """Imports pollers named `package.module.function` (the composition root's POLLERS)."""
    return [_imported(name) for name in names]


def load_job_types(names: Sequence[str]) -> dict[str, JobType]:
    """Imports the job types named `package.module.ATTRIBUTE` (tuples a domain declares), by type name."""
    found: dict[str, JobType] = {}
    for name in names:
        declared: Sequence[JobType] = _imported(name)
        for kind in declared:
            if kind.name in found:
                raise ValueError(f"job type {kind.name!r} is declared twice ({name})")
            found[kind.name] = kind
    return found


def _imported(name: str) -> Any:
    module_name, _, attribute = name.rpartition(".")
    return getattr(importlib.import_module(module_name), attribute)


def new_worker_id() -> str:
    """A name unique to this worker: host, process and a random suffix (one process may run several)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _lease_end(settings: Settings) -> datetime:
    return utcnow() + timedelta(seconds=settings.jobs.lease_seconds)


def _is_postgres(session: AsyncSession) -> bool:
    return session.get_bind().dialect.name == "postgresql"


async def run_jobs(context: WorkerContext) -> int:
    """The poller: returns expired leases to the queue, then keeps every due job type's slots filled.

    A slot that frees is refilled as soon as half the type's slots are free (or a poll interval passed), so a
    slow job never holds back the claims behind it and a claim still takes several jobs in one transaction.
    Returns, with the number of jobs it reaped and claimed, once nothing is due and every job it started has
    finished, or once the worker is stopping and its jobs have finished.
    """
    handled = await reap_expired(context)
    pool = JobPool(context)
    try:
        waited_out = True
        while True:
            if not context.stopping.is_set():
                handled += await _refill(context, pool, any_free_slot=waited_out)
            if not pool.running:
                return handled
            waited_out = not await pool.wait_for_one(timeout=context.settings.jobs.poll_interval)
    finally:
        await pool.close()


async def _refill(context: WorkerContext, pool: JobPool, *, any_free_slot: bool) -> int:
    """Claims due jobs into free slots: every free slot after a quiet poll interval, else half a type's slots."""
    wanted: dict[str, int] = {}
    for name, kind in context.job_types.items():
        policy = kind.policy(context.settings)
        slots = max(1, policy.concurrency)
        free = slots - pool.running_of(name)
        if free >= (1 if any_free_slot else max(1, min(policy.batch, slots) // 2)):
            wanted[name] = min(policy.batch, free)
    if not wanted:
        return 0
    claimed_count = 0
    for name in await _due_types(context, list(wanted)):
        claimed = await claim(context, name, limit=wanted[name])
        pool.start(claimed)
        claimed_count += len(claimed)
    return claimed_count


async def _due_types(context: WorkerContext, names: Sequence[str]) -> list[str]:
    """Those of `names` with due pending jobs, in the order the composition root lists them."""
    async with context.session_factory() as session:
        due = set(
            await session.scalars(
                select(Job.job_type)
                .where(Job.status == "pending", Job.run_after <= utcnow(), Job.job_type.in_(names))
                .distinct()
            )
        )
    return [name for name in names if name in due]


async def reap_expired(context: WorkerContext) -> int:
    """Processing jobs whose lease expired (their worker died): back to pending, or failed after the last attempt."""
    async with context.session_factory() as session, session.begin():
        now = utcnow()
        query = select(Job).where(
            Job.job_type.in_(list(context.job_types)), Job.status == "processing", Job.lease_expires_at < now
        )
        if _is_postgres(session):
            query = query.with_for_update(skip_locked=True)
        expired = list(await session.scalars(query))
        for job in expired:
            kind = context.job_types[job.job_type]
            job.attempt += 1
            if job.attempt < kind.policy(context.settings).max_attempts:
                job.status = "pending"
                job.lease_owner = None
                job.lease_expires_at = None
                job.updated_at = now
                continue
            await _fail_row(
                session, kind, job, reason="worker_lost", error=f"the worker's lease expired {job.attempt} times"
            )
        return len(expired)


async def _fail_row(session: AsyncSession, kind: JobType, job: Job, *, reason: str, error: str) -> None:
    """Fails a job this transaction holds, refunds its reservation once and lets its domain follow."""
    now = utcnow()
    job.status = "failed"
    job.failure_reason = reason
    job.error = error[:1000]
    job.lease_owner = None
    job.lease_expires_at = None
    job.completed_at = now
    job.updated_at = now
    await session.flush()
    await refund(session, job)
    if kind.settle is not None:
        await session.refresh(job)
        await kind.settle(session, job)


async def claim(context: WorkerContext, job_type: str, *, limit: int) -> list[Job]:
    """Up to `limit` due jobs of one type, oldest due first, now processing under this worker's lease.

    Types whose policy has `per_account_limit` skip accounts already running `jobs.per_account_concurrency`
    such jobs with live leases, across all workers.
    """
    kind = context.job_types[job_type]
    async with context.session_factory() as session, session.begin():
        now = utcnow()
        query = select(Job).where(Job.job_type == job_type, Job.status == "pending", Job.run_after <= now)
        if kind.policy(context.settings).per_account_limit:
            busy = await _busy_accounts(context, session, now)
            if busy:
                query = query.where(Job.account_id.not_in(busy))
        query = query.order_by(Job.run_after, Job.created_at).limit(limit)
        if _is_postgres(session):
            query = query.with_for_update(skip_locked=True)
        claimed = list(await session.scalars(query))
        if not claimed:
            return []
        for job in claimed:
            job.status = "processing"
            job.progress = 0
            job.lease_owner = context.worker_id
            job.lease_expires_at = now + timedelta(seconds=context.settings.jobs.lease_seconds)
            job.updated_at = now
        await session.flush()
        if kind.on_claim is not None:
            await kind.on_claim(session, claimed)
        for job in claimed:
            session.expunge(job)
        return claimed


async def _busy_accounts(context: WorkerContext, session: AsyncSession, now: datetime) -> list[uuid.UUID]:
    limited = [name for name, kind in context.job_types.items() if kind.policy(context.settings).per_account_limit]
    running = await session.execute(
        select(Job.account_id, func.count())
        .where(Job.job_type.in_(limited), Job.status == "processing", Job.lease_expires_at >= now)
        .group_by(Job.account_id)
    )
    limit = context.settings.jobs.per_account_concurrency
    return [account_id for account_id, count in running.all() if count >= limit]


async def run_claimed(context: WorkerContext, claimed: Sequence[Job]) -> None:
    """Runs jobs this worker claimed to their end state, each type's `concurrency` at a time."""
    pool = JobPool(context)
    try:
        pool.start(claimed)
        while pool.running:
            await pool.wait_for_one(timeout=None)
    finally:
        await pool.close()


class JobPool:
    """The jobs one worker runs: a task per job, each type's `concurrency` at a time, under one heartbeat."""

    def __init__(self, context: WorkerContext) -> None:
        self._context = context
        self._tasks: dict[asyncio.Task[None], JobRun] = {}
        self._in_flight: dict[uuid.UUID, JobRun] = {}
        self._limiters: dict[str, asyncio.Semaphore] = {}
        self._heartbeat: asyncio.Task[None] | None = None

    @property
    def running(self) -> int:
        """Jobs started and not yet finished."""
        return len(self._tasks)

    def running_of(self, job_type: str) -> int:
        """Jobs of one type started and not yet finished."""
        return sum(1 for run in self._tasks.values() if run.job_type == job_type)

    def start(self, claimed: Sequence[Job]) -> None:
        """Starts a task for each claimed job (the type's limiter queues the ones beyond its concurrency)."""
        for job in claimed:
            run = _job_run(self._context, job)
            self._in_flight[run.job_id] = run
            self._tasks[asyncio.create_task(self._run(run))] = run
        if self._tasks and self._heartbeat is None:
            self._heartbeat = asyncio.create_task(_heartbeat(self._context, self._in_flight))

    async def wait_for_one(self, *, timeout: float | None) -> bool:
        """Waits until a job finishes or `timeout` passes; whether one finished."""
        done, _ = await asyncio.wait(self._tasks, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            run = self._tasks.pop(task)
            error = None if task.cancelled() else task.exception()
            if error is not None:
                # A database blip while finishing one job must not stop the others; its lease brings it back.
                logger.error("%s job %s could not be finished", run.job_type, run.job_id, exc_info=error)
        return bool(done)

    async def close(self) -> None:
        """Stops the heartbeat; a pool closed early (its worker cancelled) cancels the jobs it still runs."""
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks)
        self._tasks.clear()
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat

    async def _run(self, run: JobRun) -> None:
        limiter = self._limiters.get(run.job_type)
        if limiter is None:
            concurrency = self._context.job_types[run.job_type].policy(self._context.settings).concurrency
            limiter = self._limiters[run.job_type] = asyncio.Semaphore(max(1, concurrency))
        try:
            # Each job is a call of its own: its sessions are not its neighbours' (the outside-work guard).
            with call_scope():
                async with limiter:
                    await _run_one(self._context, run)
        finally:
            run.stopped.set()
            self._in_flight.pop(run.job_id, None)


def _job_run(context: WorkerContext, job: Job) -> JobRun:
    # enqueue() requires a project, so every job has one.
    assert job.project_id is not None
    return JobRun(
        job_id=job.id,
        job_type=job.job_type,
        account_id=job.account_id,
        project_id=job.project_id,
        job_input=dict(job.input or {}),
        saved_output=dict(job.output or {}),
        context=context,
        deadline=time.monotonic() + _timeout(context.settings, job.job_type),
    )


def _timeout(settings: Settings, job_type: str) -> float:
    return float(settings.jobs.timeouts.get(job_type, DEFAULT_TIMEOUT))


async def _heartbeat(context: WorkerContext, in_flight: dict[uuid.UUID, JobRun]) -> None:
    """Extends the leases of the jobs still in flight every third of a lease; a job no longer ours stops its run."""
    interval = max(0.05, context.settings.jobs.lease_seconds / 3)
    while True:
        await asyncio.sleep(interval)
        live = [job_id for job_id, run in list(in_flight.items()) if not run.stopped.is_set()]
        if not live:
            continue
        try:
            async with context.session_factory() as session, session.begin():
                result = await session.execute(
                    update(Job)
                    .where(Job.id.in_(live), Job.status == "processing", Job.lease_owner == context.worker_id)
                    .values(lease_expires_at=_lease_end(context.settings))
                    .returning(Job.id)
                    .execution_options(synchronize_session=False)
                )
                held = set(result.scalars())
        except Exception:
            # A database blip must not end the heartbeat: the next beat, well within the lease, tries again.
            logger.exception("worker %s could not extend its leases", context.worker_id)
            continue
        for job_id in live:
            run = in_flight.get(job_id)
            if job_id not in held and run is not None:
                run.stopped.set()


async def _run_one(context: WorkerContext, run: JobRun) -> None:
    if run.stopped.is_set():
        return  # cancelled or taken over while it waited for its turn
    kind = context.job_types[run.job_type]
    timeout = _timeout(context.settings, run.job_type)
    limit = asyncio.timeout(timeout)
    timed_out = f"exceeded the {timeout:g} s limit of {run.job_type} jobs"
    try:
        async with limit:
            result = await kind.run(run)
    except TimeoutError as error:
        if limit.expired():
            await _fail(context, run, reason="timeout", error=timed_out)
        else:
            logger.exception("%s job %s failed", run.job_type, run.job_id)
            await _fail(context, run, reason="generation_failed", error=str(error)[:1000] or type(error).__name__)
    except JobStopped:
        if time.monotonic() > run.deadline:
            await _fail(context, run, reason="timeout", error=timed_out)
        # Otherwise it was cancelled (refunded by the canceller) or its lease went to another worker.
    except JobFailed as failure:
        await _fail(context, run, reason=failure.reason, error=failure.message, output=failure.output)
    except RetryLater as retry:
        await _retry(context, run, retry)
    except Exception as error:
        logger.exception("%s job %s failed", run.job_type, run.job_id)
        await _fail(context, run, reason="generation_failed", error=str(error)[:1000] or type(error).__name__)
    else:
        await _complete(context, run, result)


async def _complete(context: WorkerContext, run: JobRun, result: JobResult) -> None:
    completed = False
    try:
        completed = await _record_completion(context, run, result)
    except Exception as error:
        logger.exception("%s job %s could not record its result", run.job_type, run.job_id)
        await _fail(context, run, reason="generation_failed", error=str(error)[:1000] or type(error).__name__)
    finally:
        if not completed and result.discard is not None:
            await result.discard()


async def _record_completion(context: WorkerContext, run: JobRun, result: JobResult) -> bool:
    async with context.session_factory() as session, session.begin():
        now = utcnow()
        # Claim the completion first: a job cancelled meanwhile stores nothing (partial output is discarded).
        changed = await session.execute(
            update(Job)
            .where(run.holds_lease())
            .values(
                status="completed",
                progress=100,
                output=result.output,
                billing_status=case((Job.billing_status == "reserved", "charged"), else_=Job.billing_status),
                lease_owner=None,
                lease_expires_at=None,
                completed_at=now,
                updated_at=now,
            )
            .returning(Job.id)
            .execution_options(synchronize_session=False)
        )
        if changed.first() is None:
            return False
        if result.record is not None:
            await result.record(session)
        return True


async def _held_job(session: AsyncSession, run: JobRun) -> Job | None:
    """The run's job, locked for this transaction, while the run still holds it."""
    query = select(Job).where(run.holds_lease()).execution_options(populate_existing=True)
    if _is_postgres(session):
        query = query.with_for_update()
    return await session.scalar(query)


async def _fail(
    context: WorkerContext, run: JobRun, *, reason: str, error: str, output: dict[str, Any] | None = None
) -> None:
    async with context.session_factory() as session, session.begin():
        job = await _held_job(session, run)
        if job is None:
            return
        if output is not None:
            job.output = output
        await _fail_row(session, context.job_types[run.job_type], job, reason=reason, error=error)


async def _retry(context: WorkerContext, run: JobRun, retry: RetryLater) -> None:
    kind = context.job_types[run.job_type]
    delays = kind.policy(context.settings).retry_delays
    async with context.session_factory() as session, session.begin():
        job = await _held_job(session, run)
        if job is None:
            return
        job.retries += 1
        if job.retries > len(delays):
            await _fail_row(session, kind, job, reason=retry.reason, error=retry.message)
            return
        now = utcnow()
        job.status = "pending"
        job.run_after = now + timedelta(seconds=delays[job.retries - 1])
        job.error = retry.message[:1000]
        job.lease_owner = None
        job.lease_expires_at = None
        job.updated_at = now
        await session.flush()
        if kind.settle is not None:
            await kind.settle(session, job)


async def run_worker(
    platform: Platform,
    *,
    pollers: Sequence[Poller | str],
    job_types: Sequence[str] | Mapping[str, JobType],
    stop_event: asyncio.Event,
) -> None:
    """Runs the pollers on the process's platform until `stop_event` is set (`toolhost worker` and `serve`).

    Each poller loops on its own, so a job poller kept busy by a full queue never delays the others (expired
    holds, autopilot, media retention); a poller that found nothing waits a poll interval.
    """
    resolved = [_imported(poller) if isinstance(poller, str) else poller for poller in pollers]
    types = dict(job_types) if isinstance(job_types, Mapping) else load_job_types(job_types)
    context = WorkerContext(platform=platform, worker_id=new_worker_id(), job_types=types, stopping=stop_event)
    logger.info("worker %s started with %d poller(s), %d job type(s)", context.worker_id, len(resolved), len(types))
    try:
        async with asyncio.TaskGroup() as group:
            for poller in resolved:
                group.create_task(_poll(context, poller))
    finally:
        logger.info("worker %s stopped", context.worker_id)


async def _poll(context: WorkerContext, poller: Poller) -> None:
    while not context.stopping.is_set():
        handled = 0
        try:
            with call_scope():
                handled = await poller(context)
        except Exception:
            # A failing poller (a database blip, a bug) must not stop the others or its own loop.
            logger.exception("poller %s failed", getattr(poller, "__qualname__", poller))
        if handled:
            await asyncio.sleep(0)  # a pass that never suspended must still let the other pollers run
            continue
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(context.stopping.wait(), timeout=context.settings.jobs.poll_interval)
