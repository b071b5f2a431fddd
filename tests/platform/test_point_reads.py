"""Point reads on PostgreSQL: identical lookups of one loop turn share a round trip, and none reads early."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from sqlalchemy import update

from tests.conftest import settings_for_test
from toolhost.db.point_reads import PointReader
from toolhost.db.session import create_engine, create_session_factory
from toolhost.domains.account.service import BALANCE
from toolhost.platform import accounts
from toolhost.platform.models import Account

pytestmark = pytest.mark.postgres


class CountingPool:
    """Counts the round trips the point reader's asyncpg pool makes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.round_trips = 0
        fetchrow = asyncpg.Pool.fetchrow

        async def counted(pool: asyncpg.Pool, *arguments: Any, **options: Any) -> Any:
            self.round_trips += 1
            return await fetchrow(pool, *arguments, **options)

        monkeypatch.setattr(asyncpg.Pool, "fetchrow", counted)


async def test_parallel_reads_of_one_row_share_a_round_trip_and_a_later_read_sees_a_committed_write(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for_test(database_url=postgres_url)
    engine = create_engine(postgres_url)
    session_factory = create_session_factory(engine, engine)
    async with session_factory() as session, session.begin():
        account = await accounts.create_account(session, name="reads", tier="agency", settings=settings)
    reader = PointReader(postgres_url)
    pool = CountingPool(monkeypatch)
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
