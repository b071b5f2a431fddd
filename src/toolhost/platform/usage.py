"""Usage records and key last-use times written in batches, off the request path.

A call that paid (a hold or a debit) writes its usage record with its settlement, in the same commit.
Every other call's record waits here and is written within `interval` seconds, many rows at once, and on
shutdown; so a free call costs no write of its own. On PostgreSQL the rows go in by one binary COPY on the
driver's connection (atomic on its own, outside any transaction): at a few thousand rows a second,
SQLAlchemy's per-row parameter processing for an executemany cost the serving process more than every
other part of the flush, and the server parses no INSERT per row. On SQLite the same reason puts them in on
the writer's sqlite3 connection, inside the writer lane's transaction, with the columns' bind conversions
compiled once, as INSERTs of up to `ROWS_PER_INSERT` rows each: an executemany steps once per row, and the
driver lets go of the interpreter's lock at every step and takes it back to bind the next row, so a flush of
a second's calls took the lock from the event loop thousands of times (measured: the serving thread lost a
fifth of its calls a second to it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any, cast

import uuid_utils.compat
from sqlalchemy import Table, insert, update
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from toolhost.db.driver_statements import bind_conversions
from toolhost.platform.models import ApiKey, UsageRecord

logger = logging.getLogger(__name__)
USAGE_RECORDS = cast(Table, UsageRecord.__table__)
USAGE_COLUMNS = tuple(column.name for column in USAGE_RECORDS.columns)
# Rows x columns stays far under SQLite's default limit of 32,766 bound values (3.32+; RETURNING needs 3.35).
ROWS_PER_INSERT = 500


class UsageRecorder:
    """Buffers usage rows and key last-use times, and writes them within `interval` seconds."""

    def __init__(
        self, session_factory: async_sessionmaker[AsyncSession], engine: AsyncEngine, *, interval: float = 1.0
    ) -> None:
        self._session_factory = session_factory
        self._engine = engine
        self._interval = interval
        self._records: list[dict[str, Any]] = []
        self._keys_used: dict[uuid.UUID, datetime] = {}
        self._timer: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._sqlite_insert: _DriverInsert | None = None

    def add(self, record: dict[str, Any]) -> None:
        """Queues one usage row (the columns of UsageRecord)."""
        self._records.append(record)
        self._schedule()

    def key_used(self, key_id: uuid.UUID, moment: datetime) -> None:
        """Queues an API key's last-use time."""
        self._keys_used[key_id] = moment
        self._schedule()

    def _schedule(self) -> None:
        if self._timer is None or self._timer.done():
            self._timer = asyncio.get_running_loop().create_task(self._flush_later())

    async def _flush_later(self) -> None:
        await asyncio.sleep(self._interval)
        # This timer is done waiting: a flush that fails schedules the next one.
        self._timer = None
        await self.flush()

    async def flush(self) -> None:
        """Writes everything queued so far; on failure the rows wait for the next flush."""
        async with self._lock:
            records, self._records = self._records, []
            keys_used, self._keys_used = self._keys_used, {}
            if records:
                try:
                    await self._write_records(records)
                except Exception:
                    logger.exception("could not write %d usage record(s); keeping them for the next one", len(records))
                    self._records[:0] = records
                    self._schedule()
            if keys_used:
                try:
                    async with self._session_factory() as session, session.begin():
                        for key_id, moment in keys_used.items():
                            await session.execute(update(ApiKey).where(ApiKey.id == key_id).values(last_used_at=moment))
                except Exception:
                    logger.exception("could not write the last use of %d key(s); keeping them", len(keys_used))
                    for key_id, moment in keys_used.items():
                        self._keys_used.setdefault(key_id, moment)
                    self._schedule()

    async def _write_records(self, records: list[dict[str, Any]]) -> None:
        records = _with_ids(records)
        if self._engine.dialect.name == "postgresql":
            async with self._engine.connect() as connection:
                driver = (await connection.get_raw_connection()).driver_connection
                assert driver is not None
                await driver.copy_records_to_table(
                    USAGE_RECORDS.name,
                    records=[tuple(record[name] for name in USAGE_COLUMNS) for record in records],
                    columns=USAGE_COLUMNS,
                )
            return
        if self._sqlite_insert is None:
            self._sqlite_insert = _DriverInsert(self._engine.dialect)
        async with self._engine.begin() as connection:
            driver = (await connection.get_raw_connection()).driver_connection
            assert driver is not None
            for sql, values in self._sqlite_insert.statements(records):
                await driver.execute(sql, values)

    async def close(self) -> None:
        """Writes what is left (shutdown)."""
        timer, self._timer = self._timer, None
        if timer is not None and not timer.done():
            timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await timer
        await self.flush()


class _DriverInsert:
    """The usage table's INSERT compiled once for a dialect, and many rows as one statement the driver takes."""

    def __init__(self, dialect: Dialect) -> None:
        compiled = insert(USAGE_RECORDS).compile(dialect=dialect, column_keys=list(USAGE_COLUMNS))
        self._head, _, self._row = str(compiled).partition(" VALUES ")
        self._names, self._binds = bind_conversions(compiled, dialect)

    def statements(self, records: list[dict[str, Any]]) -> Iterator[tuple[str, tuple[Any, ...]]]:
        """INSERTs of up to ROWS_PER_INSERT rows each, with their values in order."""
        for start in range(0, len(records), ROWS_PER_INSERT):
            chunk = records[start : start + ROWS_PER_INSERT]
            values = tuple(
                bind(record[name]) if bind is not None else record[name]
                for record in chunk
                for name, bind in zip(self._names, self._binds, strict=True)
            )
            yield f"{self._head} VALUES {', '.join([self._row] * len(chunk))}", values


def _with_ids(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The queued rows with their primary keys: UUIDv7s, ordered by time, so each flush appends to the key's
    index where random UUIDs rewrote leaf pages all over it (and uuid4 made a system call per row)."""
    return [{**record, "id": uuid_utils.compat.uuid7()} for record in records]
