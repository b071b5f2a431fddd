"""The credit ledger: holds and their settlement, guarded debits, refunds, grants and the monthly allocation.

The balance lives on the account row and changes only through these functions, each in the caller's
transaction and each writing a ledger entry; the guard in the UPDATE keeps it from going below zero
however many debits race.

A call that costs credits pays through a hold: `place_hold` takes the declared cost in a short
transaction of its own before the handler runs (so no row lock on the account outlives it), and
`settle_hold` ends it exactly once, keeping what the call owed and returning the rest. A hold whose
process died before settling is returned in full by the worker once it expires (`release_expired_holds`);
a living process keeps its holds from expiring (`HoldKeeper`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import case, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from toolhost.platform.models import Account, CreditEntry, CreditHold
from toolhost.platform.results import BillingFailed, NotFound

if TYPE_CHECKING:
    from toolhost.platform.jobs import WorkerContext

logger = logging.getLogger(__name__)


def period_of(moment: datetime) -> str:
    """The billing period (calendar month, UTC) of a moment: YYYY-MM."""
    moment = moment.astimezone(UTC)
    return f"{moment.year:04d}-{moment.month:02d}"  # a third of strftime's cost, on every balance read


def period_end(period: str) -> datetime:
    """00:00 UTC on the first day of the month after `period`."""
    year, month = (int(part) for part in period.split("-"))
    return datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)


async def roll_period(session: AsyncSession, *, account_id: uuid.UUID, tier: str, allocation: int) -> None:
    """Credits the month's allocation once per period; the unused rest of the last one does not roll over."""
    if tier == "trial":
        return
    current = period_of(datetime.now(UTC))
    result = await session.execute(
        update(Account)
        .where(Account.id == account_id, Account.credit_period != current)
        .values(credit_balance=allocation, period_spent=0, credit_period=current)
        .returning(Account.id)
    )
    if result.first() is not None:
        session.add(CreditEntry(account_id=account_id, period=current, kind="allocation", amount=allocation))


async def debit(
    session: AsyncSession,
    *,
    account_id: uuid.UUID,
    amount: int,
    tool_name: str,
    reference: str,
    kind: str = "debit",
) -> None:
    """Takes `amount` credits, or raises billing_error leaving the balance as it was."""
    if amount <= 0:
        return
    period = await _take(session, account_id=account_id, amount=amount)
    session.add(
        CreditEntry(
            account_id=account_id,
            period=period,
            kind=kind,
            amount=-amount,
            tool_name=tool_name,
            reference=reference,
        )
    )


async def _take(session: AsyncSession, *, account_id: uuid.UUID, amount: int) -> str:
    """The guarded debit of the account row (never below zero, never past the spending cap); returns the row's
    credit period, or raises billing_error saying which guard refused."""
    result = await session.execute(
        update(Account)
        .where(
            Account.id == account_id,
            Account.credit_balance >= amount,
            (Account.spending_cap.is_(None)) | (Account.period_spent + amount <= Account.spending_cap),
        )
        .values(credit_balance=Account.credit_balance - amount, period_spent=Account.period_spent + amount)
        .returning(Account.credit_period)
    )
    row = result.first()
    if row is not None:
        return str(row.credit_period)
    account = await session.get(Account, account_id)
    if account is None:
        raise NotFound("account not found")
    if account.spending_cap is not None and account.period_spent + amount > account.spending_cap:
        raise BillingFailed(
            f"the account's monthly spending cap of {account.spending_cap} credits would be exceeded",
            recover_with="raise the spending cap or wait for the next period",
            balance=account.credit_balance,
            required_credits=amount,
        )
    raise BillingFailed(
        f"not enough credits: {amount} required, {account.credit_balance} available",
        recover_with="call get_credit_balance; an operator can grant credits",
        balance=account.credit_balance,
        required_credits=amount,
    )


async def refund(
    session: AsyncSession,
    *,
    account_id: uuid.UUID,
    amount: int,
    tool_name: str,
    reference: str,
    kind: str = "refund",
) -> None:
    """Gives back credits debited earlier (a post that failed, a cancelled job)."""
    if amount <= 0:
        return
    result = await session.execute(
        update(Account)
        .where(Account.id == account_id)
        .values(
            credit_balance=Account.credit_balance + amount,
            period_spent=case((Account.period_spent >= amount, Account.period_spent - amount), else_=0),
        )
        .returning(Account.credit_period)
    )
    row = result.one()
    session.add(
        CreditEntry(
            account_id=account_id,
            period=row.credit_period,
            kind=kind,
            amount=amount,
            tool_name=tool_name,
            reference=reference,
        )
    )


async def grant(session: AsyncSession, *, account_id: uuid.UUID, amount: int) -> int:
    """An operator's grant; returns the new balance."""
    if amount <= 0:
        raise ValueError("a grant is a positive number of credits")
    result = await session.execute(
        update(Account)
        .where(Account.id == account_id)
        .values(credit_balance=Account.credit_balance + amount)
        .returning(Account.credit_balance, Account.credit_period)
    )
    row = result.first()
    if row is None:
        raise NotFound(f"No account found with ID {account_id}")
    session.add(CreditEntry(account_id=account_id, period=row.credit_period, kind="grant", amount=amount))
    return int(row.credit_balance)


async def net_debited(session: AsyncSession, *, account_id: uuid.UUID, reference: str) -> int:
    """Credits still debited under a reference (debits minus refunds): what a later refund may return."""
    total = await session.scalar(
        select(func.coalesce(func.sum(CreditEntry.amount), 0)).where(
            CreditEntry.account_id == account_id, CreditEntry.reference == reference
        )
    )
    return -int(total or 0)


async def place_hold(
    session: AsyncSession,
    *,
    account_id: uuid.UUID,
    period: str,
    amount: int,
    tool_name: str,
    reference: str,
    run_id: str | None,
    lifetime: timedelta,
) -> uuid.UUID:
    """Sets `amount` credits aside for a call (a hold row, its ledger row in the account's current `period`,
    and a guarded debit); raises billing_error if short, and the caller's rollback takes the rows back.

    The rows are written before the debit: the debit locks the account row until the commit, and every other
    call of the account waits on that lock, so nothing but the commit may come after it.
    """
    hold = CreditHold(
        id=uuid.uuid4(),
        account_id=account_id,
        tool_name=tool_name,
        reference=reference,
        run_id=run_id,
        amount=amount,
        expires_at=datetime.now(UTC) + lifetime,
    )
    session.add(hold)
    session.add(
        CreditEntry(
            account_id=account_id,
            period=period,
            kind="hold",
            amount=-amount,
            tool_name=tool_name,
            reference=reference,
        )
    )
    await session.flush()
    await _take(session, account_id=account_id, amount=amount)
    return hold.id


async def settle_hold(session: AsyncSession, *, hold_id: uuid.UUID, charged: int, outcome: str) -> int | None:
    """Ends a hold once: keeps `charged` of it (at most its amount) and returns the rest.

    Returns the credits returned, or None when the hold was already settled (expired and released by the
    worker), in which case nothing changes here.
    """
    now = datetime.now(UTC)
    row = (
        await session.execute(
            update(CreditHold)
            .where(CreditHold.id == hold_id, CreditHold.settled_at.is_(None))
            .values(
                settled_at=now,
                outcome=outcome,
                charged=case((CreditHold.amount < charged, CreditHold.amount), else_=max(0, charged)),
            )
            .returning(CreditHold.account_id, CreditHold.amount, CreditHold.tool_name, CreditHold.reference)
            .execution_options(synchronize_session=False)
        )
    ).first()
    if row is None:
        return None
    returned = max(0, int(row.amount) - max(0, charged))
    if returned > 0:
        await refund(
            session,
            account_id=row.account_id,
            amount=returned,
            tool_name=row.tool_name,
            reference=row.reference,
            kind="settle",
        )
    else:
        # Kept whole: the account row is not touched, but the ledger still shows the hold was settled.
        session.add(
            CreditEntry(
                account_id=row.account_id,
                period=period_of(now),
                kind="settle",
                amount=0,
                tool_name=row.tool_name,
                reference=row.reference,
            )
        )
    return returned


async def release_expired_holds(context: WorkerContext) -> int:
    """The poller that returns in full every hold whose call's process died before settling it (expired, open)."""
    async with context.session_factory() as session, session.begin():
        expired = list(
            await session.scalars(
                select(CreditHold.id)
                .where(CreditHold.settled_at.is_(None), CreditHold.expires_at < datetime.now(UTC))
                .limit(100)
            )
        )
        released = 0
        for hold_id in expired:
            if await settle_hold(session, hold_id=hold_id, charged=0, outcome="expired") is not None:
                released += 1
    if released:
        logger.warning("released %d credit hold(s) left by a process that stopped mid-call", released)
    return released


@dataclass(slots=True)
class HoldKeeper:
    """Keeps this process's live holds from expiring while their calls run (one loop for all of them)."""

    session_factory: async_sessionmaker[AsyncSession]
    lifetime: timedelta
    live: set[uuid.UUID] = field(default_factory=set)
    task: asyncio.Task[None] | None = None

    def track(self, hold_id: uuid.UUID) -> None:
        """Starts extending a hold's expiry until `forget`."""
        self.live.add(hold_id)
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._extend_while_live())

    def forget(self, hold_id: uuid.UUID) -> None:
        """Stops extending a hold (it was settled)."""
        self.live.discard(hold_id)

    async def close(self) -> None:
        """Stops the extension loop."""
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    async def _extend_while_live(self) -> None:
        interval = self.lifetime.total_seconds() / 3
        while self.live:
            await asyncio.sleep(interval)
            live = list(self.live)
            if not live:
                return
            try:
                async with self.session_factory() as session, session.begin():
                    await session.execute(
                        update(CreditHold)
                        .where(CreditHold.id.in_(live), CreditHold.settled_at.is_(None))
                        .values(expires_at=datetime.now(UTC) + self.lifetime)
                    )
            except Exception:
                # A database blip: the next pass tries again well before the holds expire.
                logger.exception("could not extend %d live credit hold(s)", len(live))
