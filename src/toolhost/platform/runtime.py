"""The platform's long-lived parts, built once per process and handed to every transport."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from toolhost.config import Settings
from toolhost.db.session import create_engine, create_session_factory
from toolhost.platform.auth import Authenticator
from toolhost.platform.context import Principal
from toolhost.platform.execution import Execution, Executor
from toolhost.platform.ratelimit import RateLimiter
from toolhost.platform.registry import Registry


@dataclass(frozen=True, slots=True)
class Platform:
    """Engine, sessions, authentication, limits and the executor over one registry."""

    settings: Settings
    registry: Registry
    engine: AsyncEngine
    session_factory: async_sessionmaker[AsyncSession]
    authenticator: Authenticator
    rate_limiter: RateLimiter
    executor: Executor

    async def execute(
        self, name: str, arguments: object, principal: Principal, *, transport: str
    ) -> Execution:
        """Runs a tool through the one execution path."""
        return await self.executor.execute(name, arguments, principal, transport=transport)

    async def close(self) -> None:
        """Releases the database and Redis connections."""
        await self.rate_limiter.close()
        await self.engine.dispose()


def build_platform(settings: Settings, registry: Registry) -> Platform:
    """Wires the platform for a process."""
    engine = create_engine(settings.database_url)
    session_factory = create_session_factory(engine)
    rate_limiter = RateLimiter(settings.ratelimit, settings.redis_url)
    return Platform(
        settings=settings,
        registry=registry,
        engine=engine,
        session_factory=session_factory,
        authenticator=Authenticator(settings=settings, session_factory=session_factory),
        rate_limiter=rate_limiter,
        executor=Executor(
            registry=registry, settings=settings, session_factory=session_factory, rate_limiter=rate_limiter
        ),
    )
