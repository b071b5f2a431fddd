"""The layered rate limits of CATALOG.md §1.10 on the `limits` library (memory:// or Redis)."""

from __future__ import annotations

import contextlib
import math
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from limits import RateLimitItem, RateLimitItemPerHour, RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter

from toolhost.config import RateLimitSettings
from toolhost.platform.registry import ToolSpec
from toolhost.platform.results import RateLimited

if TYPE_CHECKING:
    from redis.asyncio import ConnectionPool, Redis

# The hourly layer counts polling calls as 0.2: every call costs 5 units of a budget 5x the limit, polls 1.
HOURLY_UNITS_PER_CALL = 5
HOURLY_UNITS_PER_POLL = 1
SIGN_IN_WINDOW_MINUTES = 15
NOT_LIMITED: contextlib.AbstractAsyncContextManager[None] = contextlib.nullcontext()


@dataclass(frozen=True, slots=True)
class Layer:
    """One limit and the key it counts under."""

    name: str
    item: RateLimitItem
    key: tuple[str, ...]
    cost: int = 1


class RateLimiter:
    """Checks the layers for a call and raises `rate_limited` with the wait of the exhausted one.

    The counters live in Redis when `redis_url` is set (shared by every process), else in memory.
    """

    def __init__(self, settings: RateLimitSettings, redis_url: str | None = None) -> None:
        self._settings = settings
        self._pool: ConnectionPool | None = None
        self._redis: Redis | None = None
        storage: Storage
        if redis_url:
            # Imported only when the counters live in Redis: redis-py holds ~6 MB that a memory:// server does not need.
            import redis.asyncio

            self._pool = redis.asyncio.ConnectionPool.from_url(redis_url)
            # limits types its options as scalars, but hands them to redis-py, which takes a pool.
            options: dict[str, Any] = {"connection_pool": self._pool, "implementation": "redispy"}
            storage = RedisStorage("async+" + redis_url, key_prefix="toolhost-ratelimit", **options)
            self._redis = redis.asyncio.Redis(connection_pool=self._pool)
        else:
            storage = MemoryStorage()
        self._limiter = MovingWindowRateLimiter(storage)
        self._in_flight: Counter[str] = Counter()

    def in_flight(self, spec: ToolSpec, *, account_id: str) -> contextlib.AbstractAsyncContextManager[None]:
        """Layer 6: at most N calls of a waiting tool per account at once (shared through Redis when set)."""
        limit = self._settings.in_flight_per_account.get(spec.name) if self.enabled else None
        if limit is None:
            return NOT_LIMITED  # most tools: no generator-based context manager to build and run per call
        return self._counted_in_flight(spec, account_id, limit)

    @contextlib.asynccontextmanager
    async def _counted_in_flight(self, spec: ToolSpec, account_id: str, limit: int) -> AsyncIterator[None]:
        key = f"toolhost-inflight:{spec.name}:{account_id}"
        if self._redis is not None:
            count = int(await self._redis.incr(key))
            await self._redis.expire(key, 3600)
        else:
            self._in_flight[key] += 1
            count = self._in_flight[key]
        try:
            if count > limit:
                raise RateLimited(
                    f"at most {limit} {spec.name} calls may run at once per account",
                    recover_with="wait for a running call to return, then call again",
                    retry_after=1,
                )
            yield
        finally:
            if self._redis is not None:
                await self._redis.decr(key)
            else:
                self._in_flight[key] -= 1

    async def close(self) -> None:
        """Releases the Redis connections."""
        if self._pool is not None:
            await self._pool.aclose()

    @property
    def enabled(self) -> bool:
        """False turns every layer off (benchmarks)."""
        return self._settings.enabled

    async def check_anonymous(self, client_ip: str) -> None:
        """Layer 1: requests without a valid credential, per client IP."""
        if not self.enabled:
            return
        await self._hit(Layer("ip", RateLimitItemPerMinute(self._settings.anonymous_per_minute), ("ip", client_ip)))

    async def check_sign_in(self, *, email: str, client_ip: str) -> None:
        """Counts a sign-in attempt per address (known or not) and per client IP; refuses past either limit."""
        if not self.enabled:
            return
        per_email = RateLimitItemPerMinute(self._settings.sign_in_per_email, SIGN_IN_WINDOW_MINUTES)
        per_ip = RateLimitItemPerMinute(self._settings.sign_in_per_ip, SIGN_IN_WINDOW_MINUTES)
        await self._hit(Layer("sign-in address", per_email, ("signin", email)))
        await self._hit(Layer("sign-in ip", per_ip, ("signin-ip", client_ip)))

    async def check_call(self, spec: ToolSpec, *, account_id: str, tier: str) -> None:
        """Layers 2 to 5 for one tool call of an account."""
        if not self.enabled:
            return
        settings = self._settings
        per_account = settings.trial_per_minute if tier == "trial" else settings.account_per_minute
        layers = [
            Layer("account", RateLimitItemPerMinute(per_account), ("account", account_id)),
            Layer(
                f"category:{spec.category}",
                RateLimitItemPerMinute(settings.category_per_minute[spec.category]),
                ("category", spec.category, account_id),
            ),
        ]
        if spec.name in settings.tool_per_minute:
            layers.append(
                Layer(
                    f"tool:{spec.name}",
                    RateLimitItemPerMinute(settings.tool_per_minute[spec.name]),
                    ("tool", spec.name, account_id),
                )
            )
        layers.append(
            Layer(
                "hour",
                RateLimitItemPerHour(settings.account_per_hour * HOURLY_UNITS_PER_CALL),
                ("hour", account_id),
                HOURLY_UNITS_PER_POLL if spec.polling else HOURLY_UNITS_PER_CALL,
            )
        )
        for layer in layers:
            await self._hit(layer)

    async def _hit(self, layer: Layer) -> None:
        if await self._limiter.hit(layer.item, *layer.key, cost=layer.cost):
            return
        stats = await self._limiter.get_window_stats(layer.item, *layer.key)
        retry_after = max(1, math.ceil(stats.reset_time - time.time()))
        raise RateLimited(
            f"rate limit exceeded ({layer.name}: {layer.item.amount} per {layer.item.GRANULARITY.name}); "
            f"retry in {retry_after} s",
            recover_with=f"wait {retry_after} seconds before calling again",
            retry_after=retry_after,
        )
