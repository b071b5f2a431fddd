"""The /mcp transport: MCP Streamable HTTP (stateless, JSON responses) on the official SDK, fed from the registry."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Mapping
from importlib.metadata import version as package_version
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from toolhost.platform import scopes
from toolhost.platform.context import Principal
from toolhost.platform.rest import AUTHENTICATED_BODY_LIMIT, RUN_ID_LIMIT, authenticate
from toolhost.platform.results import RateLimited, Unauthenticated
from toolhost.platform.runtime import Platform

RUN_META_KEY = "toolhost/run"
PRINCIPAL_STATE_KEY = "toolhost_principal"
CONTENT_BLOCK_TYPES = ("text", "resource")


def protected_resource_metadata_url(platform: Platform) -> str:
    """Where MCP clients learn how to get a token for /mcp."""
    return f"{platform.settings.api_root}/.well-known/oauth-protected-resource/mcp"


def _scope_principal(scope: Scope) -> Principal:
    principal = scope.get("state", {}).get(PRINCIPAL_STATE_KEY)
    if principal is None:
        raise RuntimeError("the /mcp endpoint is served only behind its authentication wrapper")
    return principal  # type: ignore[no-any-return]


def _principal(context: ServerRequestContext[Any]) -> Principal:
    if context.request is None:
        raise RuntimeError("the /mcp endpoint is served only over HTTP")
    return _scope_principal(context.request.scope)


def tool_listing(platform: Platform, granted_scopes: frozenset[str]) -> types.ListToolsResult:
    """The tools/list result for a caller with these scopes: every tool they may call, with schemas and hints."""
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name=spec.name,
                title=spec.title,
                description=spec.description,
                input_schema=spec.input_schema,
                output_schema=spec.output_schema,
                annotations=types.ToolAnnotations(
                    title=spec.title,
                    read_only_hint=spec.read_only,
                    destructive_hint=spec.destructive,
                    idempotent_hint=spec.idempotent,
                    open_world_hint=spec.open_world,
                ),
            )
            for spec in platform.registry.all()
            if scopes.satisfies(granted_scopes, spec.scope)
        ]
    )


async def call_tool_result(platform: Platform, principal: Principal, params: Mapping[str, Any]) -> dict[str, Any]:
    """Runs validated tools/call params through execute() and returns the CallToolResult in its wire form."""
    run_id = _run_from_meta(params.get("_meta"))
    if run_id is not None:
        principal = dataclasses.replace(principal, run_id=run_id)
    execution = await platform.executor.execute(
        params["name"], params.get("arguments") or {}, principal, transport="mcp"
    )
    result = execution.result
    wire: dict[str, Any] = {
        "content": [_content_block(block) for block in result["content"] if block["type"] in CONTENT_BLOCK_TYPES],
        "isError": result["isError"],
    }
    # The SDK drops absent fields (exclude_none); the wire form matches it.
    if result.get("structuredContent") is not None:
        wire["structuredContent"] = result["structuredContent"]
    return wire


def _content_block(block: dict[str, Any]) -> dict[str, Any]:
    """One ToolResult content block in MCP's wire form: text, or an embedded text resource (the apps' UI)."""
    if block["type"] == "resource":
        resource = block["resource"]
        embedded = {"uri": resource["uri"], "text": resource["text"]}
        if resource.get("mimeType") is not None:
            embedded["mimeType"] = resource["mimeType"]
        return {"type": "resource", "resource": embedded}
    return {"type": "text", "text": block["text"]}


def _run_from_meta(meta: Any) -> str | None:
    value = meta.get(RUN_META_KEY) if isinstance(meta, Mapping) else None
    return str(value)[:RUN_ID_LIMIT] if value else None


def build_server(platform: Platform) -> Server[Any]:
    """A low-level MCP server whose tools/list and tools/call are the registry and execute()."""

    async def list_tools(
        context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return tool_listing(platform, _principal(context).scopes)

    async def call_tool(
        context: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return types.CallToolResult.model_validate(
            await call_tool_result(platform, _principal(context), context.params or {})
        )

    return Server(
        "toolhost",
        version=package_version("toolhost"),
        instructions="toolhost hosts tools for AI content work; call search_tools to find the right one.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


class McpEndpoint:
    """The ASGI app at /mcp: authenticates, then hands the request to the SDK's stateless transport."""

    def __init__(self, platform: Platform) -> None:
        self._platform = platform
        self.session_manager = StreamableHTTPSessionManager(
            app=build_server(platform),
            json_response=True,
            stateless=True,
            max_request_body_size=AUTHENTICATED_BODY_LIMIT,
        )

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The session manager's task group, for the app's lifespan."""
        async with self.session_manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            principal = await authenticate(self._platform, request)
        except Unauthenticated as error:
            response = JSONResponse(
                {"error": "invalid_token", "error_description": error.message},
                status_code=401,
                headers={
                    "WWW-Authenticate": f'Bearer error="invalid_token", '
                    f'resource_metadata="{protected_resource_metadata_url(self._platform)}"'
                },
            )
            await response(scope, receive, send)
            return
        except RateLimited as error:
            response = JSONResponse(
                {"error": "rate_limited", "error_description": error.message},
                status_code=429,
                headers={"Retry-After": str(error.details["retry_after"])},
            )
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})[PRINCIPAL_STATE_KEY] = principal
        await self.session_manager.handle_request(scope, receive, send)
