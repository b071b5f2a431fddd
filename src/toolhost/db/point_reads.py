"""Point reads: one row by its key, through the shortest path each database offers.

The hottest reads of the call path (the balance of get_credit_balance) are a single indexed row. Through an
async session they cost a transaction and several thread hops (aiosqlite) or round trips (BEGIN/COMMIT on
asyncpg); here, on SQLite, a query_only connection of the sync driver answers on the event loop itself
(microseconds for an indexed row, never waiting on the writer under WAL), and on PostgreSQL an autocommit
connection sends the one statement. Only single-row lookups by key belong here: anything that scans would
block the event loop on SQLite.
"""

from __future__ import annotations

from typing import Any, TypeVarTuple

from sqlalchemy import Row, Select, create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import StaticPool

from toolhost.db.session import is_sqlite

Columns = TypeVarTuple("Columns")


class PointReader:
    """Runs one key lookup and returns its row (or None)."""

    def __init__(self, url: str, engine: AsyncEngine) -> None:
        self._engine = engine
        self._sqlite: Engine | None = _sqlite_reader(url) if is_sqlite(url) else None

    async def one(self, statement: Select[*Columns]) -> Row[*Columns] | None:
        """The first row of a lookup by key."""
        if self._sqlite is not None:
            with self._sqlite.connect() as connection:
                return connection.execute(statement).first()
        async with self._engine.connect() as connection:
            autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
            return (await autocommit.execute(statement)).first()

    def close(self) -> None:
        """Closes the SQLite connection."""
        if self._sqlite is not None:
            self._sqlite.dispose()


def _sqlite_reader(url: str) -> Engine:
    # One connection, used only from the event loop's thread, one statement at a time (nothing awaits
    # while it is checked out), in autocommit: each lookup reads the latest committed WAL snapshot.
    engine = create_engine(
        make_url(url).set(drivername="sqlite"),
        poolclass=StaticPool,
        connect_args={"check_same_thread": False, "isolation_level": None, "timeout": 30},
    )

    @event.listens_for(engine, "connect")
    def configure(connection: Any, _record: Any) -> None:
        cursor = connection.cursor()
        cursor.execute("PRAGMA query_only=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    return engine
