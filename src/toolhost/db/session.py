"""Engines and session factories, and the guard that keeps transactions off outside work.

SQLite admits one writer: writes queue in asyncio for the one writer connection (`BEGIN IMMEDIATE`),
while reads run on a small pool of WAL reader connections that never wait on the writer. A session
routes each statement: reads go to a reader until the transaction first writes (a flush, an INSERT,
UPDATE or DELETE, a SELECT ... FOR UPDATE); from then on, to the end of the transaction, everything
goes to the writer, so a transaction reads its own writes. That is PostgreSQL's READ COMMITTED
behaviour, which the code already relies on (guarded updates, unique constraints). PostgreSQL serves
both from one pool.

A unit of work is one short transaction. Every session made by these factories registers with the
call (a tool call in `execute()`, one poller pass of the worker) that opened it, and
`ensure_no_open_transaction` refuses outside work (fetches, providers, connectors, renderers) while one
of the call's sessions still holds a transaction, so no row lock, writer lane or pooled connection is
held while the network or the CPU is busy.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import AsyncIterator, Iterator
from contextvars import ContextVar
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import Session, SessionTransaction
from sqlalchemy.sql.dml import UpdateBase
from sqlalchemy.sql.elements import ClauseElement, TextClause

SQLITE_READERS = 4

_call_sessions: ContextVar[weakref.WeakSet[AsyncSession] | None] = ContextVar("toolhost_call_sessions", default=None)


class TransactionHeldDuringOutsideWork(RuntimeError):
    """A programming error: outside work was started while the call held a database transaction."""


class CallSession(AsyncSession):
    """An AsyncSession that registers with the call it was opened in (see `call_scope`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        sessions = _call_sessions.get()
        if sessions is not None:
            sessions.add(self)


@contextlib.contextmanager
def call_scope() -> Iterator[None]:
    """Scopes the transaction guard to one call: sessions opened inside it (and in its subtasks) are its own."""
    token = _call_sessions.set(weakref.WeakSet())
    try:
        yield
    finally:
        _call_sessions.reset(token)


def ensure_no_open_transaction(work: str) -> None:
    """Raises when a session of the current call holds a transaction; `work` names what was about to start."""
    sessions = _call_sessions.get()
    if sessions is None:
        return
    if any(session.in_transaction() for session in list(sessions)):
        raise TransactionHeldDuringOutsideWork(
            f"{work} started while a database transaction is open: commit the unit of work first"
        )


async def end_unit_of_work(session: AsyncSession) -> None:
    """Commits what `session` did so far and returns its connection, before outside work that follows."""
    if session.in_nested_transaction():
        raise TransactionHeldDuringOutsideWork("outside work started inside a savepoint: end the savepoint first")
    if session.in_transaction():
        await session.commit()


def is_sqlite(url: str) -> bool:
    """Whether a database URL names SQLite."""
    return url.startswith("sqlite")


def create_engine(url: str, *, echo: bool = False) -> AsyncEngine:
    """The engine writes go through: SQLite's one writer lane, or the PostgreSQL pool."""
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
        _configure_sqlite(engine.sync_engine, begin="BEGIN IMMEDIATE", query_only=False)
        return engine
    parsed = make_url(url)
    connect_args = {}
    if "sslmode" in parsed.query:
        # libpq's sslmode (as hosted PostgreSQL services hand out URLs) is asyncpg's `ssl` argument.
        connect_args["ssl"] = parsed.query["sslmode"]
        parsed = parsed.difference_update_query(["sslmode"])
    engine = create_async_engine(
        parsed, echo=echo, pool_size=20, max_overflow=20, pool_recycle=3600, connect_args=connect_args
    )
    _replace_closed_connections(engine.sync_engine)
    return engine


def _replace_closed_connections(engine: Engine) -> None:
    # No pre-ping: on asyncpg it is BEGIN, a statement and ROLLBACK on every checkout, three round trips
    # before each unit of work. A connection the server closed (a restart, an idle timeout) is known to
    # the driver without a round trip and is replaced here; one dropped without a word fails its first
    # statement, and SQLAlchemy then invalidates every pooled connection older than that error.
    @event.listens_for(engine, "checkout")
    def replace_if_closed(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        if dbapi_connection.driver_connection.is_closed():
            raise DisconnectionError("the server closed this pooled connection")


def create_read_engine(url: str, writer: AsyncEngine, *, echo: bool = False) -> AsyncEngine:
    """The engine reads go through: SQLite's WAL reader pool beside the writer; the same pool elsewhere."""
    if not is_sqlite(url):
        return writer
    engine = create_async_engine(
        url,
        echo=echo,
        pool_size=SQLITE_READERS,
        max_overflow=0,
        pool_timeout=60,
        connect_args={"timeout": 30, "isolation_level": None},
    )
    # A deferred BEGIN gives each read transaction one WAL snapshot without taking the write lock.
    _configure_sqlite(engine.sync_engine, begin="BEGIN", query_only=True)
    return engine


def _configure_sqlite(engine: Engine, *, begin: str, query_only: bool) -> None:
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
        if query_only:
            cursor.execute("PRAGMA query_only=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(connection: Any) -> None:
        connection.exec_driver_sql(begin)


class RoutingSession(Session):
    """Reads on the reader engine until the transaction writes; then everything on the writer engine."""

    def __init__(self, *args: Any, reader: Engine | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reader = reader
        self._writing = False

    def get_bind(
        self, mapper: Any = None, *, clause: ClauseElement | None = None, **kwargs: Any
    ) -> Engine | Connection:
        writer = super().get_bind(mapper, clause=clause, **kwargs)
        if self._reader is None or self._reader is writer:
            return writer
        if self._writing or self._flushing or _writes(clause):
            self._writing = True
            return writer
        return self._reader


@event.listens_for(RoutingSession, "after_transaction_end")
def _transaction_ended(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is None and isinstance(session, RoutingSession):
        session._writing = False


def _writes(clause: ClauseElement | None) -> bool:
    if isinstance(clause, UpdateBase | TextClause):
        return True
    return getattr(clause, "_for_update_arg", None) is not None


def create_session_factory(
    engine: AsyncEngine, read_engine: AsyncEngine | None = None
) -> async_sessionmaker[AsyncSession]:
    """Sessions that read on `read_engine` until they write, keep their objects readable after commit, and
    register with their call."""
    return async_sessionmaker(
        engine,
        expire_on_commit=False,
        class_=CallSession,
        sync_session_class=RoutingSession,
        reader=read_engine.sync_engine if read_engine is not None else None,
    )


@contextlib.asynccontextmanager
async def reads_without_transaction(
    session_factory: async_sessionmaker[AsyncSession],
) -> AsyncIterator[AsyncSession]:
    """A session for reads that need no snapshot across statements: on PostgreSQL its statements run on an
    autocommit connection, so a read costs its own round trip and no BEGIN and ROLLBACK around it (SQLAlchemy's
    asyncpg dialect sends each of those on its own). Never write through it."""
    async with session_factory() as session:
        if session.sync_session.get_bind().dialect.name == "postgresql":
            await session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
        yield session


@contextlib.asynccontextmanager
async def standalone_session(database_url: str) -> AsyncIterator[AsyncSession]:
    """A session on an engine of its own, disposed on exit: for operator commands that need no platform."""
    engine = create_engine(database_url)
    try:
        async with create_session_factory(engine)() as session:
            yield session
    finally:
        await engine.dispose()
