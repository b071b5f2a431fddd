"""The account tools: credit balance, per-run budget, usage."""

from __future__ import annotations

from toolhost.domains.account import service
from toolhost.domains.account.schemas import (
    GetBudgetStatusIn,
    GetBudgetStatusOut,
    GetCreditBalanceIn,
    GetCreditBalanceOut,
    GetMcpUsageIn,
    GetMcpUsageOut,
)
from toolhost.platform.context import ToolContext
from toolhost.platform.registry import tool


@tool(module="account", scope="mcp:read", read_only=True, idempotent=True)
async def get_credit_balance(ctx: ToolContext, args: GetCreditBalanceIn) -> GetCreditBalanceOut:
    """Shows the account's credit balance, what this month used of its allocation and when it renews.

    Call it before expensive work (videos, carousels, plans) to see whether the credits suffice.
    """
    return await service.get_balance(
        point_reads=ctx.point_reads,
        writes=ctx.session_factory,
        account_id=ctx.principal.account_id,
        settings=ctx.settings,
    )


@tool(module="account", scope="mcp:read", read_only=True, idempotent=True)
async def get_budget_status(ctx: ToolContext, args: GetBudgetStatusIn) -> GetBudgetStatusOut:
    """Shows the credits and assets the current run has used against the operator's per-run budgets.

    A run is the calls sharing one X-Toolhost-Run header (or one CLI process); null limits are unlimited.
    """
    return await service.get_budget(ctx.session, principal=ctx.principal, settings=ctx.settings)


@tool(module="account", scope="mcp:read", read_only=True, idempotent=True)
async def get_mcp_usage(ctx: ToolContext, args: GetMcpUsageIn) -> GetMcpUsageOut:
    """Lists this month's tool calls and credits per tool for the account, across REST, MCP and CLI."""
    await ctx.flush_usage()
    return await service.get_usage(ctx.session, account_id=ctx.principal.account_id)
