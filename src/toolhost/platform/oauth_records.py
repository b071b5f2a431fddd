"""What the authorization server hands Authlib: redirect rules, snapshots of rows, requests as Authlib reads them.

Authlib asks its models questions (ClientMixin, AuthorizationCodeMixin, TokenMixin) and reads requests through
its own request classes; these are plain frozen snapshots and adapters, never ORM objects, so nothing of a
database session leaks into Authlib's objects.
"""

from __future__ import annotations

import secrets
import uuid
from collections import defaultdict
from dataclasses import dataclass
from ipaddress import ip_address
from typing import Any
from urllib.parse import urlsplit

from authlib.oauth2.rfc6749 import JsonRequest, OAuth2Payload, OAuth2Request, scope_to_list

from toolhost.platform import scopes
from toolhost.platform.accounts import hash_secret

MAX_URI_LENGTH = 2000
LOOPBACK_NAMES = frozenset({"localhost"})


# --------------------------------------------------------------------------------------------------------
# Redirect rules: https anywhere, plain http only to a loopback address (on any port, RFC 8252 §7.3), and
# whatever prefixes the operator allows (custom schemes of native clients, intranet hosts).


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def redirect_uri_refusal(uri: str, allowed_prefixes: list[str]) -> str | None:
    """Why a client may not use this redirect URI, or None when it may."""
    if len(uri) > MAX_URI_LENGTH:
        return "a redirect URI is too long"
    try:
        parts = urlsplit(uri)
    except ValueError:
        return "a redirect URI is not a URI"
    if parts.fragment or "#" in uri:
        return "a redirect URI may not carry a fragment"
    if parts.username is not None or parts.password is not None:
        return "a redirect URI may not carry a user name or password"
    if any(uri.startswith(prefix) for prefix in allowed_prefixes):
        return None
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and _is_loopback(parts.hostname):
        return None
    return "redirect URIs must be https, or http on a loopback address (127.0.0.1, [::1] or localhost)"


def _redirect_matches(registered: str, presented: str) -> bool:
    if registered == presented:
        return True
    mine, theirs = urlsplit(registered), urlsplit(presented)
    # A native client's loopback listener takes whatever port is free: only the port may differ.
    return (
        mine.scheme == theirs.scheme == "http"
        and _is_loopback(mine.hostname)
        and mine.hostname == theirs.hostname
        and mine.path == theirs.path
        and mine.query == theirs.query
    )


# --------------------------------------------------------------------------------------------------------
# What Authlib's grants and endpoints are handed: snapshots of rows, never ORM objects.


@dataclass(frozen=True, slots=True)
class Client:
    """A registered client as Authlib asks about it (its ClientMixin)."""

    row_id: uuid.UUID
    client_id: str
    secret_hash: str | None
    metadata: dict[str, Any]
    redirect_allow: tuple[str, ...]

    @property
    def name(self) -> str:
        """What the consent page calls it: its self-declared name, or its id."""
        return str(self.metadata.get("client_name") or self.client_id)

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        uris = self.metadata.get("redirect_uris") or []
        return str(uris[0]) if len(uris) == 1 else None

    def get_allowed_scope(self, scope: str | None) -> str | None:
        registered = self.metadata.get("scope")
        if not scope:
            return str(registered) if registered else scopes.FULL
        if registered and not scopes.expand(scope_to_list(scope)) <= scopes.expand(scope_to_list(registered)):
            return None
        return scope

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        if redirect_uri_refusal(redirect_uri, list(self.redirect_allow)) is not None:
            return False
        return any(_redirect_matches(str(uri), redirect_uri) for uri in self.metadata.get("redirect_uris") or [])

    def check_client_secret(self, client_secret: str) -> bool:
        return self.secret_hash is not None and secrets.compare_digest(self.secret_hash, hash_secret(client_secret))

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return bool(method == self.metadata.get("token_endpoint_auth_method"))

    def check_response_type(self, response_type: str) -> bool:
        return response_type in (self.metadata.get("response_types") or [])

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in (self.metadata.get("grant_types") or [])


@dataclass(frozen=True, slots=True)
class IssuedCode:
    """An authorization code being exchanged (its AuthorizationCodeMixin)."""

    row_id: uuid.UUID
    user_id: uuid.UUID
    redirect_uri: str
    scopes: list[str]
    resource: str
    code_challenge: str
    code_challenge_method = "S256"

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return " ".join(self.scopes)


@dataclass(frozen=True, slots=True)
class Grantee:
    """Whom tokens are issued to: the person, and the grant (the family) they belong to."""

    user_id: uuid.UUID
    grant_id: uuid.UUID
    resource: str
    scopes: list[str]
    new_grant: bool


@dataclass(frozen=True, slots=True)
class StoredToken:
    """A refresh token, or an access token being revoked (TokenMixin): both stand for their grant."""

    grant_id: uuid.UUID
    client_id: str
    user_id: uuid.UUID
    scopes: list[str]
    resource: str
    row_id: uuid.UUID | None = None

    def check_client(self, client: Client) -> bool:
        return self.client_id == client.client_id

    def get_scope(self) -> str:
        return " ".join(self.scopes)


@dataclass(frozen=True, slots=True)
class Answer:
    """An HTTP answer as Authlib words it."""

    status: int
    body: Any
    headers: list[tuple[str, str]]

    @property
    def location(self) -> str | None:
        """Where a redirect answer sends the browser."""
        return next((value for name, value in self.headers if name.lower() == "location"), None)


class _Payload(OAuth2Payload):
    def __init__(self, items: list[tuple[str, str]]) -> None:
        self._data: dict[str, str] = {}
        self._datalist: defaultdict[str, list[str]] = defaultdict(list)
        for name, value in items:
            self._data.setdefault(name, value)
            self._datalist[name].append(value)

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> defaultdict[str, list[str]]:
        return self._datalist


class FormRequest(OAuth2Request):
    """An HTTP request as Authlib reads it, its parameters already read (and bounded) by the route."""

    def __init__(self, method: str, uri: str, items: list[tuple[str, str]], headers: dict[str, str]) -> None:
        super().__init__(method, uri, headers=headers)
        self.payload = _Payload(items)
        # What the person consented to: the authorization request's scope narrowed on the consent page, and
        # its checked resource (Authlib re-validates the request, and with it `scope`, before saving the code).
        self.consented_scope: str | None = None
        self.resource: str | None = None

    @property
    def form(self) -> dict[str, str]:
        return self.payload.data

    @property
    def args(self) -> dict[str, str]:
        return self.payload.data


class _JsonPayload:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data


def json_request(method: str, uri: str, data: dict[str, Any], headers: dict[str, str]) -> JsonRequest:
    """A JSON request (client registration) as Authlib reads it."""
    request = JsonRequest(method, uri, headers)
    request.payload = _JsonPayload(data)
    return request
