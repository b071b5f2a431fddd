"""The /mcp transport: MCP Streamable HTTP (stateless) on the official SDK, fed from the registry.

A POST carrying one plain `tools/list` or `tools/call` request is answered here directly, with the same
result the SDK would give; everything else (initialize, ping, notifications, GET, DELETE, batches, other
methods, unusual headers or envelopes) goes to the SDK's transport unchanged, and a request that asks for
progress goes to the SDK's SSE transport.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
from collections.abc import AsyncIterator, Mapping
from importlib.metadata import version as package_version
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http import check_accept_headers
from mcp.server.streamable_http_manager import RequestBodyLimitMiddleware, StreamableHTTPSessionManager
from mcp.shared.inbound import (
    MCP_PROTOCOL_VERSION_HEADER,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
    x_mcp_header_map,
)
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from mcp_types import methods as protocol_methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Message, Receive, Scope, Send

from toolhost.platform import scopes
from toolhost.platform.auth import mcp_resource
from toolhost.platform.context import Principal
from toolhost.platform.execution import new_request_id
from toolhost.platform.rest import AUTHENTICATED_BODY_LIMIT, RUN_ID_LIMIT, authenticate, malformed_json
from toolhost.platform.results import RateLimited, Unauthenticated, error_result
from toolhost.platform.runtime import Platform

RUN_META_KEY = "toolhost/run"
PRINCIPAL_STATE_KEY = "toolhost_principal"
FAST_METHODS = frozenset({"tools/list", "tools/call"})
CONTENT_BLOCK_TYPES = ("text", "resource")
INVALID_REQUEST_BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": types.INVALID_REQUEST,
            "message": "Invalid Request: the body must be one JSON-RPC 2.0 request object",
        },
    }
).encode()


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


@functools.cache
def _toolhost_version() -> str:
    """The installed package's version, read from its metadata once per process (a few ms a read)."""
    return package_version("toolhost")


def build_server(platform: Platform) -> Server[Any]:
    """A low-level MCP server whose tools/list and tools/call are the registry and execute()."""

    async def list_tools(
        context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return tool_listing(platform, _principal(context).scopes)

    async def call_tool(
        context: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        # Both are no-ops unless the caller sent a progressToken; the first one opens the SSE stream at once,
        # so a long call (a render, a pipeline) keeps its connection alive behind proxies.
        await context.session.report_progress(0, 1, f"{params.name} started")
        wire = await call_tool_result(platform, _principal(context), context.params or {})
        await context.session.report_progress(1, 1, f"{params.name} finished")
        return types.CallToolResult.model_validate(wire)

    return Server(
        "toolhost",
        version=_toolhost_version(),
        instructions="toolhost hosts tools for AI content work; call search_tools to find the right one.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _served_version(request: Request) -> str | None:
    """The protocol version the fast path answers this request at, or None to leave it to the SDK.

    The SDK routes on the MCP-Protocol-Version header the same way: absent means the spec's default,
    a handshake version is the 2025 transport, a modern one the per-request envelope.
    """
    header = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
    if header is None:
        return types.DEFAULT_NEGOTIATED_VERSION
    if header in HANDSHAKE_PROTOCOL_VERSIONS or header in MODERN_PROTOCOL_VERSIONS:
        return header
    return None


def _is_json_body(request: Request) -> bool:
    # Stricter than the SDK's checks (which answer 400 or 415), so anything it would refuse goes to it.
    return request.headers.get("content-type", "").split(";")[0].strip() == "application/json"


def _is_request_envelope(message: dict[str, Any]) -> bool:
    """JSON-RPC 2.0 request shape, as the SDK's JSONRPCRequest model (a strict integer or a string id)."""
    request_id = message.get("id")
    return (
        message.get("jsonrpc") == "2.0"
        and ((isinstance(request_id, int) and not isinstance(request_id, bool)) or isinstance(request_id, str))
        and (message.get("params") is None or isinstance(message["params"], dict))
    )


def _modern_envelope_rejected(request: Request, message: dict[str, Any]) -> bool:
    """Whether the SDK's modern-era checks (routing headers against the body's _meta envelope) refuse it."""
    return find_duplicated_routing_header(request.headers.items()) is not None or isinstance(
        classify_inbound_request(message, headers=dict(request.headers)), InboundLadderRejection
    )


def _parse_error(error: ValueError | RecursionError) -> Response:
    """JSON-RPC's parse error (400, id null) for a body that is not JSON, carrying the same validation_error
    object, with a request id, that REST answers for it."""
    failure = malformed_json(error)
    payload = error_result(failure, new_request_id())["structuredContent"]["error"]
    body = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": types.PARSE_ERROR, "message": f"Parse error: {failure.message}", "data": payload},
    }
    return Response(json.dumps(body).encode(), status_code=400, media_type="application/json")


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A receive that hands the SDK the body already read, then the connection's own messages."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


class McpEndpoint:
    """The ASGI app at /mcp: authenticates, answers plain tools/list and tools/call, hands the rest to the SDK."""

    def __init__(self, platform: Platform) -> None:
        self._platform = platform
        self._resource = mcp_resource(platform.settings)
        server = build_server(platform)
        self.session_manager = StreamableHTTPSessionManager(
            app=server, json_response=True, stateless=True, max_request_body_size=AUTHENTICATED_BODY_LIMIT
        )
        # A JSON body carries only the response: progress notifications need the SDK's SSE transport.
        self.progress_session_manager = StreamableHTTPSessionManager(
            app=server, json_response=False, stateless=True, max_request_body_size=AUTHENTICATED_BODY_LIMIT
        )
        self._read_limited = RequestBodyLimitMiddleware(self._route, AUTHENTICATED_BODY_LIMIT)
        self._server_info_meta = {types.SERVER_INFO_META_KEY: server.server_info_stamp}
        # tools/list JSON per (modern era or not, scopes): scopes come from a fixed hierarchy, so the keys are few.
        self._listings: dict[tuple[bool, frozenset[str]], bytes] = {}

    @functools.cached_property
    def _tools_with_header_parameters(self) -> frozenset[str]:
        """The tools whose Mcp-Param-* headers the SDK checks against their schemas on the modern path: their
        calls go to it. Worked out at the first modern call (a few ms over every schema), not for each app a
        test starts."""
        return frozenset(spec.name for spec in self._platform.registry.all() if x_mcp_header_map(spec.input_schema))

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The session managers' task groups, for the app's lifespan."""
        async with self.session_manager.run(), self.progress_session_manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            principal = await authenticate(self._platform, request, resource=self._resource, people=False)
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
        await self._read_limited(scope, receive, send)

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        if request.method != "POST":
            await self.session_manager.handle_request(scope, receive, send)
            return
        body = await request.body()
        try:
            message = json.loads(body)
        except (ValueError, RecursionError) as error:
            if _is_json_body(request) and check_accept_headers(request)[0]:
                await _parse_error(error)(scope, receive, send)
                return
            message = None  # the SDK refuses the request's headers first (406, 415), as it would the body
        if isinstance(message, dict) and progress_token_from_params(message.get("params")) is not None:
            # A client that cannot read SSE gets the JSON answer without progress, as it always has.
            manager = self.progress_session_manager if check_accept_headers(request)[1] else self.session_manager
            await manager.handle_request(scope, _replaying(body, receive), send)
            return
        response = await self._answer(request, message)
        if response is None:
            await self.session_manager.handle_request(scope, _replaying(body, receive), send)
            return
        await response(scope, receive, send)

    async def _answer(self, request: Request, message: Any) -> Response | None:
        """The answer to a plain tools/list or tools/call request, or None to leave the request to the SDK."""
        version = _served_version(request)
        if (
            version is None
            or not isinstance(message, dict)
            or message.get("method") not in FAST_METHODS
            # Without an id it is a notification, which the SDK acknowledges.
            or "id" not in message
            or not _is_json_body(request)
            or not check_accept_headers(request)[0]
        ):
            return None
        if not _is_request_envelope(message):
            return Response(INVALID_REQUEST_BODY, status_code=400, media_type="application/json")
        method: str = message["method"]
        params = message.get("params")
        modern = version in MODERN_PROTOCOL_VERSIONS
        if modern and _modern_envelope_rejected(request, message):
            return None
        try:
            protocol_methods.validate_client_request(method, version, params)
        except ValidationError:
            # Invalid params (-32602): the SDK answers them, with the HTTP status of the request's era.
            return None
        principal = _scope_principal(request.scope)
        if method == "tools/list":
            result = self._listing(principal.scopes, version)
        else:
            call_params: dict[str, Any] = message["params"]  # required by tools/call, validated above
            if modern and call_params["name"] in self._tools_with_header_parameters:
                return None
            wire = await call_tool_result(self._platform, principal, call_params)
            if modern:
                # What the SDK adds to every result at this version: a complete result, stamped with the server.
                wire = {**wire, "resultType": "complete", "_meta": self._server_info_meta}
            result = json.dumps(wire).encode()
        return Response(
            b'{"jsonrpc":"2.0","id":' + json.dumps(message["id"]).encode() + b',"result":' + result + b"}",
            media_type="application/json",
        )

    def _listing(self, granted_scopes: frozenset[str], version: str) -> bytes:
        """The tools/list result as JSON, shaped by the SDK's serializer for this protocol era, computed once."""
        modern = version in MODERN_PROTOCOL_VERSIONS
        key = (modern, granted_scopes)
        listing = self._listings.get(key)
        if listing is None:
            # One schema shape per era (every 2025 version validates against 2025-11-25's), so one key per era.
            dumped = tool_listing(self._platform, granted_scopes).model_dump(
                by_alias=True, mode="json", exclude_none=True
            )
            wire = protocol_methods.serialize_server_result("tools/list", version, dumped)
            if modern:
                wire["_meta"] = self._server_info_meta
            listing = self._listings[key] = json.dumps(wire).encode()
        return listing
