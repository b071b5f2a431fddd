"""Point reads on PostgreSQL: identical lookups of one loop turn share a round trip, and none reads early."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from sqlalchemy import Float, bindparam, func, select, update

from tests.conftest import settings_for_test
from toolhost.db.point_reads import POSTGRES_CONNECTIONS, PointReader
from toolhost.db.session import create_engine, create_session_factory
from toolhost.domains.account.service import BALANCE
from toolhost.platform import accounts
from toolhost.platform.models import Account

pytestmark = pytest.mark.postgres


class CountingReads:
    """Counts the round trips the point reader's asyncpg connections make, and how many run at once."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.round_trips = 0
        self.running = 0
        self.most_at_once = 0
        fetchrow = asyncpg.Connection.fetchrow

        async def counted(connection: asyncpg.Connection, *arguments: Any, **options: Any) -> Any:
            self.round_trips += 1
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
            try:
                return await fetchrow(connection, *arguments, **options)
            finally:
                self.running -= 1

        monkeypatch.setattr(asyncpg.Connection, "fetchrow", counted)


async def new_account(postgres_url: str, name: str) -> Account:
    settings = settings_for_test(database_url=postgres_url)
    engine = create_engine(postgres_url)
    try:
        async with create_session_factory(engine, engine)() as session, session.begin():
            return await accounts.create_account(session, name=name, tier="agency", settings=settings)
    finally:
        await engine.dispose()


async def test_parallel_reads_of_one_row_share_a_round_trip_and_a_later_read_sees_a_committed_write(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for_test(database_url=postgres_url)
    engine = create_engine(postgres_url)
    session_factory = create_session_factory(engine, engine)
    async with session_factory() as session, session.begin():
        account = await accounts.create_account(session, name="reads", tier="agency", settings=settings)
    reader = PointReader(postgres_url)
    pool = CountingReads(monkeypatch)
    try:
        rows = await asyncio.gather(*(reader.one(BALANCE, {"account_id": account.id}) for _ in range(20)))
        assert {row[1] for row in rows if row is not None} == {account.credit_balance}
        assert len(rows) == 20 and pool.round_trips == 1

        sent = asyncio.create_task(reader.one(BALANCE, {"account_id": account.id}))
        while pool.round_trips < 2:  # that read is on its way
            await asyncio.sleep(0)
        async with session_factory() as session, session.begin():
            await session.execute(update(Account).where(Account.id == account.id).values(credit_balance=7))
        later = await reader.one(BALANCE, {"account_id": account.id})
        await sent
        assert later is not None and later[1] == 7
        assert pool.round_trips == 3
    finally:
        await reader.close()
        await engine.dispose()


async def test_more_reads_than_connections_wait_their_turn_and_all_answer(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = [await new_account(postgres_url, f"reads {index}") for index in range(POSTGRES_CONNECTIONS * 3)]
    reader = PointReader(postgres_url)
    reads = CountingReads(monkeypatch)
    try:
        rows = await asyncio.gather(*(reader.one(BALANCE, {"account_id": account.id}) for account in created))
        assert [row[1] for row in rows if row is not None] == [account.credit_balance for account in created]
        assert reads.round_trips == len(created) and reads.most_at_once <= POSTGRES_CONNECTIONS
    finally:
        await reader.close()


async def test_reads_after_the_server_ended_their_connection_all_answer(postgres_url: str) -> None:
    # asyncpg's pool failed the first read after it: the ended connection is often noticed only by using it.
    account = await new_account(postgres_url, "reads")
    admin = await asyncpg.connect(postgres_url.replace("+asyncpg", ""))
    try:
        for _ in range(5):
            reader = PointReader(postgres_url)
            try:
                assert await reader.one(BALANCE, {"account_id": account.id}) is not None
                ended = await admin.fetchval(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
                assert ended == 1
                rows = [await reader.one(BALANCE, {"account_id": account.id}) for _ in range(3)]
                assert [row[1] for row in rows if row is not None] == [account.credit_balance] * 3
            finally:
                await reader.close()
    finally:
        await admin.close()


async def test_a_statement_that_fails_is_not_read_again(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    reader = PointReader(postgres_url)
    reads = CountingReads(monkeypatch)
    try:
        with pytest.raises(asyncpg.PostgresError):
            await reader.one(select(func.sqrt(bindparam("value", type_=Float))), {"value": -1.0})
        assert reads.round_trips == 1
    finally:
        await reader.close()
