"""Credit balance, per-run budget and usage of the calling account."""

from __future__ import annotations

import functools
import uuid
from datetime import UTC, datetime

from sqlalchemy import bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from toolhost.config import Settings
from toolhost.db.point_reads import PointReader
from toolhost.domains.account.schemas import (
    GetBudgetStatusOut,
    GetCreditBalanceOut,
    GetMcpUsageOut,
    ToolUsage,
)
from toolhost.platform import credits
from toolhost.platform.context import Principal
from toolhost.platform.dates import iso
from toolhost.platform.execution import run_usage
from toolhost.platform.models import Account, UsageRecord
from toolhost.platform.results import NotFound

# Built once: building a statement costs more than running it on the point-read path.
BALANCE = select(
    Account.tier, Account.credit_balance, Account.period_spent, Account.credit_period, Account.trial_ends_at
).where(Account.id == bindparam("account_id"))


@functools.cache  # one entry a month: formatting the date cost more than reading the balance
def _period_end_text(period: str) -> str:
    return iso(credits.period_end(period))


async def get_balance(
    *,
    point_reads: PointReader,
    writes: async_sessionmaker[AsyncSession],
    account_id: uuid.UUID,
    settings: Settings,
) -> GetCreditBalanceOut:
    """The balance after this period's allocation, what was spent, and when the period ends.

    One point read; the month's first look credits the allocation in a short transaction of its own.
    """
    account = await point_reads.one(BALANCE, {"account_id": account_id})
    if account is None:
        raise NotFound(f"No account found with ID {account_id}")
    tier, balance, spent, period, trial_ends_at = account
    if tier != "trial" and period != credits.period_of(datetime.now(UTC)):
        async with writes() as session, session.begin():
            await credits.roll_period(
                session, account_id=account_id, tier=tier, allocation=settings.credits.allocations[tier]
            )
            tier, balance, spent, period, trial_ends_at = (
                await session.execute(BALANCE, {"account_id": account_id})
            ).one()
    return GetCreditBalanceOut(
        balance=balance,
        monthlyUsed=spent,
        monthlyLimit=settings.credits.allocations[tier],
        plan=tier,
        periodEndsAt=_period_end_text(period),
        trialEndsAt=iso(trial_ends_at) if trial_ends_at else None,
    )


async def get_budget(session: AsyncSession, *, principal: Principal, settings: Settings) -> GetBudgetStatusOut:
    """What the caller's current run has spent against the per-run budgets."""
    used_credits, used_assets = await run_usage(session, principal)
    max_credits = settings.credits.max_credits_per_run
    max_assets = settings.credits.max_assets_per_run
    max_credits = max_credits if max_credits and max_credits > 0 else None
    max_assets = max_assets if max_assets and max_assets > 0 else None
    return GetBudgetStatusOut(
        creditsUsedThisRun=used_credits,
        maxCreditsPerRun=max_credits,
        remaining=max(max_credits - used_credits, 0) if max_credits is not None else None,
        assetsGeneratedThisRun=used_assets,
        maxAssetsPerRun=max_assets,
        remainingAssets=max(max_assets - used_assets, 0) if max_assets is not None else None,
    )


async def get_usage(session: AsyncSession, *, account_id: uuid.UUID) -> GetMcpUsageOut:
    """Calls and credits per tool in the current period, every transport counted."""
    now = datetime.now(UTC)
    period_start = datetime(now.year, now.month, 1, tzinfo=UTC)
    rows = (
        await session.execute(
            select(UsageRecord.tool_name, func.count(), func.coalesce(func.sum(UsageRecord.credits), 0))
            .where(UsageRecord.account_id == account_id, UsageRecord.created_at >= period_start)
            .group_by(UsageRecord.tool_name)
        )
    ).all()
    tools = sorted(
        (ToolUsage(tool_name=name, call_count=count, credits_total=int(total)) for name, count, total in rows),
        key=lambda usage: (-usage.call_count, usage.tool_name),
    )
    return GetMcpUsageOut(
        tools=tools,
        totalCalls=sum(usage.call_count for usage in tools),
        totalCredits=sum(usage.credits_total for usage in tools),
    )
