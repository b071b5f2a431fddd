"""What a tool handler sees: the session of its transaction, who is calling, the project, the settings."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from toolhost.platform import credits
from toolhost.platform.results import ServerFailed

if TYPE_CHECKING:
    from toolhost.config import Settings
    from toolhost.platform.models import Project


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
    """Handed to every handler by execute(); tools never see HTTP objects."""

    tool_name: str
    session: AsyncSession
    principal: Principal
    project: Project | None
    accessible_project_ids: list[uuid.UUID]
    settings: Settings
    request_id: str
    session_factory: async_sessionmaker[AsyncSession]
    waits: bool = False
    credits_debited: int = 0

    @property
    def project_id(self) -> uuid.UUID:
        """The resolved project's id; only tools whose mode always resolves one may ask."""
        if self.project is None:
            raise ServerFailed("this tool resolved no project")
        return self.project.id

    async def charge(self, amount: int) -> None:
        """Debits credits the handler learns it owes only while running (e.g. per post it schedules).

        The debit is in the call's transaction, so a failure rolls it back, and it counts in the
        call's usage record like the declared cost.
        """
        await credits.debit(
            self.session,
            account_id=self.principal.account_id,
            amount=amount,
            tool_name=self.tool_name,
            reference=self.request_id,
        )
        self.credits_debited += amount

    async def refund(self, amount: int) -> None:
        """Gives back part of this call's debit (e.g. a repeat that turns out to be free)."""
        amount = min(amount, self.credits_debited)
        await credits.refund(
            self.session,
            account_id=self.principal.account_id,
            amount=amount,
            tool_name=self.tool_name,
            reference=self.request_id,
        )
        self.credits_debited -= amount

    async def commit_before_waiting(self) -> None:
        """Commits the enqueue and the debit so far; only tools declared `waits=True` may."""
        if not self.waits:
            raise ServerFailed("only waiting tools commit before they finish")
        await self.session.commit()

    @asynccontextmanager
    async def fresh_transaction(self) -> AsyncIterator[AsyncSession]:
        """A short transaction of its own, for waiting tools' polls and stage-by-stage progress."""
        async with self.session_factory() as session, session.begin():
            yield session
