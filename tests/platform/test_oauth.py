"""OAuth 2.1 client credentials: tokens accepted wherever a key is, refused when forged, foreign or stale."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import httpx
import jwt

from tests.conftest import TEST_SECRET, EndlessBody, Tenant
from toolhost.platform import accounts
from toolhost.platform.runtime import Platform


async def new_client(platform: Platform, tenant: Tenant, scopes: list[str]) -> tuple[str, str]:
    async with platform.session_factory() as session, session.begin():
        issued = await accounts.create_client(
            session, account_id=tenant.account_id, name="agent", granted_scopes=scopes
        )
    return issued.client.client_id, issued.client_secret


async def token_for(client: httpx.AsyncClient, client_id: str, secret: str, scope: str | None = None) -> httpx.Response:
    form = {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}
    if scope:
        form["scope"] = scope
    return await client.post("/oauth/token", data=form)


async def test_a_client_credentials_token_works_like_a_key_within_its_scopes(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    client_id, secret = await new_client(platform, tenant, ["mcp:read", "mcp:write"])
    response = await token_for(client, client_id, secret, "mcp:read")
    assert response.status_code == 200
    issued = response.json()
    assert issued["token_type"] == "Bearer" and issued["expires_in"] == 3600 and issued["scope"] == "mcp:read"
    headers = {"Authorization": f"Bearer {issued['access_token']}"}
    balance = await client.post("/v1/tools/get_credit_balance", headers=headers)
    assert balance.status_code == 200
    denied = await client.post(
        "/v1/tools/save_content_plan", headers=headers, json={"plan": {"topic": "t", "posts": [{}]}}
    )
    assert denied.status_code == 403
    listed = await client.get("/v1/tools", headers=headers)
    assert {tool["scope"] for tool in listed.json()} == {"mcp:read"}


async def test_http_basic_client_authentication_is_accepted(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    client_id, secret = await new_client(platform, tenant, ["mcp:read"])
    basic = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    response = await client.post(
        "/oauth/token", data={"grant_type": "client_credentials"}, headers={"Authorization": f"Basic {basic}"}
    )
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"


async def test_token_requests_are_refused_for_bad_secrets_grants_and_scopes(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    client_id, secret = await new_client(platform, tenant, ["mcp:read"])
    wrong = await token_for(client, client_id, secret + "x")
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
    wider = await token_for(client, client_id, secret, "mcp:read mcp:write")
    assert wider.status_code == 400 and wider.json()["error"] == "invalid_scope"
    grant = await client.post("/oauth/token", data={"grant_type": "password", "client_id": client_id})
    assert grant.status_code == 400 and grant.json()["error"] == "unsupported_grant_type"


def forged(claims: dict[str, object], secret: str = TEST_SECRET) -> str:
    now = datetime.now(UTC)
    base = {
        "iss": "http://testserver",
        "aud": "http://testserver",
        "iat": now,
        "exp": now + timedelta(hours=1),
        "scope": "mcp:read",
    }
    return jwt.encode({**base, **claims}, secret, algorithm="HS256")


async def test_tokens_for_another_audience_expired_or_tampered_are_unauthenticated(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    client_id, secret = await new_client(platform, tenant, ["mcp:read"])
    good = (await token_for(client, client_id, secret)).json()["access_token"]
    header, payload, signature = good.split(".")
    tampered_payload = (
        base64.urlsafe_b64encode(base64.urlsafe_b64decode(payload + "==").replace(b"mcp:read", b"mcp:full"))
        .rstrip(b"=")
        .decode()
    )
    candidates = {
        "another audience": forged({"sub": client_id, "aud": "https://elsewhere.example"}),
        "expired": forged({"sub": client_id, "exp": datetime.now(UTC) - timedelta(seconds=5)}),
        "wrong key": forged({"sub": client_id}, secret="another-secret-entirely-0000000000"),
        "tampered": f"{header}.{tampered_payload}.{signature}",
        "unknown client": forged({"sub": "thc_unknown"}),
    }
    for label, token in candidates.items():
        response = await client.post("/v1/tools/get_credit_balance", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 401, label
    assert (
        await client.post("/v1/tools/get_credit_balance", headers={"Authorization": f"Bearer {good}"})
    ).status_code == 200


async def test_revoking_a_client_stops_its_tokens_at_once(
    tenant: Tenant, platform: Platform, client: httpx.AsyncClient
) -> None:
    client_id, secret = await new_client(platform, tenant, ["mcp:read"])
    token = (await token_for(client, client_id, secret)).json()["access_token"]
    async with platform.session_factory() as session, session.begin():
        await accounts.revoke_client(session, client_id=client_id)
    response = await client.post("/v1/tools/get_credit_balance", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 401


async def test_the_authorization_server_is_described(client: httpx.AsyncClient) -> None:
    metadata = (await client.get("/.well-known/oauth-authorization-server")).json()
    assert metadata["token_endpoint"] == "http://testserver/oauth/token"
    assert "client_credentials" in metadata["grant_types_supported"]
    assert "mcp:full" in metadata["scopes_supported"]


async def test_an_oversized_token_request_is_refused_before_it_is_read(client: httpx.AsyncClient) -> None:
    body = EndlessBody()
    response = await client.post("/oauth/token", content=body)
    assert response.status_code == 413 and response.json()["error"] == "invalid_request"
    assert body.sent < 1_000_000  # the 100 KB limit, not the 64 MB sent
