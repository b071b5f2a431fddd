"""Engine and session factory; SQLite gets WAL, a busy timeout and write-locking transactions."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine


def is_sqlite(url: str) -> bool:
    """Whether a database URL names SQLite."""
    return url.startswith("sqlite")


def create_engine(url: str, *, echo: bool = False) -> AsyncEngine:
    """An async engine for the URL, tuned for the embedded SQLite file or a PostgreSQL server."""
    if is_sqlite(url):
        # One connection: SQLite admits one writer at a time anyway, and queueing for the connection in
        # asyncio is far cheaper than the driver's busy-wait sleeps when many transactions contend.
        engine = create_async_engine(
            url,
            echo=echo,
            pool_size=1,
            max_overflow=0,
            pool_timeout=60,
            connect_args={"timeout": 30, "isolation_level": None},
        )
        _make_sqlite_transactions_write_locking(engine.sync_engine)
        return engine
    return create_async_engine(url, echo=echo, pool_size=20, max_overflow=20, pool_pre_ping=True)


def _make_sqlite_transactions_write_locking(engine: Engine) -> None:
    # SQLite upgrades a read lock to a write lock without waiting on the busy timeout, so two
    # read-then-write transactions fail instead of queueing; BEGIN IMMEDIATE takes the write lock
    # up front and lets the busy timeout queue them.
    @event.listens_for(engine, "connect")
    def configure(connection: Any, _record: Any) -> None:
        cursor = connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def create_session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions that keep their objects readable after commit."""
    return async_sessionmaker(engine, expire_on_commit=False)
