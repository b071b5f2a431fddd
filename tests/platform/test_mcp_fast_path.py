"""/mcp over raw HTTP: plain tools/list and tools/call answer exactly as the SDK's transport does, at both eras."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.types import Receive, Scope, Send

from tests.conftest import Tenant, TenantFactory
from tests.platform.test_mcp import mcp_client

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
BOTH_ACCEPTED = "application/json, text/event-stream"
MODERN_ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
REQUEST_ID = re.compile(r"req_[0-9a-f]{32}")


def rpc(method: str, params: dict[str, Any] | None, version: str) -> tuple[dict[str, Any], dict[str, str]]:
    """A JSON-RPC request and its headers as a client at `version` sends them (the modern one with its envelope)."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
    headers = {"MCP-Protocol-Version": version}
    if version == MODERN:
        params = {"_meta": dict(MODERN_ENVELOPE), **(params or {})}
        headers["Mcp-Method"] = method
        if method == "tools/call" and isinstance(params.get("name"), str):
            headers["Mcp-Name"] = params["name"]
    if params is not None:
        body["params"] = params
    return body, headers


async def post(
    client: httpx.AsyncClient,
    tenant: Tenant,
    body: Any,
    headers: dict[str, str],
    accept: str = BOTH_ACCEPTED,
) -> httpx.Response:
    """POST /mcp with the tenant's key."""
    return await client.post(
        "/mcp",
        content=json.dumps(body).encode(),
        headers={**tenant.headers, **headers, "Accept": accept, "Content-Type": "application/json"},
    )


def with_progress(body: dict[str, Any]) -> dict[str, Any]:
    """The same request asking for progress, which the SDK's transport answers."""
    params = body["params"]
    return {**body, "params": {**params, "_meta": {**params.get("_meta", {}), "progressToken": "p-1"}}}


def comparable(response: httpx.Response) -> Any:
    """The response body with the per-call request ids (in structuredContent and in the text) blanked."""
    return json.loads(REQUEST_ID.sub("req_", response.text))


def sse_messages(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE response body."""
    return [
        json.loads(line.removeprefix("data:"))
        for line in response.text.splitlines()
        if line.startswith("data:") and line.removeprefix("data:").strip()
    ]


@pytest.mark.parametrize("version", [LEGACY, MODERN])
@pytest.mark.parametrize(
    ("tool_name", "arguments", "block_types", "is_error"),
    [
        ("get_credit_balance", {}, ["text"], False),
        ("open_content_calendar", {"start_date": "2026-11-23"}, ["text", "resource"], False),
        ("no_such_tool", {}, ["text"], True),
        ("list_plan_approvals", {"plan_id": "nope"}, ["text"], True),
    ],
)
async def test_a_plain_tools_call_returns_what_the_sdk_transport_returns(
    client: httpx.AsyncClient,
    tenant: Tenant,
    version: str,
    tool_name: str,
    arguments: dict[str, Any],
    block_types: list[str],
    is_error: bool,
) -> None:
    body, headers = rpc("tools/call", {"name": tool_name, "arguments": arguments}, version)
    fast = await post(client, tenant, body, headers)
    through_sdk = await post(client, tenant, with_progress(body), headers, accept="application/json")
    assert fast.status_code == through_sdk.status_code == 200
    assert fast.headers["content-type"] == through_sdk.headers["content-type"] == "application/json"
    assert comparable(fast) == comparable(through_sdk)
    result = fast.json()["result"]
    assert fast.json()["id"] == 7 and result["isError"] is is_error and "structuredContent" in result
    assert [block["type"] for block in result["content"]] == block_types


@pytest.mark.parametrize("version", [LEGACY, MODERN, None])
async def test_a_plain_tools_list_returns_what_the_sdk_transport_returns(
    client: httpx.AsyncClient, make_tenant: TenantFactory, version: str | None
) -> None:
    reader = await make_tenant(tier="pro", scopes=["mcp:read"])
    body, headers = rpc("tools/list", {}, version or LEGACY)
    if version is None:
        headers = {}
    for _ in range(2):  # the second answer comes from the precomputed listing
        fast = await post(client, reader, body, headers)
        through_sdk = await post(client, reader, with_progress(body), headers, accept="application/json")
        assert fast.status_code == through_sdk.status_code == 200
        assert fast.json() == through_sdk.json()
    names = {tool["name"] for tool in fast.json()["result"]["tools"]}
    assert "list_plan_approvals" in names and "respond_plan_approval" not in names


async def test_plain_tools_calls_and_lists_never_reach_the_sdk_transport(
    client: httpx.AsyncClient, tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refuse(manager: StreamableHTTPSessionManager, scope: Scope, receive: Receive, send: Send) -> None:
        raise AssertionError("a plain tools request reached the SDK's transport")

    monkeypatch.setattr(StreamableHTTPSessionManager, "handle_request", refuse)
    for version in (LEGACY, MODERN):
        for method, params in (("tools/list", {}), ("tools/call", {"name": "get_credit_balance", "arguments": {}})):
            response = await post(client, tenant, *rpc(method, params, version))
            assert response.status_code == 200 and "result" in response.json()


@pytest.mark.parametrize("version", [LEGACY, MODERN])
@pytest.mark.parametrize(
    "envelope",
    [{"jsonrpc": "1.0"}, {"id": None}, {"id": 1.5}, {"id": True}, {"id": {"nested": 1}}, {"params": [1]}],
)
async def test_a_malformed_request_envelope_is_invalid_request(
    client: httpx.AsyncClient, tenant: Tenant, version: str, envelope: dict[str, Any]
) -> None:
    body, headers = rpc("tools/call", {"name": "get_credit_balance"}, version)
    response = await post(client, tenant, {**body, **envelope}, headers)
    assert response.status_code == 400
    assert response.json()["id"] is None and response.json()["error"]["code"] == -32600


@pytest.mark.parametrize(("version", "status"), [(LEGACY, 200), (MODERN, 400)])
@pytest.mark.parametrize(
    "params", [None, {}, {"name": "get_credit_balance", "arguments": "x"}, {"name": "get_credit_balance", "_meta": 3}]
)
async def test_invalid_tools_call_params_are_invalid_params(
    client: httpx.AsyncClient, tenant: Tenant, version: str, status: int, params: dict[str, Any] | None
) -> None:
    body, headers = rpc("tools/call", params, version)
    response = await post(client, tenant, body, headers)
    error = response.json()["error"]
    # A missing _meta envelope is the modern era's own params check; the code is the same.
    assert response.status_code == status and error["code"] == -32602
    assert response.json()["id"] == 7


UNPARSABLE_BODIES = {
    "cut short": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call"',
    "nested too deeply": b"[" * 100_000 + b"]" * 100_000,
    "an integer of 5,000 digits": b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "tools/list"}',
    "bytes that are not UTF-8": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": "caf\xe9"}}',
}


@pytest.mark.parametrize("version", [LEGACY, MODERN])
@pytest.mark.parametrize("reason", list(UNPARSABLE_BODIES))
async def test_unparsable_json_is_a_parse_error_carrying_the_validation_error_and_a_request_id(
    client: httpx.AsyncClient, tenant: Tenant, version: str, reason: str
) -> None:
    _, headers = rpc("tools/call", {"name": "get_credit_balance"}, version)
    response = await client.post(
        "/mcp",
        content=UNPARSABLE_BODIES[reason],
        headers={**tenant.headers, **headers, "Accept": BOTH_ACCEPTED, "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["id"] is None and response.json()["error"]["code"] == -32700
    data = response.json()["error"]["data"]
    assert data["error_type"] == "validation_error" and data["message"].startswith("malformed JSON")
    assert REQUEST_ID.fullmatch(data["request_id"])


@pytest.mark.parametrize("version", [LEGACY, MODERN])
@pytest.mark.parametrize(("text", "named"), [("a\\u0000b", "U+0000"), ("a\\udfffb", "U+DFFF")])
async def test_text_no_database_stores_is_a_validation_error_result_naming_its_field(
    client: httpx.AsyncClient, tenant: Tenant, version: str, text: str, named: str
) -> None:
    body, headers = rpc("tools/call", {"name": "save_content_plan", "arguments": {"plan": {"topic": "x"}}}, version)
    # The escape goes into the wire form as written: json.dumps would spell the character differently.
    wire = json.dumps(body).replace('"topic": "x"', f'"topic": "{text}"').encode()
    response = await client.post(
        "/mcp",
        content=wire,
        headers={**tenant.headers, **headers, "Accept": BOTH_ACCEPTED, "Content-Type": "application/json"},
    )
    assert response.status_code == 200
    result = response.json()["result"]
    error = result["structuredContent"]["error"]
    assert result["isError"] is True and error["error_type"] == "validation_error" and named in error["message"]
    assert error["field_errors"][0]["path"] == "plan.topic" and REQUEST_ID.fullmatch(error["request_id"])


@pytest.mark.parametrize(
    ("version", "status", "other_method"), [(LEGACY, 200, "ping"), (MODERN, 404, "server/discover")]
)
async def test_other_methods_still_get_the_sdk_answers(
    client: httpx.AsyncClient, tenant: Tenant, version: str, status: int, other_method: str
) -> None:
    unknown = await post(client, tenant, *rpc("tools/unknown", {}, version))
    assert unknown.status_code == status and unknown.json()["error"]["code"] == -32601
    other = await post(client, tenant, *rpc(other_method, {}, version))
    assert other.status_code == 200 and "result" in other.json()


async def test_unusual_headers_still_get_the_sdk_answers(client: httpx.AsyncClient, tenant: Tenant) -> None:
    body, headers = rpc("tools/call", {"name": "get_credit_balance", "arguments": {}}, LEGACY)
    assert (await post(client, tenant, body, headers, accept="text/event-stream")).status_code == 406
    plain_text = await client.post(
        "/mcp",
        content=json.dumps(body).encode(),
        headers={**tenant.headers, **headers, "Accept": BOTH_ACCEPTED, "Content-Type": "text/plain"},
    )
    assert plain_text.status_code == 400
    unknown_version = await post(client, tenant, body, {"MCP-Protocol-Version": "1999-01-01"})
    assert unknown_version.status_code == 400 and "error" in unknown_version.json()
    initialize = await post(
        client,
        tenant,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
        },
        {},
    )
    assert initialize.status_code == 200 and initialize.json()["result"]["protocolVersion"] == LEGACY


async def test_get_delete_and_batches_still_get_the_sdk_answers(client: httpx.AsyncClient, tenant: Tenant) -> None:
    deleted = await client.delete("/mcp", headers=tenant.headers)
    assert deleted.status_code == 405
    streamed = await client.get("/mcp", headers={**tenant.headers, "Accept": "application/json"})
    assert streamed.status_code == 406
    body, headers = rpc("tools/call", {"name": "get_credit_balance", "arguments": {}}, LEGACY)
    batch = await post(client, tenant, [body], headers)
    assert batch.status_code == 400 and batch.json()["error"]["code"] < 0


@pytest.mark.parametrize("version", [LEGACY, MODERN])
async def test_a_call_asking_for_progress_is_answered_as_sse_with_progress(
    client: httpx.AsyncClient, tenant: Tenant, version: str
) -> None:
    body, headers = rpc("tools/call", {"name": "get_credit_balance", "arguments": {}}, version)
    plain = await post(client, tenant, body, headers)
    streamed = await post(client, tenant, with_progress(body), headers)
    assert streamed.status_code == 200
    assert streamed.headers["content-type"].startswith("text/event-stream")
    *notifications, response = sse_messages(streamed)
    assert [note["method"] for note in notifications] == ["notifications/progress"] * 2
    assert [note["params"]["progress"] for note in notifications] == [0, 1]
    assert {note["params"]["progressToken"] for note in notifications} == {"p-1"}
    assert response["id"] == 7 and response["result"] == plain.json()["result"]


async def test_the_sdk_client_receives_progress_for_a_call(app: Starlette, tenant: Tenant) -> None:
    reported: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append(progress)

    async with mcp_client(app, tenant.key) as sdk_client:
        result = await sdk_client.call_tool("get_credit_balance", {}, progress_callback=on_progress)
    assert result.is_error is False and reported == [0, 1]


@pytest.mark.parametrize("version", [LEGACY, MODERN])
async def test_a_plain_call_without_a_valid_credential_is_401_pointing_at_resource_metadata(
    client: httpx.AsyncClient, version: str
) -> None:
    body, headers = rpc("tools/call", {"name": "get_credit_balance", "arguments": {}}, version)
    for credential in ({}, {"Authorization": "Bearer thk_live_nothing-here-at-all-000000000000"}):
        response = await client.post(
            "/mcp",
            content=json.dumps(body).encode(),
            headers={**credential, **headers, "Accept": BOTH_ACCEPTED, "Content-Type": "application/json"},
        )
        assert response.status_code == 401
        challenge = response.headers["WWW-Authenticate"]
        assert challenge.startswith("Bearer") and 'resource_metadata="http://testserver/.well-known/' in challenge
