"""The OAuth 2.1 endpoints and the metadata documents that describe them.

- `GET|POST /oauth/authorize`: a signed-in person sees what an MCP client asks for and allows it, narrowed
  to what they choose within the account's tier, or denies it (anyone else signs in first).
- `POST /oauth/token`: client credentials (an operator's clients, below), and authorization code and refresh
  token for registered clients (`oauth_server`).
- `POST /oauth/register` (RFC 7591), `POST /oauth/revoke` (RFC 7009).
- `/.well-known/oauth-authorization-server` (RFC 8414) and `/.well-known/oauth-protected-resource[/mcp]`
  (RFC 9728), which the 401 of /mcp points at.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import parse_qs, parse_qsl, unquote

from authlib.oauth2.rfc6749 import InsecureTransportError
from sqlalchemy.orm import Session
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route, request_response
from starlette.types import ASGIApp

from toolhost.platform import oauth_server, scopes, websession
from toolhost.platform.oauth_records import Answer, FormRequest, json_request
from toolhost.platform.oauth_server import ConsentRequest, Decision, Problem
from toolhost.platform.pages import field, read_form, render
from toolhost.platform.rest import ANONYMOUS_BODY_LIMIT, client_ip, read_body
from toolhost.platform.results import RateLimited, ValidationFailed
from toolhost.platform.runtime import Platform

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
AUTHLIB_GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})
Outcome = TypeVar("Outcome")


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


def _json_answer(answer: Answer) -> Response:
    headers = {name: value for name, value in answer.headers if name.lower() != "content-type"}
    return JSONResponse(answer.body, answer.status, {**NO_STORE, **headers})


def _open_to_browsers(handler: Callable[[Request], object], methods: list[str]) -> ASGIApp:
    """Endpoints an MCP client running in a browser (the MCP Inspector) calls from its own origin."""
    return CORSMiddleware(
        request_response(handler),  # type: ignore[arg-type]
        allow_origins=["*"],
        allow_methods=methods,
        allow_headers=["authorization", "content-type", "mcp-protocol-version"],
    )


def oauth_routes(platform: Platform) -> list[BaseRoute]:
    """The authorization server's endpoints and the two .well-known documents."""
    settings = platform.settings
    root = settings.api_root

    def public_uri(request: Request) -> str:
        # Authlib refuses plain http outside loopback (OAuth needs TLS): it judges the address callers use.
        return root + request.url.path + (f"?{request.url.query}" if request.url.query else "")

    async def in_transaction(step: Callable[[Session], Outcome], *, commit: Callable[[Outcome], bool]) -> Outcome:
        """Runs one synchronous Authlib step on a session of its own; commits only what `commit` approves."""
        async with platform.session_factory() as session:
            outcome = await session.run_sync(step)
            if commit(outcome):
                await session.commit()
            return outcome

    async def refused_client(request: Request) -> Response | None:
        """The anonymous limit per IP, counted on every failed client authentication."""
        try:
            await platform.rate_limiter.check_anonymous(client_ip(request))
        except RateLimited as error:
            return _oauth_error("slow_down", error.message, 429, {"Retry-After": str(error.details["retry_after"])})
        return None

    async def token(request: Request) -> Response:
        try:
            body = await read_body(request, ANONYMOUS_BODY_LIMIT)
        except ValidationFailed:
            return _oauth_error("invalid_request", "request body too large", 413, {"Connection": "close"})
        items = parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
        form = {key: values[0] for key, values in parse_qs(body.decode("utf-8", "replace")).items()}
        if form.get("grant_type") == "client_credentials":
            return await client_credentials(request, form)
        if form.get("grant_type") not in AUTHLIB_GRANT_TYPES:
            return _oauth_error("unsupported_grant_type", "use authorization_code, refresh_token or client_credentials")
        headers = {"Authorization": request.headers["authorization"]} if "authorization" in request.headers else {}
        try:
            oauth_request = FormRequest("POST", public_uri(request), items, headers)
        except InsecureTransportError as error:
            return _oauth_error(error.error, error.description)
        answer = await in_transaction(
            lambda db: oauth_server.token(db, settings, oauth_request), commit=lambda answer: answer.status == 200
        )
        if answer.status in (400, 401) and answer.body.get("error") in ("invalid_client", "invalid_grant"):
            limited = await refused_client(request)
            if limited is not None:
                return limited
        return _json_answer(answer)

    async def client_credentials(request: Request, form: dict[str, str]) -> Response:
        credentials = _basic_credentials(request.headers.get("authorization")) or (
            form.get("client_id", ""),
            form.get("client_secret", ""),
        )
        try:
            issued = await platform.authenticator.issue_token(
                client_id=credentials[0], client_secret=credentials[1], requested_scope=form.get("scope")
            )
        except PermissionError:
            limited = await refused_client(request)
            if limited is not None:
                return limited
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

    async def authorize(request: Request) -> Response:
        person = await websession.signed_in(request)
        if person is None:
            return websession.sign_in_redirect(request)
        decision = None
        if request.method == "POST":
            try:
                form = await read_form(request)
            except ValidationFailed:
                refused = render(
                    "message.html", title="Authorize", person=person, status=413, message="Form too large."
                )
                refused.headers["Connection"] = "close"  # the rest of the body is never read
                return refused
            if not websession.csrf_accepted(person, form):
                return render(
                    "message.html",
                    title="Nothing was granted",
                    person=person,
                    status=403,
                    message="This consent form has expired or came from another site, so nothing was granted. "
                    "Connect again from your application.",
                    message_is_error=True,
                )
            chosen = frozenset(value for value in form.getlist("scope") if isinstance(value, str))
            decision = Decision(allow=field(form, "decision") == "allow", scopes=chosen)
        try:
            oauth_request = FormRequest("GET", public_uri(request), list(request.query_params.multi_items()), {})
        except InsecureTransportError:
            return render(
                "message.html",
                title="Authorize",
                person=person,
                status=400,
                message="This server must be reached over https to authorize applications.",
                message_is_error=True,
            )
        outcome = await in_transaction(
            lambda db: oauth_server.authorize(db, settings, oauth_request, person, decision), commit=lambda _: True
        )
        if isinstance(outcome, Problem):
            return render(
                "message.html",
                title="This authorization request is not valid",
                person=person,
                status=400,
                message=f"Nothing was granted: {outcome.description}",
                message_is_error=True,
            )
        if isinstance(outcome, ConsentRequest):
            return consent_page(request, person, outcome)
        location = outcome.location or root
        return RedirectResponse(location, status_code=303 if request.method == "POST" else 302, headers=NO_STORE)

    def consent_page(request: Request, person: websession.Person, asked: ConsentRequest) -> Response:
        rows = [
            {
                "name": scope,
                "description": oauth_server.SCOPE_DESCRIPTIONS[scope],
                "offered": scope in asked.offered,
            }
            for scope in scopes.LEAF_SCOPES
            if scope in asked.requested
        ]
        return render(
            "consent.html",
            title=f"Allow {asked.client_name}?",
            person=person,
            form_targets=(asked.redirect_origin,),
            client_name=asked.client_name,
            redirect_host=asked.redirect_host,
            resource=asked.resource,
            rows=rows,
            tier=person.principal.tier,
            action=request.url.path + (f"?{request.url.query}" if request.url.query else ""),
        )

    async def register(request: Request) -> Response:
        limited = await refused_client(request)
        if limited is not None:
            return limited
        try:
            body = await read_body(request, ANONYMOUS_BODY_LIMIT)
            metadata = json.loads(body)
        except ValidationFailed:
            return _oauth_error("invalid_client_metadata", "request body too large", 413, {"Connection": "close"})
        except (ValueError, RecursionError):
            return _oauth_error("invalid_client_metadata", "the body is not a JSON object")
        if not isinstance(metadata, dict):
            return _oauth_error("invalid_client_metadata", "the body is not a JSON object")
        oauth_request = json_request("POST", public_uri(request), metadata, {})
        answer = await in_transaction(
            lambda db: oauth_server.register(db, settings, oauth_request), commit=lambda answer: answer.status == 201
        )
        return _json_answer(answer)

    async def revoke(request: Request) -> Response:
        try:
            body = await read_body(request, ANONYMOUS_BODY_LIMIT)
        except ValidationFailed:
            return _oauth_error("invalid_request", "request body too large", 413, {"Connection": "close"})
        items = parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
        headers = {"Authorization": request.headers["authorization"]} if "authorization" in request.headers else {}
        try:
            oauth_request = FormRequest("POST", public_uri(request), items, headers)
        except InsecureTransportError as error:
            return _oauth_error(error.error, error.description)
        answer = await in_transaction(
            lambda db: oauth_server.revoke(db, settings, oauth_request), commit=lambda answer: answer.status == 200
        )
        return _json_answer(answer)

    async def authorization_server(request: Request) -> Response:
        return JSONResponse(oauth_server.authorization_server_metadata(settings))

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
        Route("/oauth/authorize", authorize, methods=["GET", "POST"]),
        Route("/oauth/token", _open_to_browsers(token, ["POST"]), methods=["POST", "OPTIONS"]),
        Route("/oauth/register", _open_to_browsers(register, ["POST"]), methods=["POST", "OPTIONS"]),
        Route("/oauth/revoke", _open_to_browsers(revoke, ["POST"]), methods=["POST", "OPTIONS"]),
        Route(
            "/.well-known/oauth-authorization-server",
            _open_to_browsers(authorization_server, ["GET"]),
            methods=["GET", "OPTIONS"],
        ),
        Route(
            "/.well-known/oauth-protected-resource",
            _open_to_browsers(protected_resource, ["GET"]),
            methods=["GET", "OPTIONS"],
        ),
        Route(
            "/.well-known/oauth-protected-resource/mcp",
            _open_to_browsers(protected_resource, ["GET"]),
            methods=["GET", "OPTIONS"],
        ),
    ]
