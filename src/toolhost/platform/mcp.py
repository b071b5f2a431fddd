"""The /mcp transport: MCP Streamable HTTP (stateless, JSON responses) on the official SDK, fed from the registry."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator
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


def protected_resource_metadata_url(platform: Platform) -> str:
    """Where MCP clients learn how to get a token for /mcp."""
    return f"{platform.settings.api_root}/.well-known/oauth-protected-resource/mcp"


def _principal(context: ServerRequestContext[Any]) -> Principal:
    request = context.request
    principal = request.scope.get("state", {}).get(PRINCIPAL_STATE_KEY) if request is not None else None
    if principal is None:
        raise RuntimeError("the /mcp endpoint is served only behind its authentication wrapper")
    return principal  # type: ignore[no-any-return]


def build_server(platform: Platform) -> Server[Any]:
    """A low-level MCP server whose tools/list and tools/call are the registry and execute()."""

    async def list_tools(
        context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        principal = _principal(context)
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
                if scopes.satisfies(principal.scopes, spec.scope)
            ]
        )

    async def call_tool(
        context: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        principal = _principal(context)
        run_id = _run_from_meta(params)
        if run_id is not None:
            principal = dataclasses.replace(principal, run_id=run_id)
        execution = await platform.executor.execute(params.name, params.arguments or {}, principal, transport="mcp")
        result = execution.result
        return types.CallToolResult(
            content=[_content_block(block) for block in result["content"] if block["type"] in ("text", "resource")],
            structured_content=result["structuredContent"],
            is_error=result["isError"],
        )

    return Server(
        "toolhost",
        version=package_version("toolhost"),
        instructions="toolhost hosts tools for AI content work; call search_tools to find the right one.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _content_block(block: dict[str, Any]) -> types.TextContent | types.EmbeddedResource:
    """One ToolResult content block as the SDK's type: text, or an embedded text resource (the apps' UI)."""
    if block["type"] == "resource":
        resource = block["resource"]
        return types.EmbeddedResource(
            resource=types.TextResourceContents(
                uri=resource["uri"], mime_type=resource.get("mimeType"), text=resource["text"]
            )
        )
    return types.TextContent(text=block["text"])


def _run_from_meta(params: types.CallToolRequestParams) -> str | None:
    meta: Any = params.meta
    if meta is None:
        return None
    values = meta if isinstance(meta, dict) else (meta.model_extra or {})
    value = values.get(RUN_META_KEY)
    return str(value)[:RUN_ID_LIMIT] if value else None


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
