"""The one connector interface: connect, publish with an idempotency key, metrics and comments.

Connectors are stateless adapters. Everything account-specific travels in an `AccountSession`
(non-secret settings plus the decrypted token material); a connector that refreshes a token writes
the new material back into it and the caller stores it encrypted. A publication that spans several
requests (an upload session) records how far it got through `PublishContext.save_state`, so a retry
after a crash resumes it instead of publishing twice.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from toolhost.platform.results import UpstreamFailed, ValidationFailed
from toolhost.providers.fetch import FetchedResponse, Fetcher

PUBLISH = "publish"
METRICS = "metrics"
COMMENTS_LIST = "comments.list"
COMMENTS_REPLY = "comments.reply"
COMMENTS_POST = "comments.post"
COMMENTS_MODERATE = "comments.moderate"
COMMENTS_DELETE = "comments.delete"


class PublishFailed(Exception):
    """A publication did not happen; `retryable` says whether the same request may succeed later.

    `authentication`: the platform refused the account's credentials (the account needs a new sign-in).
    `retry_at`: the platform said when it takes requests again (a rate limit's reset); not before then.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        authentication: bool = False,
        retry_at: datetime | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.authentication = authentication
        self.retry_at = retry_at


@dataclass(slots=True)
class AccountSession:
    """One connected account as a connector sees it; `changed` is set when token material was refreshed.

    `persist` stores refreshed token material at once (a platform that rotates refresh tokens has already
    invalidated the old one); `reload` reads what is stored now (another worker may have refreshed first).
    Callers that pass neither store `secrets` themselves when `changed` is set.
    """

    platform: str
    username: str | None
    settings: dict[str, Any]
    secrets: dict[str, Any]
    expires_at: datetime | None = None
    changed: bool = False
    persist: Callable[[AccountSession], Awaitable[None]] | None = None
    reload: Callable[[], Awaitable[dict[str, Any]]] | None = None

    def update_secrets(self, secrets: dict[str, Any], *, expires_at: datetime | None = None) -> None:
        """Replaces token material after a refresh; the caller re-encrypts and stores it."""
        self.secrets = {**self.secrets, **secrets}
        if expires_at is not None:
            self.expires_at = expires_at
        self.changed = True


@dataclass(frozen=True, slots=True)
class MediaItem:
    """One attachment: its bytes when stored by toolhost, and a URL a platform or receiver may fetch."""

    content_type: str
    url: str | None = None
    data: bytes | None = None
    key: str | None = None
    file_name: str | None = None


@dataclass(frozen=True, slots=True)
class OutgoingPost:
    """What a connector publishes: the post row's content, with media already resolved."""

    post_id: str
    project_id: str
    platform: str
    caption: str
    title: str | None
    hashtags: list[str]
    media: list[MediaItem]
    media_type: str | None
    platform_metadata: dict[str, Any]
    scheduled_at: datetime | None
    idempotency_key: str
    attempt: int
    created_at: datetime

    def text(self) -> str:
        """The caption with its hashtags appended (those not already in it), as most platforms take it."""
        missing = [tag for tag in self.hashtags if tag.lower() not in self.caption.lower()]
        return "\n\n".join(part for part in (self.caption.strip(), " ".join(missing)) if part)


@dataclass(frozen=True, slots=True)
class PublishResult:
    """The platform's id and URL for the published post (either may be unknown)."""

    external_post_id: str | None
    external_url: str | None


@dataclass(slots=True)
class PublishContext:
    """Resumable state of one publication; `save_state` persists it before a step that cannot be undone."""

    state: dict[str, Any]
    save_state: Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ConnectResult:
    """A verified account: who it is, its token material and, for webhook, the secret shown once."""

    username: str | None
    settings: dict[str, Any]
    secrets: dict[str, Any]
    expires_at: datetime | None = None
    shown_once: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Comment:
    """A comment on a published post."""

    id: str
    text: str
    author: str | None
    created_at: str | None
    parent_id: str | None = None


class Connector:
    """Base of every connector; a capability a connector lacks is a validation_error naming both."""

    name: ClassVar[str]
    capabilities: ClassVar[frozenset[str]]
    # The platforms it publishes to (webhook: every social platform), and the media kinds it uploads.
    platforms: ClassVar[tuple[str, ...]]
    media_kinds: ClassVar[tuple[str, ...]] = ()
    # Whether publishing sends the media's bytes; a connector whose platform fetches each item from its signed
    # URL (webhook receivers, Meta) gets the URLs alone, so a worker never reads a large video for nothing.
    uploads_media_bytes: ClassVar[bool] = True
    # Metrics and comments arrive from the other side (a webhook receiver) instead of being pulled.
    pushed: ClassVar[bool] = False
    # What the connect page asks for: field name -> label. "secret" fields are never echoed.
    connect_fields: ClassVar[dict[str, str]] = {}
    secret_fields: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, fetcher: Fetcher) -> None:
        self.fetcher = fetcher

    def required_settings(self) -> list[str]:
        """The operator's settings (environment variables) the connector needs before accounts can connect."""
        return []

    def missing_settings(self) -> list[str]:
        """The required settings that are not set on this server."""
        return []

    def require(self, capability: str) -> None:
        """Refuses a capability this connector does not have (CATALOG.md §1.12)."""
        if capability not in self.capabilities:
            raise ValidationFailed(
                f"the {self.name} connector cannot do {capability}",
                connector=self.name,
                capability=capability,
            )

    async def connect(self, *, platform: str, fields: dict[str, str]) -> ConnectResult:
        """Verifies what the connect page or CLI collected and returns the account to store."""
        raise NotImplementedError

    async def publish(self, account: AccountSession, post: OutgoingPost, context: PublishContext) -> PublishResult:
        """Publishes once: the same idempotency key never yields a second post on the platform."""
        raise NotImplementedError

    async def fetch_metrics(self, account: AccountSession, external_post_id: str) -> dict[str, int]:
        """The post's current counters."""
        self.require(METRICS)
        raise NotImplementedError

    async def list_comments(self, account: AccountSession, external_post_id: str, *, limit: int) -> list[Comment]:
        """Comments on a post, oldest first."""
        self.require(COMMENTS_LIST)
        raise NotImplementedError

    async def reply_to_comment(
        self, account: AccountSession, external_post_id: str, comment_id: str, text: str
    ) -> Comment:
        """Answers a comment."""
        self.require(COMMENTS_REPLY)
        raise NotImplementedError

    async def post_comment(self, account: AccountSession, external_post_id: str, text: str) -> Comment:
        """Comments on a post as the account."""
        self.require(COMMENTS_POST)
        raise NotImplementedError

    async def moderate_comment(self, account: AccountSession, comment_id: str, action: str) -> None:
        """Hides, holds or publishes a comment."""
        self.require(COMMENTS_MODERATE)
        raise NotImplementedError

    async def delete_comment(self, account: AccountSession, comment_id: str) -> None:
        """Deletes a comment."""
        self.require(COMMENTS_DELETE)
        raise NotImplementedError

    async def send(
        self,
        method: str,
        url: str,
        *,
        content: bytes = b"",
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> FetchedResponse:
        """One request through the SSRF-safe fetcher; transport failures become retryable PublishFailed."""
        try:
            return await self.fetcher.request(
                method, url, content=content, headers=headers or {}, https_only=True, timeout=timeout
            )
        except UpstreamFailed as error:
            raise PublishFailed(f"{self.name}: {error.message}", retryable=True) from error


def raise_for_status(connector: str, response: FetchedResponse, action: str) -> None:
    """An HTTP answer as PublishFailed: 401/403 credentials, 408/429/5xx retryable, other 4xx final."""
    if response.ok:
        return
    status = response.status
    if status in (401, 403):
        raise PublishFailed(
            f"{connector} refused the credentials while trying to {action} (HTTP {status})",
            retryable=False,
            authentication=True,
        )
    retryable = status in (408, 425, 429) or status >= 500
    raise PublishFailed(f"{connector} answered HTTP {status} while trying to {action}", retryable=retryable)


def json_body(connector: str, response: FetchedResponse) -> dict[str, Any]:
    """The JSON object of a reply, or a retryable failure when the platform sent something else."""
    try:
        value = json.loads(response.content or b"{}")
    except ValueError as error:
        raise PublishFailed(f"{connector} sent a reply that is not JSON", retryable=True) from error
    if not isinstance(value, dict):
        raise PublishFailed(f"{connector} sent a reply that is not a JSON object", retryable=True)
    return value


def upstream(error: PublishFailed, connector: str) -> UpstreamFailed:
    """A PublishFailed reported to a tool caller (connect, metrics, comments) as upstream_error."""
    return UpstreamFailed(error.message, provider=connector)


def multipart(fields: dict[str, str], files: list[tuple[str, str, str, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body and its content type; files are (field, file name, type, bytes)."""
    boundary = secrets.token_hex(16)
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode() + value.encode() + b"\r\n"
        )
    for name, file_name, content_type, data in files:
        safe_name = file_name.replace('"', "").replace("\r", "").replace("\n", "")
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{safe_name}"\r\n'
            f"Content-Type: {content_type}\r\n\r\n"
        )
        parts.append(head.encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def bearer(token: str) -> dict[str, str]:
    """The Authorization header of a bearer token."""
    return {"Authorization": f"Bearer {token}"}
