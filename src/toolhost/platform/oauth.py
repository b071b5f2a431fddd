"""OAuth 2.1 client-credentials token endpoint and the metadata documents that describe it."""

from __future__ import annotations

import base64
import binascii
from urllib.parse import parse_qs, unquote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from toolhost.platform import scopes
from toolhost.platform.rest import ANONYMOUS_BODY_LIMIT, client_ip, read_body
from toolhost.platform.results import RateLimited, ValidationFailed
from toolhost.platform.runtime import Platform

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def _oauth_error(error: str, description: str, status: int = 400, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"error": error, "error_description": description}, status, {**NO_STORE, **(headers or {})})


def _basic_credentials(header: str | None) -> tuple[str, str] | None:
    if not header or not header.lower().startswith("basic "):
        return None
    try:
        decoded = base64.b64decode(header[6:].strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    client_id, separator, secret = decoded.partition(":")
    return (unquote(client_id), unquote(secret)) if separator else None


def oauth_routes(platform: Platform) -> list[BaseRoute]:
    """POST /oauth/token and the two .well-known documents."""
    root = platform.settings.api_root

    async def token(request: Request) -> Response:
        try:
            body = await read_body(request, ANONYMOUS_BODY_LIMIT)
        except ValidationFailed:
            return _oauth_error("invalid_request", "request body too large", 413, {"Connection": "close"})
        form = {key: values[0] for key, values in parse_qs(body.decode("utf-8", "replace")).items()}
        if form.get("grant_type") != "client_credentials":
            return _oauth_error("unsupported_grant_type", "only client_credentials is supported")
        credentials = _basic_credentials(request.headers.get("authorization")) or (
            form.get("client_id", ""),
            form.get("client_secret", ""),
        )
        try:
            issued = await platform.authenticator.issue_token(
                client_id=credentials[0], client_secret=credentials[1], requested_scope=form.get("scope")
            )
        except PermissionError:
            try:
                await platform.rate_limiter.check_anonymous(client_ip(request))
            except RateLimited as error:
                return _oauth_error("slow_down", error.message, 429, {"Retry-After": str(error.details["retry_after"])})
            return _oauth_error("invalid_client", "unknown client or wrong secret", 401, {"WWW-Authenticate": "Basic"})
        except ValueError:
            return _oauth_error("invalid_scope", "the requested scope is not within the client's scopes")
        return JSONResponse(
            {
                "access_token": issued.access_token,
                "token_type": "Bearer",
                "expires_in": issued.expires_in,
                "scope": issued.scope,
            },
            headers=NO_STORE,
        )

    async def authorization_server(request: Request) -> Response:
        return JSONResponse(
            {
                "issuer": root,
                "token_endpoint": f"{root}/oauth/token",
                "grant_types_supported": ["client_credentials"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
                "scopes_supported": list(scopes.ALL_SCOPES),
                "response_types_supported": [],
                "service_documentation": f"{root}/docs",
            }
        )

    async def protected_resource(request: Request) -> Response:
        return JSONResponse(
            {
                "resource": f"{root}/mcp" if request.url.path.endswith("/mcp") else root,
                "authorization_servers": [root],
                "scopes_supported": list(scopes.ALL_SCOPES),
                "bearer_methods_supported": ["header"],
                "resource_documentation": f"{root}/docs",
            }
        )

    return [
        Route("/oauth/token", token, methods=["POST"]),
        Route("/.well-known/oauth-authorization-server", authorization_server, methods=["GET"]),
        Route("/.well-known/oauth-protected-resource", protected_resource, methods=["GET"]),
        Route("/.well-known/oauth-protected-resource/mcp", protected_resource, methods=["GET"]),
    ]
