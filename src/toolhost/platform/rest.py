"""The /v1 REST routes and the OpenAPI document, generated from the registry."""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from toolhost.platform import scopes
from toolhost.platform.auth import presented_credential
from toolhost.platform.context import Principal
from toolhost.platform.execution import Execution, new_request_id
from toolhost.platform.openapi import openapi_document
from toolhost.platform.results import (
    ServerFailed,
    ToolError,
    Unauthenticated,
    ValidationFailed,
    compact_json,
    error_result,
)
from toolhost.platform.runtime import Platform

logger = logging.getLogger("toolhost.rest")

AUTHENTICATED_BODY_LIMIT = 16 * 1024 * 1024
ANONYMOUS_BODY_LIMIT = 100 * 1024
RUN_HEADER = "x-toolhost-run"
RUN_ID_LIMIT = 128
CREDENTIAL_HEADERS = frozenset({b"authorization", b"x-api-key", RUN_HEADER.encode()})


def client_ip(request: Request) -> str:
    """The peer address (a proxy in front sets it through uvicorn's --forwarded-allow-ips)."""
    return request.client.host if request.client else "unknown"


def _credential_headers(request: Request) -> dict[str, str]:
    """The headers that name the caller and its run, read in one pass over the raw headers.

    Starlette's `headers.get` scans and decodes the whole list per name and raises inside for a missing one;
    on the call path that was a measurable share of a cheap call. The first of repeated headers wins, as there.
    """
    found: dict[str, str] = {}
    for name, value in request.scope["headers"]:
        if name in CREDENTIAL_HEADERS:
            found.setdefault(name.decode("latin-1"), value.decode("latin-1"))
    return found


async def authenticate(platform: Platform, request: Request) -> Principal:
    """The caller of a request; the anonymous rate limit applies before `unauthenticated`."""
    headers = _credential_headers(request)
    credential = presented_credential(headers.get("authorization"), headers.get("x-api-key"))
    try:
        return await platform.authenticator.authenticate(
            credential, run_id=headers.get(RUN_HEADER, "")[:RUN_ID_LIMIT] or None, client_ip=client_ip(request)
        )
    except Unauthenticated:
        await platform.rate_limiter.check_anonymous(client_ip(request))
        raise


def unexpected_failure(request_id: str) -> ServerFailed:
    """What a route answers for an exception outside execute() (the store behind authentication failing, say).

    The same server_error body as execute()'s, so /v1 answers its document's ErrorResult, never a plain-text 500.
    """
    logger.exception("request failed unexpectedly [%s]", request_id)
    return ServerFailed(f"internal error; quote request id {request_id} when reporting it")


def error_response(error: ToolError, request_id: str | None = None) -> JSONResponse:
    """A failure as a REST body: the ToolResult plus the same `error` object at top level."""
    request_id = request_id or new_request_id()
    result = error_result(error, request_id)
    headers = {}
    if error.error_type == "unauthenticated":
        headers["WWW-Authenticate"] = "Bearer"
    if "retry_after" in error.details:
        headers["Retry-After"] = str(error.details["retry_after"])
    return JSONResponse({**result, "error": result["structuredContent"]["error"]}, error.http_status(), headers)


class ToolResultResponse(JSONResponse):
    """A JSON response written by orjson: tool results are the service's hottest and largest bodies."""

    def render(self, content: Any) -> bytes:
        return compact_json(content)


def execution_response(execution: Execution) -> JSONResponse:
    """A finished call as a REST response."""
    body = execution.result
    if execution.result["isError"]:
        body = {**body, "error": body["structuredContent"]["error"]}
    return ToolResultResponse(body, execution.status, execution.headers)


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused (ValidationFailed, too_large) once it passes `limit` bytes, before the rest is read."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ValidationFailed(f"the request body is over the {limit // 1024} KB limit", too_large=True)
    chunks = bytearray()
    async for chunk in request.stream():
        chunks.extend(chunk)
        if len(chunks) > limit:
            raise ValidationFailed(f"the request body is over the {limit // 1024} KB limit", too_large=True)
    return bytes(chunks)


async def read_json_body(request: Request, limit: int) -> Any:
    """The JSON body (no body means {}), refusing one over `limit` bytes without reading it all."""
    chunks = await read_body(request, limit)
    if not chunks.strip():
        return {}
    try:
        return json.loads(chunks)
    except RecursionError:
        raise ValidationFailed(
            "malformed JSON: nested too deeply",
            field_errors=[{"path": "$", "message": "the body nests deeper than the parser allows"}],
        ) from None
    except ValueError as error:
        # Syntax errors, bad encodings, and integers longer than Python converts (4,300 digits) alike.
        raise ValidationFailed(
            f"malformed JSON: {error}", field_errors=[{"path": "$", "message": "the body is not valid JSON"}]
        ) from None


def rest_routes(platform: Platform) -> list[BaseRoute]:
    """GET /v1/tools, POST /v1/tools/{name}, GET /v1/openapi.json."""
    document_cache: dict[str, Any] = {}

    async def list_tools(request: Request) -> Response:
        request_id = new_request_id()
        try:
            principal = await authenticate(platform, request)
            wanted_scope = request.query_params.get("scope")
            wanted: frozenset[str] | None = None
            if wanted_scope is not None:
                try:
                    wanted = scopes.expand([wanted_scope])
                except scopes.UnknownScope:
                    raise ValidationFailed(
                        f"unknown scope {wanted_scope!r}; one of {', '.join(scopes.ALL_SCOPES)}",
                        field_errors=[{"path": "scope", "message": "unknown scope"}],
                    ) from None
        except ToolError as error:
            return error_response(error, request_id)
        except Exception:
            return error_response(unexpected_failure(request_id), request_id)
        module = request.query_params.get("module")
        query = (request.query_params.get("q") or "").lower()
        listing = [
            spec.listing()
            for spec in platform.registry.all()
            if scopes.satisfies(principal.scopes, spec.scope)
            and (module is None or spec.module == module)
            and (wanted is None or scopes.expand([spec.scope]) <= wanted)
            and (not query or query in spec.name.lower() or query in spec.description.lower())
        ]
        return JSONResponse(listing)

    async def call_tool(request: Request) -> Response:
        request_id = new_request_id()
        try:
            principal = await authenticate(platform, request)
            arguments = await read_json_body(request, AUTHENTICATED_BODY_LIMIT)
        except ToolError as error:
            return error_response(error, request_id)
        except Exception:
            return error_response(unexpected_failure(request_id), request_id)
        execution = await platform.executor.execute(
            request.path_params["name"], arguments, principal, transport="rest", request_id=request_id
        )
        return execution_response(execution)

    async def openapi(request: Request) -> Response:
        if "document" not in document_cache:
            document_cache["document"] = openapi_document(platform.registry, platform.settings)
        return JSONResponse(document_cache["document"])

    return [
        Route("/v1/tools", list_tools, methods=["GET"]),
        Route("/v1/tools/{name}", call_tool, methods=["POST"]),
        Route("/v1/openapi.json", openapi, methods=["GET"]),
    ]
