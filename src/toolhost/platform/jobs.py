"""The durable job table and the worker loop: a generic loop over pollers that knows no domain.

A poller is an async callable that claims a batch of due work (with a lease), processes it in
transactions of its own and returns how many items it handled. The loop runs every poller in turn,
goes straight on while there is work and waits `jobs.poll_interval` (or until stopped) when none
had any. Domains own their pollers; the composition root (`toolhost.catalog.POLLERS`) names them.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from toolhost.db.base import Base, new_id, utcnow
from toolhost.db.session import call_scope, create_engine, create_session_factory

if TYPE_CHECKING:
    from toolhost.config import Settings

logger = logging.getLogger(__name__)

JOB_STATUSES = ("pending", "processing", "completed", "failed", "cancelled")
FINISHED_JOB_STATUSES = frozenset({"completed", "failed", "cancelled"})


class Job(Base):
    """One unit of async work (CATALOG.md §1.6 job machine) with its credit reservation."""

    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_claim", "status", "job_type", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), default=None, index=True
    )
    job_type: Mapped[str] = mapped_column(String(30))
    status: Mapped[str] = mapped_column(String(20), default="pending")
    progress: Mapped[int] = mapped_column(Integer, default=0)
    attempt: Mapped[int] = mapped_column(Integer, default=0)
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


@dataclass(frozen=True, slots=True)
class WorkerContext:
    """What a poller gets: the settings, a session factory for its own transactions, and who it is."""

    settings: Settings
    session_factory: async_sessionmaker[AsyncSession]
    worker_id: str


Poller = Callable[[WorkerContext], Awaitable[int]]


def load_pollers(names: Sequence[str]) -> list[Poller]:
    """Imports pollers named `package.module.function` (the composition root's POLLERS)."""
    pollers: list[Poller] = []
    for name in names:
        module_name, _, attribute = name.rpartition(".")
        pollers.append(getattr(importlib.import_module(module_name), attribute))
    return pollers


def new_worker_id() -> str:
    """A name unique to this worker: host, process and a random suffix (one process may run several)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


async def run_worker(
    settings: Settings,
    pollers: Sequence[Poller | str],
    stop_event: asyncio.Event,
    *,
    session_factory: async_sessionmaker[AsyncSession] | None = None,
) -> None:
    """Runs the pollers until `stop_event` is set; `toolhost worker` and `toolhost serve` both call this."""
    resolved = [load_pollers([poller])[0] if isinstance(poller, str) else poller for poller in pollers]
    engine = None
    if session_factory is None:
        engine = create_engine(settings.database_url)
        session_factory = create_session_factory(engine)
    context = WorkerContext(settings=settings, session_factory=session_factory, worker_id=new_worker_id())
    logger.info("worker %s started with %d poller(s)", context.worker_id, len(resolved))
    try:
        while not stop_event.is_set():
            handled = 0
            for poller in resolved:
                try:
                    with call_scope():
                        handled += await poller(context)
                except Exception:
                    # One failing poller (a database blip, a bug) must not stop the others or the loop.
                    logger.exception("poller %s failed", getattr(poller, "__qualname__", poller))
            if handled == 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop_event.wait(), timeout=settings.jobs.poll_interval)
    finally:
        logger.info("worker %s stopped", context.worker_id)
        if engine is not None:
            await engine.dispose()
