"""The OAuth 2.1 authorization server for people's MCP clients, on Authlib's server parts.

Authorization code with PKCE (S256, required on every authorization request), dynamic client registration
(RFC 7591) under redirect rules, refresh tokens rotated on every use with reuse detection, revocation
(RFC 7009) and resource indicators (RFC 8707, bound into the access token's audience). What Authlib is handed
(snapshots of rows, requests as it reads them) lives in `oauth_records`.

Authlib is synchronous: each request runs it inside `AsyncSession.run_sync`, where its hooks use the plain
SQLAlchemy session that SQLAlchemy drives over the async driver, on the event loop. A server is built per
request around that session. The caller commits what a successful answer wrote; a detected replay (a used
code, a rotated refresh token) revokes the grant and commits that at once, before the error answer, and an
exchanged code is spent (committed) before anything else is checked, so a failed exchange cannot be retried.

Kept as one module past 500 lines on purpose: the grants, endpoints and the server are Authlib's hooks of one
server object, built per request and calling each other through it; what is not Authlib's is in `oauth_records`.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import jwt
from authlib.oauth2 import OAuth2Error
from authlib.oauth2.rfc6749 import (
    AuthorizationServer as AuthlibAuthorizationServer,
)
from authlib.oauth2.rfc6749 import (
    InvalidGrantError,
    InvalidRequestError,
    InvalidScopeError,
    JsonRequest,
    OAuth2Request,
    grants,
    scope_to_list,
)
from authlib.oauth2.rfc7009 import RevocationEndpoint as AuthlibRevocationEndpoint
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint, InvalidClientMetadataError, InvalidRedirectURIError
from authlib.oauth2.rfc7636 import CodeChallenge
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from toolhost.config import Settings
from toolhost.platform import scopes
from toolhost.platform.accounts import CredentialChanges, hash_secret
from toolhost.platform.auth import (
    TOKEN_LIFETIME,
    access_token_claims,
    canonical_resource,
    mint_access_token,
)
from toolhost.platform.models import AuthorizationCode, OAuthGrant, RefreshToken, RegisteredClient, User
from toolhost.platform.oauth_records import (
    Answer,
    Client,
    FormRequest,
    Grantee,
    IssuedCode,
    StoredToken,
    redirect_uri_refusal,
)
from toolhost.platform.websession import Person

CODE_LIFETIME = timedelta(minutes=10)
REFRESH_TOKEN_PREFIX = "thr_"
CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]
REGISTRABLE_GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})
MAX_REDIRECT_URIS = 10
MAX_CLIENT_NAME_LENGTH = 200
SCOPE_DESCRIPTIONS = {
    scopes.READ: "Read brands, plans, approvals, posts, media, credits and usage",
    scopes.WRITE: "Create and change brands, plans, content and approvals",
    scopes.DISTRIBUTE: "Schedule, reschedule and cancel posts; connect social accounts",
    scopes.ANALYTICS: "Refresh analytics and build performance digests",
    scopes.COMMENTS: "Read, answer and moderate comments",
    scopes.AUTOPILOT: "Configure and run autopilot and content pipelines",
}


def authorization_server_metadata(settings: Settings) -> dict[str, Any]:
    """The RFC 8414 document: every endpoint, grant and method this server offers."""
    root = settings.api_root
    return {
        "issuer": root,
        "authorization_endpoint": f"{root}/oauth/authorize",
        "token_endpoint": f"{root}/oauth/token",
        "registration_endpoint": f"{root}/oauth/register",
        "revocation_endpoint": f"{root}/oauth/revoke",
        "scopes_supported": list(scopes.ALL_SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "code_challenge_methods_supported": ["S256"],
        "service_documentation": f"{root}/docs",
    }


# --------------------------------------------------------------------------------------------------------
# The server, its grants and endpoints.


class AuthorizationServer(AuthlibAuthorizationServer):
    """Authlib's authorization server over one request's database session."""

    def __init__(self, *, db: Session, settings: Settings) -> None:
        super().__init__(scopes_supported=list(scopes.ALL_SCOPES))
        self.db = db
        self.settings = settings
        self.register_grant(AuthorizationCodeGrant, [RequiredS256()])
        self.register_grant(RefreshTokenGrant)
        self.register_endpoint(RevocationEndpoint)
        self.register_endpoint(RegistrationEndpoint)
        self.register_token_generator("default", self._mint)

    def query_client(self, client_id: str) -> Client | None:
        row = self.db.scalar(select(RegisteredClient).where(RegisteredClient.client_id == client_id))
        if row is None:
            return None
        return Client(
            row_id=row.id,
            client_id=row.client_id,
            secret_hash=row.secret_hash,
            metadata=dict(row.client_metadata),
            redirect_allow=tuple(self.settings.oauth.redirect_uri_allow),
        )

    def _mint(
        self,
        grant_type: str,
        client: Client,
        user: Grantee,
        scope: str,
        expires_in: int | None = None,
        include_refresh_token: bool = True,
    ) -> dict[str, Any]:
        token: dict[str, Any] = {
            "token_type": "Bearer",
            "access_token": mint_access_token(
                self.settings,
                audience=user.resource,
                subject=str(user.user_id),
                scope=scope,
                client_id=client.client_id,
                grant=str(user.grant_id),
            ),
            "expires_in": int(TOKEN_LIFETIME.total_seconds()),
            "scope": scope,
        }
        if include_refresh_token:
            token["refresh_token"] = REFRESH_TOKEN_PREFIX + secrets.token_urlsafe(32)
        return token

    def save_token(self, token: dict[str, Any], request: FormRequest) -> None:
        grantee: Grantee = request.user
        client: Client = request.client
        if grantee.new_grant:
            self.db.add(
                OAuthGrant(
                    id=grantee.grant_id,
                    registered_client_id=client.row_id,
                    user_id=grantee.user_id,
                    scopes=grantee.scopes,
                    resource=grantee.resource,
                )
            )
            self.db.flush()
            self.db.execute(
                update(AuthorizationCode)
                .where(AuthorizationCode.id == request.authorization_code.row_id)
                .values(grant_id=grantee.grant_id)
            )
        if "refresh_token" in token:
            self.db.add(
                RefreshToken(
                    grant_id=grantee.grant_id,
                    token_hash=hash_secret(token["refresh_token"]),
                    expires_at=datetime.now(UTC) + timedelta(days=self.settings.oauth.refresh_token_days),
                )
            )
        self.db.flush()

    def revoke_grant(self, grant_id: uuid.UUID, *, because: str) -> None:
        """Ends a grant and every token of its family, committed at once (this process forgets them at once)."""
        self.db.execute(
            update(OAuthGrant)
            .where(OAuthGrant.id == grant_id, OAuthGrant.revoked_at.is_(None))
            .values(revoked_at=datetime.now(UTC), revoked_because=because)
        )
        CredentialChanges.after_commit_of(self.db)
        self.db.commit()

    def resource_of(self, request: OAuth2Request, bound: str) -> None:
        """Refuses a token request whose resource (RFC 8707) is not the one its grant is bound to."""
        requested = request.payload.data.get("resource")
        if requested and canonical_resource(self.settings, requested) != bound:
            raise OAuth2Error(error="invalid_target", description="The resource is not the one that was authorized.")

    def create_oauth2_request(self, request: OAuth2Request) -> OAuth2Request:
        return request

    def create_json_request(self, request: JsonRequest) -> JsonRequest:
        return request

    def handle_response(self, status: int, body: Any, headers: list[tuple[str, str]]) -> Answer:
        return Answer(status=status, body=body, headers=list(headers))

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        """Authlib's signals: nothing listens."""


class RequiredS256(CodeChallenge):
    """PKCE on every authorization request, S256 only (OAuth 2.1)."""

    DEFAULT_CODE_CHALLENGE_METHOD = "S256"
    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant: grants.AuthorizationCodeGrant, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("PKCE is required: send code_challenge with code_challenge_method=S256")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("code_challenge_method must be S256")
        super().validate_code_challenge(grant, redirect_uri)


class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):
    """The authorization code grant: codes stored hashed, spent on first use; a replay revokes its grant."""

    TOKEN_ENDPOINT_AUTH_METHODS = CLIENT_AUTH_METHODS
    server: AuthorizationServer

    def save_authorization_code(self, code: str, request: FormRequest) -> None:
        client: Client = request.client
        person: Person = request.user
        if person.principal.credential_id is None or request.resource is None or request.consented_scope is None:
            raise RuntimeError("a code is saved only for a signed-in person's consent to a checked resource")
        self.server.db.add(
            AuthorizationCode(
                code_hash=hash_secret(code),
                registered_client_id=client.row_id,
                user_id=person.principal.credential_id,
                redirect_uri=request.payload.redirect_uri or client.get_default_redirect_uri() or "",
                scopes=scope_to_list(request.consented_scope),
                resource=request.resource,
                code_challenge=request.payload.data["code_challenge"],
                expires_at=datetime.now(UTC) + CODE_LIFETIME,
            )
        )
        self.server.db.flush()

    def query_authorization_code(self, code: str, client: Client) -> IssuedCode | None:
        db = self.server.db
        row = db.scalar(select(AuthorizationCode).where(AuthorizationCode.code_hash == hash_secret(code)))
        if row is None or row.registered_client_id != client.row_id:
            return None
        if row.used_at is not None:
            if row.grant_id is not None:
                self.server.revoke_grant(row.grant_id, because="code_replayed")
            return None
        if row.expires_at <= datetime.now(UTC):
            return None
        claimed = db.execute(
            update(AuthorizationCode)
            .where(AuthorizationCode.id == row.id, AuthorizationCode.used_at.is_(None))
            .values(used_at=datetime.now(UTC))
        )
        db.commit()
        if claimed.rowcount != 1:  # type: ignore[attr-defined]
            return None
        return IssuedCode(
            row_id=row.id,
            user_id=row.user_id,
            redirect_uri=row.redirect_uri,
            scopes=list(row.scopes),
            resource=row.resource,
            code_challenge=row.code_challenge,
        )

    def validate_token_request(self) -> None:
        super().validate_token_request()
        self.server.resource_of(self.request, self.request.authorization_code.resource)

    def delete_authorization_code(self, authorization_code: IssuedCode) -> None:
        """Nothing to do: the code was spent when it was claimed."""

    def authenticate_user(self, authorization_code: IssuedCode) -> Grantee | None:
        if self.server.db.get(User, authorization_code.user_id) is None:
            return None
        return Grantee(
            user_id=authorization_code.user_id,
            grant_id=uuid.uuid4(),
            resource=authorization_code.resource,
            scopes=authorization_code.scopes,
            new_grant=True,
        )


class RefreshTokenGrant(grants.RefreshTokenGrant):
    """Refresh tokens rotate on every use; presenting a used one revokes the whole grant."""

    TOKEN_ENDPOINT_AUTH_METHODS = CLIENT_AUTH_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True
    server: AuthorizationServer

    def authenticate_refresh_token(self, refresh_token: str) -> StoredToken | None:
        row = self.server.db.execute(
            select(RefreshToken, OAuthGrant, RegisteredClient.client_id)
            .join(OAuthGrant, OAuthGrant.id == RefreshToken.grant_id)
            .join(RegisteredClient, RegisteredClient.id == OAuthGrant.registered_client_id)
            .where(RefreshToken.token_hash == hash_secret(refresh_token))
        ).first()
        if row is None:
            return None
        stored, grant, client_id = row
        if grant.revoked_at is not None:
            return None
        if stored.rotated_at is not None:
            self.server.revoke_grant(grant.id, because="refresh_token_reused")
            return None
        if stored.expires_at <= datetime.now(UTC):
            return None
        return StoredToken(
            grant_id=grant.id,
            client_id=client_id,
            user_id=grant.user_id,
            scopes=list(grant.scopes),
            resource=grant.resource,
            row_id=stored.id,
        )

    def validate_token_request(self) -> None:
        super().validate_token_request()
        self.server.resource_of(self.request, self.request.refresh_token.resource)

    def authenticate_user(self, refresh_token: StoredToken) -> Grantee | None:
        if self.server.db.get(User, refresh_token.user_id) is None:
            return None
        return Grantee(
            user_id=refresh_token.user_id,
            grant_id=refresh_token.grant_id,
            resource=refresh_token.resource,
            scopes=refresh_token.scopes,
            new_grant=False,
        )

    def revoke_old_credential(self, refresh_token: StoredToken) -> None:
        rotated = self.server.db.execute(
            update(RefreshToken)
            .where(RefreshToken.id == refresh_token.row_id, RefreshToken.rotated_at.is_(None))
            .values(rotated_at=datetime.now(UTC))
        )
        if rotated.rowcount != 1:  # type: ignore[attr-defined]
            # Another request used it a moment ago: the same reuse, seen from the other side.
            self.server.revoke_grant(refresh_token.grant_id, because="refresh_token_reused")
            raise InvalidGrantError("The refresh token was already used.")


class RevocationEndpoint(AuthlibRevocationEndpoint):
    """RFC 7009: revoking a refresh or access token of a grant revokes the grant, every token of it."""

    CLIENT_AUTH_METHODS = CLIENT_AUTH_METHODS
    server: AuthorizationServer

    def query_token(self, token_string: str, token_type_hint: str | None) -> StoredToken | None:
        db = self.server.db
        if token_string.startswith(REFRESH_TOKEN_PREFIX):
            row = db.execute(
                select(OAuthGrant, RegisteredClient.client_id)
                .join(RefreshToken, RefreshToken.grant_id == OAuthGrant.id)
                .join(RegisteredClient, RegisteredClient.id == OAuthGrant.registered_client_id)
                .where(RefreshToken.token_hash == hash_secret(token_string))
            ).first()
        else:
            try:
                claims = access_token_claims(self.server.settings, token_string)
                grant_id = uuid.UUID(str(claims["grant"]))
            except (jwt.PyJWTError, KeyError, ValueError):
                return None
            row = db.execute(
                select(OAuthGrant, RegisteredClient.client_id)
                .join(RegisteredClient, RegisteredClient.id == OAuthGrant.registered_client_id)
                .where(OAuthGrant.id == grant_id)
            ).first()
        if row is None:
            return None
        grant, client_id = row
        return StoredToken(
            grant_id=grant.id, client_id=client_id, user_id=grant.user_id, scopes=grant.scopes, resource=grant.resource
        )

    def revoke_token(self, token: StoredToken, request: OAuth2Request) -> None:
        self.server.revoke_grant(token.grant_id, because="revoked")


class RegistrationEndpoint(ClientRegistrationEndpoint):
    """RFC 7591, open to any client: registering grants nothing until a person consents."""

    server: AuthorizationServer

    def authenticate_token(self, request: JsonRequest) -> bool:
        return True

    def get_server_metadata(self) -> dict[str, Any]:
        metadata = authorization_server_metadata(self.server.settings)
        return {**metadata, "grant_types_supported": sorted(REGISTRABLE_GRANT_TYPES)}

    def resolve_public_key(self, request: JsonRequest) -> None:
        return None

    def extract_client_metadata(self, request: JsonRequest) -> dict[str, Any]:
        # The redirect rules first, so a refused redirect URI is named as such (invalid_redirect_uri).
        uris = request.payload.data.get("redirect_uris")
        if not isinstance(uris, list) or not 1 <= len(uris) <= MAX_REDIRECT_URIS:
            raise InvalidRedirectURIError(f"register 1 to {MAX_REDIRECT_URIS} redirect_uris")
        for uri in uris:
            refusal = redirect_uri_refusal(str(uri), self.server.settings.oauth.redirect_uri_allow)
            if refusal is not None:
                raise InvalidRedirectURIError(refusal)
        metadata: dict[str, Any] = super().extract_client_metadata(request)
        # RFC 7591's defaults, written down so the client reads back how it authenticates.
        metadata.setdefault("token_endpoint_auth_method", "client_secret_basic")
        metadata.setdefault("grant_types", ["authorization_code"])
        metadata.setdefault("response_types", ["code"])
        if "authorization_code" not in metadata["grant_types"]:
            raise InvalidClientMetadataError("grant_types must include authorization_code")
        if len(str(metadata.get("client_name") or "")) > MAX_CLIENT_NAME_LENGTH:
            raise InvalidClientMetadataError("client_name is too long")
        return metadata

    def generate_client_info(self, request: JsonRequest) -> dict[str, Any]:
        info: dict[str, Any] = super().generate_client_info(request)
        if request.payload.data.get("token_endpoint_auth_method") == "none":
            # A public client proves itself with PKCE alone; a secret it was handed would only leak.
            del info["client_secret"], info["client_secret_expires_at"]
        return info

    def save_client(
        self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: JsonRequest
    ) -> RegisteredClient:
        secret = client_info.get("client_secret")
        client = RegisteredClient(
            client_id=client_info["client_id"],
            secret_hash=hash_secret(secret) if secret else None,
            client_metadata=client_metadata,
        )
        self.server.db.add(client)
        self.server.db.flush()
        return client


# --------------------------------------------------------------------------------------------------------
# The consent step, between Authlib's validation of an authorization request and its answer.


@dataclass(frozen=True, slots=True)
class ConsentRequest:
    """A valid authorization request, as the consent page shows it."""

    client_name: str
    redirect_host: str
    redirect_origin: str
    requested: frozenset[str]
    offered: frozenset[str]
    resource: str


@dataclass(frozen=True, slots=True)
class Decision:
    """What the person chose on the consent page."""

    allow: bool
    scopes: frozenset[str]


@dataclass(frozen=True, slots=True)
class Problem:
    """An authorization request that cannot go back to its client (unknown client, unregistered redirect)."""

    description: str


def authorize(
    db: Session, settings: Settings, request: FormRequest, person: Person, decision: Decision | None
) -> ConsentRequest | Answer | Problem:
    """Checks an authorization request for this person; without a decision, what to ask them, else the answer.

    Errors that may go back to the client (a bad scope, resource or PKCE parameter, a refusal) are redirects
    to it; those that may not (unknown client, a redirect URI it did not register) are a Problem to show.
    """
    server = AuthorizationServer(db=db, settings=settings)
    try:
        grant = server.get_consent_grant(request, end_user=person)
    except OAuth2Error as error:
        if error.redirect_uri:
            return server.handle_error_response(request, error)  # type: ignore[no-any-return]
        return Problem(description=error.description or error.error or "invalid request")
    redirect_uri = grant.redirect_uri
    state = request.payload.state

    def refuse(error: OAuth2Error) -> Answer:
        error.redirect_uri, error.state = redirect_uri, state
        return server.handle_error_response(request, error)  # type: ignore[no-any-return]

    resource = canonical_resource(settings, request.payload.data.get("resource"))
    if resource is None:
        return refuse(OAuth2Error(error="invalid_target", description="Unknown resource: use this server's /mcp."))
    requested = scopes.expand(scope_to_list(request.scope))
    offered = requested & scopes.TIER_SCOPES[person.principal.tier]
    if not offered:
        return refuse(InvalidScopeError(f"The account's {person.principal.tier} tier allows none of these scopes."))
    if decision is None:
        target = urlsplit(redirect_uri)
        return ConsentRequest(
            client_name=grant.client.name,
            redirect_host=target.netloc or target.scheme,
            redirect_origin=f"{target.scheme}://{target.netloc}" if target.netloc else f"{target.scheme}:",
            requested=requested,
            offered=offered,
            resource=resource,
        )
    if not decision.allow:
        return server.create_authorization_response(request, grant_user=None, grant=grant)  # type: ignore[no-any-return]
    if not decision.scopes or not decision.scopes <= offered:
        return refuse(InvalidScopeError("The scopes chosen are not among those offered."))
    request.consented_scope = " ".join(scopes.display(decision.scopes))
    request.resource = resource
    return server.create_authorization_response(request, grant_user=person, grant=grant)  # type: ignore[no-any-return]


def token(db: Session, settings: Settings, request: FormRequest) -> Answer:
    """The token endpoint's answer for the authorization_code and refresh_token grants."""
    return AuthorizationServer(db=db, settings=settings).create_token_response(request)  # type: ignore[no-any-return]


def revoke(db: Session, settings: Settings, request: FormRequest) -> Answer:
    """The revocation endpoint's answer (RFC 7009: 200 whether or not the token was known)."""
    server = AuthorizationServer(db=db, settings=settings)
    return server.create_endpoint_response(RevocationEndpoint.ENDPOINT_NAME, request)  # type: ignore[no-any-return]


def register(db: Session, settings: Settings, request: JsonRequest) -> Answer:
    """The registration endpoint's answer (RFC 7591)."""
    server = AuthorizationServer(db=db, settings=settings)
    return server.create_endpoint_response(  # type: ignore[no-any-return]
        RegistrationEndpoint.ENDPOINT_NAME, request
    )
