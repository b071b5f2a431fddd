"""The credit ledger as callers meet it: allocations, caps, trials, run budgets; and settings that refuse to start."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select, update

from tests.conftest import TenantFactory
from toolhost.config import CreditCost, load_settings
from toolhost.platform.models import Account, CreditEntry
from toolhost.platform.runtime import Platform


@pytest.fixture
def balance_costs_two(platform: Platform) -> None:
    """Makes get_credit_balance cost 2 credits, as an operator's cost override would."""
    platform.settings.credits.costs["get_credit_balance"] = CreditCost(base=2)


async def set_account(platform: Platform, account_id: object, **values: object) -> None:
    async with platform.session_factory() as session, session.begin():
        await session.execute(update(Account).where(Account.id == account_id).values(**values))


@pytest.mark.usefixtures("balance_costs_two")
async def test_a_spending_cap_stops_debits_before_the_balance_runs_out(
    make_tenant: TenantFactory, platform: Platform
) -> None:
    payer = await make_tenant()
    await set_account(platform, payer.account_id, spending_cap=4)
    assert (await payer.call("get_credit_balance")).status_code == 200
    assert (await payer.call("get_credit_balance")).status_code == 200
    capped = await payer.call("get_credit_balance")
    assert capped.status_code == 402
    assert "spending cap" in capped.json()["error"]["message"]
    balance = await payer.data("get_mcp_usage", {"response_format": "json"})
    assert balance["totalCredits"] == 4


@pytest.mark.usefixtures("balance_costs_two")
async def test_an_ended_trial_refuses_paid_calls_but_keeps_free_ones(
    make_tenant: TenantFactory, platform: Platform
) -> None:
    trial = await make_tenant(tier="trial", scopes=["mcp:read"])
    await set_account(platform, trial.account_id, trial_ends_at=datetime.now(UTC) - timedelta(minutes=1))
    refused = await trial.call("get_credit_balance")
    assert refused.status_code == 402
    assert refused.json()["error"]["message"].startswith("trial ended")
    assert (await trial.call("get_mcp_usage")).status_code == 200


async def test_a_new_month_credits_the_allocation_without_rolling_over_the_rest(
    make_tenant: TenantFactory, platform: Platform
) -> None:
    pro = await make_tenant(tier="pro", scopes=["mcp:read"])
    await set_account(platform, pro.account_id, credit_balance=37, credit_period="2026-01", period_spent=1463)
    balance = await pro.data("get_credit_balance", {"response_format": "json"})
    assert balance["balance"] == 1500 and balance["monthlyUsed"] == 0 and balance["monthlyLimit"] == 1500
    async with platform.session_factory() as session:
        query = select(CreditEntry.kind).where(CreditEntry.account_id == pro.account_id)
        kinds = list(await session.scalars(query.order_by(CreditEntry.created_at)))
    assert kinds == ["allocation", "allocation"]


@pytest.mark.usefixtures("balance_costs_two")
async def test_a_run_budget_refuses_the_call_that_would_pass_it(make_tenant: TenantFactory, platform: Platform) -> None:
    payer = await make_tenant()
    platform.settings.credits.max_credits_per_run = 5
    run = {"X-Toolhost-Run": "nightly-batch"}
    for _ in range(2):
        assert (await payer.call("get_credit_balance", headers=run)).status_code == 200
    refused = await payer.call("get_credit_balance", headers=run)
    assert refused.status_code == 402
    error = refused.json()["error"]
    assert (error["credits_used_this_run"], error["estimated_call_cost"], error["max_credits_per_run"]) == (4, 2, 5)
    budget = (await payer.call("get_budget_status", {"response_format": "json"}, headers=run)).json()
    assert budget["structuredContent"]["creditsUsedThisRun"] == 4
    assert budget["structuredContent"]["remaining"] == 1
    assert (await payer.call("get_credit_balance", headers={"X-Toolhost-Run": "another"})).status_code == 200


def test_the_public_url_follows_the_port_and_host_unless_set(tmp_path: Path) -> None:
    secret = {"secret_file": tmp_path / "toolhost.secret"}
    assert load_settings(**secret).public_url == "http://127.0.0.1:8000"
    assert load_settings(port=9100, **secret).public_url == "http://127.0.0.1:9100"
    assert load_settings(host="0.0.0.0", port=9100, **secret).public_url == "http://127.0.0.1:9100"
    assert load_settings(host="tools.internal", **secret).public_url == "http://tools.internal:8000"
    assert load_settings(port=9100, public_url="https://tools.example", **secret).public_url == "https://tools.example"
