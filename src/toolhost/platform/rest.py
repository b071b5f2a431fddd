"""The /v1 REST routes and the OpenAPI document, generated from the registry."""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from toolhost.platform import scopes, websession
from toolhost.platform.auth import presented_credential, token_audience
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
# nginx's status for a request its client abandoned: never sent, it only marks the request in the app.
CLIENT_CLOSED_REQUEST = 499
CREDENTIAL_HEADERS = frozenset({b"authorization", b"x-api-key", RUN_HEADER.encode(), websession.CSRF_HEADER.encode()})


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


async def authenticate(platform: Platform, request: Request, *, resource: str, people: bool) -> Principal:
    """The caller of a request to `resource` (RFC 8707); the anonymous rate limit applies before `unauthenticated`.

    A key or token wins. Without one, `people` lets a signed-in person's page call on their session cookie,
    with the page's CSRF token in X-CSRF-Token (a cookie alone, which any site's request would carry, is
    no credential).
    """
    headers = _credential_headers(request)
    credential = presented_credential(headers.get("authorization"), headers.get("x-api-key"))
    run_id = headers.get(RUN_HEADER, "")[:RUN_ID_LIMIT] or None
    try:
        if credential is None and people and websession.CSRF_HEADER in headers:
            return await _person(platform, request, headers[websession.CSRF_HEADER], run_id)
        return await platform.authenticator.authenticate(
            credential, resource=resource, run_id=run_id, client_ip=client_ip(request)
        )
    except Unauthenticated:
        await platform.rate_limiter.check_anonymous(client_ip(request))
        raise


async def _person(platform: Platform, request: Request, presented_csrf: str, run_id: str | None) -> Principal:
    token = request.cookies.get(websession.cookie_name(platform.settings, websession.SESSION_COOKIE))
    if not websession.csrf_matches(platform.settings, token, presented_csrf) or token is None:
        raise Unauthenticated("not signed in, or the page's CSRF token does not belong to this sign-in")
    principal = await platform.authenticator.authenticate_session(token)
    return dataclasses.replace(principal, run_id=run_id, client_ip=client_ip(request))


def unexpected_failure(request_id: str) -> ServerFailed:
    """What a route answers for an exception outside execute() (the store behind authentication failing, say).

    The same server_error body as execute()'s, so /v1 answers its document's ErrorResult, never a plain-text 500.
    """
    logger.exception("request failed unexpectedly [%s]", request_id)
    return ServerFailed(f"internal error; quote request id {request_id} when reporting it")


async def client_went_away(request: Request, error: Exception) -> Response:
    """The app's answer when a client closes its connection before its request body arrived: no one reads it.

    Not a server error: without this, a dropped upload or a load generator stopping mid-request logged a
    traceback and counted as a failure of the service.
    """
    return Response(status_code=CLIENT_CLOSED_REQUEST)


def error_response(error: ToolError, request_id: str | None = None) -> JSONResponse:
    """A failure as a REST body: the ToolResult plus the same `error` object at top level."""
    request_id = request_id or new_request_id()
    result = error_result(error, request_id)
    headers = {}
    if error.error_type == "unauthenticated":
        headers["WWW-Authenticate"] = "Bearer"
    if "retry_after" in error.details:
        headers["Retry-After"] = str(error.details["retry_after"])
    status = error.http_status()
    if status == 413:
        headers["Connection"] = "close"  # the server reads no more of the body; the client stops sending it
    return JSONResponse({**result, "error": result["structuredContent"]["error"]}, status, headers)


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
    return parse_json_body(await read_body(request, limit))


def parse_json_body(body: bytes) -> Any:
    """A body as JSON (no body means {}); anything that is not JSON is a validation_error saying why."""
    if not body.strip():
        return {}
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as error:
        raise malformed_json(error) from None


def malformed_json(error: ValueError | RecursionError) -> ValidationFailed:
    """Why a body is not JSON, as a validation_error: a syntax error, bytes that are not UTF-8, nesting deeper
    than the parser goes, or an integer longer than Python converts (4,300 digits)."""
    if isinstance(error, RecursionError):
        return ValidationFailed(
            "malformed JSON: nested too deeply",
            field_errors=[{"path": "$", "message": "the body nests deeper than the parser allows"}],
        )
    return ValidationFailed(
        f"malformed JSON: {error}", field_errors=[{"path": "$", "message": "the body is not valid JSON"}]
    )


def rest_routes(platform: Platform) -> list[BaseRoute]:
    """GET /v1/tools, POST /v1/tools/{name}, GET /v1/openapi.json."""
    document_cache: dict[str, Any] = {}
    # /v1 is the server root's resource: tokens minted for the root are accepted here, those for /mcp are not.
    resource = token_audience(platform.settings)

    async def list_tools(request: Request) -> Response:
        request_id = new_request_id()
        try:
            principal = await authenticate(platform, request, resource=resource, people=True)
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
            principal = await authenticate(platform, request, resource=resource, people=True)
            arguments = await read_json_body(request, AUTHENTICATED_BODY_LIMIT)
        except ToolError as error:
            return error_response(error, request_id)
        except ClientDisconnect:
            raise  # nobody is left to answer: the app's handler ends the request without a server error
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
