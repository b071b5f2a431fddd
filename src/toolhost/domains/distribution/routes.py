"""Web routes of distribution: the connect page, OAuth callbacks, and the webhook events endpoint.

- `GET|POST /app/connect/<token>`: the page a start_platform_connection link opens; it offers the
  platform's configured connectors (a webhook URL, a token, or the platform's OAuth flow) and creates the
  connected account. A webhook's signing secret is shown on the result page, once.
- `GET /app/connect/<token>/oauth/<connector>` starts an OAuth flow; `GET /app/connect/oauth/callback`
  finishes it.
- `POST /v1/connectors/webhook/events`: a receiver sends metric snapshots and comments, signed like
  deliveries (`X-Toolhost-Signature`) with its account's secret.
"""

from __future__ import annotations

import logging
import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs

from sqlalchemy import select
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from toolhost.db.base import utcnow
from toolhost.domains.distribution import accounts as accounts_service
from toolhost.domains.distribution.models import ConnectedAccount, ConnectionLink, ConnectorEvent
from toolhost.platform.execution import new_request_id
from toolhost.platform.pages import render
from toolhost.platform.policy import refuse_unstorable_text
from toolhost.platform.rest import error_response, parse_json_body, read_body
from toolhost.platform.results import ToolError, Unauthenticated, ValidationFailed
from toolhost.providers.connectors import webhook
from toolhost.providers.connectors.mastodon import MastodonConnector
from toolhost.providers.connectors.oauth import OAuthConnector
from toolhost.providers.connectors.registry import Connectors
from toolhost.providers.connectors.vault import TokenVault
from toolhost.providers.connectors.youtube import YouTubeConnector
from toolhost.providers.platforms import rules_for

logger = logging.getLogger(__name__)

EVENTS_MAX_BYTES = 1024 * 1024
FORM_MAX_BYTES = 16 * 1024
MAX_EVENTS = 1000
FIELD_TYPES = {"access_token": "password", "app_password": "password", "refresh_token": "password"}


def _page(title: str, message: str, status: int = 200) -> HTMLResponse:
    """A connect page that only says something: what went wrong (4xx) or what happened."""
    return render("message.html", title=title, message=message, message_is_error=status >= 400, status=status)


def _platform(request: Request) -> Any:
    return request.app.state.platform


def _redirect_uri(settings: Any) -> str:
    return f"{settings.api_root}/app/connect/oauth/callback"


async def connect_page(request: Request) -> Response:
    """Shows the connectors of the link's platform, or handles the submitted form."""
    platform = _platform(request)
    token = request.path_params["token"]
    connectors = Connectors(platform.settings)
    async with platform.session_factory() as session, session.begin():
        try:
            link = await accounts_service.open_link(session=session, settings=platform.settings, token=token)
        except ToolError as error:
            return _page("Link not usable", error.message, 404)
        link_platform = link.platform
    if request.method == "POST":
        return await _submit(request, token, connectors)
    offered: list[dict[str, Any]] = []
    for name in connectors.for_platform(link_platform):
        connector = connectors.get(name)
        assert connector is not None
        if name == "youtube" or isinstance(connector, OAuthConnector):
            label = connector.sign_in_with if isinstance(connector, OAuthConnector) else "Google"
            offered.append({"name": name, "sign_in_with": label})
            continue
        fields = [
            {"name": field, "label": label, "type": FIELD_TYPES.get(field, "text")}
            for field, label in connector.connect_fields.items()
        ]
        offered.append({"name": name, "fields": fields, "instance_oauth": name == "mastodon"})
    return render(
        "connect.html",
        title=f"Connect {rules_for(link_platform).display_name}",
        token=token,
        offered=offered,
        unconfigured=connectors.unconfigured_for(link_platform),
        form_targets=("https:",),
    )


async def _submit(request: Request, token: str, connectors: Connectors) -> Response:
    platform = _platform(request)
    try:
        body = await read_body(request, FORM_MAX_BYTES)
    except ValidationFailed:
        response = _page("Too large", "The form is too large.", 413)
        response.headers["Connection"] = "close"
        return response
    fields = {
        name: values[0] for name, values in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()
    }
    connector_name = fields.pop("connector", "")
    async with platform.session_factory() as session, session.begin():
        try:
            link = await accounts_service.open_link(session=session, settings=platform.settings, token=token)
            if connector_name not in connectors.for_platform(link.platform):
                return _page("Not available", "That connector is not configured for this platform.", 400)
            connector = connectors.get(connector_name)
            assert connector is not None
            result = await connector.connect(platform=link.platform, fields=fields)
            account = await accounts_service.complete_link(
                session=session,
                settings=platform.settings,
                link=link,
                connector_name=connector_name,
                result=result,
            )
        except ToolError as error:
            return _page("Could not connect", error.message, 400)
        account_id = str(account.id)
        username = account.username or ""
    return render(
        "connected.html",
        title="Connected",
        username=username,
        account_id=account_id,
        shown_once={name.replace("_", " "): value for name, value in result.shown_once.items()},
    )


async def start_oauth(request: Request) -> Response:
    """Redirects to the platform's authorization page, remembering the link under a fresh state."""
    platform = _platform(request)
    token = request.path_params["token"]
    connector_name = request.path_params["connector"]
    connectors = Connectors(platform.settings)
    async with platform.session_factory() as session, session.begin():
        try:
            link = await accounts_service.open_link(session=session, settings=platform.settings, token=token)
            connector = connectors.require(connector_name, link.platform)
            state = secrets.token_urlsafe(24)
            link.oauth_state = state
            redirect_uri = _redirect_uri(platform.settings)
            if isinstance(connector, OAuthConnector):
                authorization = connector.authorization(redirect_uri=redirect_uri, state=state)
                target = authorization.url
                # The PKCE verifier stays on toolhost's side, sealed, until the platform sends the person back.
                link.oauth_settings = {
                    "connector": connector_name,
                    "verifier": TokenVault(platform.settings.keyring).seal(
                        {"code_verifier": authorization.code_verifier}
                    ),
                }
            elif isinstance(connector, YouTubeConnector):
                target = connector.authorize_url(redirect_uri=redirect_uri, state=state)
                link.oauth_settings = {"connector": "youtube"}
            elif isinstance(connector, MastodonConnector):
                app = await connector.register_app(
                    instance_url=request.query_params.get("instance_url", ""), redirect_uri=redirect_uri
                )
                vault = TokenVault(platform.settings.keyring)
                link.oauth_settings = {"connector": "mastodon", "app": vault.seal(app)}
                target = connector.authorize_url(app=app, redirect_uri=redirect_uri, state=state)
            else:
                return _page("Not available", "This connector has no OAuth flow.", 400)
        except ToolError as error:
            return _page("Could not start", error.message, 400)
    return RedirectResponse(target, status_code=303)


async def oauth_callback(request: Request) -> Response:
    """Exchanges the authorization code and creates the account bound to the link's project."""
    platform = _platform(request)
    state = request.query_params.get("state", "")
    code = request.query_params.get("code", "")
    connectors = Connectors(platform.settings)
    async with platform.session_factory() as session, session.begin():
        link = (
            await session.scalar(select(ConnectionLink).where(ConnectionLink.oauth_state == state)) if state else None
        )
        if link is None or link.completed_at is not None:
            return _page("Link not usable", "This sign-in does not belong to an open connect page.", 400)
        if not code:
            # RFC 6749 §4.1.2.1: the person refused, or the platform did; `error` says which, never a secret.
            reason = request.query_params.get("error", "no authorization code")[:64]
            return _page("Not connected", f"The platform did not authorize toolhost ({reason}).", 400)
        page_seconds = timedelta(seconds=platform.settings.distribution.connect_page_seconds)
        if link.opened_at is None or link.opened_at + page_seconds <= utcnow():
            return _page("Link not usable", "This connect page expired; start a new link.", 400)
        try:
            connector_name = str(link.oauth_settings.get("connector"))
            connector = connectors.get(connector_name)
            redirect_uri = _redirect_uri(platform.settings)
            if isinstance(connector, OAuthConnector):
                verifier = TokenVault(platform.settings.keyring).open(str(link.oauth_settings["verifier"]))
                result = await connector.complete(
                    platform=link.platform,
                    code=code,
                    redirect_uri=redirect_uri,
                    code_verifier=verifier.get("code_verifier"),
                )
            elif isinstance(connector, YouTubeConnector):
                result = await connector.exchange_code(code=code, redirect_uri=redirect_uri)
            elif isinstance(connector, MastodonConnector):
                app = TokenVault(platform.settings.keyring).open(str(link.oauth_settings["app"]))
                result = await connector.exchange_code(app=app, redirect_uri=redirect_uri, code=code)
            else:
                return _page("Not available", "That connector is not configured.", 400)
            account = await accounts_service.complete_link(
                session=session,
                settings=platform.settings,
                link=link,
                connector_name=connector_name,
                result=result,
            )
        except ToolError as error:
            return _page("Could not connect", error.message, 400)
        label = account.username or ""
    return render("connected.html", title="Connected", username=label, account_id=None, shown_once={})


async def webhook_events(request: Request) -> Response:
    """Stores metric snapshots and comments a webhook receiver sends, after checking its signature.

    Every refusal is a ToolResult with a request id, as on /v1/tools: validation_error 400 (413 over 1 MB) for a
    body that is not a JSON object of lists of events, or holds text no database stores; 401 for a bad signature.
    """
    platform = _platform(request)
    request_id = new_request_id()
    try:
        body = await read_body(request, EVENTS_MAX_BYTES)
        document = parse_json_body(body)
        events = _events_of(document)
        refuse_unstorable_text(document)
    except ValidationFailed as error:
        return error_response(error, request_id)
    vault = TokenVault(platform.settings.keyring)
    async with platform.session_factory() as session, session.begin():
        account = await session.get(ConnectedAccount, events.account_id)
        header = request.headers.get(webhook.SIGNATURE_HEADER, "")
        if (
            account is None
            or account.connector != "webhook"
            or not webhook.verify(str(vault.open(account.secret)["signing_secret"]), body, header)
        ):
            refused = error_response(Unauthenticated("unknown account or bad signature"), request_id)
            del refused.headers["WWW-Authenticate"]  # the credential is the body's signature, not a bearer token
            return refused
        for kind, item in events.items:
            session.add(
                ConnectorEvent(
                    connected_account_id=account.id,
                    kind=kind,
                    external_post_id=str(item["external_post_id"])[:300],
                    payload=_event_payload(kind, item),
                    received_at=utcnow(),
                )
            )
    return JSONResponse({"accepted": len(events.items)}, status_code=202)


@dataclass(frozen=True, slots=True)
class _Events:
    account_id: uuid.UUID
    items: list[tuple[str, dict[str, Any]]]


def _events_of(document: Any) -> _Events:
    """The account and the (kind, item) pairs of an events document, or validation_error naming what is wrong."""
    try:
        account_id = uuid.UUID(str(document["account_id"]))
    except (ValueError, KeyError, TypeError):
        raise ValidationFailed(
            "a JSON object with account_id is required",
            field_errors=[{"path": "account_id", "message": "the connected account's id (a UUID)"}],
        ) from None
    metrics = document.get("metrics") or []
    comments = document.get("comments") or []
    if not isinstance(metrics, list) or not isinstance(comments, list) or len(metrics) + len(comments) > MAX_EVENTS:
        raise ValidationFailed(f"metrics and comments are lists of at most {MAX_EVENTS} items")
    items: list[tuple[str, dict[str, Any]]] = []
    for kind, field, given in (("metrics", "metrics", metrics), ("comment", "comments", comments)):
        for index, item in enumerate(given):
            if not isinstance(item, dict) or not str(item.get("external_post_id") or "").strip():
                raise ValidationFailed(
                    f"each {kind} item needs external_post_id",
                    field_errors=[{"path": f"{field}[{index}].external_post_id", "message": "required"}],
                )
            items.append((kind, item))
    return _Events(account_id=account_id, items=items)


# An event a webhook receiver posted (JSON in the receiver's own shape), as the comments and analytics
# domains read it.
def _event_payload(kind: str, item: dict[str, Any]) -> dict[str, Any]:
    if kind == "metrics":
        given = item.get("metrics")
        values: dict[str, Any] = given if isinstance(given, dict) else {}
        return {
            name[:50]: value
            for name, value in values.items()
            if isinstance(value, int | float) and not isinstance(value, bool)
        }
    return {
        "id": str(item.get("id") or "")[:300],
        "text": str(item.get("text") or "")[:10_000],
        "author": str(item.get("author") or "")[:300] or None,
        "created_at": str(item.get("created_at") or "")[:64],
    }


routes = [
    Route("/app/connect/oauth/callback", oauth_callback, methods=["GET"]),
    Route("/app/connect/{token}", connect_page, methods=["GET", "POST"]),
    Route("/app/connect/{token}/oauth/{connector}", start_oauth, methods=["GET"]),
    Route("/v1/connectors/webhook/events", webhook_events, methods=["POST"]),
]
