"""The platform's long-lived parts, built once per process and handed to every transport."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from toolhost.config import Settings
from toolhost.db.point_reads import PointReader
from toolhost.db.session import create_engine, create_read_engine, create_session_factory
from toolhost.platform.auth import Authenticator
from toolhost.platform.context import Principal
from toolhost.platform.execution import Execution, Executor
from toolhost.platform.observability import CallObserver
from toolhost.platform.ratelimit import RateLimiter
from toolhost.platform.registry import Registry
from toolhost.platform.usage import UsageRecorder

Shared = TypeVar("Shared")
# Container objects allocated (net of those freed) before a young collection; Python's default is 700.
YOUNG_GENERATION_OBJECTS = 10_000


@dataclass(frozen=True, slots=True)
class Platform:
    """Engines, sessions, authentication, limits, usage and the executor over one registry.

    Sessions read through `read_engine` (on SQLite a WAL reader pool that never waits on a write) until
    they write, then through `engine` (on SQLite the one writer lane); elsewhere both are one pool.
    """

    settings: Settings
    registry: Registry
    engine: AsyncEngine
    read_engine: AsyncEngine
    session_factory: async_sessionmaker[AsyncSession]
    authenticator: Authenticator
    rate_limiter: RateLimiter
    usage: UsageRecorder
    executor: Executor
    observer: CallObserver
    _shared: dict[type[Any], Any] = field(default_factory=dict)

    async def execute(self, name: str, arguments: object, principal: Principal, *, transport: str) -> Execution:
        """Runs a tool through the one execution path."""
        return await self.executor.execute(name, arguments, principal, transport=transport)

    def shared(self, kind: type[Shared], build: Callable[[], Shared]) -> Shared:
        """One object of `kind` for the whole process, built on first use (a worker's connectors and the
        connections they keep); `close` closes those that have an `aclose`."""
        found = self._shared.get(kind)
        if not isinstance(found, kind):
            found = self._shared[kind] = build()
        return found

    async def close(self) -> None:
        """Writes the queued usage and call lines, then releases the database, Redis and kept HTTP connections."""
        self.observer.write_lines()
        shared = list(self._shared.values())
        self._shared.clear()
        for found in shared:
            close = getattr(found, "aclose", None)
            if close is not None:
                await close()
        await self.executor.hold_keeper.close()
        await self.usage.close()
        await self.authenticator.close()
        await self.executor.point_reads.close()
        await self.rate_limiter.close()
        if self.read_engine is not self.engine:
            await self.read_engine.dispose()
        await self.engine.dispose()


def build_platform(settings: Settings, registry: Registry) -> Platform:
    """Wires the platform for a process."""
    engine = create_engine(settings.database_url)
    read_engine = create_read_engine(settings.database_url, engine)
    session_factory = create_session_factory(engine, read_engine)
    rate_limiter = RateLimiter(settings.ratelimit, settings.redis_url)
    usage = UsageRecorder(session_factory, engine)
    point_reads = PointReader(settings.database_url)
    observer = CallObserver()
    return Platform(
        settings=settings,
        registry=registry,
        engine=engine,
        read_engine=read_engine,
        session_factory=session_factory,
        authenticator=Authenticator(settings=settings, session_factory=session_factory, usage=usage),
        rate_limiter=rate_limiter,
        usage=usage,
        executor=Executor(
            registry=registry,
            settings=settings,
            session_factory=session_factory,
            rate_limiter=rate_limiter,
            usage=usage,
            point_reads=point_reads,
            observer=observer,
        ),
        observer=observer,
    )


# Cached: the body runs once per process (a forked worker inherits the tuning with the cache).
@functools.cache
def tune_garbage_collection() -> None:
    """Takes what the process built to start (modules, the tools' models, the platform) out of the garbage
    collector's sight, and lets the young generation grow before it is collected; the first time a process
    calls it.

    A started process holds some 200,000 objects that live as long as it does; every full collection walked
    them all (about 100 ms each, several times a minute under load), a tenth of the CPU of the cheapest call.
    Freezing them after one collection of the start's garbage leaves the collector only what calls create. A
    young collection costs about the same whether 700 objects (Python's default) or 10,000 wait in it, most of
    it walking the objects of the calls in flight: at 700 one ran every few calls, ~7 us a call under load;
    at 10,000 a few times a second, under 1 us. Only once per process: a test run starts many apps, and what
    is frozen is never collected. `functools.cache` says whether it ran, not `gc.get_freeze_count()`, which
    counts the frozen objects one by one (30-70 ms in a test process, paid by every app a test started).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_GENERATION_OBJECTS, *gc.get_threshold()[1:])
