"""The credit ledger: atomic guarded debits, refunds, grants and the monthly allocation.

The balance lives on the account row and changes only through these functions, each in the caller's
transaction and each writing a ledger entry; the guard in the UPDATE keeps it from going below zero
however many debits race.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import case, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from toolhost.platform.models import Account, CreditEntry
from toolhost.platform.results import BillingFailed, NotFound


def period_of(moment: datetime) -> str:
    """The billing period (calendar month, UTC) of a moment: YYYY-MM."""
    return moment.astimezone(UTC).strftime("%Y-%m")


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
    session: AsyncSession, *, account_id: uuid.UUID, amount: int, tool_name: str, reference: str
) -> None:
    """Takes `amount` credits, or raises billing_error leaving the balance as it was."""
    if amount <= 0:
        return
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
    if row is None:
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
    session.add(
        CreditEntry(
            account_id=account_id,
            period=row.credit_period,
            kind="debit",
            amount=-amount,
            tool_name=tool_name,
            reference=reference,
        )
    )


async def refund(
    session: AsyncSession, *, account_id: uuid.UUID, amount: int, tool_name: str, reference: str
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
            kind="refund",
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
