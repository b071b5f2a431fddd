"""OAuth 2.0 authorization code (RFC 6749 §4.1) with PKCE S256 (RFC 7636) for the connectors that connect
through a platform's sign-in page: X and Meta (Instagram, Facebook, Threads); LinkedIn, TikTok and Pinterest
take the same path with their own `OAuthApp`.

The connect page starts a flow with `authorization()` (a fresh `state` the page stores on its link, and a code
verifier kept sealed beside it), the platform sends the person back with `code` and `state`, and `complete()`
trades the code for tokens and asks the platform who the account is (`identify`, the one step each platform
writes itself). Token material is `{access_token, refresh_token, expires_at (epoch seconds), scope}`; it is
refreshed a few minutes before `expires_at`, and again when the platform answers 401 to a token it issued.
A refresh the platform refuses is an authentication failure: the account needs a new sign-in (`needs_reauth`).

Authlib supplies the protocol pieces (the authorization URL, the token request body, client authentication,
the S256 challenge and the expiry arithmetic); every request still goes through the SSRF-safe fetcher.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Literal

from authlib.common.security import generate_token
from authlib.oauth2.auth import ClientAuth
from authlib.oauth2.rfc6749 import OAuth2Token
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri, prepare_token_request
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from toolhost.platform.dates import iso
from toolhost.platform.results import ValidationFailed
from toolhost.providers.connectors.base import (
    AccountSession,
    Connector,
    ConnectResult,
    PublishFailed,
    bearer,
    json_body,
    raise_for_status,
    upstream,
)
from toolhost.providers.fetch import FetchedResponse, Fetcher

# Refreshed this long before the access token runs out, so a request never starts with a token about to expire.
REFRESH_MARGIN = timedelta(minutes=5)
# RFC 7636 §4.1: a verifier of 43 to 128 characters.
VERIFIER_LENGTH = 64


@dataclass(frozen=True, slots=True)
class OAuthApp:
    """The operator's app on one platform (from the settings) and the platform's OAuth endpoints."""

    client_id: str | None
    client_secret: str | None
    authorize_url: str
    token_url: str
    scopes: tuple[str, ...]
    # The environment variables that hold client_id and client_secret, named when one is missing.
    setting_names: tuple[str, str]
    pkce: bool = True
    # How the token endpoint authenticates the app: HTTP Basic (X, Pinterest) or form fields (LinkedIn, Meta).
    client_auth: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic"
    # How the authorization URL separates scopes: RFC 6749 §3.3 says spaces; Threads documents commas.
    scope_separator: str = " "

    def missing_settings(self) -> list[str]:
        """The settings that must still be set before accounts can connect."""
        return [
            name
            for name, value in zip(self.setting_names, (self.client_id, self.client_secret), strict=True)
            if not value
        ]


@dataclass(frozen=True, slots=True)
class Authorization:
    """Where to send the person, and the PKCE verifier to keep (sealed) until the callback."""

    url: str
    code_verifier: str | None


class OAuthConnector(Connector):
    """A connector whose accounts connect through OAuth 2.0 authorization code; subclasses write `identify`."""

    # The connect page's link: "Sign in with <this>".
    sign_in_with: ClassVar[str]
    connect_fields: ClassVar[dict[str, str]] = {}
    secret_fields: ClassVar[frozenset[str]] = frozenset({"access_token", "refresh_token"})

    def __init__(self, fetcher: Fetcher, *, app: OAuthApp) -> None:
        super().__init__(fetcher)
        self.app = app

    def missing_settings(self) -> list[str]:
        """The app settings this server still lacks."""
        return self.app.missing_settings()

    def required_settings(self) -> list[str]:
        """The app settings the connector needs."""
        return list(self.app.setting_names)

    async def connect(self, *, platform: str, fields: dict[str, str]) -> ConnectResult:
        """Accounts connect on the platform's sign-in page, never with pasted fields."""
        raise ValidationFailed(
            f"{self.name} accounts connect through the platform's sign-in page",
            recover_with=f"call start_platform_connection with platform={platform} and open the link",
        )

    def authorization(self, *, redirect_uri: str, state: str) -> Authorization:
        """The platform's consent page for this app, with `state` and, where supported, the S256 challenge."""
        verifier = generate_token(VERIFIER_LENGTH) if self.app.pkce else None
        extra = (
            {"code_challenge": create_s256_code_challenge(verifier), "code_challenge_method": "S256"}
            if verifier
            else {}
        )
        url = prepare_grant_uri(
            self.app.authorize_url,
            self.app.client_id,
            "code",
            redirect_uri=redirect_uri,
            scope=self.app.scope_separator.join(self.app.scopes),
            state=state,
            **extra,
        )
        return Authorization(url=str(url), code_verifier=verifier)

    async def complete(
        self, *, platform: str, code: str, redirect_uri: str, code_verifier: str | None
    ) -> ConnectResult:
        """Trades the authorization code for tokens, then asks the platform who the account is."""
        try:
            tokens = await self._token_request(
                "authorization_code", code=code, redirect_uri=redirect_uri, code_verifier=code_verifier
            )
            account = AccountSession(platform=platform, username=None, settings={}, secrets=tokens)
            await self.extend(account)
            username, settings = await self.identify(account)
        except PublishFailed as error:
            raise upstream(error, self.name) from error
        return ConnectResult(
            username=username,
            settings=settings,
            secrets=account.secrets,
            # Without a refresh token (the person refused offline access) the account lives as long as its token.
            expires_at=None if account.secrets.get("refresh_token") else _expiry(account.secrets),
        )

    async def extend(self, account: AccountSession) -> None:
        """Right after the code exchange: a platform whose first token is short-lived (Meta) trades it here for
        a long-lived one; the others keep what the token endpoint issued."""

    async def identify(self, account: AccountSession) -> tuple[str | None, dict[str, Any]]:
        """The account's display name and the non-secret settings a connector keeps (its platform user id)."""
        raise NotImplementedError

    async def access_token(self, account: AccountSession) -> str:
        """The account's access token, refreshed first when it expires within REFRESH_MARGIN."""
        if OAuth2Token(dict(account.secrets)).is_expired(leeway=int(REFRESH_MARGIN.total_seconds())):
            await self.refresh(account)
        return str(account.secrets["access_token"])

    async def refresh(self, account: AccountSession) -> None:
        """A new access token from the refresh token, stored at once (platforms that rotate refresh tokens
        invalidate the old one). A refusal is final unless another worker refreshed first."""
        used = account.secrets.get("refresh_token")
        if not used:
            raise PublishFailed(
                f"{self.name}: the access token expired and there is no refresh token; sign in again",
                retryable=False,
                authentication=True,
            )
        try:
            tokens = await self._token_request("refresh_token", refresh_token=used)
        except PublishFailed as refused:
            if not refused.authentication or account.reload is None:
                raise
            stored = await account.reload()
            if stored.get("refresh_token") in (None, used):
                raise
            # Another worker rotated the tokens meanwhile: theirs are the account's tokens now.
            account.secrets = stored
            if OAuth2Token(dict(stored)).is_expired(leeway=0):
                tokens = await self._token_request("refresh_token", refresh_token=stored["refresh_token"])
            else:
                return
        account.update_secrets({"refresh_token": used, **tokens})
        if account.persist is not None:
            await account.persist(account)
            # Stored now: a later write of this view would only risk putting back tokens rotated since.
            account.changed = False

    async def authorized(
        self,
        account: AccountSession,
        method: str,
        url: str,
        *,
        content: bytes = b"",
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> FetchedResponse:
        """One request with the account's bearer token; a 401 refreshes once and repeats, a second is final."""
        token = await self.access_token(account)
        response = await self.send(
            method, url, content=content, headers={**(headers or {}), **bearer(token)}, timeout=timeout
        )
        if response.status != 401:
            return response
        await self.refresh(account)
        token = str(account.secrets["access_token"])
        response = await self.send(
            method, url, content=content, headers={**(headers or {}), **bearer(token)}, timeout=timeout
        )
        if response.status == 401:
            raise PublishFailed(
                f"{self.name} refused the account's token (HTTP 401); sign in again",
                retryable=False,
                authentication=True,
            )
        return response

    async def _token_request(self, grant_type: str, **fields: Any) -> dict[str, Any]:
        """POSTs to the token endpoint; 400/401 (invalid_grant, invalid_client) is an authentication failure."""
        missing = self.missing_settings()
        if missing:
            raise PublishFailed(f"{self.name}: the app settings {', '.join(missing)} are not set", retryable=False)
        body = prepare_token_request(grant_type, **{name: value for name, value in fields.items() if value})
        headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
        client = ClientAuth(self.app.client_id, self.app.client_secret, self.app.client_auth)
        _, headers, body = client.prepare("POST", self.app.token_url, headers, body)
        response = await self.send("POST", self.app.token_url, content=str(body).encode(), headers=headers)
        if response.status in (400, 401):
            reason = _oauth_error(response)
            raise PublishFailed(
                f"{self.name} refused the {grant_type.replace('_', ' ')} ({reason}); sign in again",
                retryable=False,
                authentication=True,
            )
        raise_for_status(self.name, response, "obtain a token")
        reply = json_body(self.name, response)
        if not reply.get("access_token"):
            raise PublishFailed(f"{self.name}: the token reply has no access_token", retryable=True)
        token = OAuth2Token(reply)
        material = {
            name: token[name] for name in ("access_token", "refresh_token", "expires_at", "scope") if token.get(name)
        }
        return material


def _oauth_error(response: FetchedResponse) -> str:
    """The `error` code of an RFC 6749 §5.2 error reply (never its description, which may echo input)."""
    try:
        code = json_body("oauth", response).get("error")
    except PublishFailed:
        code = None
    if isinstance(code, dict):
        # Meta answers a Graph API error object ({type, code, message}) instead of RFC 6749's string.
        code = code.get("type") or code.get("code")
    return str(code)[:64] if code else f"HTTP {response.status}"


def _expiry(material: dict[str, Any]) -> datetime | None:
    expires_at = material.get("expires_at")
    return datetime.fromtimestamp(int(expires_at), UTC) if expires_at else None


# A rate limit expected to lift within the operator's rate_limit_wait is waited out this many times.
RATE_LIMIT_WAITS = 3


async def waiting_out_rate_limits(
    request: Callable[[], Awaitable[FetchedResponse]],
    *,
    platform: str,
    lifts_at: Callable[[FetchedResponse], datetime],
    longest_wait: float,
    sleep: Callable[[float], Awaitable[None]],
    refuse: Callable[[FetchedResponse], None] | None = None,
    lift_word: str = "lifts",
) -> FetchedResponse:
    """The first answer of `request` that is not a 429: a rate limit that lifts within `longest_wait` seconds is
    waited out in place (a second past the time it lifts), a later one is a retryable PublishFailed naming that
    time. `refuse` may raise first for a 429 that is no limit (a platform's spam protection)."""
    for _ in range(RATE_LIMIT_WAITS + 1):
        response = await request()
        if response.status != 429:
            return response
        if refuse is not None:
            refuse(response)
        lifts = lifts_at(response)
        wait = (lifts - datetime.now(UTC)).total_seconds()
        if wait > longest_wait:
            raise PublishFailed(
                f"{platform} rate limit reached; it {lift_word} at {iso(lifts)}", retryable=True, retry_at=lifts
            )
        await sleep(max(wait, 0.0) + 1.0)
    raise PublishFailed(f"{platform} kept answering 429 Too Many Requests", retryable=True, retry_at=lifts_at(response))
