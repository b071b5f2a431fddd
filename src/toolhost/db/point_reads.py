"""Point reads: one row by its key, through the shortest path each database offers.

The hottest reads of the call path (the balance of get_credit_balance) are a single indexed row. Through an
async session they cost a transaction and several thread hops (aiosqlite) or round trips (BEGIN/COMMIT on
asyncpg). Here the statement is compiled once for the database and run by its
driver itself, with the columns' own bind and result conversions: on SQLite by the sqlite3 driver on a
query_only connection, on the event loop (microseconds for an indexed row, never waiting on the writer under
WAL); on PostgreSQL by a few asyncpg connections of its own (not asyncpg's pool, whose checkout cost more than
the read), one statement outside any transaction. Only
single-row lookups by key belong here: anything that scans would block the event loop on SQLite.

On PostgreSQL, identical lookups asked for in the same turn of the event loop share one round trip (parallel
calls of one account all read its balance row). A lookup joins only a read that has not been sent yet, and
that read is sent after every caller asked for it, so each caller still sees every write committed before it
asked: nothing is cached, nothing is read early.
"""

from __future__ import annotations

import asyncio
import collections
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVarTuple, cast

import asyncpg
from sqlalchemy import Select
from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite
from sqlalchemy.engine import Dialect, make_url

from toolhost.db.driver_statements import Conversion, bind_conversions
from toolhost.db.session import is_sqlite

Columns = TypeVarTuple("Columns")
POSTGRES_CONNECTIONS = 4
# What a read raises when its connection, not its statement, failed: the protocol left mid-operation by an
# error that ended the session ("another operation is in progress"), a closed connection, the network, the
# server's connection errors (class 08) and its ending of sessions (57P01-57P03, 57P05: an administrator, a
# crash, a shutdown, an idle session timeout).
CONNECTION_FAILURES = (
    asyncpg.InternalClientError,
    asyncpg.InterfaceError,
    OSError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.CrashShutdownError,
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.IdleSessionTimeoutError,
)


class _Connections:
    """Up to `size` asyncpg connections, each running one point read at a time.

    asyncpg's own pool costs about 25 us of CPU per read in acquire and release (a proxy per checkout, a task
    to shield each release, a reset per release, a timer for idle connections), twice what the read itself
    costs. The point reads need none of it: single SELECTs outside any transaction leave no session state to
    reset, and a read is never cancelled halfway (the reader shields it from its callers).
    """

    def __init__(self, dsn: str, size: int) -> None:
        self._dsn = dsn
        self._size = size
        self._idle: list[asyncpg.Connection] = []
        self._opened = 0  # open, or being opened
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()

    async def fetchrow(self, sql: str, values: tuple[Any, ...]) -> Sequence[Any] | None:
        """The first row of one statement, on an idle connection (opened when none is and fewer than `size` are).

        A read whose connection failed under it runs once more on another: a connection the server ended while
        it was idle (a restart, an administrator, a dropped database) is often noticed only by the read that
        uses it, which asyncpg's pool let fail. A SELECT read again later still sees every write committed
        before its callers asked.
        """
        for attempt in (1, 2):
            connection = await self._take()
            try:
                row: Sequence[Any] | None = await connection.fetchrow(sql, *values)
            except BaseException as error:
                # A read that failed may have left its connection in any state: it is not used again.
                self._opened -= 1
                connection.terminate()
                self._wake_one()
                if attempt == 2 or not isinstance(error, CONNECTION_FAILURES):
                    raise
                continue
            self._idle.append(connection)
            self._wake_one()
            return row
        raise AssertionError("unreachable: the second attempt returns or raises")

    async def close(self) -> None:
        """Closes the idle connections (none is busy once the reads in flight have ended)."""
        idle, self._idle = self._idle, []
        self._opened -= len(idle)
        for connection in idle:
            await connection.close()

    async def _take(self) -> asyncpg.Connection:
        while self._idle and self._idle[-1].is_closed():  # the server or the network ended it while idle
            self._idle.pop()
            self._opened -= 1
        while not self._idle and self._opened >= self._size:
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake_one()  # the turn this waiter was given goes to the next one
                raise
        if self._idle:
            return self._idle.pop()
        self._opened += 1
        try:
            return await asyncpg.connect(self._dsn)
        except BaseException:
            self._opened -= 1
            self._wake_one()
            raise

    def _wake_one(self) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return


@dataclass(frozen=True, slots=True)
class _Compiled:
    """A statement compiled once for sqlite3: its SQL, parameter order and column conversions."""

    sql: str
    parameters: tuple[str, ...]
    binds: tuple[Conversion, ...]
    results: tuple[Conversion, ...]


class PointReader:
    """Runs one key lookup and returns its row as a tuple (or None)."""

    def __init__(self, url: str) -> None:
        parsed = make_url(url)
        self._sqlite: sqlite3.Connection | None = None
        self._sqlite_path: str | None = None
        self._postgres: _Connections | None = None
        self._dialect: Dialect
        if is_sqlite(url):
            if not parsed.database or parsed.database == ":memory:":
                raise ValueError("point reads need an SQLite file: an in-memory database lives in one connection")
            self._sqlite_path = parsed.database
            self._dialect = SQLiteDialect_pysqlite(paramstyle="qmark")
        else:
            self._postgres = _Connections(
                parsed.set(drivername="postgresql").render_as_string(hide_password=False), POSTGRES_CONNECTIONS
            )
            self._dialect = PGDialect_asyncpg(paramstyle="numeric_dollar")  # type: ignore[no-untyped-call]
        self._compiled: dict[Select[*tuple[Any, ...]], _Compiled] = {}
        self._unsent: dict[tuple[str, tuple[Any, ...]], asyncio.Future[Sequence[Any] | None]] = {}
        self._sending: set[asyncio.Task[None]] = set()  # the event loop keeps only weak references to tasks

    async def one(self, statement: Select[*Columns], parameters: dict[str, Any]) -> tuple[*Columns] | None:
        """The first row of a lookup by key; build `statement` once with bind parameters, pass their values."""
        compiled = self._compiled.get(statement)
        if compiled is None:
            compiled = self._compiled[statement] = self._compile(statement)
        values = tuple(
            convert(parameters[name]) if convert else parameters[name]
            for name, convert in zip(compiled.parameters, compiled.binds, strict=True)
        )
        found: Sequence[Any] | None
        if self._sqlite_path is not None:
            found = self._sqlite_connection().execute(compiled.sql, values).fetchone()
        else:
            # Shielded: a caller that goes away does not cancel the read others share.
            found = await asyncio.shield(self._postgres_read(compiled.sql, values))
        if found is None:
            return None
        return cast(
            "tuple[*Columns]",
            tuple(convert(value) if convert else value for value, convert in zip(found, compiled.results, strict=True)),
        )

    async def close(self) -> None:
        """Closes the driver's connections."""
        if self._sqlite is not None:
            self._sqlite.close()
            self._sqlite = None
        if self._postgres is not None:
            if self._sending:
                await asyncio.wait(self._sending)
            await self._postgres.close()

    def _postgres_read(self, sql: str, values: tuple[Any, ...]) -> asyncio.Future[Sequence[Any] | None]:
        key = (sql, values)
        read = self._unsent.get(key)
        if read is None:
            loop = asyncio.get_running_loop()
            if not self._unsent:
                loop.call_soon(self._send_unsent)
            read = self._unsent[key] = loop.create_future()
        return read

    def _send_unsent(self) -> None:
        unsent, self._unsent = self._unsent, {}
        for (sql, values), read in unsent.items():
            sending = asyncio.get_running_loop().create_task(self._fetch_into(read, sql, values))
            self._sending.add(sending)
            sending.add_done_callback(self._sending.discard)

    async def _fetch_into(self, read: asyncio.Future[Sequence[Any] | None], sql: str, values: tuple[Any, ...]) -> None:
        try:
            assert self._postgres is not None
            read.set_result(await self._postgres.fetchrow(sql, values))
        except Exception as error:  # every caller of the shared read gets the driver's error
            read.set_exception(error)

    def _sqlite_connection(self) -> sqlite3.Connection:
        if self._sqlite is None:
            assert self._sqlite_path is not None
            # Autocommit: each lookup reads the latest committed WAL snapshot; used only from the event
            # loop's thread, one statement at a time.
            self._sqlite = sqlite3.connect(self._sqlite_path, isolation_level=None, check_same_thread=False, timeout=30)
            self._sqlite.execute("PRAGMA query_only=ON")
        return self._sqlite

    def _compile(self, statement: Select[*tuple[Any, ...]]) -> _Compiled:
        compiled = statement.compile(dialect=self._dialect)
        names, binds = bind_conversions(compiled, self._dialect)
        return _Compiled(
            sql=str(compiled),
            parameters=names,
            binds=binds,
            results=tuple(
                column.type.dialect_impl(self._dialect).result_processor(self._dialect, None)
                for column in statement.selected_columns
            ),
        )
