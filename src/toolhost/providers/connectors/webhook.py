"""The built-in `webhook` connector: a signed HTTP POST of the post JSON to the account's https URL.

Wire format (CATALOG.md §1.12): headers `Idempotency-Key: <the post's key>` and
`X-Toolhost-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` with the account's
signing secret. Delivery is at-least-once with a stable key; receivers de-duplicate on the key. A 2xx
completes the publication, with `external_post_id` / `external_url` taken from a JSON reply.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from typing import Any, ClassVar
from urllib.parse import urlsplit

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

from toolhost.platform.fields import SOCIAL_PLATFORMS
from toolhost.platform.results import UpstreamFailed, ValidationFailed
from toolhost.providers.connectors.base import (
    COMMENTS_LIST,
    METRICS,
    PUBLISH,
    AccountSession,
    Connector,
    ConnectResult,
    OutgoingPost,
    PublishContext,
    PublishFailed,
    PublishResult,
    raise_for_status,
)

SIGNATURE_HEADER = "X-Toolhost-Signature"
SIGNATURE_TOLERANCE_SECONDS = 300


def sign(secret: str, body: bytes, timestamp: int) -> str:
    """The X-Toolhost-Signature value for a body sent at `timestamp`."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def verify(secret: str, body: bytes, header: str, *, now: float | None = None) -> bool:
    """Whether a signature header is valid for the body and recent (replays older than 5 minutes fail)."""
    parts: dict[str, list[str]] = {}
    for item in header.split(","):
        name, _, value = item.strip().partition("=")
        parts.setdefault(name, []).append(value)
    try:
        timestamp = int(parts["t"][0])
    except (KeyError, ValueError):
        return False
    if abs((now if now is not None else time.time()) - timestamp) > SIGNATURE_TOLERANCE_SECONDS:
        return False
    expected = sign(secret, body, timestamp).split("v1=", 1)[1]
    return any(hmac.compare_digest(expected, candidate) for candidate in parts.get("v1", []))


def new_signing_secret() -> str:
    """A fresh signing secret, shown to the operator once."""
    return "whsec_" + secrets.token_urlsafe(32)


class WebhookConnector(Connector):
    """Publishes to any platform through the operator's own receiver."""

    name: ClassVar[str] = "webhook"
    platforms: ClassVar[tuple[str, ...]] = SOCIAL_PLATFORMS
    # Media travels as signed URLs, so any kind the post carries.
    media_kinds: ClassVar[tuple[str, ...]] = ("image", "gif", "video")
    pushed: ClassVar[bool] = True
    uploads_media_bytes: ClassVar[bool] = False
    # Metrics and comments are pushed by the receiver (POST /v1/connectors/webhook/events), not pulled.
    capabilities: ClassVar[frozenset[str]] = frozenset({PUBLISH, METRICS, COMMENTS_LIST})
    connect_fields: ClassVar[dict[str, str]] = {"url": "Receiver URL (https)"}

    def __init__(self, fetcher: Any, *, timeout: float, attempts: int, backoff: float) -> None:
        super().__init__(fetcher)
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.backoff = backoff

    async def connect(self, *, platform: str, fields: dict[str, str]) -> ConnectResult:
        """Checks the target URL (public https unless allowlisted) and mints the signing secret."""
        url = (fields.get("url") or "").strip()
        if not url:
            raise ValidationFailed(
                "a webhook connection needs the receiver's URL",
                field_errors=[{"path": "url", "message": "required"}],
            )
        await self.fetcher.check_url(url, https_only=True)
        secret = new_signing_secret()
        return ConnectResult(
            username=urlsplit(url).hostname,
            settings={"url": url},
            secrets={"signing_secret": secret},
            shown_once={"signing_secret": secret},
        )

    def payload(self, post: OutgoingPost) -> dict[str, Any]:
        """The JSON body a receiver gets."""
        return {
            "event": "post.publish",
            "post_id": post.post_id,
            "project_id": post.project_id,
            "platform": post.platform,
            "idempotency_key": post.idempotency_key,
            "attempt": post.attempt,
            "caption": post.caption,
            "text": post.text(),
            "title": post.title,
            "hashtags": post.hashtags,
            "media_type": post.media_type,
            "media": [{"url": item.url, "content_type": item.content_type, "r2_key": item.key} for item in post.media],
            "platform_metadata": post.platform_metadata,
            "scheduled_at": post.scheduled_at.isoformat() if post.scheduled_at else None,
            "created_at": post.created_at.isoformat(),
        }

    async def publish(self, account: AccountSession, post: OutgoingPost, context: PublishContext) -> PublishResult:
        """POSTs the signed post JSON, retrying transport failures and 408/429/5xx with backoff."""
        body = json.dumps(self.payload(post), separators=(",", ":"), ensure_ascii=False).encode()
        secret = str(account.secrets["signing_secret"])
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait_exponential(multiplier=self.backoff),
            retry=retry_if_exception(lambda failure: isinstance(failure, PublishFailed) and failure.retryable),
            reraise=True,
        )
        return await retrying(self._deliver, account, post, body, secret)

    async def _deliver(self, account: AccountSession, post: OutgoingPost, body: bytes, secret: str) -> PublishResult:
        """One signed delivery (signed anew, so a retry's timestamp is fresh); failures as PublishFailed."""
        headers = {
            "Content-Type": "application/json",
            "Idempotency-Key": post.idempotency_key,
            SIGNATURE_HEADER: sign(secret, body, int(time.time())),
        }
        try:
            response = await self.fetcher.post(
                account.settings["url"],
                content=body,
                headers=headers,
                https_only=True,
                timeout=self.timeout,
            )
        except UpstreamFailed as error:
            raise PublishFailed(f"webhook: {error.message}", retryable=True) from error
        raise_for_status("webhook receiver", response, "publish")
        return _result(response.content)


def _result(content: bytes) -> PublishResult:
    try:
        reply = json.loads(content) if content else {}
    except ValueError:
        reply = {}
    if not isinstance(reply, dict):
        reply = {}
    external_id = reply.get("external_post_id")
    external_url = reply.get("external_url")
    return PublishResult(
        external_post_id=str(external_id)[:300] if external_id not in (None, "") else None,
        external_url=str(external_url)[:2048] if isinstance(external_url, str) and external_url else None,
    )
