"""The worker side of the job machine: pollers, claims under a lease, the pool that runs claimed jobs, the
heartbeat, reaping of expired leases, and the guarded complete/fail/retry transitions.

`run_worker` runs the composition root's pollers, each in a loop of its own; `run_jobs` is the job machine's
poller. A claim takes due jobs of one type in one UPDATE (its subquery picks them `FOR UPDATE SKIP LOCKED` on
PostgreSQL; on SQLite the UPDATE runs on the writer lane under BEGIN IMMEDIATE's write lock, so two worker
processes never both take the same pending job) into the free slots of the worker's pool, which runs each
type's `concurrency` jobs at a time under its time limit (`jobs.timeouts`), while one heartbeat extends the
leases of the pool's jobs and notices the ones it lost (cancelled, or taken over after an expiry). A job
leaves `processing` only through guarded transitions (the row must still be this worker's), and
`billing_status` leaves `reserved` exactly once.

Kept as one module past 500 lines on purpose: claim, pool, heartbeat, reap and the transitions all enforce one
lease rule (the row must still be this worker's), and they are read and changed together.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Row, Table, bindparam, case, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.db.base import utcnow
from toolhost.db.session import call_scope, reads_without_transaction
from toolhost.platform.jobs import (
    Job,
    JobFailed,
    JobResult,
    JobRun,
    JobStopped,
    JobType,
    RetryLater,
    WorkerContext,
    lease_end,
    refund,
)

if TYPE_CHECKING:
    from toolhost.config import Settings
    from toolhost.platform.runtime import Platform

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 3600.0
JOBS = cast(Table, Job.__table__)
# Built once, in Core: a job's completion is the hottest write of a busy worker, and building the statement (its
# ORM bulk-update bookkeeping, its cache key) cost the worker more CPU than sending it.
COMPLETE = (
    update(JOBS)
    .where(  # JobRun.holds_lease(), with bind parameters
        JOBS.c.id == bindparam("job_id"),
        JOBS.c.status == "processing",
        JOBS.c.lease_owner == bindparam("worker_id"),
    )
    .values(
        status="completed",
        progress=100,
        output=bindparam("job_output", type_=JOBS.c.output.type),
        billing_status=case((JOBS.c.billing_status == "reserved", "charged"), else_=JOBS.c.billing_status),
        lease_owner=None,
        lease_expires_at=None,
        completed_at=bindparam("completed", type_=JOBS.c.completed_at.type),
        updated_at=bindparam("completed", type_=JOBS.c.updated_at.type),
    )
    .returning(JOBS.c.id)
)

# What a claim hands to a job's run.
CLAIMED_COLUMNS = (
    JOBS.c.id,
    JOBS.c.job_type,
    JOBS.c.account_id,
    JOBS.c.project_id,
    JOBS.c.input,
    JOBS.c.output,
    JOBS.c.run_after,
    JOBS.c.created_at,
)

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


async def run_jobs(context: WorkerContext) -> int:
    """The poller: keeps every due job type's slots filled, returning expired leases to the queue as it goes.

    A slot that frees is refilled as soon as half the type's slots are free (or a poll interval passed), so a
    slow job never holds back the claims behind it and a claim still takes several jobs in one transaction.
    A type whose last claim came back full has more due: it is claimed as its slots free, without asking; the
    others are asked about once a poll interval, as soon as a newly due job is promised to start.
    Returns, with the number of jobs it reaped and claimed, once nothing is due and every job it started has
    finished, or once the worker is stopping and its jobs have finished.
    """
    pool = JobPool(context)
    backlogged: set[str] = set()
    handled = 0
    next_reap = next_scan = 0.0
    try:
        waited_out = True
        while True:
            if not context.stopping.is_set():
                # Reaping runs on its own clock: under a full queue this loop never returns, and a dead
                # worker's jobs must not wait for the queue to drain.
                if time.monotonic() >= next_reap:
                    handled += await reap_expired(context, running=pool.job_ids)
                    next_reap = time.monotonic() + context.settings.jobs.poll_interval
                scan = time.monotonic() >= next_scan
                if scan:
                    next_scan = time.monotonic() + context.settings.jobs.poll_interval
                handled += await _refill(context, pool, backlogged, any_free_slot=waited_out, scan=scan)
            if not pool.running:
                return handled
            waited_out = not await pool.wait_for_one(timeout=context.settings.jobs.poll_interval)
    finally:
        await pool.close()


async def _refill(
    context: WorkerContext, pool: JobPool, backlogged: set[str], *, any_free_slot: bool, scan: bool
) -> int:
    """Claims due jobs into free slots: every free slot after a quiet poll interval, else half a type's slots;
    backlogged types always, the others when `scan` asks (one query says which of them have due jobs)."""
    wanted: dict[str, int] = {}
    for name, kind in context.job_types.items():
        policy = kind.policy(context.settings)
        slots = max(1, policy.concurrency)
        free = slots - pool.running_of(name)
        if free >= (1 if any_free_slot else max(1, min(policy.batch, slots) // 2)):
            wanted[name] = min(policy.batch, free)
    unknown = [name for name in wanted if name not in backlogged] if scan else []
    due = {name for name in wanted if name in backlogged}
    if len(unknown) == 1:
        due.update(unknown)  # its claim finds out as cheaply whether anything is due
    elif unknown:
        due.update(await _due_types(context, unknown))
    claimed_count = 0
    for name in (name for name in wanted if name in due):
        claimed = await claim(context, name, limit=wanted[name])
        if len(claimed) == wanted[name]:
            backlogged.add(name)
        else:
            backlogged.discard(name)
        pool.start(claimed)
        claimed_count += len(claimed)
    return claimed_count


async def _due_types(context: WorkerContext, names: Sequence[str]) -> list[str]:
    """Those of `names` with due pending jobs, in the order the composition root lists them."""
    async with reads_without_transaction(context.session_factory) as session:
        due = set(
            await session.scalars(
                select(Job.job_type)
                .where(Job.status == "pending", Job.run_after <= utcnow(), Job.job_type.in_(names))
                .distinct()
            )
        )
    return [name for name in names if name in due]


async def reap_expired(context: WorkerContext, *, running: Collection[uuid.UUID] = ()) -> int:
    """Processing jobs whose lease expired (their worker died): back to pending, or failed after the last attempt.

    `running` are the jobs this worker still runs: a lease of its own that expired means a late heartbeat (a
    busy machine), not a dead worker, and reaping it would start the job a second time beside itself.
    """
    async with context.session_factory() as session, session.begin():
        query = select(Job).where(
            Job.job_type.in_(list(context.job_types)), Job.status == "processing", Job.lease_expires_at < utcnow()
        )
        if running:
            query = query.where(Job.id.not_in(list(running)))
        expired = list(await session.scalars(query.with_for_update(skip_locked=True)))
        await _return_to_queue(
            context, session, expired, reason=lambda job: f"the worker's lease expired {job.attempt} times"
        )
        return len(expired)


async def release_departed(context: WorkerContext, departed_worker_id: str) -> int:
    """The jobs a worker known to be dead still held, back to pending at once instead of when their leases expire.

    Only for a worker whose process has certainly exited (the supervisor saw it end). The row locks wait for
    PostgreSQL to roll back whatever transaction the dead process left open, so a completion it committed is
    seen and kept.
    """
    async with context.session_factory() as session, session.begin():
        query = select(Job).where(Job.status == "processing", Job.lease_owner == departed_worker_id)
        held = list(await session.scalars(query.with_for_update()))
        await _return_to_queue(context, session, held, reason=lambda job: f"its worker died {job.attempt} times")
        return len(held)


async def _return_to_queue(
    context: WorkerContext, session: AsyncSession, jobs: Sequence[Job], *, reason: Callable[[Job], str]
) -> None:
    now = utcnow()
    for job in jobs:
        kind = context.job_types.get(job.job_type)
        job.attempt += 1
        if kind is None or job.attempt < kind.policy(context.settings).max_attempts:
            job.status = "pending"
            job.lease_owner = None
            job.lease_expires_at = None
            job.updated_at = now
            continue
        await _fail_row(session, kind, job, reason="worker_lost", error=reason(job))


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


async def claim(context: WorkerContext, job_type: str, *, limit: int) -> list[JobRun]:
    """Up to `limit` due jobs of one type, oldest due first, now processing under this worker's lease.

    One statement takes them (an UPDATE of the rows a `FOR UPDATE SKIP LOCKED` subquery picked, returning
    them), and the type's `on_claim` reads what its runs need in the same transaction. Types whose policy has
    `per_account_limit` skip accounts already running `jobs.per_account_concurrency` such jobs with live
    leases, across all workers.
    """
    kind = context.job_types[job_type]
    due = JOBS.alias("due")
    async with context.session_factory() as session, session.begin():
        now = utcnow()
        picked = select(due.c.id).where(due.c.job_type == job_type, due.c.status == "pending", due.c.run_after <= now)
        if kind.policy(context.settings).per_account_limit:
            busy = await _busy_accounts(context, session, now)
            if busy:
                picked = picked.where(due.c.account_id.not_in(busy))
        picked = picked.order_by(due.c.run_after, due.c.created_at).limit(limit).with_for_update(skip_locked=True)
        rows = (
            await session.execute(
                update(JOBS)
                .where(JOBS.c.id.in_(picked.scalar_subquery()))
                .values(
                    status="processing",
                    progress=0,
                    lease_owner=context.worker_id,
                    lease_expires_at=now + timedelta(seconds=context.settings.jobs.lease_seconds),
                    updated_at=now,
                )
                .returning(*CLAIMED_COLUMNS)
            )
        ).all()
        # RETURNING keeps no order: the oldest due start first, as the subquery chose them.
        runs = [_job_run(context, row) for row in sorted(rows, key=lambda row: (row.run_after, row.created_at))]
        if runs and kind.on_claim is not None:
            read = await kind.on_claim(session, runs)
            for run in runs:
                run.claimed_with = read.get(run.job_id)
        return runs


async def _busy_accounts(context: WorkerContext, session: AsyncSession, now: datetime) -> list[uuid.UUID]:
    limited = [name for name, kind in context.job_types.items() if kind.policy(context.settings).per_account_limit]
    running = await session.execute(
        select(Job.account_id, func.count())
        .where(Job.job_type.in_(limited), Job.status == "processing", Job.lease_expires_at >= now)
        .group_by(Job.account_id)
    )
    limit = context.settings.jobs.per_account_concurrency
    return [account_id for account_id, count in running.all() if count >= limit]


async def run_claimed(context: WorkerContext, claimed: Sequence[JobRun]) -> None:
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
        self._completions = Completions(context)

    @property
    def running(self) -> int:
        """Jobs started and not yet finished."""
        return len(self._tasks)

    @property
    def job_ids(self) -> list[uuid.UUID]:
        """The jobs started and not yet finished."""
        return list(self._in_flight)

    def running_of(self, job_type: str) -> int:
        """Jobs of one type started and not yet finished."""
        return sum(1 for run in self._tasks.values() if run.job_type == job_type)

    def start(self, claimed: Sequence[JobRun]) -> None:
        """Starts a task for each claimed job (the type's limiter queues the ones beyond its concurrency)."""
        for run in claimed:
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
        await self._completions.close()
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
                    await _run_one(self._context, run, self._completions)
        finally:
            run.stopped.set()
            self._in_flight.pop(run.job_id, None)


def _job_run(context: WorkerContext, job: Row[Any]) -> JobRun:
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
                    .values(lease_expires_at=lease_end(context.settings))
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


async def _run_one(context: WorkerContext, run: JobRun, completions: Completions) -> None:
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
        await _complete(run, result, completions)


async def _complete(run: JobRun, result: JobResult, completions: Completions) -> None:
    written = completions.submit(run, result)
    completed = False
    try:
        completed = await asyncio.shield(written)
    except asyncio.CancelledError:
        # The batch is written all the same: what it wrote decides whether the job's outside work is kept.
        await asyncio.wait([written])
        completed = not written.cancelled() and written.exception() is None and written.result()
        raise
    except Exception:
        # The work was done (a post may be out) but not written down: failing the job now would refund it and
        # report a failure. Its lease runs out instead and it runs again; the attempt cap ends a lasting fault.
        logger.exception("%s job %s could not record its result; it runs again", run.job_type, run.job_id)
    finally:
        if not completed and result.discard is not None:
            await result.discard()


class Completions:
    """Writes the completions of a pool's jobs: those that arrive in one turn of the event loop go in one
    transaction (a busy publisher finishes dozens a second, and a transaction each cost it a quarter of its
    database work). A batch that fails is written again one job at a time, so one result that cannot be
    written holds back none of the others."""

    def __init__(self, context: WorkerContext) -> None:
        self._context = context
        self._waiting: list[tuple[JobRun, JobResult, asyncio.Future[bool]]] = []
        self._writers: set[asyncio.Task[None]] = set()

    def submit(self, run: JobRun, result: JobResult) -> asyncio.Future[bool]:
        """Completes the job while it is still this worker's and writes its rows; the future says whether it was."""
        written: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting.append((run, result, written))
        if len(self._waiting) == 1:
            # In a context of its own: its session belongs to no job's call (the outside-work guard).
            writer = asyncio.create_task(self._write(), context=contextvars.Context())
            self._writers.add(writer)
            writer.add_done_callback(self._writers.discard)
        return written

    async def close(self) -> None:
        """Waits for the batches being written."""
        if self._writers:
            await asyncio.wait(self._writers)

    async def _write(self) -> None:
        await asyncio.sleep(0)  # the other jobs finishing in this turn of the loop join the batch
        batch, self._waiting = self._waiting, []
        try:
            async with self._context.session_factory() as session, session.begin():
                outcomes = [await _write_completion(self._context, session, run, result) for run, result, _ in batch]
        except Exception:
            for run, result, written in batch:
                try:
                    async with self._context.session_factory() as session, session.begin():
                        completed = await _write_completion(self._context, session, run, result)
                except Exception as error:
                    written.set_exception(error)
                else:
                    written.set_result(completed)
            return
        for (_, _, written), completed in zip(batch, outcomes, strict=True):
            written.set_result(completed)


async def _write_completion(context: WorkerContext, session: AsyncSession, run: JobRun, result: JobResult) -> bool:
    # Claim the completion first: a job cancelled meanwhile stores nothing (partial output is discarded).
    changed = await session.execute(
        COMPLETE,
        {"job_id": run.job_id, "worker_id": context.worker_id, "job_output": result.output, "completed": utcnow()},
    )
    if changed.first() is None:
        return False
    if result.record is not None:
        await result.record(session)
    return True


async def _held_job(session: AsyncSession, run: JobRun) -> Job | None:
    """The run's job, locked for this transaction, while the run still holds it."""
    return await session.scalar(
        select(Job).where(run.holds_lease()).execution_options(populate_existing=True).with_for_update()
    )


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
        now = utcnow()
        if retry.not_before is not None:
            job.run_after = max(retry.not_before, now)
        else:
            job.retries += 1
            if job.retries > len(delays):
                await _fail_row(session, kind, job, reason=retry.reason, error=retry.message)
                return
            job.run_after = now + timedelta(seconds=delays[job.retries - 1])
        job.status = "pending"
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
    worker_id: str | None = None,
    departed_worker_id: str | None = None,
) -> None:
    """Runs the pollers on the process's platform until `stop_event` is set (`toolhost worker` and `serve`).

    Each poller loops on its own, so a job poller kept busy by a full queue never delays the others (expired
    holds, autopilot, media retention). A poller that found nothing waits: the job poller `jobs.poll_interval`,
    the others `jobs.maintenance_interval`. A worker that replaces a dead one (`departed_worker_id`, from the
    supervisor) first returns the jobs the dead one held to the queue.
    """
    resolved = [_imported(poller) if isinstance(poller, str) else poller for poller in pollers]
    types = dict(job_types) if isinstance(job_types, Mapping) else load_job_types(job_types)
    context = WorkerContext(
        platform=platform, worker_id=worker_id or new_worker_id(), job_types=types, stopping=stop_event
    )
    logger.info("worker %s started with %d poller(s), %d job type(s)", context.worker_id, len(resolved), len(types))
    if departed_worker_id is not None:
        try:
            with call_scope():
                released = await release_departed(context, departed_worker_id)
            if released:
                logger.warning("returned %d job(s) of dead worker %s to the queue", released, departed_worker_id)
        except Exception:
            # Its leases still expire and are reaped as usual.
            logger.exception("could not return the jobs of dead worker %s", departed_worker_id)
    try:
        async with asyncio.TaskGroup() as group:
            for poller in resolved:
                group.create_task(_poll(context, poller))
    finally:
        logger.info("worker %s stopped", context.worker_id)


async def _poll(context: WorkerContext, poller: Poller) -> None:
    # The job poller decides how soon a due job starts; the others (expired holds, autopilot schedules, media
    # retention) keep minutes-scale promises, and polling them as often only loads the database.
    jobs_options = context.settings.jobs
    interval = jobs_options.poll_interval if poller is run_jobs else jobs_options.maintenance_interval
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
            await asyncio.wait_for(context.stopping.wait(), timeout=interval)
