"""What a tool handler sees: the session of its transaction, who is calling, the project, the settings, the tools."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from toolhost.db.session import end_unit_of_work
from toolhost.platform import credits
from toolhost.platform.results import ServerFailed

if TYPE_CHECKING:
    from toolhost.config import Settings
    from toolhost.db.point_reads import PointReader
    from toolhost.platform.models import Project
    from toolhost.platform.registry import Registry
    from toolhost.platform.usage import UsageRecorder


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller: the account, the credential, its effective scopes and project binding."""

    account_id: uuid.UUID
    tier: str
    credential_id: uuid.UUID | None
    credential_name: str
    scopes: frozenset[str]
    project_id: uuid.UUID | None
    run_id: str | None = None
    client_ip: str | None = None


@dataclass(slots=True)
class ToolContext:
    """Handed to every handler by execute(); tools never see HTTP objects.

    `session` is the handler's current unit of work, opened on first use. execute() commits the last unit
    together with the call's settlement; a handler that reaches outside (a fetch, a text provider, a
    connector) or does heavy work first ends its unit with `commit()`, so no transaction is held while it
    waits. `registry` is the one this call runs in, for tools that read or call other tools.
    """

    tool_name: str
    principal: Principal
    settings: Settings
    request_id: str
    session_factory: async_sessionmaker[AsyncSession]
    usage: UsageRecorder
    point_reads: PointReader
    registry: Registry
    project: Project | None = None
    accessible_project_ids: list[uuid.UUID] = field(default_factory=list)
    credits_debited: int = 0
    credits_debited_beyond_hold: int = 0
    opened_session: AsyncSession | None = None

    @property
    def session(self) -> AsyncSession:
        """The current unit of work's session (a call that never touches the database opens none)."""
        if self.opened_session is None:
            self.opened_session = self.session_factory()
        return self.opened_session

    @property
    def project_id(self) -> uuid.UUID:
        """The resolved project's id; only tools whose mode always resolves one may ask."""
        if self.project is None:
            raise ServerFailed("this tool resolved no project")
        return self.project.id

    async def charge(self, amount: int) -> None:
        """Debits credits the handler learns it owes only while running (e.g. per post it schedules).

        The debit is in the current unit of work, so a failure before that unit commits rolls it back,
        and it counts in the call's usage record like the declared cost.
        """
        await credits.debit(
            self.session,
            account_id=self.principal.account_id,
            amount=amount,
            tool_name=self.tool_name,
            reference=self.request_id,
        )
        self.credits_debited += max(0, amount)
        self.credits_debited_beyond_hold += max(0, amount)

    async def refund(self, amount: int) -> None:
        """Gives back part of what this call owes (e.g. a repeat that turns out to be free); paid back at settlement."""
        self.credits_debited -= max(0, min(amount, self.credits_debited))

    async def commit(self) -> None:
        """Ends the current unit of work: commits what the handler wrote so far and returns the connection.

        Call it before outside work (fetches, providers, connectors, rendering); the next use of
        `session` starts a new unit.
        """
        if self.opened_session is not None:
            await end_unit_of_work(self.opened_session)

    async def flush_usage(self) -> None:
        """Writes the usage records this process still queues, so a read of usage sees every call answered."""
        await self.usage.flush()

    @asynccontextmanager
    async def fresh_transaction(self) -> AsyncIterator[AsyncSession]:
        """A short transaction of its own, for waiting tools' polls and stage-by-stage progress."""
        async with self.session_factory() as session, session.begin():
            yield session
