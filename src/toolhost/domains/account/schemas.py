"""Inputs and outputs of the account tools (CATALOG.md §17)."""

from __future__ import annotations

from toolhost.platform.fields import TextFormat
from toolhost.platform.registry import ToolInput, ToolOutput


class GetCreditBalanceIn(ToolInput):
    """No arguments beyond the format."""

    response_format: TextFormat = "text"


class GetCreditBalanceOut(ToolOutput):
    """The account's credits this period."""

    balance: int
    monthlyUsed: int
    monthlyLimit: int
    plan: str
    periodEndsAt: str
    trialEndsAt: str | None = None

    def summary(self) -> str:
        trial = f"\nTrial ends: {self.trialEndsAt}" if self.trialEndsAt else ""
        return (
            f"Balance: {self.balance} credits ({self.plan} plan)\n"
            f"Used this period: {self.monthlyUsed} of {self.monthlyLimit}\nPeriod ends: {self.periodEndsAt}{trial}"
        )


class GetBudgetStatusIn(ToolInput):
    """No arguments beyond the format."""

    response_format: TextFormat = "text"


class GetBudgetStatusOut(ToolOutput):
    """The current run against the per-run budgets; null means unlimited."""

    creditsUsedThisRun: int
    maxCreditsPerRun: int | None
    remaining: int | None
    assetsGeneratedThisRun: int
    maxAssetsPerRun: int | None
    remainingAssets: int | None

    def summary(self) -> str:
        def limit(value: int | None) -> str:
            return "unlimited" if value is None else str(value)

        return (
            f"This run: {self.creditsUsedThisRun} credits of {limit(self.maxCreditsPerRun)}, "
            f"{self.assetsGeneratedThisRun} assets of {limit(self.maxAssetsPerRun)}"
        )


class GetMcpUsageIn(ToolInput):
    """No arguments beyond the format."""

    response_format: TextFormat = "text"


class ToolUsage(ToolOutput):
    """Calls and credits of one tool."""

    tool_name: str
    call_count: int
    credits_total: int


class GetMcpUsageOut(ToolOutput):
    """Usage of the account this period."""

    tools: list[ToolUsage]
    totalCalls: int
    totalCredits: int

    def summary(self) -> str:
        lines = [f"{self.totalCalls} calls, {self.totalCredits} credits this period"]
        lines += [
            f"- {usage.tool_name}: {usage.call_count} calls, {usage.credits_total} credits" for usage in self.tools[:20]
        ]
        return "\n".join(lines)
