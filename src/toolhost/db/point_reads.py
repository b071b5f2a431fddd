"""Point reads: one row by its key, through the shortest path each database offers.

The hottest reads of the call path (the balance of get_credit_balance) are a single indexed row. Through an
async session they cost a transaction and several thread hops (aiosqlite) or round trips (BEGIN/COMMIT on
asyncpg). Here, on SQLite, the statement is compiled once and run by the sqlite3 driver itself on a
query_only connection, on the event loop (microseconds for an indexed row, never waiting on the writer under
WAL), with the columns' own bind and result conversions; on PostgreSQL an autocommit connection sends the one
statement. Only single-row lookups by key belong here: anything that scans would block the event loop on
SQLite.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVarTuple, cast

from sqlalchemy import Select
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from toolhost.db.session import is_sqlite

Columns = TypeVarTuple("Columns")
Conversion = Callable[[Any], Any] | None


@dataclass(frozen=True, slots=True)
class _Compiled:
    """A statement compiled once for sqlite3: its SQL, parameter order and column conversions."""

    sql: str
    parameters: tuple[str, ...]
    binds: tuple[Conversion, ...]
    results: tuple[Conversion, ...]


class PointReader:
    """Runs one key lookup and returns its row as a tuple (or None)."""

    def __init__(self, url: str, engine: AsyncEngine) -> None:
        self._engine = engine
        self._sqlite: sqlite3.Connection | None = None
        database = make_url(url).database if is_sqlite(url) else None
        # An in-memory database lives in its engine's connection only: it is read there.
        self._sqlite_path = database if database and database != ":memory:" else None
        self._dialect = SQLiteDialect_pysqlite(paramstyle="qmark")
        self._compiled: dict[Select[*tuple[Any, ...]], _Compiled] = {}

    async def one(self, statement: Select[*Columns], parameters: dict[str, Any]) -> tuple[*Columns] | None:
        """The first row of a lookup by key; build `statement` once with bind parameters, pass their values."""
        if self._sqlite_path is None:
            async with self._engine.connect() as connection:
                autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
                row = (await autocommit.execute(statement, parameters)).first()
            return cast("tuple[*Columns]", tuple(row)) if row is not None else None
        compiled = self._compiled.get(statement)
        if compiled is None:
            compiled = self._compiled[statement] = self._compile(statement)
        values = tuple(
            convert(parameters[name]) if convert else parameters[name]
            for name, convert in zip(compiled.parameters, compiled.binds, strict=True)
        )
        found = self._connection().execute(compiled.sql, values).fetchone()
        if found is None:
            return None
        return cast(
            "tuple[*Columns]",
            tuple(convert(value) if convert else value for value, convert in zip(found, compiled.results, strict=True)),
        )

    def close(self) -> None:
        """Closes the SQLite connection."""
        if self._sqlite is not None:
            self._sqlite.close()
            self._sqlite = None

    def _connection(self) -> sqlite3.Connection:
        if self._sqlite is None:
            assert self._sqlite_path is not None
            # Autocommit: each lookup reads the latest committed WAL snapshot; used only from the event
            # loop's thread, one statement at a time.
            self._sqlite = sqlite3.connect(self._sqlite_path, isolation_level=None, check_same_thread=False, timeout=30)
            self._sqlite.execute("PRAGMA query_only=ON")
        return self._sqlite

    def _compile(self, statement: Select[*tuple[Any, ...]]) -> _Compiled:
        compiled = statement.compile(dialect=self._dialect)
        names = tuple(compiled.positiontup or ())
        return _Compiled(
            sql=str(compiled),
            parameters=names,
            binds=tuple(
                compiled.binds[name].type.dialect_impl(self._dialect).bind_processor(self._dialect) for name in names
            ),
            results=tuple(
                column.type.dialect_impl(self._dialect).result_processor(self._dialect, None)
                for column in statement.selected_columns
            ),
        )
