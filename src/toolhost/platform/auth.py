"""Turns a presented credential (API key, OAuth access token, a person's web session) into a Principal; mints tokens."""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import jwt
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from toolhost.config import Settings
from toolhost.platform import scopes
from toolhost.platform.accounts import KEY_PREFIX, CredentialChanges, hash_secret
from toolhost.platform.context import Principal
from toolhost.platform.models import Account, ApiKey, OAuthClient, OAuthGrant, RegisteredClient, User, WebSession
from toolhost.platform.results import Unauthenticated
from toolhost.platform.usage import UsageRecorder

TOKEN_LIFETIME = timedelta(hours=1)
# A key's last use is recorded at minute resolution, so a busy key does not add a write every second.
LAST_USED_RESOLUTION_SECONDS = 60.0
JWT_ALGORITHM = "HS256"
# How long a resolved credential is reused without a database read: the bound on how late another
# process sees a revocation (this process drops its entries at once, see CredentialChanges).
PRINCIPAL_CACHE_SECONDS = 1.0
PRINCIPAL_CACHE_ENTRIES = 10_000


def presented_credential(authorization: str | None, api_key_header: str | None) -> str | None:
    """The credential of `Authorization: Bearer <x>` or `X-API-Key: <x>`, if any."""
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    if api_key_header and api_key_header.strip():
        return api_key_header.strip()
    return None


def token_audience(settings: Settings) -> str:
    """The audience of a token minted without a resource indicator: this server's root, /v1 and /mcp alike."""
    return settings.api_root


def mcp_resource(settings: Settings) -> str:
    """The resource identifier (RFC 8707) of /mcp: what its protected-resource metadata names."""
    return f"{settings.api_root}/mcp"


def canonical_resource(settings: Settings, requested: str | None) -> str | None:
    """The resource a client asked tokens for (RFC 8707): the server root (the default) or /mcp; None if neither."""
    if not requested:
        return token_audience(settings)
    resource = requested.rstrip("/")
    return resource if resource in (token_audience(settings), mcp_resource(settings)) else None


def audience_covers(audience: str, resource: str) -> bool:
    """Whether a token for `audience` may be used at `resource`: the same, or a resource below it."""
    return resource == audience or resource.startswith(f"{audience}/")


def mint_access_token(settings: Settings, *, audience: str, subject: str, scope: str, **claims: str) -> str:
    """A signed JWT access token for one hour (RFC 9068's claims: iss, aud, sub, client_id, scope, jti)."""
    now = datetime.now(UTC)
    payload = {
        "iss": settings.api_root,
        "aud": audience,
        "sub": subject,
        "iat": now,
        "exp": now + TOKEN_LIFETIME,
        "jti": uuid.uuid4().hex,
        "scope": scope,
        **claims,
    }
    signer = settings.keyring.current()
    return jwt.encode(payload, signer.signing, algorithm=JWT_ALGORITHM, headers={"kid": signer.kid})


def access_token_claims(settings: Settings, token: str) -> dict[str, object]:
    """The verified claims of one of this server's access tokens, for any of its resources (PyJWTError if not).

    The header names the key generation that signed it: a retired one still verifies until it is dropped.
    """
    kid = jwt.get_unverified_header(token).get("kid")
    generation = settings.keyring.find(kid) if isinstance(kid, str) else None
    if generation is None:
        raise jwt.InvalidKeyError("the token names no key this install holds")
    return jwt.decode(
        token,
        generation.signing,
        algorithms=[JWT_ALGORITHM],
        audience=[token_audience(settings), mcp_resource(settings)],
        issuer=settings.api_root,
        options={"require": ["exp", "iat", "sub", "aud", "iss", "scope"]},
    )


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """An access token and what it grants."""

    access_token: str
    expires_in: int
    scope: str


@dataclass(frozen=True, slots=True)
class _Cached:
    principal: Principal
    fresh_until: float
    generation: int
    expires_at: datetime | None
    audience: str | None
    signed_by: str | None = None  # an access token's key id: dropping that key drops the token at once


class Authenticator:
    """Resolves credentials against the database, reusing each answer for a second; one per process."""

    def __init__(
        self, *, settings: Settings, session_factory: async_sessionmaker[AsyncSession], usage: UsageRecorder
    ) -> None:
        self._settings = settings
        self._session_factory = session_factory
        self._usage = usage
        self._cache: dict[str, _Cached] = {}
        # One database read per credential at a time: the calls that find its cache entry stale together
        # (every second, under load) wait for the same read instead of each making their own.
        self._loading: dict[str, tuple[int, asyncio.Task[_Cached]]] = {}
        self._last_use_recorded: dict[uuid.UUID, float] = {}

    async def authenticate(
        self, credential: str | None, *, resource: str, run_id: str | None = None, client_ip: str | None = None
    ) -> Principal:
        """The caller behind a credential presented at `resource`, or `unauthenticated` (never saying which
        check failed). An access token is accepted only where its audience covers the resource (RFC 8707)."""
        if credential is None:
            raise Unauthenticated("missing credential: send Authorization: Bearer <key or token>")
        is_key = credential.startswith(KEY_PREFIX)
        cache_key = hash_secret(credential) if is_key else credential
        entry = self._cached(cache_key) or await self._load(cache_key, credential, is_key=is_key)
        if entry.audience is not None and not audience_covers(entry.audience, resource):
            raise Unauthenticated("this access token was issued for another resource")
        principal = entry.principal
        if is_key and principal.credential_id is not None:
            self._record_use(principal.credential_id)
        if run_id is None and client_ip is None:
            return principal
        return dataclasses.replace(principal, run_id=run_id, client_ip=client_ip)

    async def authenticate_session(self, token: str) -> Principal:
        """The person behind a web session's token, or `unauthenticated` (unknown, signed out or expired).

        A person acts with every scope of the account's tier; the principal is cached like a key's.
        """
        digest = hash_secret(token)
        cache_key = f"session:{digest}"
        entry = self._cached(cache_key)
        if entry is None:
            generation = CredentialChanges.generation
            principal, expires_at = await self._from_session(digest)
            entry = self._remember(cache_key, principal, generation, expires_at)
        return entry.principal

    async def _load(self, cache_key: str, credential: str, *, is_key: bool) -> _Cached:
        generation = CredentialChanges.generation
        loading = self._loading.get(cache_key)
        # A read that started before a credential changed in this process may return what was revoked.
        if loading is None or loading[0] != generation:
            task = asyncio.get_running_loop().create_task(self._resolve(cache_key, credential, is_key, generation))
            loading = self._loading[cache_key] = (generation, task)
            task.add_done_callback(lambda done: self._forget_load(cache_key, done))
        # Shielded: a caller that goes away does not cancel the read the others wait for.
        return await asyncio.shield(loading[1])

    def _forget_load(self, cache_key: str, task: asyncio.Task[_Cached]) -> None:
        loading = self._loading.get(cache_key)
        if loading is not None and loading[1] is task:
            del self._loading[cache_key]
        if not task.cancelled():
            task.exception()  # retrieved here so a failure no caller awaited any more is not logged as lost

    async def _resolve(self, cache_key: str, credential: str, is_key: bool, generation: int) -> _Cached:
        if is_key:
            principal, expires_at = await self._from_key(cache_key)
            return self._remember(cache_key, principal, generation, expires_at)
        principal, expires_at, audience, signed_by = await self._from_token(credential)
        return self._remember(cache_key, principal, generation, expires_at, audience, signed_by)

    def _remember(
        self,
        cache_key: str,
        principal: Principal,
        generation: int,
        expires_at: datetime | None,
        audience: str | None = None,
        signed_by: str | None = None,
    ) -> _Cached:
        if len(self._cache) >= PRINCIPAL_CACHE_ENTRIES:
            self._cache.clear()
        entry = self._cache[cache_key] = _Cached(
            principal=principal,
            fresh_until=time.monotonic() + PRINCIPAL_CACHE_SECONDS,
            generation=generation,
            expires_at=expires_at,
            audience=audience,
            signed_by=signed_by,
        )
        return entry

    def _cached(self, cache_key: str) -> _Cached | None:
        entry = self._cache.get(cache_key)
        if entry is None:
            return None
        if (
            entry.fresh_until < time.monotonic()
            or entry.generation != CredentialChanges.generation
            or (entry.expires_at is not None and entry.expires_at <= datetime.now(UTC))
            or (entry.signed_by is not None and self._settings.keyring.find(entry.signed_by) is None)
        ):
            del self._cache[cache_key]
            return None
        return entry

    def _record_use(self, key_id: uuid.UUID) -> None:
        now = time.monotonic()
        recorded = self._last_use_recorded.get(key_id)
        if recorded is None or now - recorded >= LAST_USED_RESOLUTION_SECONDS:
            if len(self._last_use_recorded) >= PRINCIPAL_CACHE_ENTRIES:
                self._last_use_recorded.clear()
            self._last_use_recorded[key_id] = now
            self._usage.key_used(key_id, datetime.now(UTC))

    async def close(self) -> None:
        """Forgets every cached principal."""
        self._cache.clear()

    async def _from_key(self, digest: str) -> tuple[Principal, datetime | None]:
        now = datetime.now(UTC)
        async with self._session_factory() as session:
            row = (
                await session.execute(
                    select(ApiKey, Account.tier)
                    .join(Account, Account.id == ApiKey.account_id)
                    .where(ApiKey.secret_hash == digest)
                )
            ).first()
            if row is None:
                raise Unauthenticated("invalid API key")
            key, tier = row
            if not hmac.compare_digest(key.secret_hash, digest):
                raise Unauthenticated("invalid API key")
            if key.revoked_at is not None:
                raise Unauthenticated("this API key was revoked")
            if key.expires_at is not None and key.expires_at <= now:
                raise Unauthenticated("this API key has expired")
        principal = Principal(
            account_id=key.account_id,
            tier=tier,
            credential_id=key.id,
            credential_name=key.name,
            scopes=scopes.effective(key.scopes, tier),
            project_id=key.project_id,
        )
        return principal, key.expires_at

    async def _from_session(self, digest: str) -> tuple[Principal, datetime]:
        async with self._session_factory() as session:
            row = (
                await session.execute(
                    select(WebSession.expires_at, User, Account.tier)
                    .join(User, User.id == WebSession.user_id)
                    .join(Account, Account.id == User.account_id)
                    .where(WebSession.token_hash == digest)
                )
            ).first()
        if row is None or row[0] <= datetime.now(UTC):
            raise Unauthenticated("not signed in, or the sign-in has expired")
        expires_at, user, tier = row
        return _person(user, tier), expires_at

    async def _from_token(self, token: str) -> tuple[Principal, datetime, str, str]:
        try:
            claims = access_token_claims(self._settings, token)
        except jwt.PyJWTError as error:
            raise Unauthenticated("invalid or expired access token") from error
        signed_by = str(jwt.get_unverified_header(token)["kid"])
        expires_at = datetime.fromtimestamp(int(str(claims["exp"])), UTC)
        audience = str(claims["aud"])
        granted = str(claims["scope"]).split()
        if "grant" in claims:
            principal = await self._from_grant(str(claims["grant"]), str(claims["sub"]), granted)
            return principal, expires_at, audience, signed_by
        async with self._session_factory() as session:
            row = (
                await session.execute(
                    select(OAuthClient, Account.tier)
                    .join(Account, Account.id == OAuthClient.account_id)
                    .where(OAuthClient.client_id == claims["sub"])
                )
            ).first()
        if row is None or row[0].revoked_at is not None:
            raise Unauthenticated("invalid or expired access token")
        client, tier = row
        principal = Principal(
            account_id=client.account_id,
            tier=tier,
            credential_id=client.id,
            credential_name=client.name,
            # A client narrowed after the token was minted narrows the token at once.
            scopes=scopes.effective(granted, tier) & scopes.expand(client.scopes),
            project_id=client.project_id,
        )
        return principal, expires_at, audience, signed_by

    async def _from_grant(self, grant_id: str, subject: str, granted: list[str]) -> Principal:
        """A person's token from an MCP client: alive while its grant is (revocation ends the whole family)."""
        try:
            parsed = uuid.UUID(grant_id)
        except ValueError:
            raise Unauthenticated("invalid or expired access token") from None
        async with self._session_factory() as session:
            row = (
                await session.execute(
                    select(OAuthGrant, User, Account.tier, RegisteredClient)
                    .join(User, User.id == OAuthGrant.user_id)
                    .join(Account, Account.id == User.account_id)
                    .join(RegisteredClient, RegisteredClient.id == OAuthGrant.registered_client_id)
                    .where(OAuthGrant.id == parsed)
                )
            ).first()
        if row is None or row[0].revoked_at is not None or str(row[1].id) != subject:
            raise Unauthenticated("invalid or expired access token")
        grant, user, tier, client = row
        return _granted(grant, user, tier, client, scopes.effective(granted, tier))

    async def issue_token(self, *, client_id: str, client_secret: str, requested_scope: str | None) -> IssuedToken:
        """Client credentials grant: a signed JWT for a subset of the client's scopes.

        Raises PermissionError for a bad client and ValueError for a scope outside the client's.
        """
        async with self._session_factory() as session:
            client = await session.scalar(select(OAuthClient).where(OAuthClient.client_id == client_id))
        if (
            client is None
            or client.revoked_at is not None
            or not hmac.compare_digest(client.secret_hash, hash_secret(client_secret))
        ):
            raise PermissionError("invalid_client")
        if requested_scope:
            try:
                requested = scopes.parse(requested_scope)
            except scopes.UnknownScope as error:
                raise ValueError("invalid_scope") from error
            if not scopes.expand(requested) <= scopes.expand(client.scopes):
                raise ValueError("invalid_scope")
        else:
            requested = list(client.scopes)
        token = mint_access_token(
            self._settings,
            audience=token_audience(self._settings),
            subject=client.client_id,
            scope=" ".join(requested),
            client_id=client.client_id,
        )
        return IssuedToken(
            access_token=token, expires_in=int(TOKEN_LIFETIME.total_seconds()), scope=" ".join(requested)
        )

    # -----------------------------------------------------------------------------------------------------
    # Stored credentials: work that runs later as its caller (recipe runs, autopilot runs) re-checks the
    # credential it was started with before every step, rather than trusting a snapshot of its principal.

    async def principal_for_credential(
        self, credential_id: uuid.UUID, *, within: frozenset[str] | None = None, run_id: str | None = None
    ) -> Principal:
        """The caller a stored credential (by id) stands for now, or `unauthenticated` saying why.

        The credential is an API key, an OAuth client, a person (work started from a page) or a person's grant
        to an MCP client. Revocation, expiry, the account and its tier are read afresh; the scopes are the
        credential's within the tier's (scopes.effective) and, when `within` is given, within the scopes the
        work started with. A credential whose tier now allows none of its scopes may no longer act at all.
        """
        principal, kind = await self._stored_credential(credential_id)
        held = principal.scopes & within if within is not None else principal.scopes
        if not held:
            raise Unauthenticated(f"the account's {principal.tier} tier no longer allows any scope of this {kind}")
        return dataclasses.replace(principal, scopes=held, run_id=run_id)

    async def _stored_credential(self, credential_id: uuid.UUID) -> tuple[Principal, str]:
        async with self._session_factory() as session:
            key = await session.get(ApiKey, credential_id)
            credential: ApiKey | OAuthClient | None = key or await session.get(OAuthClient, credential_id)
            if credential is not None:
                account = await session.get(Account, credential.account_id)
                if account is None:
                    raise Unauthenticated("the credential this work runs as no longer exists")
                kind = "API key" if key is not None else "OAuth client"
                if credential.revoked_at is not None:
                    raise Unauthenticated(f"this {kind} was revoked")
                if key is not None and key.expires_at is not None and key.expires_at <= datetime.now(UTC):
                    raise Unauthenticated("this API key has expired")
                principal = Principal(
                    account_id=account.id,
                    tier=account.tier,
                    credential_id=credential.id,
                    credential_name=credential.name,
                    scopes=scopes.effective(credential.scopes, account.tier),
                    project_id=credential.project_id,
                )
                return principal, kind
            user = await session.get(User, credential_id)
            if user is not None:
                account = await session.get(Account, user.account_id)
                if account is not None:
                    return _person(user, account.tier), "person"
            row = (
                await session.execute(
                    select(OAuthGrant, User, Account.tier, RegisteredClient)
                    .join(User, User.id == OAuthGrant.user_id)
                    .join(Account, Account.id == User.account_id)
                    .join(RegisteredClient, RegisteredClient.id == OAuthGrant.registered_client_id)
                    .where(OAuthGrant.id == credential_id)
                )
            ).first()
        if row is None:
            raise Unauthenticated("the credential this work runs as no longer exists")
        grant, user, tier, client = row
        if grant.revoked_at is not None:
            raise Unauthenticated("this MCP client's authorization was revoked")
        return _granted(grant, user, tier, client, scopes.effective(grant.scopes, tier)), "MCP client authorization"


def _person(user: User, tier: str) -> Principal:
    """A signed-in person: they act with every scope of their account's tier, named by their address."""
    return Principal(
        account_id=user.account_id,
        tier=tier,
        credential_id=user.id,
        credential_name=user.email,
        scopes=scopes.TIER_SCOPES[tier],
        project_id=None,
    )


def _granted(grant: OAuthGrant, user: User, tier: str, client: RegisteredClient, held: frozenset[str]) -> Principal:
    """A person acting through an MCP client they authorized: what they consented to, within the tier."""
    client_name = str(client.client_metadata.get("client_name") or client.client_id)
    return Principal(
        account_id=user.account_id,
        tier=tier,
        credential_id=grant.id,
        credential_name=f"{user.email} via {client_name}",
        scopes=held & scopes.expand(grant.scopes),
        project_id=None,
    )
