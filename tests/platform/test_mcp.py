"""MCP over Streamable HTTP through the official SDK's client: the same tools, scopes and execute()."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import cast

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import RequestParamsMeta
from starlette.applications import Starlette

from tests.conftest import Tenant, TenantFactory
from toolhost.config import CreditCost
from toolhost.platform.runtime import Platform


@asynccontextmanager
async def mcp_client(app: Starlette, key: str) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app),
        base_url="http://testserver",
        headers={"Authorization": f"Bearer {key}"},
    )
    async with http, Client(streamable_http_client("http://testserver/mcp", http_client=http)) as client:
        yield client


async def test_mcp_lists_only_the_tools_the_key_allows_with_schemas_and_annotations(
    app: Starlette, make_tenant: TenantFactory
) -> None:
    reader = await make_tenant(tier="pro", scopes=["mcp:read"])
    async with mcp_client(app, reader.key) as client:
        listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert "list_plan_approvals" in tools and "respond_plan_approval" not in tools
    usage = tools["get_mcp_usage"]
    assert usage.annotations is not None
    assert usage.annotations.title == "Get MCP Usage"
    assert usage.annotations.read_only_hint is True and usage.annotations.destructive_hint is False
    assert usage.input_schema["type"] == "object" and usage.output_schema is not None


async def test_mcp_calls_run_through_execute_and_scope_denials_are_error_results(
    app: Starlette, make_tenant: TenantFactory
) -> None:
    reader = await make_tenant(tier="pro", scopes=["mcp:read"])
    async with mcp_client(app, reader.key) as client:
        balance = await client.call_tool("get_credit_balance", {"response_format": "json"})
        denied = await client.call_tool("save_content_plan", {"plan": {"topic": "x", "posts": [{"caption": "y"}]}})
    assert balance.is_error is False
    assert balance.structured_content is not None and balance.structured_content["plan"] == "pro"
    assert denied.is_error is True
    assert denied.structured_content is not None
    assert denied.structured_content["error"]["error_type"] == "permission_denied"
    usage = await reader.data("get_mcp_usage", {"response_format": "json"})
    assert {item["tool_name"] for item in usage["tools"]} >= {"get_credit_balance", "save_content_plan"}


async def test_mcp_validation_errors_are_error_results_with_field_paths(app: Starlette, tenant: Tenant) -> None:
    async with mcp_client(app, tenant.key) as client:
        result = await client.call_tool("list_plan_approvals", {"plan_id": "nope"})
    assert result.is_error is True
    assert result.structured_content is not None
    assert result.structured_content["error"]["field_errors"][0]["path"] == "plan_id"


async def test_mcp_without_a_valid_credential_is_401_pointing_at_resource_metadata(
    client: httpx.AsyncClient,
) -> None:
    for headers in ({}, {"Authorization": "Bearer thk_live_nothing-here-at-all-000000000000"}):
        response = await client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={**headers, "Accept": "application/json, text/event-stream"},
        )
        assert response.status_code == 401
        challenge = response.headers["WWW-Authenticate"]
        assert challenge.startswith("Bearer") and "resource_metadata=" in challenge
    metadata = await client.get("/.well-known/oauth-protected-resource/mcp")
    assert metadata.status_code == 200
    assert metadata.json()["resource"].endswith("/mcp")
    assert metadata.json()["authorization_servers"]


def run_meta(run: str) -> RequestParamsMeta:
    """A request's _meta naming the agent run it belongs to (a key the SDK's TypedDict leaves to extra items)."""
    return cast(RequestParamsMeta, {"toolhost/run": run})


async def test_mcp_calls_sharing_a_run_meta_share_a_run_budget(
    app: Starlette, tenant: Tenant, platform: Platform
) -> None:
    platform.settings.credits.costs["get_credit_balance"] = CreditCost(base=3)
    platform.settings.credits.max_credits_per_run = 5
    async with mcp_client(app, tenant.key) as client:
        first = await client.call_tool("get_credit_balance", {}, meta=run_meta("agent-run-7"))
        second = await client.call_tool("get_credit_balance", {}, meta=run_meta("agent-run-7"))
        other = await client.call_tool("get_credit_balance", {}, meta=run_meta("agent-run-8"))
    assert first.is_error is False and other.is_error is False
    assert second.is_error is True
    assert second.structured_content is not None
    error = second.structured_content["error"]
    assert error["error_type"] == "billing_error" and error["credits_used_this_run"] == 3
