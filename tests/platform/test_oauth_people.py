"""OAuth 2.1 for remote MCP clients: the MCP SDK's own client end to end, and every way to be refused.

The server's public URL is a loopback address here: OAuth needs https elsewhere (Authlib refuses plain http).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl
from sqlalchemy import func, select
from starlette.applications import Starlette

from tests.conftest import Person, PersonFactory, csrf_of, settings_for_test, sign_in
from toolhost.config import Settings
from toolhost.platform import scopes
from toolhost.platform.models import AuthorizationCode, OAuthGrant
from toolhost.platform.oauth_records import redirect_uri_refusal
from toolhost.platform.results import Unauthenticated
from toolhost.platform.runtime import Platform

SERVER = "http://127.0.0.1:8000"
MCP_URL = f"{SERVER}/mcp"
REDIRECT = "http://127.0.0.1:3030/callback"
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """Test settings whose public URL is a loopback address, where OAuth may run over plain http."""
    return settings_for_test(database_url=database_url, media={"root": str(tmp_path / "media")}, public_url=SERVER)


@pytest.fixture
async def browser(app: Starlette) -> Any:
    """A person's browser: keeps cookies, follows no redirect by itself."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=SERVER) as http:
        yield http


class MemoryStorage:
    """The MCP SDK client's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def tools_of(platform: Platform, granted: set[str]) -> set[str]:
    return {spec.name for spec in platform.registry.all() if scopes.satisfies(frozenset(granted), spec.scope)}


async def consent_through_the_pages(
    browser: httpx.AsyncClient, authorization_url: str, person: Person, chosen: list[str]
) -> str:
    """What a person does in the browser: sign in when asked, tick the chosen scopes, allow. The final redirect."""
    first = await browser.get(authorization_url)
    assert first.status_code == 303 and first.headers["location"].startswith("/signin?next=")
    next_path = parse_qs(urlsplit(first.headers["location"]).query)["next"][0]
    signed_in = await sign_in(browser, person.email, person.password, next_path=next_path)
    assert signed_in.status_code == 303 and signed_in.headers["location"] == next_path
    page = await browser.get(next_path)
    assert page.status_code == 200 and "Allow" in page.text, page.text
    answer = await browser.post(
        next_path, data={"csrf_token": csrf_of(page.text), "decision": "allow", "scope": chosen}
    )
    assert answer.status_code == 303, answer.text
    return answer.headers["location"]


async def test_the_mcp_sdks_oauth_client_connects_through_sign_in_and_consent_to_exactly_the_consented_tools(
    app: Starlette, browser: httpx.AsyncClient, make_person: PersonFactory, platform: Platform
) -> None:
    person = await make_person(tier="pro")
    callback: dict[str, str] = {}

    async def redirect_handler(authorization_url: str) -> None:
        location = await consent_through_the_pages(browser, authorization_url, person, ["mcp:read", "mcp:analytics"])
        assert location.startswith(REDIRECT + "?")
        callback.update({key: values[0] for key, values in parse_qs(urlsplit(location).query).items()})

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=callback["code"], state=callback.get("state"))

    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=MCP_URL,
        client_metadata=OAuthClientMetadata(
            client_name="Test MCP client",
            redirect_uris=[AnyUrl(REDIRECT)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=SERVER, auth=provider)
    async with http, Client(streamable_http_client(MCP_URL, http_client=http)) as client:
        listed = await client.list_tools()
        balance = await client.call_tool("get_credit_balance", {"response_format": "json"})
    assert {tool.name for tool in listed.tools} == tools_of(platform, {"mcp:read", "mcp:analytics"})
    assert balance.is_error is False and balance.structured_content is not None
    assert balance.structured_content["plan"] == "pro"
    # Registered as a confidential client (RFC 7591's default method), bound to /mcp, narrowed on the consent page.
    assert storage.client_info is not None and storage.client_info.token_endpoint_auth_method == "client_secret_basic"
    assert storage.tokens is not None and storage.tokens.refresh_token is not None
    assert storage.tokens.scope == "mcp:read mcp:analytics"
    async with platform.session_factory() as session:
        grant = await session.scalar(select(OAuthGrant))
    assert grant is not None and grant.resource == MCP_URL and grant.scopes == ["mcp:read", "mcp:analytics"]
    # The token is for /mcp: /v1, another resource, refuses it.
    rest = await browser.post(
        "/v1/tools/get_credit_balance", headers={"Authorization": f"Bearer {storage.tokens.access_token}"}
    )
    assert rest.status_code == 401


# ------------------------------------------------------------------------------------------------------------
# The flow by hand, to break each step.


@dataclass
class Flow:
    """A registered client and one authorization it went through."""

    client_id: str
    client_secret: str | None
    verifier: str
    location: str

    @property
    def parameters(self) -> dict[str, str]:
        return {key: values[0] for key, values in parse_qs(urlsplit(self.location).query).items()}

    def token_form(self, **fields: str) -> dict[str, str]:
        form = {
            "grant_type": "authorization_code",
            "code": self.parameters.get("code", ""),
            "redirect_uri": REDIRECT,
            "code_verifier": self.verifier,
            "client_id": self.client_id,
            "resource": MCP_URL,
        }
        if self.client_secret:
            form["client_secret"] = self.client_secret
        return {**form, **fields}


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


async def register(browser: httpx.AsyncClient, **metadata: Any) -> httpx.Response:
    body = {
        "client_name": "Hand-driven client",
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "client_secret_post",
        **metadata,
    }
    return await browser.post("/oauth/register", json=body)


def authorization_url(client_id: str, challenge: str, **overrides: str) -> str:
    parameters = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "scope": "mcp:read mcp:write",
        "state": "the-state",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": MCP_URL,
        **overrides,
    }
    return f"/oauth/authorize?{urlencode(parameters)}"


async def authorized(
    browser: httpx.AsyncClient, person: Person, chosen: list[str] | None = None, **overrides: str
) -> Flow:
    registered = (await register(browser)).json()
    verifier, challenge = pkce_pair()
    if (await browser.get("/signin")).status_code == 200:
        await sign_in(browser, person.email, person.password)
    url = authorization_url(registered["client_id"], challenge, **overrides)
    page = await browser.get(url)
    assert page.status_code == 200, page.text
    answer = await browser.post(
        url, data={"csrf_token": csrf_of(page.text), "decision": "allow", "scope": chosen or ["mcp:read"]}
    )
    return Flow(registered["client_id"], registered.get("client_secret"), verifier, answer.headers["location"])


async def grants_in_database(platform: Platform) -> int:
    async with platform.session_factory() as session:
        return int(await session.scalar(select(func.count()).select_from(OAuthGrant)) or 0)


async def mcp_status(browser: httpx.AsyncClient, token: str) -> int:
    response = await browser.post("/mcp", json=TOOLS_LIST, headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"})
    return response.status_code


async def test_a_replayed_authorization_code_is_refused_and_revokes_what_the_first_exchange_gave(
    browser: httpx.AsyncClient, make_person: PersonFactory, platform: Platform
) -> None:
    flow = await authorized(browser, await make_person())
    first = await browser.post("/oauth/token", data=flow.token_form())
    assert first.status_code == 200, first.text
    assert await mcp_status(browser, first.json()["access_token"]) == 200
    replay = await browser.post("/oauth/token", data=flow.token_form())
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert await mcp_status(browser, first.json()["access_token"]) == 401
    refresh = await browser.post(
        "/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": first.json()["refresh_token"],
            "client_id": flow.client_id,
            "client_secret": flow.client_secret or "",
        },
    )
    assert refresh.status_code == 400 and refresh.json()["error"] == "invalid_grant"


async def test_a_pkce_verifier_mismatch_is_refused_and_spends_the_code(
    browser: httpx.AsyncClient, make_person: PersonFactory, platform: Platform
) -> None:
    flow = await authorized(browser, await make_person())
    wrong = await browser.post("/oauth/token", data=flow.token_form(code_verifier=pkce_pair()[0]))
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    right_too_late = await browser.post("/oauth/token", data=flow.token_form())
    assert right_too_late.status_code == 400 and right_too_late.json()["error"] == "invalid_grant"
    assert await grants_in_database(platform) == 0


async def test_pkce_is_required_with_s256_on_every_authorization_request(
    browser: httpx.AsyncClient, make_person: PersonFactory
) -> None:
    person = await make_person()
    client_id = (await register(browser)).json()["client_id"]
    await sign_in(browser, person.email, person.password)
    for overrides in ({"code_challenge": ""}, {"code_challenge_method": "plain"}, {"code_challenge_method": ""}):
        response = await browser.get(authorization_url(client_id, pkce_pair()[1], **overrides))
        assert response.status_code == 302
        assert parse_qs(urlsplit(response.headers["location"]).query)["error"] == ["invalid_request"]


async def test_an_unregistered_redirect_uri_is_shown_to_the_person_and_never_redirected_to(
    browser: httpx.AsyncClient, make_person: PersonFactory
) -> None:
    person = await make_person()
    client_id = (await register(browser)).json()["client_id"]
    await sign_in(browser, person.email, person.password)
    for elsewhere in ("https://evil.example/callback", "http://127.0.0.1:3030/other"):
        response = await browser.get(authorization_url(client_id, pkce_pair()[1], redirect_uri=elsewhere))
        assert response.status_code == 400 and "Nothing was granted" in response.text
        assert "location" not in response.headers
    unknown = await browser.get(authorization_url("no-such-client", pkce_pair()[1]))
    assert unknown.status_code == 400 and "Nothing was granted" in unknown.text
    # A loopback redirect may come back on another port (a native client's listener takes a free one).
    other_port = await browser.get(
        authorization_url(client_id, pkce_pair()[1], redirect_uri="http://127.0.0.1:49152/callback")
    )
    assert other_port.status_code == 200 and "Allow" in other_port.text


async def test_registration_accepts_https_and_loopback_redirects_and_the_operators_allowlist_only(
    browser: httpx.AsyncClient,
) -> None:
    for good in (
        ["https://claude.example/api/callback"],
        ["http://localhost:6274/oauth/callback"],
        ["http://[::1]/cb"],
    ):
        response = await register(browser, redirect_uris=good)
        assert response.status_code == 201, response.text
        assert response.json()["redirect_uris"] == good
    for bad in (["http://intranet.example/cb"], ["cursor://anysphere/cb"], ["https://x.example/cb#frag"], []):
        response = await register(browser, redirect_uris=bad)
        assert response.status_code == 400 and response.json()["error"] == "invalid_redirect_uri", bad
    public = await register(browser, token_endpoint_auth_method="none")
    assert public.status_code == 201 and "client_secret" not in public.json()
    assert redirect_uri_refusal("cursor://anysphere/cb", ["cursor://anysphere/"]) is None
    assert redirect_uri_refusal("http://intranet.example/cb", ["http://intranet.example/"]) is None


async def test_a_scope_beyond_the_tier_is_refused_with_invalid_scope_and_nothing_granted(
    browser: httpx.AsyncClient, make_person: PersonFactory, platform: Platform
) -> None:
    person = await make_person(tier="pro")
    client_id = (await register(browser)).json()["client_id"]
    await sign_in(browser, person.email, person.password)
    only_beyond = await browser.get(authorization_url(client_id, pkce_pair()[1], scope="mcp:comments mcp:autopilot"))
    assert only_beyond.status_code == 302
    refused = parse_qs(urlsplit(only_beyond.headers["location"]).query)
    assert refused["error"] == ["invalid_scope"] and refused["state"] == ["the-state"]
    # Asked for everything: the page offers the tier's scopes and shows the rest as unavailable.
    url = authorization_url(client_id, pkce_pair()[1], scope="mcp:full")
    page = await browser.get(url)
    assert page.status_code == 200 and "not on the pro plan" in page.text
    assert 'value="mcp:comments" disabled' in page.text and 'value="mcp:read" checked' in page.text
    # A form altered to grant one of them anyway is refused.
    tampered = await browser.post(
        url, data={"csrf_token": csrf_of(page.text), "decision": "allow", "scope": ["mcp:read", "mcp:comments"]}
    )
    assert tampered.status_code == 303
    assert parse_qs(urlsplit(tampered.headers["location"]).query)["error"] == ["invalid_scope"]
    async with platform.session_factory() as session:
        assert not await session.scalar(select(func.count()).select_from(AuthorizationCode))


async def test_a_consent_form_without_its_csrf_token_grants_nothing(
    browser: httpx.AsyncClient, make_person: PersonFactory, platform: Platform
) -> None:
    person = await make_person()
    client_id = (await register(browser)).json()["client_id"]
    await sign_in(browser, person.email, person.password)
    url = authorization_url(client_id, pkce_pair()[1])
    assert (await browser.get(url)).status_code == 200
    for form in ({"decision": "allow", "scope": "mcp:read"}, {"csrf_token": "f" * 64, "decision": "allow"}):
        response = await browser.post(url, data=form)
        assert response.status_code == 403 and "nothing was granted" in response.text
        assert "location" not in response.headers
    async with platform.session_factory() as session:
        assert not await session.scalar(select(func.count()).select_from(AuthorizationCode))


async def test_a_wrong_password_on_the_way_to_consent_grants_nothing(
    browser: httpx.AsyncClient, make_person: PersonFactory, platform: Platform
) -> None:
    person = await make_person()
    client_id = (await register(browser)).json()["client_id"]
    url = authorization_url(client_id, pkce_pair()[1])
    to_sign_in = await browser.get(url)
    next_path = parse_qs(urlsplit(to_sign_in.headers["location"]).query)["next"][0]
    wrong = await sign_in(browser, person.email, "not the right password", next_path=next_path)
    assert wrong.status_code == 401 and "Wrong email address or password." in wrong.text
    assert (await browser.get(url)).status_code == 303
    assert await grants_in_database(platform) == 0


async def test_denying_sends_access_denied_back_to_the_client(
    browser: httpx.AsyncClient, make_person: PersonFactory
) -> None:
    person = await make_person()
    client_id = (await register(browser)).json()["client_id"]
    await sign_in(browser, person.email, person.password)
    url = authorization_url(client_id, pkce_pair()[1])
    page = await browser.get(url)
    denied = await browser.post(url, data={"csrf_token": csrf_of(page.text), "decision": "deny"})
    assert denied.status_code == 303 and denied.headers["location"].startswith(REDIRECT)
    assert parse_qs(urlsplit(denied.headers["location"]).query)["error"] == ["access_denied"]


async def test_refresh_tokens_rotate_and_a_reused_one_revokes_the_whole_family(
    browser: httpx.AsyncClient, make_person: PersonFactory, platform: Platform
) -> None:
    flow = await authorized(browser, await make_person())
    first = (await browser.post("/oauth/token", data=flow.token_form())).json()

    def refresh_form(token: str) -> dict[str, str]:
        return {
            "grant_type": "refresh_token",
            "refresh_token": token,
            "client_id": flow.client_id,
            "client_secret": flow.client_secret or "",
            "resource": MCP_URL,
        }

    second = await browser.post("/oauth/token", data=refresh_form(first["refresh_token"]))
    assert second.status_code == 200, second.text
    rotated = second.json()
    assert rotated["refresh_token"] != first["refresh_token"] and rotated["scope"] == "mcp:read"
    assert await mcp_status(browser, rotated["access_token"]) == 200
    reused = await browser.post("/oauth/token", data=refresh_form(first["refresh_token"]))
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    assert await mcp_status(browser, rotated["access_token"]) == 401
    after = await browser.post("/oauth/token", data=refresh_form(rotated["refresh_token"]))
    assert after.status_code == 400 and after.json()["error"] == "invalid_grant"
    async with platform.session_factory() as session:
        grant = await session.scalar(select(OAuthGrant))
    assert grant is not None and grant.revoked_because == "refresh_token_reused"


async def test_revoking_a_refresh_token_ends_its_access_tokens(
    browser: httpx.AsyncClient, make_person: PersonFactory
) -> None:
    flow = await authorized(browser, await make_person())
    issued = (await browser.post("/oauth/token", data=flow.token_form())).json()
    revoked = await browser.post(
        "/oauth/revoke",
        data={
            "token": issued["refresh_token"],
            "token_type_hint": "refresh_token",
            "client_id": flow.client_id,
            "client_secret": flow.client_secret or "",
        },
    )
    assert revoked.status_code == 200
    assert await mcp_status(browser, issued["access_token"]) == 401
    unknown = await browser.post(
        "/oauth/revoke",
        data={"token": "thr_unknown", "client_id": flow.client_id, "client_secret": flow.client_secret or ""},
    )
    assert unknown.status_code == 200


async def test_the_resource_parameter_binds_the_tokens_audience(
    browser: httpx.AsyncClient, make_person: PersonFactory
) -> None:
    person = await make_person()
    whole = await authorized(browser, person, resource=SERVER)
    token = (await browser.post("/oauth/token", data=whole.token_form(resource=SERVER))).json()["access_token"]
    assert await mcp_status(browser, token) == 200
    rest = await browser.post("/v1/tools/get_credit_balance", headers={"Authorization": f"Bearer {token}"})
    assert rest.status_code == 200
    elsewhere = await authorized(browser, person)
    mismatch = await browser.post("/oauth/token", data=elsewhere.token_form(resource=SERVER))
    assert mismatch.status_code == 400 and mismatch.json()["error"] == "invalid_target"
    client_id = (await register(browser)).json()["client_id"]
    foreign = await browser.get(authorization_url(client_id, pkce_pair()[1], resource="https://other.example/mcp"))
    assert parse_qs(urlsplit(foreign.headers["location"]).query)["error"] == ["invalid_target"]


async def test_a_person_acting_through_a_client_is_named_and_keeps_to_the_consented_scopes(
    browser: httpx.AsyncClient, make_person: PersonFactory
) -> None:
    person = await make_person(tier="agency")
    flow = await authorized(browser, person, chosen=["mcp:read"], resource=SERVER)
    token = (await browser.post("/oauth/token", data=flow.token_form(resource=SERVER))).json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    denied = await browser.post(
        "/v1/tools/save_content_plan", headers=headers, json={"plan": {"topic": "t", "posts": [{"caption": "c"}]}}
    )
    assert denied.status_code == 403
    listed = await browser.get("/v1/tools", headers=headers)
    assert {tool["scope"] for tool in listed.json()} == {"mcp:read"}


async def test_the_metadata_names_every_endpoint_and_the_401_of_mcp_points_at_it(browser: httpx.AsyncClient) -> None:
    unauthenticated = await browser.post("/mcp", json=TOOLS_LIST, headers=MCP_HEADERS)
    assert unauthenticated.status_code == 401
    challenge = unauthenticated.headers["www-authenticate"]
    assert f'resource_metadata="{SERVER}/.well-known/oauth-protected-resource/mcp"' in challenge
    resource = (await browser.get("/.well-known/oauth-protected-resource/mcp")).json()
    assert resource["resource"] == MCP_URL and resource["authorization_servers"] == [SERVER]
    metadata = (await browser.get("/.well-known/oauth-authorization-server")).json()
    assert metadata["issuer"] == SERVER
    for endpoint, path in (
        ("authorization_endpoint", "/oauth/authorize"),
        ("token_endpoint", "/oauth/token"),
        ("registration_endpoint", "/oauth/register"),
        ("revocation_endpoint", "/oauth/revoke"),
    ):
        assert metadata[endpoint] == SERVER + path
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert set(metadata["grant_types_supported"]) == {"authorization_code", "refresh_token", "client_credentials"}
    # A client running in a browser (the MCP Inspector) may call the token endpoint from its own origin.
    preflight = await browser.options(
        "/oauth/token", headers={"Origin": "http://localhost:6274", "Access-Control-Request-Method": "POST"}
    )
    assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == "*"


async def test_work_started_through_a_client_runs_as_its_grant_until_the_grant_is_revoked(
    browser: httpx.AsyncClient, make_person: PersonFactory, platform: Platform
) -> None:
    person = await make_person(tier="team")
    flow = await authorized(browser, person, chosen=["mcp:read", "mcp:write"], resource=SERVER)
    issued = (await browser.post("/oauth/token", data=flow.token_form(resource=SERVER))).json()
    async with platform.session_factory() as session:
        grant = await session.scalar(select(OAuthGrant))
    assert grant is not None
    later = await platform.authenticator.principal_for_credential(grant.id)
    assert later.scopes == frozenset({"mcp:read", "mcp:write"}) and later.credential_name.startswith(person.email)
    await browser.post(
        "/oauth/revoke",
        data={"token": issued["access_token"], "client_id": flow.client_id, "client_secret": flow.client_secret or ""},
    )
    with pytest.raises(Unauthenticated, match="revoked"):
        await platform.authenticator.principal_for_credential(grant.id)
